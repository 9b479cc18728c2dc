"""KubeRay's kinds (``ray.io/v1``: RayCluster, RayJob, RayService) as their
CRDs declare them (``ray-operator/apis/ray/v1`` of ray-project/kuberay):
types, the CRD defaults (``+kubebuilder:default``) and the CRD's own rules
(``managedBy``'s values and immutability). The fields kuota reads are typed;
the rest (services, ingress, network policies, TLS, GCS fault tolerance) are
carried through unchanged.

KubeRay has no defaulting webhook: its other checks run in its controllers
(``kuberay_rules``), which refuse a bad spec through the object's status.

Pure: no I/O.
"""

from __future__ import annotations

import operator
from datetime import datetime
from typing import Annotated, Final, Literal

import msgspec

from kuota.api.base import LIST_ATOMIC, Meta, Object, Quantity, Rule, cel
from kuota.api.k8s.corev1 import AnyList, AnyObject, PodTemplateSpec, ResourceRequirements, StrList
from kuota.api.meta import Conditions, ObjectMeta

__all__ = [
    "API_VERSION",
    "GROUP",
    "HeadGroupSpec",
    "RayCluster",
    "RayClusterSpec",
    "RayClusterStatus",
    "RayJob",
    "RayJobSpec",
    "RayJobStatus",
    "RayService",
    "WorkerGroupSpec",
    "default_cluster_spec",
    "default_raycluster",
    "default_rayjob",
    "default_rayservice",
]

GROUP: Final = "ray.io"
API_VERSION: Final = f"{GROUP}/v1"
OPERATOR: Final = "ray.io/kuberay-operator"  # utils.KubeRayController
MULTIKUEUE: Final = "kueue.x-k8s.io/multikueue"
MAX_INT32: Final = 2**31 - 1

# Labels KubeRay puts on the pods it makes (utils/constant.go).
CLUSTER_LABEL: Final = "ray.io/cluster"
NODE_TYPE_LABEL: Final = "ray.io/node-type"
GROUP_LABEL: Final = "ray.io/group"
IS_HEAD_LABEL: Final = "ray.io/is-ray-node"
ORIGINATED_FROM_CR_LABEL: Final = "ray.io/originated-from-crd"
ORIGINATED_FROM_NAME_LABEL: Final = "ray.io/originated-from-cr-name"
SUBMITTER_CONTAINER: Final = "ray-job-submitter"  # utils.SubmitterContainerName

_MANAGED_BY: Final = cel(
    Rule(
        "self == oldSelf",
        "the managedBy field is immutable",
        lambda _: True,
        transition=operator.eq,
    ),
    Rule(
        "self in ['ray.io/kuberay-operator', 'kueue.x-k8s.io/multikueue']",
        "the managedBy field value must be either 'ray.io/kuberay-operator' or "
        "'kueue.x-k8s.io/multikueue'",
        lambda v: v in (OPERATOR, MULTIKUEUE),
    ),
)
ManagedBy = Annotated[str, _MANAGED_BY]
Int32 = Annotated[int, Meta(ge=-(2**31), le=MAX_INT32)]
SubmissionMode = Literal["K8sJobMode", "HTTPMode", "InteractiveMode", "SidecarMode"]


class AutoscalerOptions(Object):
    resources: ResourceRequirements | None = None
    image: str | None = None
    image_pull_policy: str | None = None
    security_context: AnyObject | None = None
    idle_timeout_seconds: Int32 | None = None
    upscaling_mode: Literal["Default", "Aggressive", "Conservative"] | None = None
    version: Literal["v1", "v2"] | None = None
    env: AnyList | None = None
    env_from: AnyList | None = None
    volume_mounts: AnyList | None = None
    command: StrList | None = None
    args: StrList | None = None


class HeadGroupSpec(Object):
    template: PodTemplateSpec = msgspec.field(default_factory=PodTemplateSpec)
    head_service: AnyObject | None = None
    enable_ingress: bool | None = None
    ingress_options: AnyObject | None = None
    resources: dict[str, str] | None = None
    labels: dict[str, str] | None = None
    ray_start_params: dict[str, str] | None = None
    service_type: str | None = None


class ScaleStrategy(Object):
    workers_to_delete: StrList | None = None


class WorkerGroupSpec(Object):
    group_name: str
    template: PodTemplateSpec = msgspec.field(default_factory=PodTemplateSpec)
    suspend: bool | None = None
    replicas: Int32 | None = None  # CRD default 0
    min_replicas: Int32 | None = None  # CRD default 0
    max_replicas: Int32 | None = None  # CRD default 2147483647
    idle_timeout_seconds: Int32 | None = None
    priority: Int32 | None = None
    resources: dict[str, str] | None = None
    labels: dict[str, str] | None = None
    ray_start_params: dict[str, str] | None = None
    scale_strategy: ScaleStrategy | None = None
    num_of_hosts: Int32 | None = None  # CRD default 1


class RayClusterSpec(Object):
    head_group_spec: HeadGroupSpec = msgspec.field(default_factory=HeadGroupSpec)
    upgrade_strategy: AnyObject | None = None
    auth_options: AnyObject | None = None
    suspend: bool | None = None
    managed_by: ManagedBy | None = None
    autoscaler_options: AutoscalerOptions | None = None
    head_service_annotations: dict[str, str] | None = None
    enable_in_tree_autoscaling: bool | None = None
    gcs_fault_tolerance_options: AnyObject | None = None
    history_server_options: AnyObject | None = None
    network_policy: AnyObject | None = None
    tls_options: AnyObject | None = None
    ray_version: str | None = None
    worker_group_specs: Annotated[list[WorkerGroupSpec], LIST_ATOMIC] | None = None


ClusterState = Literal["ready", "failed", "suspended", "unhealthy", ""]


class HeadInfo(Object):
    pod_ip: str | None = msgspec.field(default=None, name="podIP")
    service_ip: str | None = msgspec.field(default=None, name="serviceIP")
    pod_name: str | None = None
    service_name: str | None = None


class RayClusterStatus(Object):
    state: ClusterState | None = None
    desired_cpu: Quantity | None = msgspec.field(default=None, name="desiredCPU")
    desired_memory: Quantity | None = None
    desired_gpu: Quantity | None = msgspec.field(default=None, name="desiredGPU")
    desired_tpu: Quantity | None = msgspec.field(default=None, name="desiredTPU")
    last_update_time: datetime | None = None
    state_transition_times: dict[str, datetime] | None = None
    endpoints: dict[str, str] | None = None
    head: HeadInfo | None = None
    reason: str | None = None
    conditions: Conditions | None = None
    ready_worker_replicas: int | None = None
    available_worker_replicas: int | None = None
    desired_worker_replicas: int | None = None
    min_worker_replicas: int | None = None
    max_worker_replicas: int | None = None
    observed_generation: int | None = None


class RayCluster(Object):
    api_version: str = API_VERSION
    kind: str = "RayCluster"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: RayClusterSpec = msgspec.field(default_factory=RayClusterSpec)
    status: RayClusterStatus | None = None


# ----------------------------------------------------------------------- RayJob
JobStatus = Literal["", "PENDING", "RUNNING", "STOPPED", "SUCCEEDED", "FAILED"]
JobDeploymentStatus = Literal[
    "",
    "Initializing",
    "Running",
    "Complete",
    "Failed",
    "ValidationFailed",
    "Suspending",
    "Suspended",
    "Retrying",
    "Waiting",
]


class SubmitterConfig(Object):
    backoff_limit: Int32 | None = None


class RayJobSpec(Object):
    active_deadline_seconds: Int32 | None = None
    backoff_limit: Int32 | None = None  # CRD default 0
    ray_cluster_spec: RayClusterSpec | None = None
    submitter_pod_template: PodTemplateSpec | None = None
    metadata: dict[str, str] | None = None
    cluster_selector: dict[str, str] | None = None
    submitter_config: SubmitterConfig | None = None
    managed_by: ManagedBy | None = None
    deletion_strategy: AnyObject | None = None
    entrypoint: str | None = None
    runtime_env_yaml: str | None = msgspec.field(default=None, name="runtimeEnvYAML")
    job_id: str | None = None
    submission_mode: SubmissionMode | None = None  # CRD default K8sJobMode
    entrypoint_resources: str | None = None
    entrypoint_num_cpus: float | None = None
    entrypoint_num_gpus: float | None = None
    ttl_seconds_after_finished: Int32 | None = None  # CRD default 0
    pre_running_deadline_seconds: Annotated[int, Meta(ge=1, le=MAX_INT32)] | None = None
    shutdown_after_job_finishes: bool = False
    suspend: bool = False


class RayJobStatusInfo(Object):
    start_time: datetime | None = None
    end_time: datetime | None = None


class RayJobStatus(Object):
    ray_job_info: RayJobStatusInfo | None = None
    job_id: str | None = None
    ray_cluster_name: str | None = None
    dashboard_url: str | None = msgspec.field(default=None, name="dashboardURL")
    job_status: JobStatus | None = None
    job_deployment_status: JobDeploymentStatus | None = None
    reason: str | None = None
    message: str | None = None
    start_time: datetime | None = None
    end_time: datetime | None = None
    succeeded: int | None = None
    failed: int | None = None
    ray_cluster_status: RayClusterStatus | None = None
    job_status_check_failure_start_time: datetime | None = None
    observed_generation: int | None = None


class RayJob(Object):
    api_version: str = API_VERSION
    kind: str = "RayJob"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: RayJobSpec = msgspec.field(default_factory=RayJobSpec)
    status: RayJobStatus | None = None


# ------------------------------------------------------------------- RayService
class RayServiceSpec(Object):
    ray_cluster_config: RayClusterSpec = msgspec.field(default_factory=RayClusterSpec)
    serve_config_v2: str | None = msgspec.field(default=None, name="serveConfigV2")
    upgrade_strategy: AnyObject | None = None
    serve_service: AnyObject | None = None
    managed_by: ManagedBy | None = None
    ray_cluster_deletion_delay_seconds: Int32 | None = None
    service_unhealthy_second_threshold: Int32 | None = None
    deployment_unhealthy_second_threshold: Int32 | None = None
    exclude_head_pod_from_serve_svc: bool | None = None
    suspend: bool | None = None


class RayServiceStatus(Object):
    ray_cluster_name: str | None = None
    application_statuses: AnyObject | None = None
    ray_cluster_status: RayClusterStatus | None = None
    target_capacity: Int32 | None = None
    traffic_routed_percent: Int32 | None = None
    last_traffic_migrated_time: datetime | None = None


class RayServiceStatuses(Object):
    active_service_status: RayServiceStatus | None = None
    pending_service_status: RayServiceStatus | None = None
    conditions: Conditions | None = None
    service_status: str | None = None
    num_serve_endpoints: int | None = None
    last_update_time: datetime | None = None
    observed_generation: int | None = None


class RayService(Object):
    api_version: str = API_VERSION
    kind: str = "RayService"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: RayServiceSpec = msgspec.field(default_factory=RayServiceSpec)
    status: RayServiceStatuses | None = None


# ------------------------------------------------------------------- defaulting
def default_cluster_spec(spec: RayClusterSpec) -> None:
    """The CRD's defaults of a RayClusterSpec's worker groups (in place)."""
    for wg in spec.worker_group_specs or ():
        if wg.replicas is None:
            wg.replicas = 0
        if wg.min_replicas is None:
            wg.min_replicas = 0
        if wg.max_replicas is None:
            wg.max_replicas = MAX_INT32
        if wg.num_of_hosts is None:
            wg.num_of_hosts = 1
        if wg.priority is None:
            wg.priority = 0


def default_raycluster(rc: RayCluster) -> RayCluster:
    default_cluster_spec(rc.spec)
    return rc


def default_rayjob(job: RayJob) -> RayJob:
    spec = job.spec
    if spec.backoff_limit is None:
        spec.backoff_limit = 0
    if spec.submission_mode is None:
        spec.submission_mode = "K8sJobMode"
    if spec.ttl_seconds_after_finished is None:
        spec.ttl_seconds_after_finished = 0
    if spec.ray_cluster_spec is not None:
        default_cluster_spec(spec.ray_cluster_spec)
    return job


def default_rayservice(svc: RayService) -> RayService:
    default_cluster_spec(svc.spec.ray_cluster_config)
    return svc
