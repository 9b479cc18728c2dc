"""Spark Operator's SparkApplication (``sparkoperator.k8s.io/v1beta2``,
kubeflow/spark-operator ``api/v1beta2``, v2.4 as Kueue vendors it): the
application's spec (its driver and executors), its status
(``applicationState``, ``executorState``), the CRD's rules (its kubebuilder
markers: enums, minimums, the pod name pattern) and the operator's defaults
(``SetSparkApplicationDefaults``: Scala, cluster mode, restart policy Never,
1 core and 1g for the driver and the executors, one executor unless dynamic
allocation is on).

Typed: what Kueue and the simulated operator read. Carried: the pod fields
they only pass on (env, secrets, security contexts, lifecycle, ingress).

Pure: no I/O.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Final, Literal

import msgspec

from kuota.api.base import Meta, Object, pattern
from kuota.api.k8s.corev1 import (
    Affinity,
    AnyList,
    AnyObject,
    Container,
    PodTemplateSpec,
    ResourceList,
    Toleration,
)
from kuota.api.meta import ObjectMeta

__all__ = [
    "API_VERSION",
    "GROUP",
    "KIND",
    "ApplicationStateType",
    "SparkApplication",
    "default_sparkapplication",
]

GROUP: Final = "sparkoperator.k8s.io"
API_VERSION: Final = f"{GROUP}/v1beta2"
KIND: Final = "SparkApplication"

Int32 = Annotated[int, Meta(ge=-(2**31), le=2**31 - 1)]
_MIN1 = Annotated[int, Meta(ge=1, le=2**31 - 1)]
_DNS_SUBDOMAIN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"

ApplicationStateType = Literal[
    "",
    "SUBMITTED",
    "RUNNING",
    "COMPLETED",
    "FAILED",
    "SUBMISSION_FAILED",
    "PENDING_RERUN",
    "INVALIDATING",
    "SUCCEEDING",
    "FAILING",
    "SUSPENDING",
    "SUSPENDED",
    "RESUMING",
    "UNKNOWN",
]
ExecutorState = Literal["PENDING", "RUNNING", "COMPLETED", "FAILED", "UNKNOWN"]


class NamePath(Object):
    name: str
    path: str


class SecretInfo(Object):
    name: str
    path: str
    secret_type: Literal["GCPServiceAccount", "HadoopDelegationToken", "Generic"]


class NameKey(Object):
    name: str
    key: str


class Port(Object):
    name: str
    protocol: str
    container_port: Int32


class GPUSpec(Object):
    name: str
    quantity: int


class SparkPodSpec(Object):
    """What the driver and the executors share (SparkPodSpec, inlined)."""

    # (schemaless in the CRD: a pod template Spark >= 3.0 starts the pod from)
    template: PodTemplateSpec | None = None
    cores: _MIN1 | None = None
    core_limit: str | None = None
    memory: str | None = None
    memory_limit: str | None = None
    memory_overhead: str | None = None
    gpu: GPUSpec | None = None
    image: str | None = None
    config_maps: list[NamePath] | None = None
    secrets: list[SecretInfo] | None = None
    env: AnyList | None = None
    env_vars: dict[str, str] | None = None
    env_from: AnyList | None = None
    env_secret_key_refs: dict[str, NameKey] | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    volume_mounts: AnyList | None = None
    affinity: Affinity | None = None
    tolerations: list[Toleration] | None = None
    pod_security_context: AnyObject | None = None
    security_context: AnyObject | None = None
    scheduler_name: str | None = None
    sidecars: list[Container] | None = None
    init_containers: list[Container] | None = None
    host_network: bool | None = None
    node_selector: dict[str, str] | None = None
    dns_config: AnyObject | None = None
    termination_grace_period_seconds: int | None = None
    service_account: str | None = None
    host_aliases: AnyList | None = None
    share_process_namespace: bool | None = None


class DriverSpec(SparkPodSpec):
    pod_name: Annotated[str, pattern(_DNS_SUBDOMAIN)] | None = None
    core_request: str | None = None
    java_options: str | None = None
    lifecycle: AnyObject | None = None
    kubernetes_master: str | None = None
    service_annotations: dict[str, str] | None = None
    service_labels: dict[str, str] | None = None
    ports: list[Port] | None = None
    priority_class_name: str | None = None


class ExecutorSpec(SparkPodSpec):
    instances: _MIN1 | None = None
    core_request: str | None = None
    java_options: str | None = None
    lifecycle: AnyObject | None = None
    delete_on_termination: bool | None = None
    ports: list[Port] | None = None
    priority_class_name: str | None = None


class Dependencies(Object):
    jars: list[str] | None = None
    files: list[str] | None = None
    py_files: list[str] | None = None
    packages: list[str] | None = None
    exclude_packages: list[str] | None = None
    repositories: list[str] | None = None
    archives: list[str] | None = None


class RestartPolicy(Object):
    type: Literal["Never", "Always", "OnFailure"] | None = None
    on_submission_failure_retries: Annotated[int, Meta(ge=0)] | None = None
    on_failure_retries: Annotated[int, Meta(ge=0)] | None = None
    on_submission_failure_retry_interval: Annotated[int, Meta(ge=1)] | None = None
    on_failure_retry_interval: Annotated[int, Meta(ge=1)] | None = None


class PrometheusSpec(Object):
    jmx_exporter_jar: str
    port: Annotated[int, Meta(ge=1024, le=49151)] | None = None
    port_name: str | None = None
    config_file: str | None = None
    configuration: str | None = None


class MonitoringSpec(Object):
    expose_driver_metrics: bool
    expose_executor_metrics: bool
    metrics_properties: str | None = None
    metrics_properties_file: str | None = None
    prometheus: PrometheusSpec | None = None


class BatchSchedulerConfiguration(Object):
    queue: str | None = None
    priority_class_name: str | None = None
    resources: ResourceList | None = None


class SparkUIConfiguration(Object):
    service_port: Int32 | None = None
    service_port_name: str | None = None
    service_type: str | None = None
    service_annotations: dict[str, str] | None = None
    service_labels: dict[str, str] | None = None
    ingress_annotations: dict[str, str] | None = None
    ingress_tls: AnyList | None = msgspec.field(default=None, name="ingressTLS")


class DriverIngressConfiguration(Object):
    service_port: Int32 | None
    service_port_name: str | None
    service_type: str | None = None
    service_annotations: dict[str, str] | None = None
    service_labels: dict[str, str] | None = None
    ingress_url_format: str | None = msgspec.field(default=None, name="ingressURLFormat")
    ingress_annotations: dict[str, str] | None = None
    ingress_tls: AnyList | None = msgspec.field(default=None, name="ingressTLS")


class DynamicAllocation(Object):
    enabled: bool = False
    initial_executors: Int32 | None = None
    min_executors: Int32 | None = None
    max_executors: Int32 | None = None
    shuffle_tracking_enabled: bool | None = None
    shuffle_tracking_timeout: int | None = None


class SparkApplicationSpec(Object):
    type: Literal["Java", "Python", "Scala", "R"]
    spark_version: str
    main_application_file: str | None
    driver: DriverSpec
    executor: ExecutorSpec
    suspend: bool | None = None
    mode: Literal["cluster", "client"] | None = None
    proxy_user: str | None = None
    image: str | None = None
    image_pull_policy: str | None = None
    image_pull_secrets: list[str] | None = None
    main_class: str | None = None
    arguments: list[str] | None = None
    spark_conf: dict[str, str] | None = None
    hadoop_conf: dict[str, str] | None = None
    spark_config_map: str | None = None
    hadoop_config_map: str | None = None
    volumes: AnyList | None = None
    deps: Dependencies | None = None
    restart_policy: RestartPolicy | None = None
    node_selector: dict[str, str] | None = None
    failure_retries: Int32 | None = None
    retry_interval: int | None = None
    python_version: Literal["2", "3"] | None = None
    memory_overhead_factor: str | None = None
    monitoring: MonitoringSpec | None = None
    batch_scheduler: str | None = None
    time_to_live_seconds: int | None = None
    batch_scheduler_options: BatchSchedulerConfiguration | None = None
    spark_ui_options: SparkUIConfiguration | None = msgspec.field(
        default=None, name="sparkUIOptions"
    )
    driver_ingress_options: list[DriverIngressConfiguration] | None = None
    dynamic_allocation: DynamicAllocation | None = None


class ApplicationState(Object):
    state: ApplicationStateType = ""
    error_message: str | None = None


class DriverInfo(Object):
    web_ui_service_name: str | None = msgspec.field(default=None, name="webUIServiceName")
    web_ui_address: str | None = msgspec.field(default=None, name="webUIAddress")
    web_ui_port: Int32 | None = msgspec.field(default=None, name="webUIPort")
    web_ui_ingress_name: str | None = msgspec.field(default=None, name="webUIIngressName")
    web_ui_ingress_address: str | None = msgspec.field(default=None, name="webUIIngressAddress")
    pod_name: str | None = None


class SparkApplicationStatus(Object):
    spark_application_id: str | None = None
    submission_id: str | None = msgspec.field(default=None, name="submissionID")
    last_submission_attempt_time: datetime | None = None
    termination_time: datetime | None = None
    driver_info: DriverInfo = msgspec.field(default_factory=DriverInfo)
    application_state: ApplicationState | None = None
    executor_state: dict[str, ExecutorState] | None = None
    execution_attempts: Int32 | None = None
    submission_attempts: Int32 | None = None


class SparkApplication(Object):
    api_version: str = API_VERSION
    kind: str = KIND
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: SparkApplicationSpec = msgspec.field(
        default_factory=lambda: SparkApplicationSpec(
            type="Scala",
            spark_version="",
            main_application_file=None,
            driver=DriverSpec(),
            executor=ExecutorSpec(),
        )
    )
    status: SparkApplicationStatus | None = None


def state_of(app: SparkApplication) -> str:
    """``status.applicationState.state`` ("" for a new application)."""
    st = app.status
    return st.application_state.state if st and st.application_state else ""


def dynamic_allocation_enabled(spec: SparkApplicationSpec) -> bool:
    """isDynamicAllocationEnabled: the spec's, else ``spark.dynamicallocation.enabled``
    (strconv.ParseBool) in sparkConf."""
    if spec.dynamic_allocation is not None:
        return spec.dynamic_allocation.enabled
    raw = (spec.spark_conf or {}).get("spark.dynamicallocation.enabled", "")
    return raw in ("1", "t", "T", "TRUE", "true", "True")


def default_sparkapplication(app: Any, gates: Any = None) -> None:
    """SetSparkApplicationDefaults (the operator's mutating webhook), in place."""
    spec: SparkApplicationSpec = app.spec
    conf = spec.spark_conf or {}
    if not spec.mode:
        spec.mode = "cluster"
    rp = spec.restart_policy
    if rp is None:
        rp = spec.restart_policy = RestartPolicy()
    if not rp.type:
        rp.type = "Never"
    if rp.type != "Never":
        if rp.on_failure_retry_interval is None:
            rp.on_failure_retry_interval = 5
        if rp.on_submission_failure_retry_interval is None:
            rp.on_submission_failure_retry_interval = 5
    d, x = spec.driver, spec.executor
    if "spark.driver.cores" not in conf and d.cores is None:
        d.cores = 1
    if "spark.driver.memory" not in conf and d.memory is None:
        d.memory = "1g"
    if "spark.executor.cores" not in conf and x.cores is None:
        x.cores = 1
    if "spark.executor.memory" not in conf and x.memory is None:
        x.memory = "1g"
    dyn = dynamic_allocation_enabled(spec)
    if x.instances is None and not conf.get("spark.executor.instances") and not dyn:
        x.instances = 1
    da = spec.dynamic_allocation
    if dyn and da is not None and da.shuffle_tracking_enabled is None:
        da.shuffle_tracking_enabled = True
