"""Kueue's MultiKueue adapter for the StatefulSet
(``statefulset_multikueue_adapter.go``).

A StatefulSet has no ``managedBy``: once its Workload has a MultiKueue check
it is MultiKueue's, and the manager keeps its pods gated. The worker's copy
is the set as it is (its pod template keeps Kueue's marks) with the
prebuilt-workload and origin labels and the manager's uid
(``kueue.x-k8s.io/multikueue-origin-uid``), so that the worker's Kueue names
the set's Workload as the manager did and takes the dispatched copy for it
(making none of its own). No status is mirrored: the manager's StatefulSet
controller owns the manager's set's status."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kuota.controllers.jobs.statefulset.statefulset_webhook import API_VERSION, KIND, STATEFULSET
from kuota.controllers.multikueue_adapter import (
    MultiKueueAdapter,
    clone_meta_for_remote,
    create_remote,
)
from kuota.store import clone

if TYPE_CHECKING:
    from kuota.controllers.multikueue.remote_cluster import RemoteCluster
    from kuota.runtime.manager import Manager

__all__ = ["StatefulSetMultiKueueAdapter", "statefulset_multikueue_adapter"]


class StatefulSetMultiKueueAdapter(MultiKueueAdapter):
    __slots__ = ()

    def remote_copy(self, local: Any, wl_name: str, origin: str) -> Any:
        out = clone(local)
        m = local.metadata
        out.metadata = clone_meta_for_remote(m, wl_name, origin, m.uid, ids=self.ids)
        out.status = None
        return out

    def sync_job(self, mgr: Manager, rc: RemoteCluster, job: Any, wl_name: str) -> bool:
        if rc.get(self.rtype, f"{job.metadata.namespace}/{job.metadata.name}") is not None:
            return True  # made: the status stays the manager's own
        return create_remote(rc, self.remote_copy(job, wl_name, rc.origin))


def statefulset_multikueue_adapter() -> MultiKueueAdapter:
    return StatefulSetMultiKueueAdapter(KIND, API_VERSION, STATEFULSET, None)
