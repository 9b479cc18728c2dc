"""Kueue's MultiKueue adapter for the LeaderWorkerSet
(``leaderworkerset_multikueue_adapter.go``).

An LWS has no ``managedBy``: once its Workloads have a MultiKueue check it is
MultiKueue's, and the manager keeps its pods gated. It has a Workload per
group (``MultiKueueMultiWorkloadAdapter``): the manager dispatches the
group-0 Workload once every group's exists, and each other group's goes to
the worker that admitted a sibling. The worker's copy is the LWS as it is,
with the origin label and the manager's uid
(``kueue.x-k8s.io/multikueue-origin-uid``), not a prebuilt Workload: the
worker's Kueue names each group's Workload as the manager did and takes the
dispatched copies for them (making none of its own). The first group
admitted makes it; the others find it made. No status is mirrored: the
manager's LWS controller owns the manager's LWS's status."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from kuota.api.kueue.multikueue_types import ORIGIN_UID_ANNOTATION
from kuota.api.lws import v1 as lw
from kuota.controllers.jobs.leaderworkerset.leaderworkerset_reconciler import (
    COMPONENT_INDEX,
    group_workload_name,
)
from kuota.controllers.jobs.leaderworkerset.leaderworkerset_webhook import LWS
from kuota.controllers.multikueue_adapter import (
    MultiKueueAdapter,
    clone_meta_for_remote,
    create_remote,
)
from kuota.store import clone

if TYPE_CHECKING:
    from kuota.controllers.multikueue.remote_cluster import RemoteCluster
    from kuota.runtime.manager import Manager

__all__ = ["LeaderWorkerSetMultiKueueAdapter", "leaderworkerset_multikueue_adapter"]


class LeaderWorkerSetMultiKueueAdapter(MultiKueueAdapter):
    __slots__ = ()
    multi_workload: ClassVar[bool] = True

    def remote_copy(self, local: Any, wl_name: str, origin: str) -> Any:
        out = clone(local)
        out.metadata = clone_meta_for_remote(local.metadata, None, origin, local.metadata.uid)
        out.status = None
        return out

    def sync_job(self, mgr: Manager, rc: RemoteCluster, job: Any, wl_name: str) -> bool:
        if rc.get(self.rtype, f"{job.metadata.namespace}/{job.metadata.name}") is not None:
            return True  # made (by another group's Workload): the status stays the manager's
        return create_remote(rc, self.remote_copy(job, wl_name, rc.origin))

    def workload_keys(self, obj: Any) -> list[str]:
        """The Workload of each group, named from the manager's uid."""
        m = obj.metadata
        uid = (m.annotations or {}).get(ORIGIN_UID_ANNOTATION)
        if uid is None or obj.spec is None:
            return []
        return [
            f"{m.namespace}/{group_workload_name(m.name, uid, str(i))}"
            for i in range(obj.spec.replicas)
        ]

    def expected_workloads(self, job: Any) -> int | None:
        return int(job.spec.replicas) if job.spec is not None else 0

    def workload_index(self, wl: Any) -> int:
        text = (wl.metadata.annotations or {}).get(COMPONENT_INDEX, "")
        try:
            return int(text)
        except ValueError:
            return -1


def leaderworkerset_multikueue_adapter() -> MultiKueueAdapter:
    return LeaderWorkerSetMultiKueueAdapter(lw.KIND, lw.API_VERSION, LWS, None)
