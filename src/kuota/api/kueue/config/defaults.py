"""Each version's ``SetDefaults_Configuration`` (``defaults.go``)."""

from __future__ import annotations

from typing import Any

from kuota.api.kueue.config.decoding import optional_duration_ns
from kuota.api.kueue.config.wire import (
    ClientConnection,
    ConfigurationV1Beta1,
    ConfigurationV1Beta2,
    ControllerHealth,
    ControllerMetricsV1Beta1,
    ControllerMetricsV1Beta2,
    ControllerWebhook,
    IncrementalDispatcherConfig,
    IntegrationsV1Beta1,
    IntegrationsV1Beta2,
    InternalCertManagement,
    LeaderElectionConfiguration,
    LocalQueueMetrics,
    MultiKueueV1Beta1,
    MultiKueueV1Beta2,
    RequeuingStrategySpec,
    VisibilityServerConfiguration,
    WaitForPodsReadyV1Beta1,
    WaitForPodsReadyV1Beta2,
)
from kuota.api.meta import LabelSelector, LabelSelectorRequirement

# ============================================================================ defaulting
DEFAULT_NAMESPACE = "kueue-system"
DEFAULT_WEBHOOK_SERVICE_NAME = "kueue-webhook-service"
DEFAULT_WEBHOOK_SECRET_NAME = "kueue-webhook-server-cert"
DEFAULT_WEBHOOK_PORT = 9443
DEFAULT_WEBHOOK_CERT_DIR = "/tmp/k8s-webhook-server/serving-certs"
DEFAULT_HEALTH_PROBE_BIND_ADDRESS = ":8081"
DEFAULT_METRICS_BIND_ADDRESS = ":8443"
DEFAULT_LEADER_ELECTION_ID = "c1f6bfd2.kueue.x-k8s.io"
DEFAULT_CLIENT_CONNECTION_QPS = 300.0
DEFAULT_CLIENT_CONNECTION_BURST = 500
DEFAULT_JOB_FRAMEWORK = "batch/job"
DEFAULT_MULTIKUEUE_ORIGIN = "multikueue"
DEFAULT_REQUEUING_BACKOFF_BASE_SECONDS = 60
DEFAULT_REQUEUING_BACKOFF_MAX_SECONDS = 3600
DEFAULT_VISIBILITY_BIND_PORT = 8082
DISPATCHER_ALL_AT_ONCE = "kueue.x-k8s.io/multikueue-dispatcher-all-at-once"
DISPATCHER_INCREMENTAL = "kueue.x-k8s.io/multikueue-dispatcher-incremental"
LESS_THAN_OR_EQUAL_TO_FINAL_SHARE = "LessThanOrEqualToFinalShare"
LESS_THAN_INITIAL_SHARE = "LessThanInitialShare"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


def or_default(value: Any, default: Any) -> Any:
    """Go's ``cmp.Or`` on a pointer: the value unless it is nil."""
    return default if value is None else value


def _default_controller_manager(cfg: ConfigurationV1Beta2 | ConfigurationV1Beta1) -> None:
    # Namespace: Kueue falls back to the service account's namespace file first;
    # kuota reads no files here, so the constant default applies.
    cfg.namespace = or_default(cfg.namespace, DEFAULT_NAMESPACE)
    cfg.webhook = or_default(cfg.webhook, ControllerWebhook())
    cfg.webhook.port = or_default(cfg.webhook.port, DEFAULT_WEBHOOK_PORT)
    cfg.webhook.cert_dir = cfg.webhook.cert_dir or DEFAULT_WEBHOOK_CERT_DIR
    metrics_cls = (
        ControllerMetricsV1Beta2
        if isinstance(cfg, ConfigurationV1Beta2)
        else ControllerMetricsV1Beta1
    )
    cfg.metrics = or_default(cfg.metrics, metrics_cls())
    cfg.metrics.bind_address = cfg.metrics.bind_address or DEFAULT_METRICS_BIND_ADDRESS
    cfg.health = or_default(cfg.health, ControllerHealth())
    cfg.health.health_probe_bind_address = (
        cfg.health.health_probe_bind_address or DEFAULT_HEALTH_PROBE_BIND_ADDRESS
    )
    le = cfg.leader_election = or_default(cfg.leader_election, LeaderElectionConfiguration())
    le.resource_name = le.resource_name or DEFAULT_LEADER_ELECTION_ID
    cfg.metrics.local_queue_metrics = or_default(
        cfg.metrics.local_queue_metrics, LocalQueueMetrics(enable=True)
    )
    le.resource_lock = le.resource_lock or "leases"
    # configv1alpha1.RecommendedDefaultLeaderElectionConfiguration
    if optional_duration_ns(le.lease_duration) == 0:
        le.lease_duration = "15s"
    if optional_duration_ns(le.renew_deadline) == 0:
        le.renew_deadline = "10s"
    if optional_duration_ns(le.retry_period) == 0:
        le.retry_period = "2s"
    le.leader_elect = or_default(le.leader_elect, True)

    icm = cfg.internal_cert_management = or_default(
        cfg.internal_cert_management, InternalCertManagement()
    )
    icm.enable = or_default(icm.enable, True)
    if icm.enable:
        icm.webhook_service_name = or_default(
            icm.webhook_service_name, DEFAULT_WEBHOOK_SERVICE_NAME
        )
        icm.webhook_secret_name = or_default(icm.webhook_secret_name, DEFAULT_WEBHOOK_SECRET_NAME)

    cc = cfg.client_connection = or_default(cfg.client_connection, ClientConnection())
    cc.qps = or_default(cc.qps, DEFAULT_CLIENT_CONNECTION_QPS)
    cc.burst = or_default(cc.burst, DEFAULT_CLIENT_CONNECTION_BURST)


def _default_requeuing(rs: RequeuingStrategySpec | None) -> RequeuingStrategySpec:
    rs = or_default(rs, RequeuingStrategySpec())
    rs.timestamp = or_default(rs.timestamp, "Eviction")
    rs.backoff_base_seconds = or_default(
        rs.backoff_base_seconds, DEFAULT_REQUEUING_BACKOFF_BASE_SECONDS
    )
    rs.backoff_max_seconds = or_default(
        rs.backoff_max_seconds, DEFAULT_REQUEUING_BACKOFF_MAX_SECONDS
    )
    return rs


def _default_common_tail(cfg: ConfigurationV1Beta2 | ConfigurationV1Beta1) -> None:
    """The defaults after waitForPodsReady, identical in both versions."""
    integrations_cls = (
        IntegrationsV1Beta2 if isinstance(cfg, ConfigurationV1Beta2) else IntegrationsV1Beta1
    )
    cfg.integrations = or_default(cfg.integrations, integrations_cls())
    if not cfg.integrations.frameworks:
        cfg.integrations.frameworks = [DEFAULT_JOB_FRAMEWORK]
    cfg.managed_jobs_namespace_selector = or_default(
        cfg.managed_jobs_namespace_selector, _default_namespace_selector(cfg.namespace)
    )
    mk_cls = MultiKueueV1Beta2 if isinstance(cfg, ConfigurationV1Beta2) else MultiKueueV1Beta1
    mk = cfg.multi_kueue = or_default(cfg.multi_kueue, mk_cls())
    mk.gc_interval = or_default(mk.gc_interval, "1m0s")
    mk.origin = mk.origin or DEFAULT_MULTIKUEUE_ORIGIN  # "" is defaulted too (ptr.Deref)
    mk.worker_lost_timeout = or_default(mk.worker_lost_timeout, "15m0s")
    mk.dispatcher_name = or_default(mk.dispatcher_name, DISPATCHER_ALL_AT_ONCE)


def _default_namespace_selector(namespace: str | None) -> LabelSelector:
    return LabelSelector(
        match_expressions=[
            LabelSelectorRequirement(
                key=NAMESPACE_NAME_LABEL,
                operator="NotIn",
                values=["kube-system", namespace or ""],
            )
        ]
    )


def _default_afs_and_transformations(cfg: ConfigurationV1Beta2 | ConfigurationV1Beta1) -> None:
    afs = cfg.admission_fair_sharing
    if afs is not None and optional_duration_ns(afs.usage_sampling_interval) == 0:
        afs.usage_sampling_interval = "5m0s"
    if cfg.resources is not None:
        for t in cfg.resources.transformations or ():
            t.strategy = t.strategy or "Retain"


def default_v1beta2(cfg: ConfigurationV1Beta2) -> ConfigurationV1Beta2:
    """``apis/config/v1beta2`` SetDefaults_Configuration, in place (returns ``cfg``)."""
    _default_controller_manager(cfg)
    # waitForPodsReady is on by default in v1beta2; a zero timeout means the default.
    w = cfg.wait_for_pods_ready = or_default(cfg.wait_for_pods_ready, WaitForPodsReadyV1Beta2())
    if optional_duration_ns(w.timeout) == 0:
        w.timeout = "30m0s"
    w.block_admission = or_default(w.block_admission, False)
    w.recovery_timeout = or_default(w.recovery_timeout, w.timeout)
    w.requeuing_strategy = _default_requeuing(w.requeuing_strategy)
    _default_common_tail(cfg)
    mk = cfg.multi_kueue
    assert mk is not None
    if mk.dispatcher_name == DISPATCHER_INCREMENTAL:
        idc = mk.incremental_dispatcher_config = or_default(
            mk.incremental_dispatcher_config, IncrementalDispatcherConfig()
        )
        idc.step_size = or_default(idc.step_size, 3)
    vs = cfg.visibility_server = or_default(cfg.visibility_server, VisibilityServerConfiguration())
    vs.bind_port = or_default(vs.bind_port, DEFAULT_VISIBILITY_BIND_PORT)
    _default_afs_and_transformations(cfg)
    return cfg


def default_v1beta1(cfg: ConfigurationV1Beta1) -> ConfigurationV1Beta1:
    """``apis/config/v1beta1`` SetDefaults_Configuration, in place (returns ``cfg``)."""
    _default_controller_manager(cfg)
    # waitForPodsReady is off unless enabled; once enabled it blocks admission by default.
    w = cfg.wait_for_pods_ready = or_default(cfg.wait_for_pods_ready, WaitForPodsReadyV1Beta1())
    if w.enable:
        w.timeout = or_default(w.timeout, "5m0s")
        w.recovery_timeout = or_default(w.recovery_timeout, w.timeout)
        w.block_admission = or_default(w.block_admission, w.enable)
        w.requeuing_strategy = _default_requeuing(w.requeuing_strategy)
    _default_common_tail(cfg)
    fs = cfg.fair_sharing
    if fs is not None and fs.enable and not fs.preemption_strategies:
        fs.preemption_strategies = [LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, LESS_THAN_INITIAL_SHARE]
    _default_afs_and_transformations(cfg)
    return cfg
