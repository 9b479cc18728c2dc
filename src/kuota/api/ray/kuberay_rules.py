"""What KubeRay's controllers check before they act
(``ray-operator/controllers/ray/utils/validation.go``): a RayCluster, RayJob
or RayService they find invalid is not run; the RayJob controller says so in
its status (``jobDeploymentStatus: ValidationFailed``), the others in a
Warning event. Each check gives KubeRay's message, or None.

Only the rules of the fields kuota types are here (the head and worker
groups, replicas, autoscaling, submission modes, deadlines); those of the
carried-through fields (GCS fault tolerance, auth, TLS, network policies,
history server) are not checked.

Pure: no I/O.
"""

from __future__ import annotations

from typing import Final

from kuota.api.names import is_dns1035_label
from kuota.api.ray.ray_types import RayClusterSpec, RayJob, RayService

__all__ = [
    "MAX_RAY_CLUSTER_NAME",
    "cluster_metadata_error",
    "cluster_spec_error",
    "rayjob_error",
    "rayservice_error",
]

MAX_RAY_CLUSTER_NAME: Final = 53  # MaxRayClusterNameLength
MAX_RAY_JOB_NAME: Final = MAX_RAY_CLUSTER_NAME - 6
MAX_RAY_SERVICE_NAME: Final = MAX_RAY_CLUSTER_NAME - 6
_RESOURCE_PARAMS: Final = ("num-cpus", "num-gpus", "memory", "resources")


def _dns1035(name: str) -> str:
    return "[" + " ".join(is_dns1035_label(name)) + "]"


def cluster_metadata_error(name: str) -> str | None:
    """ValidateRayClusterMetadata."""
    if len(name) > MAX_RAY_CLUSTER_NAME:
        return f"RayCluster name should be no more than {MAX_RAY_CLUSTER_NAME} characters"
    if is_dns1035_label(name):
        return f"RayCluster name should be a valid DNS1035 label: {_dns1035(name)}"
    return None


def autoscaling(spec: RayClusterSpec | None) -> bool:
    """IsAutoscalingEnabled."""
    return spec is not None and bool(spec.enable_in_tree_autoscaling)


def _group_resources(
    group: str, params: dict[str, str] | None, res: dict[str, str] | None
) -> str | None:
    if res and any(k in (params or {}) for k in _RESOURCE_PARAMS):
        return (
            "resource fields should not be set in both rayStartParams and Resources for "
            f"{group} group; please use only one"
        )
    if "labels" in (params or {}):
        return (
            f"rayStartParams['labels'] is not supported for {group} group; please use the "
            "top-level Labels field instead"
        )
    return None


def cluster_spec_error(spec: RayClusterSpec) -> str | None:
    """ValidateRayClusterSpec, for the fields kuota types."""
    head = spec.head_group_spec
    if head.template.spec is None or not head.template.spec.containers:
        return "headGroupSpec should have at least one container"
    err = _group_resources("Head", head.ray_start_params, head.resources)
    if err:
        return err
    scaling = autoscaling(spec)
    for wg in spec.worker_group_specs or ():
        if wg.template.spec is None or not wg.template.spec.containers:
            return "workerGroupSpec should have at least one container"
        lo, hi = wg.min_replicas, wg.max_replicas
        if not scaling and (lo is None or hi is None):
            return (
                f"worker group {wg.group_name} must set both minReplicas and maxReplicas "
                "when autoscaling is disabled"
            )
        if lo is not None and lo < 0:
            return f"worker group {wg.group_name} has negative minReplicas {lo}"
        if hi is not None and hi < 0:
            return f"worker group {wg.group_name} has negative maxReplicas {hi}"
        if lo is not None and hi is not None and lo > hi:
            return (
                f"worker group {wg.group_name} has minReplicas {lo} greater than maxReplicas {hi}"
            )
        err = _group_resources(wg.group_name, wg.ray_start_params, wg.resources)
        if err:
            return err
        if wg.suspend:
            if scaling:
                return f"worker group {wg.group_name} cannot be suspended with Autoscaler enabled"
            return (
                f"worker group {wg.group_name} can be suspended only when the "
                "RayJobDeletionPolicy feature gate is enabled"
            )
    opts = spec.autoscaler_options
    if opts is not None and opts.idle_timeout_seconds is not None and opts.idle_timeout_seconds < 0:
        return (
            "autoscalerOptions.idleTimeoutSeconds must be non-negative, got "
            f"{opts.idle_timeout_seconds}"
        )
    return None


def rayjob_error(job: RayJob) -> str | None:
    """ValidateRayJobMetadata and ValidateRayJobSpec (the RayJob controller's)."""
    name = job.metadata.name
    if len(name) > MAX_RAY_JOB_NAME:
        return (
            "The RayJob metadata is invalid: RayJob name should be no more than "
            f"{MAX_RAY_JOB_NAME} characters"
        )
    if is_dns1035_label(name):
        return (
            "The RayJob metadata is invalid: RayJob name should be a valid DNS1035 label: "
            + _dns1035(name)
        )
    spec = job.spec
    invalid = "The RayJob spec is invalid: "
    if spec.suspend and not spec.shutdown_after_job_finishes:
        return (
            invalid + "a RayJob with shutdownAfterJobFinishes set to false is not allowed to "
            "be suspended"
        )
    if (spec.ttl_seconds_after_finished or 0) < 0:
        return invalid + "TTLSecondsAfterFinished must be a non-negative integer"
    selector = bool(spec.cluster_selector)
    if spec.suspend and selector:
        return invalid + "the ClusterSelector mode doesn't support the suspend operation"
    if spec.ray_cluster_spec is None and not selector:
        return invalid + "one of RayClusterSpec or ClusterSelector must be set"
    mode = spec.submission_mode or "K8sJobMode"
    backoff = spec.backoff_limit or 0
    if selector:
        if not (spec.cluster_selector or {}).get("ray.io/cluster"):
            return "cluster name in ClusterSelector should not be empty"
        if mode == "SidecarMode":
            return "ClusterSelector is not supported in SidecarMode"
        if backoff > 0:
            return invalid + "BackoffLimit is incompatible with ClusterSelector mode"
    if mode == "InteractiveMode" and backoff > 0:
        return invalid + "BackoffLimit is incompatible with InteractiveMode"
    if mode == "SidecarMode":
        if spec.submitter_pod_template is not None:
            return "Currently, SidecarMode doesn't support SubmitterPodTemplate"
        if spec.submitter_config is not None:
            return "Currently, SidecarMode doesn't support SubmitterConfig"
        head = (
            spec.ray_cluster_spec.head_group_spec.template.spec if spec.ray_cluster_spec else None
        )
        if head is not None and head.restart_policy not in (None, "Never"):
            return "restartPolicy for head Pod should be Never or unset when using SidecarMode"
    if spec.ray_cluster_spec is not None:
        err = cluster_spec_error(spec.ray_cluster_spec)
        if err:
            return invalid + err
    if spec.active_deadline_seconds is not None and spec.active_deadline_seconds <= 0:
        return invalid + "activeDeadlineSeconds must be a positive integer"
    if backoff < 0:
        return invalid + "backoffLimit must be a positive integer"
    return None


def rayservice_error(svc: RayService) -> str | None:
    """ValidateRayServiceMetadata and ValidateRayServiceSpec, for the typed fields."""
    name = svc.metadata.name
    if len(name) > MAX_RAY_SERVICE_NAME:
        return (
            "The RayService metadata is invalid: RayService name should be no more than "
            f"{MAX_RAY_SERVICE_NAME} characters"
        )
    if is_dns1035_label(name):
        return (
            "The RayService metadata is invalid: RayService name should be a valid DNS1035 "
            "label: " + _dns1035(name)
        )
    delay = svc.spec.ray_cluster_deletion_delay_seconds
    if delay is not None and delay < 0:
        return (
            "The RayService spec is invalid: Spec.RayClusterDeletionDelaySeconds should be a "
            f"non-negative integer, got {delay}"
        )
    err = cluster_spec_error(svc.spec.ray_cluster_config)
    return "The RayService spec is invalid: " + err if err else None
