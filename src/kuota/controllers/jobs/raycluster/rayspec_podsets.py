"""What Kueue's three Ray integrations share (``pkg/controller/jobs/raycluster/
common.go``): the podSets of a RayClusterSpec (the head, then one per worker
group), the admission merged into its templates and taken back out, and the
create rules of a Kueue-managed cluster spec."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from kuota.api import errors as e
from kuota.api.base import Quantity
from kuota.api.k8s import Container, ResourceRequirements
from kuota.api.kueue import types as kt
from kuota.api.ray.ray_types import AutoscalerOptions, RayCluster, RayClusterSpec, WorkerGroupSpec
from kuota.controllers.jobframework import PodSetInfo
from kuota.controllers.podset_templates import merge_into, restored_template
from kuota.controllers.tas_requests import (
    validate_annotations,
    validate_grouping,
    validate_slice_size_bound,
)
from kuota.store import clone

__all__ = [
    "GENERATION_ANNOTATION",
    "HEAD",
    "build_pod_sets",
    "cluster_generation",
    "cluster_spec_errors",
    "expected_pod_sets",
    "restore_cluster_spec",
    "run_cluster_spec",
    "topology_errors",
    "update_pod_sets",
    "workload_name_extra",
]

HEAD: Final = "head"  # headGroupPodSetName
MAX_POD_SETS: Final = 8  # jobframework.MaxPodSets
FT_ANNOTATION: Final = "ray.io/ft-enabled"  # RayFTEnabledAnnotationKey
_AUTOSCALER: Final = "autoscaler"
# RayClusterGenerationAnnotation: the generation of the RayCluster an elastic
# RayJob or RayService owns, which the autoscaler moves (not the job's own).
GENERATION_ANNOTATION: Final = "kueue.x-k8s.io/raycluster-generation"


def _q(text: str) -> Quantity:
    return Quantity.parse(text)


def worker_count(wg: WorkerGroupSpec) -> int:
    """effectiveWorkerCount: replicas (1 when unset) times numOfHosts."""
    count = wg.replicas if wg.replicas is not None else 1
    if (wg.num_of_hosts or 1) > 1:
        count *= wg.num_of_hosts or 1
    return count


def podset_name(group: str) -> str:
    """``kueue.NewPodSetReference``: the group's name, lowercased."""
    return group.lower()


def _autoscaler(opts: AutoscalerOptions | None) -> Container:
    """The autoscaler sidecar KubeRay adds to the head: its resources, or
    500m CPU and 512Mi as requests and limits."""
    res = (
        clone(opts.resources)
        if opts is not None and opts.resources is not None
        else ResourceRequirements(
            requests={"cpu": _q("500m"), "memory": _q("512Mi")},
            limits={"cpu": _q("500m"), "memory": _q("512Mi")},
        )
    )
    return Container(name=_AUTOSCALER, resources=res)


def _ft_enabled(spec: RayClusterSpec, annotations: Mapping[str, str]) -> bool:
    """IsGCSFaultToleranceEnabled."""
    return (
        annotations.get(FT_ANNOTATION, "").lower() == "true"
        or spec.gcs_fault_tolerance_options is not None
    )


def build_pod_sets(spec: RayClusterSpec, annotations: Mapping[str, str]) -> list[kt.PodSet]:
    """BuildPodSets: the head (count 1; its Ray container's requests raised
    to the Redis cleanup job's when GCS fault tolerance is on; the autoscaler
    sidecar added with in-tree autoscaling), then each worker group."""
    head = clone(spec.head_group_spec.template)
    if head.spec is not None and head.spec.containers:
        if _ft_enabled(spec, annotations):
            ray = head.spec.containers[0]
            res = ray.resources or ResourceRequirements()
            req = dict(res.requests or {})
            for name, floor in (("cpu", _q("200m")), ("memory", _q("256Mi"))):
                if name not in req or req[name] < floor:
                    req[name] = floor
            res.requests = req
            ray.resources = res
        if spec.enable_in_tree_autoscaling:
            head.spec.containers = [*head.spec.containers, _autoscaler(spec.autoscaler_options)]
    out = [kt.PodSet(name=HEAD, template=head, count=1)]
    for wg in spec.worker_group_specs or ():
        out.append(
            kt.PodSet(
                name=podset_name(wg.group_name),
                template=clone(wg.template),
                count=worker_count(wg),
            )
        )
    return out


def update_pod_sets(
    pod_sets: list[kt.PodSet], spec: RayClusterSpec, cluster: RayCluster | None
) -> list[kt.PodSet]:
    """UpdatePodSets: an elastic job's autoscaled workers are counted on the
    RayCluster it owns (the Ray autoscaler scales the cluster, not the job);
    unchanged without in-tree autoscaling, or before the cluster exists. The
    caller knows the job is elastic. A worker group of the cluster that the
    job lacks is an error in Kueue; here its count is left out (the job's
    podSets stay the job's)."""
    if not spec.enable_in_tree_autoscaling or cluster is None:
        return pod_sets
    by_name = {ps.name: ps for ps in pod_sets}
    for wg in cluster.spec.worker_group_specs or ():
        ps = by_name.get(podset_name(wg.group_name))
        if ps is not None and wg.replicas is not None:
            ps.count = worker_count(wg)
    return pod_sets


def cluster_generation(cluster: RayCluster | None) -> dict[str, str]:
    """GetWorkloadslicingRayClusterCustomAnnotations: the owned cluster's
    generation, noted on an elastic job ("" while there is no cluster)."""
    gen = str(cluster.metadata.generation) if cluster is not None else ""
    return {GENERATION_ANNOTATION: gen}


def workload_name_extra(generation: int, annotations: Mapping[str, str]) -> str:
    """GetWorkloadNameExtraPart: an elastic job's generation and its
    cluster's (``<gen>_<cluster gen>``), so that each autoscaling step's
    slice has a name of its own though the job's spec never changed."""
    extra = str(generation)
    cluster_gen = annotations.get(GENERATION_ANNOTATION, "")
    return f"{extra}_{cluster_gen}" if cluster_gen else extra


def expected_pod_sets(spec: RayClusterSpec) -> int:
    return len(spec.worker_group_specs or ()) + 1


def run_cluster_spec(spec: RayClusterSpec, infos: list[PodSetInfo]) -> None:
    """UpdateRayClusterSpecToRunWithPodSetsInfo (in place): the head's info
    first, then the worker groups' in order."""
    merge_into(spec.head_group_spec.template, infos[0])
    for wg, info in zip(spec.worker_group_specs or (), infos[1:], strict=False):
        merge_into(wg.template, info)


def restore_cluster_spec(spec: RayClusterSpec, original: list[kt.PodSet]) -> bool:
    """RestorePodSetsInfo (in place): False, changing nothing, when the count
    of podSets is not the spec's."""
    if len(original) != expected_pod_sets(spec):
        return False
    changed = False
    head = spec.head_group_spec
    restored = restored_template(head.template, original[0].template)
    if restored != head.template:
        head.template, changed = restored, True
    for wg, ps in zip(spec.worker_group_specs or (), original[1:], strict=False):
        restored = restored_template(wg.template, ps.template)
        if restored != wg.template:
            wg.template, changed = restored, True
    return changed


def cluster_spec_errors(spec: RayClusterSpec, path: str, elastic: bool) -> list[e.FieldError]:
    """ValidateCreate of a Kueue-managed cluster spec: autoscaling only for
    an elastic job, at most 8 podSets, no worker group named ``head``."""
    errs: list[e.FieldError] = []
    if spec.enable_in_tree_autoscaling and not elastic:
        errs.append(
            e.invalid(
                f"{path}.enableInTreeAutoscaling",
                True,
                "a kueue managed job should only use autoscaling when workload slicing is enabled",
            )
        )
    errs += group_errors(spec, path)
    return errs


def group_errors(spec: RayClusterSpec, path: str) -> list[e.FieldError]:
    errs: list[e.FieldError] = []
    count = expected_pod_sets(spec)
    if count > MAX_POD_SETS:
        errs.append(e.too_many(f"{path}.workerGroupSpecs", count, MAX_POD_SETS))
    for i, wg in enumerate(spec.worker_group_specs or ()):
        if wg.group_name == HEAD:
            errs.append(
                e.forbidden(
                    f"{e.index(f'{path}.workerGroupSpecs', i)}.groupName",
                    f'"{HEAD}" is reserved for the head group',
                )
            )
    return errs


def topology_errors(
    spec: RayClusterSpec | None,
    pod_sets: list[kt.PodSet],
    path: str,
    *,
    groups_first: bool = False,
    multi_layer: bool = True,
) -> list[e.FieldError]:
    """raycluster.ValidateTopologyRequest for the cluster spec at ``path``
    (the head's template, its slice bound, the pod-set groups, then each
    worker group's); ``groups_first``: the RayCluster webhook's own order,
    the groups checked before the head's bound."""
    if spec is None:
        return []
    head_meta = f"{path}.headGroupSpec.template.metadata"
    workers = [
        (f"{path}.workerGroupSpecs[{i}].template.metadata", wg)
        for i, wg in enumerate(spec.worker_group_specs or ())
    ]
    by_name = {ps.name: ps for ps in pod_sets}
    annotation_paths = {HEAD: f"{head_meta}.annotations"}
    for p, wg in workers:
        annotation_paths[podset_name(wg.group_name)] = f"{p}.annotations"
    head_ann = spec.head_group_spec.template.metadata.annotations
    errs = validate_annotations(head_meta, head_ann, multi_layer)
    bound = validate_slice_size_bound(head_meta, head_ann, by_name[HEAD].count)
    grouping = validate_grouping(pod_sets, annotation_paths)
    errs += grouping + bound if groups_first else bound + grouping
    for p, wg in workers:
        ann = wg.template.metadata.annotations
        errs += validate_annotations(p, ann, multi_layer)
        ps = by_name.get(podset_name(wg.group_name))
        if ps is not None:
            errs += validate_slice_size_bound(p, ann, ps.count)
    return errs
