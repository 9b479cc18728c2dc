"""``KueueConfig``: the one internal model of Kueue's Configuration the rest of kuota
reads (durations as ``timedelta``, disabled features as ``None``, gates merged over
Kueue's defaults), and ``load_config`` / ``config_from_scenario`` that make it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from kuota.api.base import Quantity
from kuota.api.errors import FieldError, child
from kuota.api.features import FEATURE_GATE_DEFAULTS
from kuota.api.kueue.config.checks import validate
from kuota.api.kueue.config.conversion import v1beta1_to_v1beta2
from kuota.api.kueue.config.decoding import decode_config, optional_duration_ns
from kuota.api.kueue.config.defaults import (
    DEFAULT_REQUEUING_BACKOFF_BASE_SECONDS,
    DEFAULT_REQUEUING_BACKOFF_MAX_SECONDS,
    default_v1beta1,
    default_v1beta2,
    or_default,
)
from kuota.api.kueue.config.durations import ns_to_timedelta
from kuota.api.kueue.config.featuregates import validate_feature_gates
from kuota.api.kueue.config.frameworks import IMPLIES_POD, setup_errors
from kuota.api.kueue.config.wire import (
    ConfigurationV1Beta1,
    ConfigurationV1Beta2,
    IntegrationsV1Beta2,
    ObjectRetentionPolicies,
    RequeuingStrategySpec,
    ResourcesV1Beta2,
    WorkloadRetentionPolicy,
)
from kuota.api.meta import LabelSelector


# ============================================================================ internal model
@dataclass(frozen=True, slots=True)
class RequeuingStrategy:
    timestamp: str  # "Eviction" or "Creation": which time the backoff counts from
    backoff_limit_count: int | None  # None: requeue forever
    backoff_base_seconds: int
    backoff_max_seconds: int


@dataclass(frozen=True, slots=True)
class WaitForPodsReady:
    timeout: timedelta
    block_admission: bool
    recovery_timeout: timedelta  # zero disables recovery checking
    requeuing_strategy: RequeuingStrategy


@dataclass(frozen=True, slots=True)
class FairSharing:
    preemption_strategies: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class AdmissionFairSharing:
    usage_half_life_time: timedelta  # zero: usage resets at once
    usage_sampling_interval: timedelta
    resource_weights: Mapping[str, float]  # a missing resource weighs 1


@dataclass(frozen=True, slots=True)
class Integrations:
    frameworks: tuple[str, ...]
    external_frameworks: tuple[str, ...]
    label_keys_to_copy: tuple[str, ...]

    @property
    def enabled_frameworks(self) -> frozenset[str]:
        """The frameworks in force: those listed plus ``pod`` when an integration built
        on pods (deployment, statefulset, LeaderWorkerSet) is listed."""
        out = set(self.frameworks)
        if out.intersection(IMPLIES_POD):
            out.add("pod")
        return frozenset(out)


@dataclass(frozen=True, slots=True)
class ResourceTransformation:
    input: str
    strategy: str  # "Retain" or "Replace"
    multiply_by: str  # "" when unset
    outputs: Mapping[str, Quantity]


@dataclass(frozen=True, slots=True)
class DeviceSource:
    """One ``sources[]`` entry of a mapping: a counter or a capacity
    dimension a driver publishes on its ResourceSlice devices, which Kueue
    charges instead of a device count (pkg/dra/mapper.go)."""

    kind: str  # "counter" or "capacity"
    name: str  # the counter's name / the capacity dimension's qualified name
    driver: str
    selector: str = ""  # the deviceSelector's CEL expression ("" when none)


@dataclass(frozen=True, slots=True)
class DeviceClassMapping:
    name: str
    device_class_names: tuple[str, ...]
    sources: tuple[DeviceSource, ...] = ()

    @property
    def source(self) -> str:
        """The kind of its sources ("counter" or "capacity", which the
        Configuration's validation does not let a mapping mix; "" for device
        counts)."""
        return self.sources[0].kind if self.sources else ""


@dataclass(frozen=True, slots=True)
class Resources:
    exclude_resource_prefixes: tuple[str, ...] = ()
    transformations: tuple[ResourceTransformation, ...] = ()
    # What main.go passes on: the configured strategy only while its gate is on.
    quota_check_strategy: str = "BlockUndeclared"
    device_class_mappings: tuple[DeviceClassMapping, ...] = ()


@dataclass(frozen=True, slots=True)
class ObjectRetention:
    workloads_after_finished: timedelta | None = None  # None: never deleted
    workloads_after_deactivated_by_kueue: timedelta | None = None


@dataclass(frozen=True, slots=True)
class KueueConfig:
    """Kueue's Configuration as kuota runs it: v1beta2-shaped, defaulted, validated."""

    api_version: str  # the version it was read in
    namespace: str
    manage_jobs_without_queue_name: bool
    managed_jobs_namespace_selector: LabelSelector
    wait_for_pods_ready: WaitForPodsReady | None  # None: disabled
    fair_sharing: FairSharing | None  # None: classic preemption
    admission_fair_sharing: AdmissionFairSharing | None  # None: not configured
    integrations: Integrations
    resources: Resources
    object_retention: ObjectRetention
    feature_gates: Mapping[str, bool]  # every Kueue gate, file overrides applied
    source: ConfigurationV1Beta2 = field(compare=False, repr=False)  # the defaulted wire form

    def gate(self, name: str) -> bool:
        """A feature gate's value; an unknown name is a programming error."""
        try:
            return self.feature_gates[name]
        except KeyError:
            raise KeyError(f"unknown Kueue feature gate {name!r}") from None

    @property
    def admission_fair_sharing_enabled(self) -> bool:
        """Configured and its gate on (admissionfairsharing.Enabled)."""
        return self.admission_fair_sharing is not None and self.gate("AdmissionFairSharing")


def _internal(
    cfg: ConfigurationV1Beta2, gates: Mapping[str, bool], api_version: str
) -> KueueConfig:
    w = cfg.wait_for_pods_ready
    wfpr = None
    if w is not None and not gates["DisableWaitForPodsReady"]:
        rs = w.requeuing_strategy or RequeuingStrategySpec()
        wfpr = WaitForPodsReady(
            timeout=ns_to_timedelta(optional_duration_ns(w.timeout)),
            block_admission=bool(w.block_admission),
            recovery_timeout=ns_to_timedelta(
                optional_duration_ns(
                    w.recovery_timeout if w.recovery_timeout is not None else w.timeout
                )
            ),
            requeuing_strategy=RequeuingStrategy(
                timestamp=rs.timestamp or "Eviction",
                backoff_limit_count=rs.backoff_limit_count,
                backoff_base_seconds=or_default(
                    rs.backoff_base_seconds, DEFAULT_REQUEUING_BACKOFF_BASE_SECONDS
                ),
                backoff_max_seconds=or_default(
                    rs.backoff_max_seconds, DEFAULT_REQUEUING_BACKOFF_MAX_SECONDS
                ),
            ),
        )
    fs = (
        FairSharing(tuple(cfg.fair_sharing.preemption_strategies or ()))
        if cfg.fair_sharing
        else None
    )
    afs = None
    if cfg.admission_fair_sharing is not None:
        a = cfg.admission_fair_sharing
        afs = AdmissionFairSharing(
            usage_half_life_time=ns_to_timedelta(optional_duration_ns(a.usage_half_life_time)),
            usage_sampling_interval=ns_to_timedelta(
                optional_duration_ns(a.usage_sampling_interval)
            ),
            resource_weights=dict(a.resource_weights or {}),
        )
    ints = cfg.integrations or IntegrationsV1Beta2()
    res = cfg.resources or ResourcesV1Beta2()
    strategy = "BlockUndeclared"
    if gates["QuotaCheckStrategy"] and res.quota_check_strategy is not None:
        strategy = res.quota_check_strategy
    wl = (
        cfg.object_retention_policies or ObjectRetentionPolicies()
    ).workloads or WorkloadRetentionPolicy()
    return KueueConfig(
        api_version=api_version,
        namespace=cfg.namespace or "",
        manage_jobs_without_queue_name=cfg.manage_jobs_without_queue_name,
        managed_jobs_namespace_selector=cfg.managed_jobs_namespace_selector or LabelSelector(),
        wait_for_pods_ready=wfpr,
        fair_sharing=fs,
        admission_fair_sharing=afs,
        integrations=Integrations(
            frameworks=tuple(ints.frameworks or ()),
            external_frameworks=tuple(ints.external_frameworks or ()),
            label_keys_to_copy=tuple(ints.label_keys_to_copy or ()),
        ),
        resources=Resources(
            exclude_resource_prefixes=tuple(res.exclude_resource_prefixes or ()),
            transformations=tuple(
                ResourceTransformation(
                    input=t.input,
                    strategy=t.strategy or "Retain",
                    multiply_by=t.multiply_by,
                    outputs=dict(t.outputs or {}),
                )
                for t in res.transformations or ()
            ),
            quota_check_strategy=strategy,
            device_class_mappings=tuple(
                DeviceClassMapping(m.name, tuple(m.device_class_names or ()), _sources(m.sources))
                for m in res.device_class_mappings or ()
            ),
        ),
        object_retention=ObjectRetention(
            workloads_after_finished=None
            if wl.after_finished is None
            else ns_to_timedelta(optional_duration_ns(wl.after_finished)),
            workloads_after_deactivated_by_kueue=(
                None
                if wl.after_deactivated_by_kueue is None
                else ns_to_timedelta(optional_duration_ns(wl.after_deactivated_by_kueue))
            ),
        ),
        feature_gates=dict(gates),
        source=cfg,
    )


# ============================================================================ entry points
def _prefixed(errs: list[FieldError], path: str) -> list[FieldError]:
    if not path:
        return errs
    return [
        FieldError(child(path, x.path) if x.path else path, x.type, x.detail, x.value) for x in errs
    ]


def load_config(raw: Any, path: str = "") -> tuple[KueueConfig | None, list[FieldError]]:
    """Read a Configuration as Kueue does: decode strictly in its version, default,
    convert to v1beta2, set the feature gates, validate.

    ``raw`` is the parsed YAML/JSON mapping; without ``apiVersion`` (a scenario's
    ``config:`` block) it is read as v1beta2. ``path`` prefixes every error's field
    path (e.g. ``config`` for a scenario's block). Returns the config, or None and every
    error found.
    """
    wire, errs = decode_config(raw)
    if wire is None:
        return None, _prefixed(errs, path)
    if isinstance(wire, ConfigurationV1Beta1):
        cfg = v1beta1_to_v1beta2(default_v1beta1(wire))
    else:
        cfg = default_v1beta2(wire)
    gates, errs = validate_feature_gates(cfg.feature_gates)
    # Kueue stops at bad gates; kuota also reports what validation finds under defaults.
    errs += validate(cfg, gates)
    if not errs and cfg.integrations is not None:
        # (then the manager's setup: a framework whose alpha gate is off)
        errs += setup_errors(
            cfg.integrations.frameworks or (), {**FEATURE_GATE_DEFAULTS, **(gates or {})}
        )
    if errs:
        return None, _prefixed(errs, path)
    return _internal(cfg, gates, wire.api_version), []


class ConfigError(ValueError):
    """A Configuration Kueue would refuse to start with."""

    def __init__(self, errors: list[FieldError]) -> None:
        self.errors = errors
        super().__init__("invalid Kueue Configuration:\n" + "\n".join(f"  {x}" for x in errors))


def config_from_scenario(
    block: Mapping[str, Any] | None, feature_gates: Mapping[str, bool] | None = None
) -> KueueConfig:
    """The KueueConfig of a scenario: its ``config:`` block (v1beta2-shaped unless it names
    an apiVersion) with ``feature_gates`` (a scenario's top-level ``featureGates``) over the
    block's own. Raises ConfigError when Kueue would refuse it."""
    raw: dict[str, Any] = dict(block or {})
    if feature_gates:
        raw["featureGates"] = {**(raw.get("featureGates") or {}), **feature_gates}
    cfg, errs = load_config(raw, "config")
    if cfg is None:
        raise ConfigError(errs)
    return cfg


def _sources(sources: Any) -> tuple[DeviceSource, ...]:
    """A mapping's ``sources``, in order (Kueue appends each class's configs so)."""
    out: list[DeviceSource] = []
    for src in sources or ():
        for kind, s in (("counter", src.counter), ("capacity", src.capacity)):
            if s is not None:
                sel = s.device_selector
                expr = sel.cel.expression if sel is not None and sel.cel is not None else ""
                out.append(DeviceSource(kind, s.name, s.driver, expr))
    return tuple(out)
