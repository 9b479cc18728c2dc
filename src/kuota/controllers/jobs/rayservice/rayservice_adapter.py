"""A RayService as Kueue's jobframework sees it (``pkg/controller/jobs/
rayservice/rayservice_controller.go``): the podSets of its
``rayClusterConfig`` (head, then each worker group), suspended and resumed
through ``rayClusterConfig.suspend`` (KubeRay carries it to the RayCluster it
serves from), active and its pods ready while its Ready condition is True;
a service never finishes."""

from __future__ import annotations

from kuota.api import errors as e
from kuota.api.kueue import types as kt
from kuota.api.ray import ray_types as r
from kuota.controllers.jobframework import Finished, PodSetInfo, suspended_copy
from kuota.controllers.jobs.raycluster import rayspec_podsets as rs
from kuota.controllers.jobs.raycluster.owned_cluster import OwnedCluster
from kuota.controllers.multikueue_adapter import ManagedBy
from kuota.controllers.workloadslicing import gate_template
from kuota.store import clone
from kuota.store.protocol import ResourceType
from kuota.store.resources import RAY_SERVICE

__all__ = ["RayServiceAdapter"]


def _ready(svc: r.RayService) -> bool:
    conds = svc.status.conditions if svc.status else None
    return any(c.type == "Ready" and c.status == "True" for c in conds or ())


def _cluster_name(svc: r.RayService) -> str | None:
    active = svc.status.active_service_status if svc.status else None
    return active.ray_cluster_name if active else None


class RayServiceAdapter(OwnedCluster):
    rtype: ResourceType = RAY_SERVICE
    kind = "RayService"
    api_version = r.API_VERSION
    managed_by_field = ManagedBy(("spec", "managed_by"), r.OPERATOR)

    def pod_sets(self, svc: r.RayService, partial_admission: bool) -> list[kt.PodSet]:
        spec = svc.spec.ray_cluster_config
        out = rs.build_pod_sets(spec, svc.metadata.annotations or {})
        return self._elastic_pod_sets(out, svc.metadata, spec, _cluster_name(svc))

    def custom_annotations(self, svc: r.RayService) -> dict[str, str]:
        """GetCustomAnnotations: its active cluster's generation."""
        return self._cluster_annotations(svc.metadata, _cluster_name(svc))

    def workload_name_extra(self, svc: r.RayService) -> str:
        """GetWorkloadNameExtraPart."""
        return self._name_extra(svc.metadata)

    def gate_elastic(self, svc: r.RayService) -> r.RayService:
        """The RayService webhook's Default for an elastic job: the head's
        and every worker group's pods are gated."""
        svc = clone(svc)
        spec = svc.spec.ray_cluster_config
        for t in [
            spec.head_group_spec.template,
            *(w.template for w in spec.worker_group_specs or ()),
        ]:
            if t.spec is not None:
                gate_template(t.spec)
        return svc

    def is_suspended(self, svc: r.RayService) -> bool:
        return bool(svc.spec.ray_cluster_config.suspend)

    def is_active(self, svc: r.RayService) -> bool:
        return _ready(svc)

    def finished(self, svc: r.RayService) -> Finished | None:
        return None

    def pods_ready(self, svc: r.RayService, wl: kt.Workload) -> bool:
        return _ready(svc)

    def reclaimable_pods(self, svc: r.RayService) -> list[kt.ReclaimablePod] | None:
        return None

    def suspend_on_create(self, svc: r.RayService) -> r.RayService:
        return suspended_copy(svc, lambda s: s.spec.ray_cluster_config)

    def run(self, svc: r.RayService, infos: list[PodSetInfo]) -> r.RayService:
        svc = clone(svc)
        spec = svc.spec.ray_cluster_config
        spec.suspend = False
        if len(infos) == rs.expected_pod_sets(spec):
            rs.run_cluster_spec(spec, infos)
        return svc

    def validate(
        self, svc: r.RayService, old: r.RayService | None, elastic: bool
    ) -> list[e.FieldError]:
        return []  # the Ray rules need the manage policy: RayValidation

    def topology_errors(
        self, svc: r.RayService, elastic: bool = False, multi_layer: bool = True
    ) -> list[e.FieldError]:
        """validateTopologyRequest, for every RayService, at the paths Kueue
        names (``spec.rayClusterSpec``, though the field is ``rayClusterConfig``)."""
        spec = svc.spec.ray_cluster_config
        pod_sets = self.pod_sets(svc, False)
        return rs.topology_errors(spec, pod_sets, "spec.rayClusterSpec", multi_layer=multi_layer)

    def update_errors(self, new: r.RayService, old: r.RayService) -> list[e.FieldError]:
        return []

    def stop(self, svc: r.RayService) -> r.RayService | None:
        if svc.spec.ray_cluster_config.suspend:
            return None
        svc = clone(svc)
        svc.spec.ray_cluster_config.suspend = True
        return svc

    def restore(self, svc: r.RayService, original: list[kt.PodSet]) -> r.RayService | None:
        new = clone(svc)
        return new if rs.restore_cluster_spec(new.spec.ray_cluster_config, original) else None
