"""What an elastic RayJob or RayService reads from the RayCluster it owns
(Kueue's ``raycluster.UpdatePodSets`` and ``GetWorkloadslicingRayCluster
CustomAnnotations``, both ElasticWorkloadNameProviders): the autoscaler's
worker replicas, and the cluster's generation for the slice's name."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from kuota.api.kueue import types as kt
from kuota.api.meta import ObjectMeta
from kuota.api.ray import ray_types as r
from kuota.controllers import workloadslicing as slicing
from kuota.controllers.jobs.raycluster import rayspec_podsets as rs
from kuota.runtime.informer import Informer
from kuota.runtime.manager import Manager
from kuota.store.protocol import ResourceType
from kuota.store.resources import RAY_CLUSTER

__all__ = ["OwnedCluster"]


class OwnedCluster:
    """Mixed into the RayJob and RayService adapters: ``owned_kinds`` makes
    the job reconciler watch their clusters (EnqueueRequestForOwner)."""

    owned_kinds: Final[tuple[ResourceType, ...]] = (RAY_CLUSTER,)

    def __init__(self) -> None:
        self._clusters: Informer | None = None

    def bind(self, mgr: Manager) -> None:
        self._clusters = mgr.informer(RAY_CLUSTER)

    def _cluster(self, meta: ObjectMeta, name: str | None) -> r.RayCluster | None:
        if self._clusters is None or not name:
            return None
        found: r.RayCluster | None = self._clusters.get(f"{meta.namespace}/{name}")
        return found

    def _elastic(self, meta: ObjectMeta) -> bool:
        # workloadslicing.Enabled: the gate's half is the webhook's (it
        # refuses in-tree autoscaling on a job that is not elastic).
        return (meta.annotations or {}).get(slicing.ENABLED_ANNOTATION) == "true"

    def _elastic_pod_sets(
        self,
        pod_sets: list[kt.PodSet],
        meta: ObjectMeta,
        spec: r.RayClusterSpec,
        cluster_name: str | None,
    ) -> list[kt.PodSet]:
        if not self._elastic(meta):
            return pod_sets
        return rs.update_pod_sets(pod_sets, spec, self._cluster(meta, cluster_name))

    def _cluster_annotations(self, meta: ObjectMeta, cluster_name: str | None) -> dict[str, str]:
        return rs.cluster_generation(self._cluster(meta, cluster_name))

    @staticmethod
    def _name_extra(meta: ObjectMeta) -> str:
        ann: Mapping[str, str] = meta.annotations or {}
        return rs.workload_name_extra(meta.generation, ann)
