"""A RayCluster as Kueue's jobframework sees it (``pkg/controller/jobs/
raycluster/raycluster_controller.go``): podSets head then each worker group,
started by merging the admission into the templates and setting
``spec.suspend: false``, stopped by suspending it (KubeRay deletes its pods),
active and its pods ready while its state is ``ready``; a cluster never
finishes (it serves until deleted)."""

from __future__ import annotations

from kuota.api import errors as e
from kuota.api.kueue import types as kt
from kuota.api.ray import ray_types as r
from kuota.controllers.jobframework import Finished, PodSetInfo, suspended_copy
from kuota.controllers.jobs.raycluster import rayspec_podsets as rs
from kuota.controllers.multikueue_adapter import ManagedBy
from kuota.controllers.workloadslicing import gate_template
from kuota.store import clone
from kuota.store.protocol import ResourceType
from kuota.store.resources import RAY_CLUSTER

__all__ = ["RayClusterAdapter"]


def _ready(rc: r.RayCluster) -> bool:
    return rc.status is not None and rc.status.state == "ready"


class RayClusterAdapter:
    rtype: ResourceType = RAY_CLUSTER
    kind = "RayCluster"
    api_version = r.API_VERSION
    managed_by_field = ManagedBy(("spec", "managed_by"), r.OPERATOR)

    def pod_sets(self, rc: r.RayCluster, partial_admission: bool) -> list[kt.PodSet]:
        return rs.build_pod_sets(rc.spec, rc.metadata.annotations or {})

    def is_suspended(self, rc: r.RayCluster) -> bool:
        return bool(rc.spec.suspend)

    def is_active(self, rc: r.RayCluster) -> bool:
        return _ready(rc)

    def finished(self, rc: r.RayCluster) -> Finished | None:
        return None

    def pods_ready(self, rc: r.RayCluster, wl: kt.Workload) -> bool:
        return _ready(rc)

    def reclaimable_pods(self, rc: r.RayCluster) -> list[kt.ReclaimablePod] | None:
        return None

    def gate_elastic(self, rc: r.RayCluster) -> r.RayCluster:
        """The RayCluster webhook's Default for an elastic job: the head's
        and every worker group's pods are gated."""
        rc = clone(rc)
        for t in [
            rc.spec.head_group_spec.template,
            *(w.template for w in rc.spec.worker_group_specs or ()),
        ]:
            if t.spec is not None:
                gate_template(t.spec)
        return rc

    def suspend_on_create(self, rc: r.RayCluster) -> r.RayCluster:
        return suspended_copy(rc, lambda r: r.spec)

    def run(self, rc: r.RayCluster, infos: list[PodSetInfo]) -> r.RayCluster:
        rc = clone(rc)
        rc.spec.suspend = False
        if len(infos) == rs.expected_pod_sets(rc.spec):
            rs.run_cluster_spec(rc.spec, infos)
        return rc

    def validate(
        self, rc: r.RayCluster, old: r.RayCluster | None, elastic: bool
    ) -> list[e.FieldError]:
        return []  # the Ray rules need the manage policy: RayValidation

    def topology_errors(
        self, rc: r.RayCluster, elastic: bool = False, multi_layer: bool = True
    ) -> list[e.FieldError]:
        """validateTopologyRequest, for every RayCluster."""
        pod_sets = self.pod_sets(rc, False)
        return rs.topology_errors(
            rc.spec, pod_sets, "spec", groups_first=True, multi_layer=multi_layer
        )

    def update_errors(self, new: r.RayCluster, old: r.RayCluster) -> list[e.FieldError]:
        return []

    def stop(self, rc: r.RayCluster) -> r.RayCluster | None:
        if rc.spec.suspend:
            return None
        rc = clone(rc)
        rc.spec.suspend = True
        return rc

    def restore(self, rc: r.RayCluster, original: list[kt.PodSet]) -> r.RayCluster | None:
        new = clone(rc)
        return new if rs.restore_cluster_spec(new.spec, original) else None
