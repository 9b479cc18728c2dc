"""Kueue's Configuration file (``config.kueue.x-k8s.io`` v1beta1 and v1beta2), read as Kueue reads it.

Kueue loads its Configuration with a strict universal decoder: the file is decoded in the
version it names (unknown fields are errors), that version's ``SetDefaults_Configuration``
runs, the result is converted to v1beta2, the feature gates of ``featureGates`` are set and
``pkg/config/validation.go`` checks it. This module does the same, in that order, at Kueue
HEAD ff69552e:

* wire structs for both versions (``ConfigurationV1Beta2``, ``ConfigurationV1Beta1``) with
  every field of ``apis/config/v1beta{1,2}/configuration_types.go``;
* ``default_v1beta2`` / ``default_v1beta1`` (``defaults.go`` of each version);
* ``v1beta1_to_v1beta2`` / ``v1beta2_to_v1beta1`` (``configuration_conversion.go``);
* ``validate`` (every rule of ``validation.go``) and ``validate_feature_gates``
  (``LoadAndValidateFeatureGates`` over component-base's feature gate);
* ``KueueConfig``: the one internal model the rest of kuota reads (durations as
  ``timedelta``, disabled features as ``None``, gates merged over Kueue's defaults);
* ``load_config``, ``config_from_scenario`` and ``to_wire``.

Durations are strings on the wire (``metav1.Duration``); ``parse_duration`` and
``format_duration`` follow Go's ``time.ParseDuration`` and ``Duration.String``.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Annotated, Any

import msgspec
import msgspec.inspect as mi

from kuota.api import errors as e
from kuota.api.base import Meta, Object, Quantity, dec_hook, enc_hook
from kuota.api.errors import FieldError, child, index, key
from kuota.api.features import (
    FEATURE_GATE_DEFAULTS,
    FEATURE_GATE_DEPENDENCIES,
    FEATURE_GATE_STAGES,
)
from kuota.api.features import GATES as _GATES
from kuota.api.meta import LabelSelector, LabelSelectorRequirement, selector_matches
from kuota.api.schema import validate_raw

__all__ = [
    "API_VERSIONS",
    "BUILTIN_FRAMEWORKS",
    "FEATURE_GATE_DEFAULTS",
    "FEATURE_GATE_DEPENDENCIES",
    "FEATURE_GATE_STAGES",
    "GROUP",
    "KIND",
    "UNKNOWN_FIELD",
    "V1BETA1",
    "V1BETA2",
    "AdmissionFairSharing",
    "ConfigError",
    "ConfigurationV1Beta1",
    "ConfigurationV1Beta2",
    "DeviceClassMapping",
    "FairSharing",
    "Integrations",
    "KueueConfig",
    "ObjectRetention",
    "RequeuingStrategy",
    "ResourceTransformation",
    "Resources",
    "WaitForPodsReady",
    "config_from_scenario",
    "decode_config",
    "default_v1beta1",
    "default_v1beta2",
    "format_duration",
    "format_duration_ns",
    "load_config",
    "parse_duration",
    "parse_duration_ns",
    "to_wire",
    "v1beta1_to_v1beta2",
    "v1beta2_to_v1beta1",
    "validate",
    "validate_feature_gates",
]

GROUP = "config.kueue.x-k8s.io"
V1BETA1 = f"{GROUP}/v1beta1"
V1BETA2 = f"{GROUP}/v1beta2"
API_VERSIONS = (V1BETA1, V1BETA2)
KIND = "Configuration"

# A field Kueue's strict decoder does not know. Kubernetes' field errors have no
# type for it (the API server prunes such fields); Kueue refuses the whole file.
UNKNOWN_FIELD = "Unknown field"


# ============================================================================ durations
# Go's time.ParseDuration and Duration.String, to the nanosecond. Kueue's
# durations are int64 nanoseconds; Python's timedelta stops at microseconds, so the
# exact functions work on integer nanoseconds and the timedelta ones wrap them.

_NS_PER_UNIT = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,  # U+00B5 MICRO SIGN
    "μs": 1_000,  # U+03BC GREEK SMALL LETTER MU
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}
_U63 = 1 << 63  # Go accumulates in uint64 and checks against 1<<63
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def _go_quote(s: str) -> str:
    """time.quote: non-ASCII and control characters as \\x escapes of their UTF-8 bytes."""
    out = ['"']
    for c in s:
        if ord(c) >= 0x80 or c < " ":
            out.extend(f"\\x{b:02x}" for b in c.encode("utf-8", "surrogatepass"))
        else:
            if c in '"\\':
                out.append("\\")
            out.append(c)
    out.append('"')
    return "".join(out)


def _is_digit(c: str) -> bool:
    return "0" <= c <= "9"  # ASCII only, as Go compares bytes


def parse_duration_ns(text: str) -> int:
    """Go's ``time.ParseDuration``: ``[-+]?([0-9]*(\\.[0-9]*)?[a-z]+)+`` or ``"0"``.

    Returns integer nanoseconds; raises ValueError with Go's own message.
    """
    if not isinstance(text, str):
        raise ValueError(f'time: a duration is a string such as "5m", not {text!r}')
    orig, s, neg = text, text, False
    invalid = f"time: invalid duration {_go_quote(orig)}"
    if s and s[0] in "+-":
        neg, s = s[0] == "-", s[1:]
    if s == "0":
        return 0
    if not s:
        raise ValueError(invalid)
    total = 0
    while s:
        if not (s[0] == "." or _is_digit(s[0])):
            raise ValueError(invalid)
        # [0-9]*
        i, v = 0, 0
        while i < len(s) and _is_digit(s[i]):
            if v > _U63 // 10:
                raise ValueError(invalid)
            v = v * 10 + ord(s[i]) - 48
            if v > _U63:
                raise ValueError(invalid)
            i += 1
        pre, s = i > 0, s[i:]
        # (\.[0-9]*)? -- digits beyond int64 precision are dropped, not an error
        f, scale, post = 0, 1.0, False
        if s and s[0] == ".":
            s = s[1:]
            i, overflow = 0, False
            while i < len(s) and _is_digit(s[i]):
                if not overflow:
                    y = f * 10 + ord(s[i]) - 48
                    if f > (_U63 - 1) // 10 or y > _U63:
                        overflow = True
                    else:
                        f, scale = y, scale * 10
                i += 1
            post, s = i > 0, s[i:]
        if not pre and not post:
            raise ValueError(invalid)  # no digits, e.g. ".s"
        i = 0
        while i < len(s) and not (s[i] == "." or _is_digit(s[i])):
            i += 1
        if i == 0:
            raise ValueError(f"time: missing unit in duration {_go_quote(orig)}")
        u, s = s[:i], s[i:]
        unit = _NS_PER_UNIT.get(u)
        if unit is None:
            raise ValueError(f"time: unknown unit {_go_quote(u)} in duration {_go_quote(orig)}")
        if v > _U63 // unit:
            raise ValueError(invalid)
        v *= unit
        if f > 0:
            # Go computes the fraction in float64 (exact enough for hours to the ns).
            v += int(float(f) * (float(unit) / scale))
            if v > _U63:
                raise ValueError(invalid)
        total += v
        if total > _U63:
            raise ValueError(invalid)
    if neg:
        return -total
    if total > _INT64_MAX:
        raise ValueError(invalid)
    return total


def _frac(v: int, prec: int) -> str:
    """``v / 10**prec`` with the fraction's trailing zeros (and a bare point) dropped."""
    whole, rest = divmod(v, 10**prec)
    if not rest:
        return str(whole)
    return f"{whole}.{str(rest).rjust(prec, '0').rstrip('0')}"


def format_duration_ns(ns: int) -> str:
    """Go's ``Duration.String``: ``"1h30m0s"``, ``"1.5s"``, ``"300ms"``, ``"1µs"``, ``"0s"``."""
    if not _INT64_MIN <= ns <= _INT64_MAX:
        raise ValueError(f"duration {ns}ns is out of Go's int64 range")
    sign, u = ("-", -ns) if ns < 0 else ("", ns)
    if u < 1_000_000_000:
        if u == 0:
            return "0s"
        if u < 1_000:
            return f"{sign}{u}ns"
        if u < 1_000_000:
            return f"{sign}{_frac(u, 3)}µs"
        return f"{sign}{_frac(u, 6)}ms"
    secs = u // 1_000_000_000
    out = f"{_frac(secs % 60 * 1_000_000_000 + u % 1_000_000_000, 9)}s"
    minutes = secs // 60
    if minutes:
        out = f"{minutes % 60}m{out}"
        if minutes // 60:
            out = f"{minutes // 60}h{out}"
    return sign + out


def parse_duration(text: str) -> timedelta:
    """``parse_duration_ns`` as a timedelta.

    A remainder below one microsecond rounds up (towards +inf): timedelta cannot hold it,
    and rounding up keeps a positive duration positive, so ``"1ns"`` stays a non-zero
    timeout as it is in Kueue.
    """
    ns = parse_duration_ns(text)
    return timedelta(microseconds=-(-ns // 1_000))


def _td_ns(td: timedelta) -> int:
    return (td.days * 86_400 + td.seconds) * 1_000_000_000 + td.microseconds * 1_000


def format_duration(td: timedelta) -> str:
    """``td`` as Go prints a Duration (raises ValueError beyond Go's ~292 years)."""
    return format_duration_ns(_td_ns(td))


def _ns_to_td(ns: int) -> timedelta:
    return timedelta(microseconds=-(-ns // 1_000))


# ============================================================================ feature gates
# The gate table is in ``features``: decoding manifests reads its defaults without
# loading this module.

# component-base's special keys: switch every gate of that stage not named explicitly.
_ALL_STAGE_KEYS = {"AllAlpha": "Alpha", "AllBeta": "Beta"}
_FEATURE_GATES_PATH = "featureGates"


def _aggregate(msgs: list[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one message, or ``[a, b]`` de-duplicated."""
    uniq = list(dict.fromkeys(msgs))
    return uniq[0] if len(uniq) == 1 else "[" + ", ".join(uniq) + "]"


def validate_feature_gates(
    overrides: Mapping[str, bool] | None,
) -> tuple[dict[str, bool], list[FieldError]]:
    """``LoadAndValidateFeatureGates`` with ``featureGates`` from the file (no CLI flag).

    Returns every Kueue gate's value (the overrides applied over the defaults) and the
    errors. On error the gates are the defaults, as Kueue would not start.
    """
    gates = dict(FEATURE_GATE_DEFAULTS)
    if not overrides:
        return gates, []
    # SetFromMap stops at the first unknown gate (Go's map order is random; ours sorted).
    for name in sorted(overrides):
        if name not in _GATES and name not in _ALL_STAGE_KEYS:
            msg = f"unrecognized feature gate: {name}"
            return gates, [e.invalid(_FEATURE_GATES_PATH, dict(overrides), msg)]
    msgs: list[str] = []
    enabled: dict[str, bool] = {}
    for name in sorted(overrides):
        value = bool(overrides[name])
        if name in _ALL_STAGE_KEYS:
            continue
        g = _GATES[name]
        if g.locked and value != g.default:
            msgs.append(
                f"cannot set feature gate {name} to {_gobool(value)}, "
                f"feature is locked to {_gobool(g.default)}"
            )
            continue
        enabled[name] = value
    for special, stage in _ALL_STAGE_KEYS.items():
        if special in overrides:
            for name, g in _GATES.items():
                if g.stage == stage and name not in overrides:
                    enabled[name] = bool(overrides[special])
    if not msgs:
        effective = {**gates, **enabled}
        for feature, deps in FEATURE_GATE_DEPENDENCIES.items():
            if not effective[feature]:
                continue
            off = [d for d in deps if not effective[d]]
            if off:
                msgs.append(
                    f"{feature} is enabled, but depends on features that are disabled: "
                    f"[{' '.join(off)}]"
                )
    if msgs:
        return gates, [e.invalid(_FEATURE_GATES_PATH, dict(overrides), _aggregate(msgs))]
    gates.update(enabled)
    # Kueue's own check after SetFromMap; unreachable while TASProfileMixed depends on
    # TopologyAwareScheduling, kept so the rule stays when that dependency goes.
    if gates["TASProfileMixed"] and not gates["TopologyAwareScheduling"]:
        return dict(FEATURE_GATE_DEFAULTS), [
            e.invalid(_FEATURE_GATES_PATH, 1, "cannot use a TAS profile with TAS disabled")
        ]
    return gates, []


def _gobool(v: bool) -> str:
    return "true" if v else "false"


# ============================================================================ wire structs
# A metav1.Duration: a Go duration string on the wire. Marked so the walkers below find
# every duration field (syntax check on decode, Go's canonical form on encode).
_DURATION_MARK = {"kuota": "duration"}
Duration = Annotated[
    str, Meta(extra=_DURATION_MARK, description="A Go duration, e.g. 5m, 1h30m, 300ms.")
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


_WIRE = {V1BETA1: ConfigurationV1Beta1, V1BETA2: ConfigurationV1Beta2}


# ---------------------------------------------------------------------------- duration walk
def _is_duration(t: mi.Type) -> bool:
    if isinstance(t, mi.UnionType):
        return any(_is_duration(x) for x in t.types)
    return isinstance(t, mi.Metadata) and t.extra == _DURATION_MARK


_DURATION_FIELDS: dict[type, tuple[tuple[str, str], ...]] = {}


def _duration_fields(cls: type) -> tuple[tuple[str, str], ...]:
    got = _DURATION_FIELDS.get(cls)
    if got is None:
        info = mi.type_info(cls)
        got = tuple(
            (f.name, f.encode_name)
            for f in info.fields  # type: ignore[attr-defined]
            if _is_duration(f.type)
        )
        _DURATION_FIELDS[cls] = got
    return got


def _durations(obj: Any, path: str = "") -> Iterator[tuple[Any, str, str]]:
    """Every (struct, attribute, field path) holding a set duration under ``obj``."""
    if isinstance(obj, msgspec.Struct):
        for attr, wire in _duration_fields(type(obj)):
            if getattr(obj, attr) is not None:
                yield obj, attr, child(path, wire)
        for f in msgspec.structs.fields(obj):
            v = getattr(obj, f.name)
            if isinstance(v, msgspec.Struct | list | dict):
                yield from _durations(v, child(path, f.encode_name))
    elif isinstance(obj, list):
        for i, x in enumerate(obj):
            yield from _durations(x, index(path, i))
    elif isinstance(obj, dict):
        for k, x in obj.items():
            if isinstance(x, msgspec.Struct | list | dict):
                yield from _durations(x, key(path, str(k)))


def _duration_errors(cfg: msgspec.Struct) -> list[FieldError]:
    errs = []
    for obj, attr, path in _durations(cfg):
        text = getattr(obj, attr)
        try:
            parse_duration_ns(text)
        except ValueError as err:
            errs.append(e.invalid(path, text, str(err)))
    return errs


def _canonical_durations(cfg: msgspec.Struct) -> None:
    """Rewrite every duration as Go prints it (``5m`` -> ``5m0s``), as Kueue encodes."""
    for obj, attr, _ in _durations(cfg):
        setattr(obj, attr, format_duration_ns(parse_duration_ns(getattr(obj, attr))))


def _ns(text: str | None) -> int:
    """A wire duration in nanoseconds; absent is Go's zero Duration."""
    return 0 if text is None else parse_duration_ns(text)


# ============================================================================ decoding
def _strict_decode(raw: dict[str, Any], wire: type) -> tuple[Any, list[FieldError]]:
    """The slow path, after msgspec refused ``raw``: every type error and unknown field.

    Explicit nulls are pruned first, as Go's decoder leaves a field alone on ``null``.
    """
    pruned, errs, warnings = validate_raw(raw, wire)
    out = list(errs)
    for w in warnings:
        m = re.fullmatch(r'unknown field "(.*)"', w, re.S)
        out.append(FieldError(m.group(1) if m else "", UNKNOWN_FIELD, "" if m else w))
    if out:
        return None, out
    try:
        return msgspec.convert(pruned, wire, dec_hook=dec_hook), []
    except msgspec.ValidationError as err:
        return None, [_msgspec_error(err, pruned)]


def _msgspec_error(err: msgspec.ValidationError, raw: Any = None) -> FieldError:
    text = str(err)
    m = re.fullmatch(r"(.*) - at `\$\.?(.*)`", text, re.S)
    if not m:
        return e.invalid("", "object", text)
    detail, path = m.group(1), m.group(2)
    u = re.fullmatch(r"Object contains unknown field `(.*)`", detail, re.S)
    if u:
        return FieldError(child(path, u.group(1)), UNKNOWN_FIELD)
    return e.invalid(path, e.value_at(raw, path), detail)


def decode_config(
    raw: Any,
) -> tuple[ConfigurationV1Beta2 | ConfigurationV1Beta1 | None, list[FieldError]]:
    """Strict decode in the version ``raw`` names (no apiVersion: v1beta2), no defaults."""
    if not isinstance(raw, dict):
        return None, [e.invalid("", type(raw).__name__, "a Configuration must be a mapping")]
    api_version = raw.get("apiVersion") or V1BETA2
    kind = raw.get("kind") or KIND
    errs: list[FieldError] = []
    if not isinstance(api_version, str) or api_version not in _WIRE:
        errs.append(e.not_supported("apiVersion", api_version, API_VERSIONS))
    if kind != KIND:
        errs.append(e.not_supported("kind", kind, [KIND]))
    if errs:
        return None, errs
    wire = _WIRE[api_version]
    try:
        cfg = msgspec.convert(raw, wire, dec_hook=dec_hook)
    except msgspec.ValidationError:
        cfg, errs = _strict_decode(raw, wire)
        if cfg is None:
            return None, errs
    errs = _duration_errors(cfg)
    if errs:
        return None, errs
    cfg.api_version, cfg.kind = api_version, KIND
    return cfg, []


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


def _or(value: Any, default: Any) -> Any:
    """Go's ``cmp.Or`` on a pointer: the value unless it is nil."""
    return default if value is None else value


def _default_controller_manager(cfg: ConfigurationV1Beta2 | ConfigurationV1Beta1) -> None:
    # Namespace: Kueue falls back to the service account's namespace file first;
    # kuota reads no files here, so the constant default applies.
    cfg.namespace = _or(cfg.namespace, DEFAULT_NAMESPACE)
    cfg.webhook = _or(cfg.webhook, ControllerWebhook())
    cfg.webhook.port = _or(cfg.webhook.port, DEFAULT_WEBHOOK_PORT)
    cfg.webhook.cert_dir = cfg.webhook.cert_dir or DEFAULT_WEBHOOK_CERT_DIR
    metrics_cls = (
        ControllerMetricsV1Beta2
        if isinstance(cfg, ConfigurationV1Beta2)
        else ControllerMetricsV1Beta1
    )
    cfg.metrics = _or(cfg.metrics, metrics_cls())
    cfg.metrics.bind_address = cfg.metrics.bind_address or DEFAULT_METRICS_BIND_ADDRESS
    cfg.health = _or(cfg.health, ControllerHealth())
    cfg.health.health_probe_bind_address = (
        cfg.health.health_probe_bind_address or DEFAULT_HEALTH_PROBE_BIND_ADDRESS
    )
    le = cfg.leader_election = _or(cfg.leader_election, LeaderElectionConfiguration())
    le.resource_name = le.resource_name or DEFAULT_LEADER_ELECTION_ID
    cfg.metrics.local_queue_metrics = _or(
        cfg.metrics.local_queue_metrics, LocalQueueMetrics(enable=True)
    )
    le.resource_lock = le.resource_lock or "leases"
    # configv1alpha1.RecommendedDefaultLeaderElectionConfiguration
    if _ns(le.lease_duration) == 0:
        le.lease_duration = "15s"
    if _ns(le.renew_deadline) == 0:
        le.renew_deadline = "10s"
    if _ns(le.retry_period) == 0:
        le.retry_period = "2s"
    le.leader_elect = _or(le.leader_elect, True)

    icm = cfg.internal_cert_management = _or(cfg.internal_cert_management, InternalCertManagement())
    icm.enable = _or(icm.enable, True)
    if icm.enable:
        icm.webhook_service_name = _or(icm.webhook_service_name, DEFAULT_WEBHOOK_SERVICE_NAME)
        icm.webhook_secret_name = _or(icm.webhook_secret_name, DEFAULT_WEBHOOK_SECRET_NAME)

    cc = cfg.client_connection = _or(cfg.client_connection, ClientConnection())
    cc.qps = _or(cc.qps, DEFAULT_CLIENT_CONNECTION_QPS)
    cc.burst = _or(cc.burst, DEFAULT_CLIENT_CONNECTION_BURST)


def _default_requeuing(rs: RequeuingStrategySpec | None) -> RequeuingStrategySpec:
    rs = _or(rs, RequeuingStrategySpec())
    rs.timestamp = _or(rs.timestamp, "Eviction")
    rs.backoff_base_seconds = _or(rs.backoff_base_seconds, DEFAULT_REQUEUING_BACKOFF_BASE_SECONDS)
    rs.backoff_max_seconds = _or(rs.backoff_max_seconds, DEFAULT_REQUEUING_BACKOFF_MAX_SECONDS)
    return rs


def _default_common_tail(cfg: ConfigurationV1Beta2 | ConfigurationV1Beta1) -> None:
    """The defaults after waitForPodsReady, identical in both versions."""
    integrations_cls = (
        IntegrationsV1Beta2 if isinstance(cfg, ConfigurationV1Beta2) else IntegrationsV1Beta1
    )
    cfg.integrations = _or(cfg.integrations, integrations_cls())
    if not cfg.integrations.frameworks:
        cfg.integrations.frameworks = [DEFAULT_JOB_FRAMEWORK]
    cfg.managed_jobs_namespace_selector = _or(
        cfg.managed_jobs_namespace_selector, _default_namespace_selector(cfg.namespace)
    )
    mk_cls = MultiKueueV1Beta2 if isinstance(cfg, ConfigurationV1Beta2) else MultiKueueV1Beta1
    mk = cfg.multi_kueue = _or(cfg.multi_kueue, mk_cls())
    mk.gc_interval = _or(mk.gc_interval, "1m0s")
    mk.origin = mk.origin or DEFAULT_MULTIKUEUE_ORIGIN  # "" is defaulted too (ptr.Deref)
    mk.worker_lost_timeout = _or(mk.worker_lost_timeout, "15m0s")
    mk.dispatcher_name = _or(mk.dispatcher_name, DISPATCHER_ALL_AT_ONCE)


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
    if afs is not None and _ns(afs.usage_sampling_interval) == 0:
        afs.usage_sampling_interval = "5m0s"
    if cfg.resources is not None:
        for t in cfg.resources.transformations or ():
            t.strategy = t.strategy or "Retain"


def default_v1beta2(cfg: ConfigurationV1Beta2) -> ConfigurationV1Beta2:
    """``apis/config/v1beta2`` SetDefaults_Configuration, in place (returns ``cfg``)."""
    _default_controller_manager(cfg)
    # waitForPodsReady is on by default in v1beta2; a zero timeout means the default.
    w = cfg.wait_for_pods_ready = _or(cfg.wait_for_pods_ready, WaitForPodsReadyV1Beta2())
    if _ns(w.timeout) == 0:
        w.timeout = "30m0s"
    w.block_admission = _or(w.block_admission, False)
    w.recovery_timeout = _or(w.recovery_timeout, w.timeout)
    w.requeuing_strategy = _default_requeuing(w.requeuing_strategy)
    _default_common_tail(cfg)
    mk = cfg.multi_kueue
    assert mk is not None
    if mk.dispatcher_name == DISPATCHER_INCREMENTAL:
        idc = mk.incremental_dispatcher_config = _or(
            mk.incremental_dispatcher_config, IncrementalDispatcherConfig()
        )
        idc.step_size = _or(idc.step_size, 3)
    vs = cfg.visibility_server = _or(cfg.visibility_server, VisibilityServerConfiguration())
    vs.bind_port = _or(vs.bind_port, DEFAULT_VISIBILITY_BIND_PORT)
    _default_afs_and_transformations(cfg)
    return cfg


def default_v1beta1(cfg: ConfigurationV1Beta1) -> ConfigurationV1Beta1:
    """``apis/config/v1beta1`` SetDefaults_Configuration, in place (returns ``cfg``)."""
    _default_controller_manager(cfg)
    # waitForPodsReady is off unless enabled; once enabled it blocks admission by default.
    w = cfg.wait_for_pods_ready = _or(cfg.wait_for_pods_ready, WaitForPodsReadyV1Beta1())
    if w.enable:
        w.timeout = _or(w.timeout, "5m0s")
        w.recovery_timeout = _or(w.recovery_timeout, w.timeout)
        w.block_admission = _or(w.block_admission, w.enable)
        w.requeuing_strategy = _default_requeuing(w.requeuing_strategy)
    _default_common_tail(cfg)
    fs = cfg.fair_sharing
    if fs is not None and fs.enable and not fs.preemption_strategies:
        fs.preemption_strategies = [LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, LESS_THAN_INITIAL_SHARE]
    _default_afs_and_transformations(cfg)
    return cfg


# ============================================================================ conversion
def _builtins(obj: msgspec.Struct) -> dict[str, Any]:
    return msgspec.to_builtins(obj, enc_hook=enc_hook)


def v1beta1_to_v1beta2(src: ConfigurationV1Beta1) -> ConfigurationV1Beta2:
    """``Convert_v1beta1_Configuration_To_v1beta2_Configuration``.

    A disabled (or absent) waitForPodsReady or fairSharing becomes nil; an enabled one
    without a timeout gets v1beta1's 5m and without blockAdmission gets true. podOptions
    and queueVisibility have no v1beta2 counterpart and are dropped, as Kueue drops them.
    """
    d = _builtins(src)
    d.pop("queueVisibility", None)
    if isinstance(d.get("integrations"), dict):
        d["integrations"].pop("podOptions", None)
    w = d.pop("waitForPodsReady", None)
    if w is not None and w.pop("enable", False):
        w.setdefault("timeout", "5m0s")
        w.setdefault("blockAdmission", True)
        d["waitForPodsReady"] = w
    fs = d.pop("fairSharing", None)
    if fs is not None and fs.pop("enable", False):
        if not fs.get("preemptionStrategies"):
            fs["preemptionStrategies"] = [
                LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,
                LESS_THAN_INITIAL_SHARE,
            ]
        d["fairSharing"] = fs
    if d.get("apiVersion"):
        d["apiVersion"] = V1BETA2
    return msgspec.convert(d, ConfigurationV1Beta2, dec_hook=dec_hook)


def v1beta2_to_v1beta1(src: ConfigurationV1Beta2) -> ConfigurationV1Beta1:
    """``Convert_v1beta2_Configuration_To_v1beta1_Configuration``.

    A present waitForPodsReady or fairSharing is ``enable: true``; fields v1beta1 lacks
    (visibilityServer, quotaCheckStrategy, DRA sources, clusterProfile, the incremental
    dispatcher's config, custom labels' sourceKind/trackedValues) are dropped.
    """
    d = _builtins(src)
    d.pop("visibilityServer", None)
    w = d.get("waitForPodsReady")
    if w is not None:
        w["enable"] = True
        w.setdefault("blockAdmission", False)
    fs = d.get("fairSharing")
    if fs is not None:
        fs["enable"] = True
    res = d.get("resources")
    if res is not None:
        res.pop("quotaCheckStrategy", None)
        for m in res.get("deviceClassMappings") or ():
            m.pop("sources", None)
    mk = d.get("multiKueue")
    if mk is not None:
        mk.pop("clusterProfile", None)
        mk.pop("incrementalDispatcherConfig", None)
    for label in (d.get("metrics") or {}).get("customLabels") or ():
        label.pop("sourceKind", None)
        label.pop("trackedValues", None)
    if d.get("apiVersion"):
        d["apiVersion"] = V1BETA1
    return msgspec.convert(d, ConfigurationV1Beta1, dec_hook=dec_hook)


# ============================================================================ name checks
# apimachinery's checks exactly as Kueue's validation calls them. Two flavours exist in
# apimachinery v0.36 and Kueue uses both: util/validation ("... characters") for DNS
# names, api/validate/content ("... bytes") for label keys and values.


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    ex = " or ".join(f"'{x}', " for x in examples)
    return f"{msg} (e.g. {ex}regex used for validation is '{fmt}')"


_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + r"(\." + _DNS1123_LABEL_FMT + ")*"
_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = f"({_LABEL_KEY_FMT})?"
_C_IDENTIFIER_FMT = "[A-Za-z_][A-Za-z0-9_]*"
_RX = {
    f: re.compile(f)
    for f in (
        _DNS1123_LABEL_FMT,
        _DNS1123_SUBDOMAIN_FMT,
        _DNS1035_LABEL_FMT,
        _LABEL_KEY_FMT,
        _LABEL_VALUE_FMT,
        _C_IDENTIFIER_FMT,
    )
}
_LABEL_KEY_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character"
)


def _max_len(n: int, unit: str) -> str:
    return f"must be no more than {n} {unit}"


def _is_dns1123_label(v: str) -> list[str]:
    errs = [_max_len(63, "characters")] if len(v) > 63 else []
    if not _RX[_DNS1123_LABEL_FMT].fullmatch(v):
        if _RX[_DNS1123_SUBDOMAIN_FMT].fullmatch(v):
            errs.append("must not contain dots")
        else:
            errs.append(
                _regex_error(
                    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
                    "or '-', and must start and end with an alphanumeric character",
                    _DNS1123_LABEL_FMT,
                    "my-name",
                    "123-abc",
                )
            )
    return errs


def _is_dns1123_subdomain(v: str, unit: str = "characters") -> list[str]:
    errs = [_max_len(253, unit)] if len(v) > 253 else []
    if not _RX[_DNS1123_SUBDOMAIN_FMT].fullmatch(v):
        errs.append(
            _regex_error(
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                "characters, '-' or '.', and must start and end with an alphanumeric character",
                _DNS1123_SUBDOMAIN_FMT,
                "example.com",
            )
        )
    return errs


def _is_dns1035_label(v: str) -> list[str]:
    errs = [_max_len(63, "characters")] if len(v) > 63 else []
    if not _RX[_DNS1035_LABEL_FMT].fullmatch(v):
        errs.append(
            _regex_error(
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
                "start with an alphabetic character, and end with an alphanumeric character",
                _DNS1035_LABEL_FMT,
                "my-name",
                "abc-123",
            )
        )
    return errs


def _is_label_key(v: str) -> list[str]:
    """content.IsLabelKey (= IsQualifiedName)."""
    errs: list[str] = []
    parts = v.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in _is_dns1123_subdomain(prefix, "bytes"))
    else:
        return [
            "a valid label key "
            + _regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + _max_len(63, "bytes"))
    if not _RX[_LABEL_KEY_FMT].fullmatch(name):
        errs.append(
            "name part "
            + _regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
        )
    return errs


def _is_label_value(v: str) -> list[str]:
    errs = [_max_len(63, "bytes")] if len(v) > 63 else []
    if not _RX[_LABEL_VALUE_FMT].fullmatch(v):
        errs.append(
            _regex_error(
                "a valid label must be an empty string or consist of alphanumeric characters, "
                "'-', '_' or '.', and must start and end with an alphanumeric character",
                _LABEL_VALUE_FMT,
                "MyValue",
                "my_value",
                "12345",
            )
        )
    return errs


def _is_c_identifier(v: str) -> list[str]:
    if _RX[_C_IDENTIFIER_FMT].fullmatch(v):
        return []
    return [
        _regex_error(
            "a valid C identifier must start with alphabetic character or '_', followed by a "
            "string of alphanumeric characters or '_'",
            _C_IDENTIFIER_FMT,
            "my_name",
            "MY_NAME",
            "MyName",
        )
    ]


# ---------------------------------------------------------------------------- label selectors
def _validate_label_selector(sel: LabelSelector | None, path: str) -> list[FieldError]:
    """metav1validation.ValidateLabelSelector with default options."""
    if sel is None:
        return []
    errs: list[FieldError] = []
    ml = child(path, "matchLabels")
    for k, v in sorted((sel.match_labels or {}).items()):
        errs += [e.invalid(ml, k, m) for m in _is_label_key(k)]
        errs += [e.invalid(ml, v, m) for m in _is_label_value(v)]
    for i, req in enumerate(sel.match_expressions or ()):
        rp = index(child(path, "matchExpressions"), i)
        if req.operator in ("In", "NotIn"):
            if not req.values:
                errs.append(
                    e.required(
                        child(rp, "values"), "must be specified when `operator` is 'In' or 'NotIn'"
                    )
                )
        elif req.operator in ("Exists", "DoesNotExist"):
            if req.values:
                errs.append(
                    e.forbidden(
                        child(rp, "values"),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    )
                )
        else:
            errs.append(
                e.invalid(child(rp, "operator"), req.operator, "not a valid selector operator")
            )
        errs += [e.invalid(child(rp, "key"), req.key, m) for m in _is_label_key(req.key)]
        for j, v in enumerate(req.values or ()):
            errs += [e.invalid(index(child(rp, "values"), j), v, m) for m in _is_label_value(v)]
    return errs


def _selector_data(sel: LabelSelector | None) -> Any:
    return None if sel is None else _builtins(sel)


# ============================================================================ frameworks
@dataclass(frozen=True, slots=True)
class _Framework:
    gvk: str  # schema.GroupVersionKind.String()
    multikueue: bool  # registers a MultiKueue adapter


# pkg/controller/jobs/*: every built-in integration, its job type and adapter.
BUILTIN_FRAMEWORKS: Mapping[str, _Framework] = {
    "batch/job": _Framework("batch/v1, Kind=Job", True),
    "deployment": _Framework("apps/v1, Kind=Deployment", False),
    "jobset.x-k8s.io/jobset": _Framework("jobset.x-k8s.io/v1alpha2, Kind=JobSet", True),
    "kubeflow.org/jaxjob": _Framework("kubeflow.org/v1, Kind=JAXJob", True),
    "kubeflow.org/mpijob": _Framework("kubeflow.org/v2beta1, Kind=MPIJob", True),
    "kubeflow.org/paddlejob": _Framework("kubeflow.org/v1, Kind=PaddleJob", True),
    "kubeflow.org/pytorchjob": _Framework("kubeflow.org/v1, Kind=PyTorchJob", True),
    "kubeflow.org/tfjob": _Framework("kubeflow.org/v1, Kind=TFJob", True),
    "kubeflow.org/xgboostjob": _Framework("kubeflow.org/v1, Kind=XGBoostJob", True),
    "leaderworkerset.x-k8s.io/leaderworkerset": _Framework(
        "leaderworkerset.x-k8s.io/v1, Kind=LeaderWorkerSet", True
    ),
    "pod": _Framework("/v1, Kind=Pod", True),
    "ray.io/raycluster": _Framework("ray.io/v1, Kind=RayCluster", True),
    "ray.io/rayjob": _Framework("ray.io/v1, Kind=RayJob", True),
    "ray.io/rayservice": _Framework("ray.io/v1, Kind=RayService", True),
    "sparkoperator.k8s.io/sparkapplication": _Framework(
        "sparkoperator.k8s.io/v1beta2, Kind=SparkApplication", False
    ),
    "statefulset": _Framework("apps/v1, Kind=StatefulSet", True),
    "trainer.kubeflow.org/trainjob": _Framework(
        "trainer.kubeflow.org/v1alpha1, Kind=TrainJob", True
    ),
    "workload.codeflare.dev/appwrapper": _Framework(
        "workload.codeflare.dev/v1beta2, Kind=AppWrapper", True
    ),
}
# Integrations that switch on the pod integration with them (ImplicitlyEnabledFrameworkNames).
_IMPLIES_POD = ("deployment", "statefulset", "leaderworkerset.x-k8s.io/leaderworkerset")


def _parse_kind_arg(arg: str) -> str | None:
    """schema.ParseKindArg(``Kind.version.group``) as a GVK string, or None."""
    if arg.count(".") < 2:
        return None
    kind, version, group = arg.split(".", 2)
    return f"{group}/{version}, Kind={kind}"


# ============================================================================ validation
_NEGATIVE = "must be greater than or equal to 0"  # apimachinery IsNegativeErrorMsg
_VALID_STRATEGY_SETS = (
    (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,),
    (LESS_THAN_INITIAL_SHARE,),
    (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, LESS_THAN_INITIAL_SHARE),
)
_MAX_CUSTOM_LABELS = 20
_MAX_TRACKED_VALUES = 16
_MAX_TRACKED_WORKLOAD_VALUES = 12
_MAX_CUSTOM_LABELS_PER_KIND = {"Workload": 2, "LocalQueue": 6, "ClusterQueue": 6, "Cohort": 6}
_CUSTOM_LABEL_NAME_RE = re.compile("[a-zA-Z][a-zA-Z0-9_]*")

_Gates = Mapping[str, bool]


def validate(cfg: ConfigurationV1Beta2, gates: _Gates | None = None) -> list[FieldError]:
    """``pkg/config/validation.go`` Validate: every rule, in Kueue's order.

    ``cfg`` is a v1beta2 Configuration (normally defaulted, as Kueue validates it);
    ``gates`` the feature gates in force (default: Kueue's defaults).
    """
    g = {**FEATURE_GATE_DEFAULTS, **(gates or {})}
    errs = _duration_errors(cfg)
    if errs:
        return errs
    for rule in _RULES:
        errs += rule(cfg, g)
    return errs


def _validate_wait_for_pods_ready(c: ConfigurationV1Beta2, g: _Gates) -> list[FieldError]:
    w = c.wait_for_pods_ready
    if w is None or g["DisableWaitForPodsReady"]:
        return []
    errs: list[FieldError] = []
    p = "waitForPodsReady"
    timeout = _ns(w.timeout)
    if timeout == 0:
        errs.append(e.required(child(p, "timeout"), "must be specified"))
    if timeout < 0:
        errs.append(e.invalid(child(p, "timeout"), format_duration_ns(timeout), _NEGATIVE))
    if w.recovery_timeout is not None and _ns(w.recovery_timeout) < 0:
        errs.append(
            e.invalid(
                child(p, "recoveryTimeout"), format_duration_ns(_ns(w.recovery_timeout)), _NEGATIVE
            )
        )
    s = w.requeuing_strategy
    if s is not None:
        rp = child(p, "requeuingStrategy")
        if s.timestamp is not None and s.timestamp not in ("Creation", "Eviction"):
            errs.append(
                e.not_supported(child(rp, "timestamp"), s.timestamp, ["Creation", "Eviction"])
            )
        for attr, wire in (
            ("backoff_limit_count", "backoffLimitCount"),
            ("backoff_base_seconds", "backoffBaseSeconds"),
            ("backoff_max_seconds", "backoffMaxSeconds"),
        ):
            v = getattr(s, attr)
            if v is not None and v < 0:
                errs.append(e.invalid(child(rp, wire), v, _NEGATIVE))
    return errs


def _validate_integrations(c: ConfigurationV1Beta2, g: _Gates) -> list[FieldError]:
    if c.integrations is None:
        return [e.required("integrations", "cannot be empty")]
    if c.integrations.frameworks is None:
        return [e.required("integrations.frameworks", "cannot be empty")]
    errs: list[FieldError] = []
    managed: set[str] = set()
    available = sorted(BUILTIN_FRAMEWORKS)
    for i, name in enumerate(c.integrations.frameworks):
        p = index("integrations.frameworks", i)
        fw = BUILTIN_FRAMEWORKS.get(name)
        if fw is None:
            errs.append(e.not_supported(p, name, available))
        elif fw.gvk in managed:
            errs.append(e.duplicate(p, name))
        else:
            managed.add(fw.gvk)
    for i, name in enumerate(c.integrations.external_frameworks or ()):
        p = index("integrations.externalFrameworks", i)
        gvk = _parse_kind_arg(name)
        if gvk is None:
            errs.append(e.invalid(p, name, "must be format, 'Kind.version.group.com'"))
        elif gvk in managed:
            errs.append(e.duplicate(p, name))
        else:
            managed.add(gvk)
    # validatePodIntegrationOptions
    if "pod" in c.integrations.frameworks:
        if c.managed_jobs_namespace_selector is not None:
            errs += _namespace_selector_errors(c)
        else:
            errs.append(
                e.required(
                    "managedJobsNamespaceSelector",
                    "cannot be empty when pod integration is enabled",
                )
            )
    return errs


def _namespace_selector_errors(c: ConfigurationV1Beta2) -> list[FieldError]:
    """The selector must be valid and exempt kube-system and Kueue's own namespace."""
    p = "managedJobsNamespaceSelector"
    sel = c.managed_jobs_namespace_selector
    errs = _validate_label_selector(sel, p)
    if errs:
        return errs  # LabelSelectorAsSelector fails on what validation rejects
    prohibited = ["kube-system"]
    if c.namespace:
        prohibited.append(c.namespace)
    for ns in prohibited:
        if selector_matches(sel, {NAMESPACE_NAME_LABEL: ns}):
            errs.append(e.invalid(p, _selector_data(sel), f'should not match the "{ns}" namespace'))
    return errs


def _validate_multikueue(c: ConfigurationV1Beta2, g: _Gates) -> list[FieldError]:
    mk = c.multi_kueue
    if mk is None:
        return []
    errs: list[FieldError] = []
    p = "multiKueue"
    for attr, wire in (("gc_interval", "gcInterval"), ("worker_lost_timeout", "workerLostTimeout")):
        v = getattr(mk, attr)
        if v is not None and _ns(v) < 0:
            errs.append(e.invalid(child(p, wire), format_duration_ns(_ns(v)), _NEGATIVE))
    if mk.origin is not None:
        msgs = _is_label_value(mk.origin)
        if msgs:
            errs.append(e.invalid(child(p, "origin"), mk.origin, ",".join(msgs)))
    if mk.external_frameworks:
        enabled = set((c.integrations.frameworks or []) if c.integrations else [])
        builtin = {
            fw.gvk for name, fw in BUILTIN_FRAMEWORKS.items() if fw.multikueue and name in enabled
        }
        seen: set[str] = set()
        for i, f in enumerate(mk.external_frameworks):
            fp = child(index(child(p, "externalFrameworks"), i), "name")
            gvk = _parse_kind_arg(f.name)
            if gvk is None:
                errs.append(e.invalid(fp, f.name, "must be in 'kind.version.group' format"))
                continue
            if gvk in seen:
                errs.append(e.duplicate(fp, f.name))
            else:
                seen.add(gvk)
            if gvk in builtin:
                errs.append(e.invalid(fp, f.name, "conflicts with a built-in MultiKueue adapter"))
    cp = mk.cluster_profile
    if cp is not None:
        cpp = child(p, "clusterProfile")
        if cp.access_providers and cp.credentials_providers:
            errs.append(
                e.forbidden(
                    child(cpp, "credentialsProviders"),
                    "must not be specified when accessProviders is specified",
                )
            )
        if cp.access_providers:
            errs += _validate_access_providers(cp.access_providers, child(cpp, "accessProviders"))
        else:
            errs += _validate_access_providers(
                cp.credentials_providers or [], child(cpp, "credentialsProviders")
            )
    idc = mk.incremental_dispatcher_config
    if idc is not None:
        ip = child(p, "incrementalDispatcherConfig")
        if mk.dispatcher_name != DISPATCHER_INCREMENTAL:
            errs.append(
                e.invalid(
                    ip,
                    _builtins(idc),
                    "incrementalDispatcherConfig is only valid when dispatcherName is set to the "
                    "incremental dispatcher",
                )
            )
        if idc.step_size is not None and idc.step_size < 1:
            errs.append(
                e.invalid(
                    child(ip, "stepSize"), idc.step_size, "must be greater than or equal to 1"
                )
            )
    return errs


def _validate_access_providers(
    providers: list[ClusterProfileAccessProvider], path: str
) -> list[FieldError]:
    # Kueue reports these without the list index (``accessProviders.name``).
    errs: list[FieldError] = []
    ep = child(path, "execConfig")
    for prov in providers:
        ex = prov.exec_config or ExecConfig()
        if not prov.name:
            errs.append(e.required(child(path, "name"), "must be specified"))
        if not ex.command:
            errs.append(e.required(child(ep, "command"), "must be specified"))
        if not ex.api_version:
            errs.append(e.required(child(ep, "apiVersion"), "must be specified"))
        for env in ex.env or ():
            if not env.name:
                errs.append(e.required(child(child(ep, "env"), "name"), "must be specified"))
        mode = ex.interactive_mode
        if mode == "":
            errs.append(e.required(child(ep, "interactiveMode"), "must be specified"))
        elif mode not in ("Never", "IfAvailable", "Always"):
            errs.append(
                e.not_supported(
                    child(ep, "interactiveMode"), mode, ["Never", "IfAvailable", "Always"]
                )
            )
    return errs


def _validate_fair_sharing(c: ConfigurationV1Beta2, g: _Gates) -> list[FieldError]:
    fs = c.fair_sharing
    if fs is None:
        return []
    p = "fairSharing.preemptionStrategies"
    if not fs.preemption_strategies:
        return [e.required(p, "must be specified")]
    if tuple(fs.preemption_strategies) not in _VALID_STRATEGY_SETS:
        return [
            e.not_supported(
                p, fs.preemption_strategies, [",".join(s) for s in _VALID_STRATEGY_SETS]
            )
        ]
    return []


def _validate_admission_fair_sharing(c: ConfigurationV1Beta2, g: _Gates) -> list[FieldError]:
    afs = c.admission_fair_sharing
    if afs is None:
        return []
    errs: list[FieldError] = []
    half_life = _ns(afs.usage_half_life_time)
    if half_life < 0:
        errs.append(
            e.invalid(
                "admissionFairSharing.usageHalfLifeTime", format_duration_ns(half_life), _NEGATIVE
            )
        )
    if _ns(afs.usage_sampling_interval) <= 0:
        # Kueue shows usageHalfLifeTime as the bad value here; the detail is what matters.
        errs.append(
            e.invalid(
                "admissionFairSharing.usageSamplingInterval",
                format_duration_ns(_ns(afs.usage_sampling_interval)),
                "must be greater than 0",
            )
        )
    for name, weight in sorted((afs.resource_weights or {}).items()):
        if weight < 0:
            errs.append(
                e.invalid(key("admissionFairSharing.resourceWeights", name), weight, _NEGATIVE)
            )
    return errs


def _validate_internal_cert_management(c: ConfigurationV1Beta2, g: _Gates) -> list[FieldError]:
    icm = c.internal_cert_management
    if icm is None or not icm.enable:
        return []
    errs: list[FieldError] = []
    if icm.webhook_service_name is not None:
        msgs = _is_dns1035_label(icm.webhook_service_name)
        if msgs:
            errs.append(
                e.invalid(
                    "internalCertManagement.webhookServiceName",
                    icm.webhook_service_name,
                    ",".join(msgs),
                )
            )
    if icm.webhook_secret_name is not None:
        msgs = _is_dns1123_subdomain(icm.webhook_secret_name)
        if msgs:
            errs.append(
                e.invalid(
                    "internalCertManagement.webhookSecretName",
                    icm.webhook_secret_name,
                    ",".join(msgs),
                )
            )
    return errs


def _validate_resource_transformations(c: ConfigurationV1Beta2, g: _Gates) -> list[FieldError]:
    if c.resources is None:
        return []
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, t in enumerate(c.resources.transformations or ()):
        p = index("resources.transformations", i)
        if (t.strategy or "") not in ("Retain", "Replace"):
            errs.append(e.not_supported(child(p, "strategy"), t.strategy, ["Retain", "Replace"]))
        if t.input in seen:
            errs.append(e.duplicate(child(p, "input"), t.input))
        else:
            seen.add(t.input)
    return errs


def _validate_device_class_mappings(c: ConfigurationV1Beta2, g: _Gates) -> list[FieldError]:
    if c.resources is None or not c.resources.device_class_mappings:
        return []
    mappings = c.resources.device_class_mappings
    base = "resources.deviceClassMappings"
    errs: list[FieldError] = []
    if len(mappings) > 16:
        errs.append(e.too_many(base, len(mappings), 16))
    seen_names: set[str] = set()
    class_to_resource: dict[str, str] = {}
    class_counters: dict[str, set[str]] = {}
    for i, m in enumerate(mappings):
        mp = index(base, i)
        names = m.device_class_names or []
        msgs = _is_label_key(m.name)
        if msgs:
            errs.append(e.invalid(child(mp, "name"), m.name, "; ".join(msgs)))
        if len(m.name) > 253:
            errs.append(e.invalid(child(mp, "name"), m.name, "must not exceed 253 characters"))
        if m.name in seen_names:
            errs.append(e.duplicate(child(mp, "name"), m.name))
        else:
            seen_names.add(m.name)
        if not names:
            errs.append(
                e.required(
                    child(mp, "deviceClassNames"), "at least one device class name is required"
                )
            )
        if len(names) > 8:
            errs.append(e.too_many(child(mp, "deviceClassNames"), len(names), 8))
        counter = _counter_name(m)
        seen_classes: set[str] = set()
        for j, dc in enumerate(names):
            dp = index(child(mp, "deviceClassNames"), j)
            msgs = _is_label_key(dc)
            if msgs:
                errs.append(e.invalid(dp, dc, "; ".join(msgs)))
            if len(dc) > 253:
                errs.append(e.invalid(dp, dc, "must not exceed 253 characters"))
            if dc in seen_classes:
                errs.append(e.duplicate(dp, dc))
            else:
                seen_classes.add(dc)
            if dc in class_to_resource:
                existing = class_to_resource[dc]
                if existing != m.name:
                    # One DeviceClass may back several mappings only when each tracks a
                    # different counter of it (e.g. gpu memory and gpu compute).
                    counters = class_counters[dc]
                    if not counter or not counters:
                        errs.append(
                            e.invalid(dp, dc, f"device class already mapped to resource {existing}")
                        )
                    elif counter in counters:
                        errs.append(
                            e.invalid(
                                dp,
                                dc,
                                f'device class already has a counter source for counter "{counter}"',
                            )
                        )
                    else:
                        counters.add(counter)
            else:
                class_to_resource[dc] = m.name
                class_counters[dc] = {counter} if counter else set()
        if m.sources:
            errs += _validate_sources(m.sources, child(mp, "sources"), g)
    return errs


def _counter_name(m: DeviceClassMappingV1Beta2) -> str:
    if m.sources and m.sources[0].counter is not None:
        return m.sources[0].counter.name
    return ""


def _validate_sources(
    sources: list[DeviceClassSourceConfig], path: str, g: _Gates
) -> list[FieldError]:
    errs: list[FieldError] = []
    counters, has_capacity = 0, False
    for i, s in enumerate(sources):
        sp = index(path, i)
        if s.counter is None and s.capacity is None:
            errs.append(e.required(sp, "exactly one source type must be set per entry"))
            continue
        if s.counter is not None and s.capacity is not None:
            errs.append(
                e.invalid(sp, "counter+capacity", "exactly one source type must be set per entry")
            )
            continue
        if s.counter is not None:
            counters += 1
            cp = child(sp, "counter")
            if not g["KueueDRAIntegrationPartitionableDevices"]:
                errs.append(
                    e.invalid(
                        cp,
                        True,
                        "counter sources require KueueDRAIntegrationPartitionableDevices to be enabled",
                    )
                )
                continue
            if not s.counter.name:
                errs.append(e.required(child(cp, "name")))
            else:
                msgs = _is_dns1123_label(s.counter.name)
                if msgs:
                    errs.append(e.invalid(child(cp, "name"), s.counter.name, ",".join(msgs)))
            errs += _validate_source_driver(s.counter.driver, s.counter.device_selector, cp)
        if s.capacity is not None:
            has_capacity = True
            cp = child(sp, "capacity")
            if not g["KueueDRAIntegrationConsumableCapacity"]:
                errs.append(
                    e.invalid(
                        cp,
                        True,
                        "capacity sources require KueueDRAIntegrationConsumableCapacity to be enabled",
                    )
                )
                continue
            errs += _validate_qualified_name(s.capacity.name, child(cp, "name"))
            errs += _validate_source_driver(s.capacity.driver, s.capacity.device_selector, cp)
    if counters and has_capacity:
        errs.append(
            e.invalid(
                path, len(sources), "cannot mix counter and capacity sources in the same mapping"
            )
        )
    return errs


def _validate_source_driver(
    driver: str, selector: DeviceSelector | None, path: str
) -> list[FieldError]:
    errs: list[FieldError] = []
    dp = child(path, "driver")
    if not driver:
        errs.append(e.required(dp))
    elif len(driver) > 63:  # resourcev1.DriverNameMaxLength
        errs.append(e.invalid(dp, driver, "must not exceed 63 characters"))
    else:
        msgs = _is_dns1123_subdomain(driver)
        if msgs:
            errs.append(e.invalid(dp, driver, ",".join(msgs)))
    # Kueue also compiles the expression with the DRA CEL compiler; kuota has no CEL
    # environment for devices, so only its presence is checked.
    if selector is None or selector.cel is None or not selector.cel.expression:
        errs.append(e.required(child(path, "deviceSelector.cel.expression")))
    return errs


def _validate_qualified_name(name: str, path: str) -> list[FieldError]:
    """Kubernetes' DRA validateQualifiedName (``domain/cIdentifier`` or ``cIdentifier``)."""
    parts = name.split("/")
    if len(parts) == 1:
        return _validate_c_identifier(parts[0], path)
    if len(parts) != 2:
        return []  # Kubernetes' own TODO: names with several slashes pass
    errs: list[FieldError] = []
    domain, ident = parts
    if not domain:
        errs.append(e.invalid(path, "", "the domain must not be empty"))
    else:
        if len(domain) > 63:  # DeviceMaxDomainLength
            errs.append(e.too_long(path, 63))
        errs += [e.invalid(path, domain, m) for m in _is_dns1123_subdomain(domain.lower())]
    if not ident:
        errs.append(e.invalid(path, "", "the name must not be empty"))
    else:
        errs += _validate_c_identifier(ident, path)
    return errs


def _validate_c_identifier(ident: str, path: str) -> list[FieldError]:
    errs = [e.too_long(path, 32)] if len(ident) > 32 else []  # DeviceMaxIDLength
    return errs + [e.invalid(path, ident, m) for m in _is_c_identifier(ident)]


def _validate_managed_jobs_namespace_selector(
    c: ConfigurationV1Beta2, g: _Gates
) -> list[FieldError]:
    return _namespace_selector_errors(c)


def _validate_object_retention(c: ConfigurationV1Beta2, g: _Gates) -> list[FieldError]:
    rp = c.object_retention_policies
    if rp is None or rp.workloads is None:
        return []
    errs: list[FieldError] = []
    base = "objectRetentionPolicies.workloads"
    for attr, wire in (
        ("after_finished", "afterFinished"),
        ("after_deactivated_by_kueue", "afterDeactivatedByKueue"),
    ):
        v = getattr(rp.workloads, attr)
        if v is not None and _ns(v) < 0:
            errs.append(e.invalid(child(base, wire), format_duration_ns(_ns(v)), _NEGATIVE))
    return errs


# Go 1.26 crypto/tls: tls.CipherSuites() (secure) and tls.InsecureCipherSuites(), plus
# the legacy ChaCha names component-base still accepts.
_SECURE_CIPHERS = (
    "TLS_AES_128_GCM_SHA256",
    "TLS_AES_256_GCM_SHA384",
    "TLS_CHACHA20_POLY1305_SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305",
)
_INSECURE_CIPHERS = (
    "TLS_RSA_WITH_RC4_128_SHA",
    "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA",
    "TLS_RSA_WITH_AES_256_CBC_SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA256",
    "TLS_RSA_WITH_AES_128_GCM_SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA",
    "TLS_ECDHE_RSA_WITH_RC4_128_SHA",
    "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
)
# tls.CurveID values with a name in Go 1.26 (CurveP256..P521, X25519, the ML-KEM hybrids).
_CURVES = frozenset({23, 24, 25, 29, 4587, 4588, 4589})


def _tls_parse_errors(tls: TLSOptions) -> list[str]:
    """pkg/util/tlsconfig.ParseTLSOptions: the errors it joins."""
    msgs: list[str] = []
    v = tls.min_version
    if v in ("VersionTLS11", "VersionTLS10"):
        msgs.append("invalid minVersion. Please use VersionTLS12 or VersionTLS13")
    elif v not in ("", "VersionTLS12", "VersionTLS13"):
        msgs.append(
            f'invalid minVersion: unknown tls version "{v}". Please use VersionTLS12 or VersionTLS13'
        )
    known = set(_SECURE_CIPHERS) | set(_INSECURE_CIPHERS)
    for name in tls.cipher_suites or ():
        if name not in known:
            preferred = " ".join(sorted(_SECURE_CIPHERS))
            msgs.append(
                f"invalid cipher suites: Cipher suite {name} not supported or doesn't exist. "
                f"Please use the secure cipher names: [{preferred}]"
            )
            break
    seen: set[int] = set()
    for cid in tls.curve_preferences or ():
        problem = None
        if cid <= 0 or cid > 65535:
            problem = f"curve preference {cid} is out of range (must be 1-65535)"
        elif cid in seen:
            problem = f"duplicate curve preference {cid}"
        elif cid not in _CURVES:
            problem = f"curve preference {cid} is not supported by the current Go version"
        if problem:
            msgs.append(f"invalid curve preferences: {problem}")
            break
        seen.add(cid)
    return msgs


def _validate_tls(c: ConfigurationV1Beta2, g: _Gates) -> list[FieldError]:
    if c.tls is None:
        return []
    msgs = _tls_parse_errors(c.tls)
    if msgs:
        return [e.invalid("tls", _builtins(c.tls), "\n".join(msgs))]
    if c.tls.min_version == "VersionTLS13" and c.tls.cipher_suites:
        return [
            e.invalid(
                "tls.cipherSuites",
                c.tls.cipher_suites,
                "may not be specified when `minVersion` is 'VersionTLS13'",
            )
        ]
    return []


def _is_go_ip(text: str) -> bool:
    """net.ParseIP: dotted IPv4 (no leading zeros) or IPv6, no zone."""
    if "%" in text:
        return False
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _validate_visibility_server(c: ConfigurationV1Beta2, g: _Gates) -> list[FieldError]:
    vs = c.visibility_server
    if vs is None:
        return []
    errs: list[FieldError] = []
    if vs.bind_address is not None and not _is_go_ip(vs.bind_address):
        errs.append(
            e.invalid("visibilityServer.bindAddress", vs.bind_address, "must be a valid IP address")
        )
    if vs.bind_port is not None and not 1 <= vs.bind_port <= 65535:
        errs.append(
            e.invalid(
                "visibilityServer.bindPort", vs.bind_port, "must be a valid port number (1-65535)"
            )
        )
    return errs


def _validate_custom_labels(c: ConfigurationV1Beta2, g: _Gates) -> list[FieldError]:
    labels = (c.metrics.custom_labels if c.metrics else None) or []
    if not labels:
        return []
    base = "metrics.customLabels"
    errs: list[FieldError] = []
    if len(labels) > _MAX_CUSTOM_LABELS:
        errs.append(e.too_many(base, len(labels), _MAX_CUSTOM_LABELS))
    seen: set[str] = set()
    per_kind: dict[str, int] = {}
    for i, lab in enumerate(labels):
        p = index(base, i)
        if not _CUSTOM_LABEL_NAME_RE.fullmatch(lab.name):
            errs.append(e.invalid(child(p, "name"), lab.name, "must match ^[a-zA-Z][a-zA-Z0-9_]*$"))
        if lab.name in seen:
            errs.append(e.duplicate(child(p, "name"), lab.name))
        else:
            seen.add(lab.name)
        if lab.source_label_key and lab.source_annotation_key:
            errs.append(
                e.invalid(
                    p,
                    _builtins(lab),
                    "sourceLabelKey and sourceAnnotationKey are mutually exclusive",
                )
            )
        if lab.source_label_key:
            errs += _label_key_errors(child(p, "sourceLabelKey"), lab.source_label_key)
        elif lab.source_annotation_key:
            errs += _label_key_errors(child(p, "sourceAnnotationKey"), lab.source_annotation_key)
        else:
            errs += _label_key_errors(child(p, "name"), lab.name)
        kind = lab.source_kind if lab.source_kind is not None else "ClusterQueue"
        per_kind[kind] = per_kind.get(kind, 0) + 1
        tracked = lab.tracked_values or []
        tp = child(p, "trackedValues")
        if kind == "Workload":
            if not tracked:
                errs.append(
                    e.invalid(tp, tracked, "must not be empty when sourceKind is 'Workload'")
                )
            if len(tracked) > _MAX_TRACKED_WORKLOAD_VALUES:
                errs.append(
                    e.invalid(
                        tp,
                        tracked,
                        f"must not be greater than {_MAX_TRACKED_WORKLOAD_VALUES} when sourceKind is 'Workload'",
                    )
                )
        elif len(tracked) > _MAX_TRACKED_VALUES:
            errs.append(e.too_many(tp, len(tracked), _MAX_TRACKED_VALUES))
        if len(set(tracked)) < len(tracked):
            errs.append(e.invalid(tp, tracked, "must not contain duplicates"))
    shown = [_builtins(x) for x in labels]
    for kind in sorted(per_kind):
        limit = _MAX_CUSTOM_LABELS_PER_KIND.get(kind)
        if limit is None:
            errs.append(e.invalid(base, shown, f"unknown source kind: {kind}"))
        elif per_kind[kind] > limit:
            errs.append(
                e.invalid(
                    base,
                    shown,
                    f"too many custom labels for source kind {kind}: found {per_kind[kind]}, expected <= {limit}",
                )
            )
    return errs


def _label_key_errors(path: str, value: str) -> list[FieldError]:
    msgs = _is_label_key(value)
    return [e.invalid(path, value, "; ".join(msgs))] if msgs else []


def _validate_quota_check_strategy(c: ConfigurationV1Beta2, g: _Gates) -> list[FieldError]:
    if (
        not g["QuotaCheckStrategy"]
        or c.resources is None
        or c.resources.quota_check_strategy is None
    ):
        return []
    errs: list[FieldError] = []
    strategy = c.resources.quota_check_strategy
    p = "resources.quotaCheckStrategy"
    if c.resources.exclude_resource_prefixes and strategy == "IgnoreUndeclared":
        errs.append(
            e.invalid(
                p,
                strategy,
                "excludeResourcePrefixes is not allowed when quotaCheckStrategy is IgnoreUndeclared",
            )
        )
    if strategy not in ("IgnoreUndeclared", "BlockUndeclared"):
        errs.append(e.not_supported(p, strategy, ["IgnoreUndeclared", "BlockUndeclared"]))
    return errs


_Rule = Callable[[ConfigurationV1Beta2, _Gates], list[FieldError]]
_RULES: tuple[_Rule, ...] = (
    _validate_wait_for_pods_ready,
    _validate_integrations,
    _validate_multikueue,
    _validate_fair_sharing,
    _validate_admission_fair_sharing,
    _validate_internal_cert_management,
    _validate_resource_transformations,
    _validate_device_class_mappings,
    _validate_managed_jobs_namespace_selector,
    _validate_object_retention,
    _validate_tls,
    _validate_visibility_server,
    _validate_custom_labels,
    _validate_quota_check_strategy,
)


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
        if out.intersection(_IMPLIES_POD):
            out.add("pod")
        return frozenset(out)


@dataclass(frozen=True, slots=True)
class ResourceTransformation:
    input: str
    strategy: str  # "Retain" or "Replace"
    multiply_by: str  # "" when unset
    outputs: Mapping[str, Quantity]


@dataclass(frozen=True, slots=True)
class DeviceClassMapping:
    name: str
    device_class_names: tuple[str, ...]


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
            timeout=_ns_to_td(_ns(w.timeout)),
            block_admission=bool(w.block_admission),
            recovery_timeout=_ns_to_td(
                _ns(w.recovery_timeout if w.recovery_timeout is not None else w.timeout)
            ),
            requeuing_strategy=RequeuingStrategy(
                timestamp=rs.timestamp or "Eviction",
                backoff_limit_count=rs.backoff_limit_count,
                backoff_base_seconds=_or(
                    rs.backoff_base_seconds, DEFAULT_REQUEUING_BACKOFF_BASE_SECONDS
                ),
                backoff_max_seconds=_or(
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
            usage_half_life_time=_ns_to_td(_ns(a.usage_half_life_time)),
            usage_sampling_interval=_ns_to_td(_ns(a.usage_sampling_interval)),
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
                DeviceClassMapping(m.name, tuple(m.device_class_names or ()))
                for m in res.device_class_mappings or ()
            ),
        ),
        object_retention=ObjectRetention(
            workloads_after_finished=None
            if wl.after_finished is None
            else _ns_to_td(_ns(wl.after_finished)),
            workloads_after_deactivated_by_kueue=(
                None
                if wl.after_deactivated_by_kueue is None
                else _ns_to_td(_ns(wl.after_deactivated_by_kueue))
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


def to_wire(cfg: ConfigurationV1Beta2 | ConfigurationV1Beta1, version: str) -> dict[str, Any]:
    """``cfg`` written as a Configuration in ``version`` (``v1beta1``/``v1beta2`` or the
    full apiVersion), converting as Kueue converts and printing durations as Go does."""
    api_version = version if "/" in version else f"{GROUP}/{version}"
    if api_version not in _WIRE:
        raise ValueError(
            f"unsupported Configuration version {version!r}; use one of {API_VERSIONS}"
        )
    out: ConfigurationV1Beta2 | ConfigurationV1Beta1
    if api_version == V1BETA1:
        out = cfg if isinstance(cfg, ConfigurationV1Beta1) else v1beta2_to_v1beta1(cfg)
    else:
        out = cfg if isinstance(cfg, ConfigurationV1Beta2) else v1beta1_to_v1beta2(cfg)
    out = msgspec.convert(_builtins(out), type(out), dec_hook=dec_hook)  # a copy to rewrite
    _canonical_durations(out)
    d = _builtins(out)
    d.pop("apiVersion", None)
    d.pop("kind", None)
    return {"apiVersion": api_version, "kind": KIND, **d}
