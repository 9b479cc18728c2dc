"""Status conditions, one set of helpers for every kind: find one, test it,
set it with Kubernetes' lastTransitionTime rule (apimeta.SetStatusCondition:
the time moves only when the status does).

Pure functions over the objects' structs; the setters change what they are
given (``with_condition`` excepted, which copies)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, Final, Protocol, TypeVar

import msgspec

from kuota.api.kueue import types as kt
from kuota.api.meta import Condition

# Bound once (Final: a C static when compiled, not an attribute lookup per call).
_replace: Final = msgspec.structs.replace


class _Typed(Protocol):
    @property
    def type(self) -> str: ...


C = TypeVar("C", bound=_Typed)


def find(conditions: Iterable[C] | None, ctype: str) -> C | None:
    """The first condition of the type in a list (of any condition kind)."""
    for c in conditions or ():
        if c.type == ctype:
            return c
    return None


def find_condition(obj: Any, ctype: str) -> Condition | None:
    """The first condition of the type in ``obj.status.conditions``, for the
    kinds whose conditions are metav1.Conditions (Workload, AdmissionCheck,
    the queues, LeaderWorkerSet); ``status_condition`` takes any kind."""
    # Each attribute read once: compiled, reading a struct field is a generic
    # attribute lookup, and this runs for every condition test. Typed, so
    # that compiled, the type test compares strings directly.
    st = obj.status
    if st is None:
        return None
    conds: list[Condition] | None = st.conditions
    if not conds:
        return None
    for c in conds:
        if c.type == ctype:
            return c
    return None


def status_condition(obj: Any, ctype: str) -> Any:
    """The first condition of the type in ``obj.status.conditions``, of any
    kind (a Pod's, a Job's)."""
    st = obj.status
    return find(st.conditions if st is not None else None, ctype)


def is_true(c: Condition | None) -> bool:
    return c is not None and c.status == "True"


def condition_true(obj: Any, ctype: str) -> bool:
    c = find_condition(obj, ctype)
    return c is not None and c.status == "True"


def condition_false(obj: Any, ctype: str) -> bool:
    c = find_condition(obj, ctype)
    return c is not None and c.status == "False"


def true_since(obj: Any, ctype: str) -> datetime | None:
    """When the condition turned True, or None when it is not True."""
    c = find_condition(obj, ctype)
    return c.last_transition_time if c is not None and c.status == "True" else None


def transition_time(prev: Condition | None, status: str, now: datetime) -> datetime | None:
    """A condition's lastTransitionTime when it is written with ``status``:
    kept while the status stays, ``now`` when it changes or is new."""
    return prev.last_transition_time if prev is not None and prev.status == status else now


def set_condition(
    wl: kt.Workload, ctype: str, status: str, reason: str, message: str, now: datetime
) -> bool:
    """apimeta.SetStatusCondition: the transition time moves only when the status does."""
    st = wl.status
    if st is None:
        st = wl.status = kt.WorkloadStatus()
    conds = st.conditions
    if conds is None:
        conds = st.conditions = []
    for c in conds:
        if c.type == ctype:
            was = c.status
            changed = was != status or c.reason != reason or c.message != message
            if was != status:
                c.last_transition_time = now
            c.status, c.reason, c.message = status, reason, message  # type: ignore[assignment]
            return changed
    conds.append(
        Condition(
            type=ctype,
            status=status,  # type: ignore[arg-type]
            reason=reason,
            message=message,
            last_transition_time=now,
            observed_generation=wl.metadata.generation or None,
        )
    )
    return True


def with_condition(
    wl: kt.Workload, ctype: str, status: str, reason: str, message: str, now: datetime
) -> kt.Workload | None:
    """A copy of a stored (shared, never mutated) Workload with the condition
    set as set_condition sets it, or None when that would change nothing. The
    copy shares all but the status, the list of conditions and the condition
    set: a status write sends no more (the store copies the status it is
    given), and a whole clone of the Workload cost a job's every reconcile."""
    st = wl.status
    conds = (st.conditions if st is not None else None) or ()
    for c in conds:
        if c.type == ctype:
            if c.status == status and c.reason == reason and c.message == message:
                return None
            break
    new = _replace(
        wl,
        status=_replace(st, conditions=[_replace(c) if c.type == ctype else c for c in conds])
        if st is not None
        else None,
    )
    set_condition(new, ctype, status, reason, message, now)
    return new
