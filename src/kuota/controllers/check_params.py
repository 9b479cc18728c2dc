"""What Kueue's admission-check controllers share (``pkg/util/admissioncheck``):
``ConfigHelper.ConfigFromRef`` — an AdmissionCheck's parameters resolved to
its config object, or the error Kueue reports — and the Active condition as
``apimeta.SetStatusCondition`` sets it. The provisioning and MultiKueue
checks use both, and the MultiKueueCluster controller the latter; each
keeps its own rule for when to write."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from kuota.api.conditions import find_condition, transition_time
from kuota.api.kueue import types as kt
from kuota.api.meta import Condition
from kuota.store import clone

if TYPE_CHECKING:
    from kuota.runtime.informer import Informer

__all__ = ["config_from_ref", "with_active"]


def config_from_ref(ref: Any, kind: str, plural: str, configs: Informer) -> tuple[Any | None, str]:
    """The config a check's parameters name, or None and Kueue's error."""
    if ref is None:
        return None, "missing parameters reference"
    if not ref.name:
        return None, "empty name: bad parameters reference"
    if ref.api_group != kt.GROUP:
        return (
            None,
            f'wrong group "{ref.api_group}", expecting "{kt.GROUP}": bad parameters reference',
        )
    if ref.kind != kind:
        return None, f'wrong kind "{ref.kind}", expecting "{kind}": bad parameters reference'
    cfg = configs.get(ref.name)
    if cfg is None:
        return None, f'{plural}.{kt.GROUP} "{ref.name}" not found'
    return cfg, ""


def with_active(
    obj: Any,
    status_type: Callable[[], Any],
    status: str,
    reason: str,
    message: str,
    now: datetime,
    *,
    status_only: bool,
) -> Any | None:
    """A copy of an AdmissionCheck or MultiKueueCluster with its Active
    condition set (a new ``status_type()`` when it has no status), or None when
    Kueue would not write: the condition is the same (``status_only``: the
    same status, as the provisioning reconciler compares; else status, reason
    and message, as MultiKueue's ``cmpConditionState``). The transition time
    moves only with the status."""
    cur = find_condition(obj, "Active")
    if cur is not None and (
        cur.status == status
        if status_only
        else (cur.status, cur.reason, cur.message) == (status, reason, message)
    ):
        return None
    new = clone(obj)
    new.status = new.status or status_type()
    keep = [c for c in new.status.conditions or () if c.type != "Active"]
    new.status.conditions = [
        *keep,
        Condition(
            type="Active",
            status=status,  # type: ignore[arg-type]
            reason=reason,
            message=message,
            last_transition_time=transition_time(cur, status, now),
            observed_generation=obj.metadata.generation or None,
        ),
    ]
    return new
