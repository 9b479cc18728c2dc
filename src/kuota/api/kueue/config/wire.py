"""The wire structs of Kueue's Configuration, v1beta1 and v1beta2: every field of
``apis/config/v1beta{1,2}/configuration_types.go``."""

from __future__ import annotations

from typing import Annotated

from kuota.api.base import Meta, Object, Quantity
from kuota.api.meta import LabelSelector

GROUP = "config.kueue.x-k8s.io"
V1BETA1 = f"{GROUP}/v1beta1"
V1BETA2 = f"{GROUP}/v1beta2"
API_VERSIONS = (V1BETA1, V1BETA2)
KIND = "Configuration"

# A field Kueue's strict decoder does not know. Kubernetes' field errors have no
# type for it (the API server prunes such fields); Kueue refuses the whole file.
UNKNOWN_FIELD = "Unknown field"

# ============================================================================ wire structs
# A metav1.Duration: a Go duration string on the wire. Marked so the walkers below find
# every duration field (syntax check on decode, Go's canonical form on encode).
DURATION_MARK = {"kuota": "duration"}
Duration = Annotated[
    str, Meta(extra=DURATION_MARK, description="A Go duration, e.g. 5m, 1h30m, 300ms.")
]
Int32 = Annotated[int, Meta(ge=-(2**31), le=2**31 - 1)]


class LeaderElectionConfiguration(Object):
    """component-base's ``LeaderElectionConfiguration`` (v1alpha1)."""

    leader_elect: bool | None = None
    lease_duration: Duration | None = None
    renew_deadline: Duration | None = None
    retry_period: Duration | None = None
    resource_lock: str = ""
    resource_name: str = ""
    resource_namespace: str = ""


class ControllerWebhook(Object):
    port: int | None = None
    host: str = ""
    cert_dir: str = ""


class LocalQueueMetrics(Object):
    enable: bool = False
    local_queue_selector: LabelSelector | None = None


class ControllerMetricsCustomLabelV1Beta2(Object):
    name: str = ""
    source_label_key: str = ""
    source_annotation_key: str = ""
    source_kind: str | None = None
    tracked_values: list[str] | None = None


class ControllerMetricsCustomLabelV1Beta1(Object):
    name: str = ""
    source_label_key: str = ""
    source_annotation_key: str = ""


class ControllerMetricsV1Beta2(Object):
    bind_address: str = ""
    enable_cluster_queue_resources: bool = False
    custom_labels: list[ControllerMetricsCustomLabelV1Beta2] | None = None
    local_queue_metrics: LocalQueueMetrics | None = None


class ControllerMetricsV1Beta1(Object):
    bind_address: str = ""
    enable_cluster_queue_resources: bool = False
    custom_labels: list[ControllerMetricsCustomLabelV1Beta1] | None = None
    local_queue_metrics: LocalQueueMetrics | None = None


class ControllerHealth(Object):
    health_probe_bind_address: str = ""
    readiness_endpoint_name: str = ""
    liveness_endpoint_name: str = ""


class ControllerConfigurationSpec(Object):
    group_kind_concurrency: dict[str, int] | None = None
    # A time.Duration, not a metav1.Duration: integer nanoseconds on the wire.
    cache_sync_timeout: int | None = None


class TLSOptions(Object):
    min_version: str = ""
    cipher_suites: list[str] | None = None
    curve_preferences: list[Int32] | None = None


class InternalCertManagement(Object):
    enable: bool | None = None
    webhook_service_name: str | None = None
    webhook_secret_name: str | None = None


class RequeuingStrategySpec(Object):
    """``RequeuingStrategy`` on the wire (the same in both versions)."""

    timestamp: str | None = None  # Eviction | Creation, checked by validation as Kueue does
    backoff_limit_count: Int32 | None = None
    backoff_base_seconds: Int32 | None = None
    backoff_max_seconds: Int32 | None = None


class WaitForPodsReadyV1Beta2(Object):
    timeout: Duration | None = None  # Go: a non-pointer Duration, absent == 0
    block_admission: bool | None = None
    requeuing_strategy: RequeuingStrategySpec | None = None
    recovery_timeout: Duration | None = None


class WaitForPodsReadyV1Beta1(Object):
    enable: bool = False
    timeout: Duration | None = None
    block_admission: bool | None = None
    requeuing_strategy: RequeuingStrategySpec | None = None
    recovery_timeout: Duration | None = None


class ClientConnection(Object):
    qps: float | None = None
    burst: Int32 | None = None


class ExecEnvVar(Object):
    name: str = ""
    value: str = ""


class ExecConfig(Object):
    """client-go's ``clientcmdapi.ExecConfig`` as it serializes."""

    command: str = ""
    args: list[str] | None = None
    env: list[ExecEnvVar] | None = None
    api_version: str = ""
    install_hint: str = ""
    provide_cluster_info: bool = False
    interactive_mode: str = ""


class ClusterProfileAccessProvider(Object):
    name: str = ""
    exec_config: ExecConfig | None = None


class ClusterProfile(Object):
    access_providers: list[ClusterProfileAccessProvider] | None = None
    credentials_providers: list[ClusterProfileAccessProvider] | None = None  # deprecated


class MultiKueueExternalFramework(Object):
    name: str = ""


class IncrementalDispatcherConfig(Object):
    step_size: Int32 | None = None


class MultiKueueV1Beta2(Object):
    gc_interval: Duration | None = None
    origin: str | None = None
    worker_lost_timeout: Duration | None = None
    dispatcher_name: str | None = None
    external_frameworks: list[MultiKueueExternalFramework] | None = None
    cluster_profile: ClusterProfile | None = None
    incremental_dispatcher_config: IncrementalDispatcherConfig | None = None


class MultiKueueV1Beta1(Object):
    gc_interval: Duration | None = None
    origin: str | None = None
    worker_lost_timeout: Duration | None = None
    dispatcher_name: str | None = None
    external_frameworks: list[MultiKueueExternalFramework] | None = None


class IntegrationsV1Beta2(Object):
    frameworks: list[str] | None = None
    external_frameworks: list[str] | None = None
    label_keys_to_copy: list[str] | None = None


class PodIntegrationOptions(Object):
    namespace_selector: LabelSelector | None = None
    pod_selector: LabelSelector | None = None


class IntegrationsV1Beta1(Object):
    frameworks: list[str] | None = None
    external_frameworks: list[str] | None = None
    pod_options: PodIntegrationOptions | None = None  # deprecated, ignored by Kueue
    label_keys_to_copy: list[str] | None = None


class ResourceTransformationSpec(Object):
    """``ResourceTransformation`` on the wire (the same in both versions)."""

    input: str = ""
    strategy: str | None = None  # Retain | Replace, checked by validation
    multiply_by: str = ""
    outputs: dict[str, Quantity] | None = None


class CELDeviceSelector(Object):
    expression: str = ""


class DeviceSelector(Object):
    cel: CELDeviceSelector | None = None


class DeviceClassCounterSource(Object):
    name: str = ""
    driver: str = ""
    device_selector: DeviceSelector | None = None


class DeviceClassCapacitySource(Object):
    name: str = ""
    driver: str = ""
    device_selector: DeviceSelector | None = None


class DeviceClassSourceConfig(Object):
    counter: DeviceClassCounterSource | None = None
    capacity: DeviceClassCapacitySource | None = None


class DeviceClassMappingV1Beta2(Object):
    name: str = ""
    device_class_names: list[str] | None = None
    sources: list[DeviceClassSourceConfig] | None = None


class DeviceClassMappingV1Beta1(Object):
    name: str = ""
    device_class_names: list[str] | None = None


class ResourcesV1Beta2(Object):
    quota_check_strategy: str | None = None  # BlockUndeclared | IgnoreUndeclared
    exclude_resource_prefixes: list[str] | None = None
    transformations: list[ResourceTransformationSpec] | None = None
    device_class_mappings: list[DeviceClassMappingV1Beta2] | None = None


class ResourcesV1Beta1(Object):
    exclude_resource_prefixes: list[str] | None = None
    transformations: list[ResourceTransformationSpec] | None = None
    device_class_mappings: list[DeviceClassMappingV1Beta1] | None = None


class FairSharingV1Beta2(Object):
    preemption_strategies: list[str] | None = None


class FairSharingV1Beta1(Object):
    enable: bool = False
    preemption_strategies: list[str] | None = None


class AdmissionFairSharingSpec(Object):
    """``AdmissionFairSharing`` on the wire (the same in both versions)."""

    usage_half_life_time: Duration | None = None
    usage_sampling_interval: Duration | None = None
    resource_weights: dict[str, float] | None = None


class WorkloadRetentionPolicy(Object):
    after_finished: Duration | None = None
    after_deactivated_by_kueue: Duration | None = None


class ObjectRetentionPolicies(Object):
    workloads: WorkloadRetentionPolicy | None = None


class VisibilityServerConfiguration(Object):
    bind_address: str | None = None
    bind_port: Int32 | None = None


class ClusterQueueVisibility(Object):
    max_count: Int32 = 0


class QueueVisibility(Object):
    """v1beta1 only; removed from Kueue (kept so old files still decode)."""

    cluster_queues: ClusterQueueVisibility | None = None
    update_interval_seconds: Int32 = 0


class ConfigurationV1Beta2(Object):
    """``config.kueue.x-k8s.io/v1beta2`` Configuration; ControllerManager's fields inline."""

    api_version: str = ""
    kind: str = ""
    namespace: str | None = None
    # ControllerManager (inline)
    webhook: ControllerWebhook | None = None
    leader_election: LeaderElectionConfiguration | None = None
    metrics: ControllerMetricsV1Beta2 | None = None
    health: ControllerHealth | None = None
    pprof_bind_address: str = ""
    controller: ControllerConfigurationSpec | None = None
    tls: TLSOptions | None = None
    # Configuration
    manage_jobs_without_queue_name: bool = False
    managed_jobs_namespace_selector: LabelSelector | None = None
    internal_cert_management: InternalCertManagement | None = None
    wait_for_pods_ready: WaitForPodsReadyV1Beta2 | None = None
    client_connection: ClientConnection | None = None
    integrations: IntegrationsV1Beta2 | None = None
    multi_kueue: MultiKueueV1Beta2 | None = None
    fair_sharing: FairSharingV1Beta2 | None = None
    admission_fair_sharing: AdmissionFairSharingSpec | None = None
    resources: ResourcesV1Beta2 | None = None
    feature_gates: dict[str, bool] | None = None
    object_retention_policies: ObjectRetentionPolicies | None = None
    visibility_server: VisibilityServerConfiguration | None = None


class ConfigurationV1Beta1(Object):
    """``config.kueue.x-k8s.io/v1beta1`` Configuration (deprecated, still common)."""

    api_version: str = ""
    kind: str = ""
    namespace: str | None = None
    webhook: ControllerWebhook | None = None
    leader_election: LeaderElectionConfiguration | None = None
    metrics: ControllerMetricsV1Beta1 | None = None
    health: ControllerHealth | None = None
    pprof_bind_address: str = ""
    controller: ControllerConfigurationSpec | None = None
    tls: TLSOptions | None = None
    manage_jobs_without_queue_name: bool = False
    managed_jobs_namespace_selector: LabelSelector | None = None
    internal_cert_management: InternalCertManagement | None = None
    wait_for_pods_ready: WaitForPodsReadyV1Beta1 | None = None
    client_connection: ClientConnection | None = None
    integrations: IntegrationsV1Beta1 | None = None
    queue_visibility: QueueVisibility | None = None
    multi_kueue: MultiKueueV1Beta1 | None = None
    fair_sharing: FairSharingV1Beta1 | None = None
    admission_fair_sharing: AdmissionFairSharingSpec | None = None
    resources: ResourcesV1Beta1 | None = None
    feature_gates: dict[str, bool] | None = None
    object_retention_policies: ObjectRetentionPolicies | None = None


WIRE_STRUCTS = {V1BETA1: ConfigurationV1Beta1, V1BETA2: ConfigurationV1Beta2}
