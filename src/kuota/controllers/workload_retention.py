"""Kueue's ``objectRetentionPolicies.workloads`` (Configuration):

* ``afterFinished``: a Workload finished that long ago is deleted, its
  resource-in-use finalizer removed first (the workload controller's
  Reconcile, ``workload.Delete``), with a ``Deleted`` Event "Deleted finished
  workload due to elapsed retention";
* ``afterDeactivatedByKueue``: the job of a Workload that Kueue itself
  deactivated (``spec.active: false`` and an Evicted condition whose reason
  starts ``DeactivatedDueTo``: the requeuing limit, the maximum execution
  time, an admission check; not a user's own deactivation) is deleted that
  long after the eviction, in the background, and its Workload goes with it
  (jobframework's ``handleWorkloadAfterDeactivatedPolicy``).

Unset durations keep everything, as Kueue does."""

from __future__ import annotations

import contextlib
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

from kuota.api.conditions import find
from kuota.api.kueue import types as kt
from kuota.api.kueue.config import ObjectRetention
from kuota.runtime.informer import Informer, key_of
from kuota.store import Conflict, NotFound, clone
from kuota.store.kinds import kind_named
from kuota.store.protocol import EventType, group_of
from kuota.store.resources import WORKLOAD

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager

__all__ = ["WorkloadRetention"]

RESOURCE_IN_USE: Final = "kueue.x-k8s.io/resource-in-use"
_DEACTIVATED_BY_KUEUE: Final = "DeactivatedDueTo"  # ReasonWithCause(WorkloadDeactivated, "")


def finished_at(wl: kt.Workload) -> datetime | None:
    c = find(wl.status.conditions if wl.status is not None else None, "Finished")
    return c.last_transition_time if c is not None and c.status == "True" else None


def deactivated_by_kueue_at(wl: kt.Workload) -> datetime | None:
    """When Kueue evicted a Workload it deactivated itself (evict.go's
    ``IsEvictedDueToDeactivationByKueue`` with ``spec.active`` false)."""
    if wl.spec.active is not False:
        return None
    c = find(wl.status.conditions if wl.status is not None else None, "Evicted")
    if c is None or c.status != "True" or not c.reason.startswith(_DEACTIVATED_BY_KUEUE):
        return None
    return c.last_transition_time


class WorkloadRetention:
    """Deletes finished Workloads and the jobs of Workloads Kueue deactivated,
    once their retention is over."""

    name = "workload-retention"
    component = "kueue-admission"

    def __init__(self, policy: ObjectRetention) -> None:
        self.policy = policy
        self._mgr: Manager | None = None
        self._wls: Informer | None = None

    def setup(self, mgr: Manager) -> None:
        self._mgr = mgr
        self._wls = mgr.informer(WORKLOAD)
        self._wls.on_change(self._on_workload)

    def _on_workload(self, etype: EventType, wl: Any, old: Any | None) -> None:
        if etype == "DELETED" or self._mgr is None:
            return
        if self._expiry(wl) is not None:
            self._mgr.enqueue(self.name, key_of(wl))

    def _expiry(self, wl: kt.Workload) -> tuple[datetime, bool] | None:
        """When the Workload's retention ends, and whether its job goes
        (deactivation) rather than the Workload alone (finished)."""
        after = self.policy.workloads_after_finished
        done = finished_at(wl)
        if done is not None:
            return None if after is None else (done + after, False)
        after = self.policy.workloads_after_deactivated_by_kueue
        evicted = deactivated_by_kueue_at(wl) if after is not None else None
        if evicted is None or after is None:
            return None
        return evicted + after, True

    def reconcile(self, key: str) -> timedelta | None:
        assert self._mgr is not None and self._wls is not None
        mgr = self._mgr
        wl: kt.Workload | None = self._wls.get(key)
        if wl is None:
            return None
        due = self._expiry(wl)
        if due is None:
            return None
        at, whole_job = due
        if mgr.clock.now() < at:
            mgr.enqueue_at(self.name, key, at)
            return None
        if whole_job:
            self._delete_job(wl)
        else:
            self._delete_finished(wl)
        return None

    def _delete_finished(self, wl: kt.Workload) -> None:
        mgr = self._mgr
        assert mgr is not None
        m = wl.metadata
        fins = [f for f in m.finalizers or () if f != RESOURCE_IN_USE]
        if len(fins) != len(m.finalizers or ()):
            new = clone(wl)
            new.metadata.finalizers = fins or None
            try:
                wl = mgr.store.update(new)
            except NotFound:
                return
            # A Conflict propagates: the manager retries the key.
        if wl.metadata.deletion_timestamp is not None:
            return
        with contextlib.suppress(NotFound):
            mgr.store.delete(WORKLOAD, m.namespace, m.name)
            mgr.recorder.event(
                wl,
                "Normal",
                "Deleted",
                "Deleted finished workload due to elapsed retention",
                self.component,
            )

    def _delete_job(self, wl: kt.Workload) -> None:
        mgr = self._mgr
        assert mgr is not None
        owners = wl.metadata.owner_references or []
        ctrl = [o for o in owners if o.controller]
        for ref in ctrl or owners:  # a pod group's Workload is owned by each pod
            try:
                info = kind_named(group_of(ref.api_version), ref.kind)
            except NotFound:
                continue
            with contextlib.suppress(NotFound, Conflict):
                job = mgr.store.get(info.rtype, wl.metadata.namespace, ref.name)
                if job.metadata.uid != ref.uid or job.metadata.deletion_timestamp is not None:
                    continue
                # Dependents (the Workload, the pods) go in the background.
                mgr.store.delete(info.rtype, wl.metadata.namespace, ref.name)
                mgr.recorder.event(
                    job,
                    "Normal",
                    "Deleted",
                    "Deleted job: deactivation retention period expired",
                    "kueue-admission",
                )
