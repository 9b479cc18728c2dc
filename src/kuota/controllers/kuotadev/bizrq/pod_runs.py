"""Which pods burn which group's budget, and when: a pod belongs to the group
of its first ancestor (itself, its Job, its ReplicaSet's Deployment, ...)
labelled ``biz.group.resource.quota``, and is charged with that object's
model labels. Its run starts when it is bound to a node and ends when it
finishes or is deleted (the budget ledger, ``kuota.quota.bizgroups.budget``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Final

from kuota.api.kuotadev.bizrq import GROUP_LABEL
from kuota.quota.bizgroups.budget import BudgetLedger, PodRun
from kuota.quota.bizgroups.usage import models_of, pod_usage
from kuota.store import NotFound
from kuota.store.kinds import resource_for
from kuota.store.protocol import EventType, ObjectStore

__all__ = ["PodRunTracker", "group_owner"]

_MAX_DEPTH: Final = 5  # pod -> ReplicaSet -> Deployment, pod -> StatefulSet -> LWS, ...
_ENDED: Final = frozenset(("Succeeded", "Failed"))


def _condition_time(pod: Any, ctype: str, status: str) -> datetime | None:
    st = pod.status
    for c in (st.conditions if st is not None else None) or ():
        if c.type == ctype and c.status == status:
            t: datetime | None = c.last_transition_time
            return t
    return None


class PodRunTracker:
    """Feeds the ledger from pod changes; ``wake`` is told the group whose
    budget moved (its controller accrues at that instant)."""

    def __init__(
        self,
        store: Callable[[], ObjectStore],
        ledger: BudgetLedger,
        now: Callable[[], datetime],
        wake: Callable[[str], None],
        active: Callable[[], bool] = lambda: True,
    ) -> None:
        self._store = store
        self.ledger = ledger
        self._now = now
        self._wake = wake
        self._active = active  # False while no group exists: nothing burns

    def on_pod(self, etype: EventType, pod: Any, old: Any | None) -> None:
        uid = pod.metadata.uid
        if not uid or not self._active():
            return
        st = pod.status
        phase = st.phase if st is not None else None
        bound = bool(pod.spec is not None and pod.spec.node_name)
        if not self.ledger.known(uid):
            if not bound or etype == "DELETED":
                return
            owner = self._group_owner(pod)
            if owner is None:
                return
            group, labels = owner
            start = (st.start_time if st is not None else None) or _condition_time(
                pod, "PodScheduled", "True"
            )
            now = self._now()
            use = pod_usage(pod.spec, models_of(labels))
            self.ledger.started(uid, PodRun(group, use, start if start is not None else now))
            if phase not in _ENDED:
                self._wake(group)
                return
        if etype == "DELETED" or phase in _ENDED:
            at = _condition_time(pod, "Ready", "False") if phase in _ENDED else None
            now = self._now()
            g = self.ledger.ended(uid, at if at is not None and at <= now else now)
            if g is not None:
                self._wake(g)

    def _group_owner(self, pod: Any) -> tuple[str, dict[str, str]] | None:
        return group_owner(self._store(), pod)


def group_owner(store: Any, pod: Any) -> tuple[str, dict[str, str]] | None:
    """The group a pod burns for and the labels declaring its models: those
    of its first ancestor labelled ``biz.group.resource.quota`` (None: none)."""
    obj = pod
    for _ in range(_MAX_DEPTH):
        labels = obj.metadata.labels or {}
        group = labels.get(GROUP_LABEL)
        if group:
            return group, labels
        ref = next((r for r in obj.metadata.owner_references or () if r.controller), None)
        if ref is None:
            return None
        try:
            rtype = resource_for(ref.api_version, ref.kind)
            obj = store.get(rtype, obj.metadata.namespace or "", ref.name)
        except (KeyError, ValueError, NotFound):
            return None
    return None
