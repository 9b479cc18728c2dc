"""Kueue's Configuration: durations, feature gates, defaults, conversion, validation.

Table cases mirror Kueue's own tests at ff69552e: apis/config/v1beta{1,2}/defaults_test.go,
apis/config/v1beta1/configuration_conversion_test.go, pkg/config/validation_test.go and
pkg/config/config_test.go; Go's time package tests for durations.
"""

from __future__ import annotations

import copy
from datetime import timedelta
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from kuota.api import config as c
from kuota.api import errors as e
from kuota.api.base import dec_hook, enc_hook

FIXTURES = Path(__file__).parent / "fixtures" / "config"
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def fixture(name: str) -> dict[str, Any]:
    return yaml.safe_load((FIXTURES / name).read_text())


def v2(raw: dict[str, Any]) -> c.ConfigurationV1Beta2:
    """A v1beta2 wire struct straight from ``raw``: no defaults (as Kueue's unit tests)."""
    return msgspec.convert(raw, c.ConfigurationV1Beta2, dec_hook=dec_hook)


def v1(raw: dict[str, Any]) -> c.ConfigurationV1Beta1:
    return msgspec.convert(raw, c.ConfigurationV1Beta1, dec_hook=dec_hook)


def wire(obj: msgspec.Struct) -> dict[str, Any]:
    return msgspec.to_builtins(obj, enc_hook=enc_hook)


# ============================================================================ durations
# Go's time_test.go parseDurationTests (the cases expressible as Python str).
PARSE_OK = [
    ("0", 0),
    ("5s", 5 * 10**9),
    ("30s", 30 * 10**9),
    ("1478s", 1478 * 10**9),
    ("-5s", -5 * 10**9),
    ("+5s", 5 * 10**9),
    ("-0", 0),
    ("+0", 0),
    ("5.0s", 5 * 10**9),
    ("5.6s", 5 * 10**9 + 600 * 10**6),
    ("5.s", 5 * 10**9),
    (".5s", 500 * 10**6),
    ("1.0s", 10**9),
    ("1.00s", 10**9),
    ("1.004s", 10**9 + 4 * 10**6),
    ("1.0040s", 10**9 + 4 * 10**6),
    ("100.00100s", 100 * 10**9 + 10**6),
    ("10ns", 10),
    ("11us", 11 * 10**3),
    ("12µs", 12 * 10**3),  # U+00B5
    ("12μs", 12 * 10**3),  # U+03BC
    ("13ms", 13 * 10**6),
    ("14s", 14 * 10**9),
    ("15m", 15 * 60 * 10**9),
    ("16h", 16 * 3600 * 10**9),
    ("3h30m", (3 * 3600 + 30 * 60) * 10**9),
    ("10.5s4m", 4 * 60 * 10**9 + 10 * 10**9 + 500 * 10**6),
    ("-2m3.4s", -(2 * 60 * 10**9 + 3 * 10**9 + 400 * 10**6)),
    ("1h2m3s4ms5us6ns", 3600 * 10**9 + 2 * 60 * 10**9 + 3 * 10**9 + 4 * 10**6 + 5 * 10**3 + 6),
    ("39h9m14.425s", (39 * 3600 + 9 * 60 + 14) * 10**9 + 425 * 10**6),
    ("52763797000ns", 52763797000),
    ("0.3333333333333333333h", 20 * 60 * 10**9),
    ("9007199254740993ns", (1 << 53) + 1),
    ("9223372036854775807ns", INT64_MAX),
    ("9223372036854775.807us", INT64_MAX),
    ("9223372036s854ms775us807ns", INT64_MAX),
    ("-9223372036854775808ns", INT64_MIN),
    ("-9223372036854775.808us", INT64_MIN),
    ("-9223372036s854ms775us808ns", INT64_MIN),
    ("-2562047h47m16.854775808s", INT64_MIN),
    ("0.100000000000000000000h", 6 * 60 * 10**9),
    ("0.830103483285477580700h", (49 * 60 + 48) * 10**9 + 372539827),
]

PARSE_ERR = [
    ("", 'time: invalid duration ""'),
    ("3", 'time: missing unit in duration "3"'),
    ("-", 'time: invalid duration "-"'),
    ("s", 'time: invalid duration "s"'),
    (".", 'time: invalid duration "."'),
    ("-.", 'time: invalid duration "-."'),
    (".s", 'time: invalid duration ".s"'),
    ("+.s", 'time: invalid duration "+.s"'),
    ("1d", 'time: unknown unit "d" in duration "1d"'),
    ("1 s", 'time: unknown unit " s" in duration "1 s"'),
    ("5m30", 'time: missing unit in duration "5m30"'),
    ("1é", 'time: unknown unit "\\xc3\\xa9" in duration "1\\xc3\\xa9"'),
    ('1"', 'time: unknown unit "\\"" in duration "1\\""'),
    ("9223372036854775808ns", 'time: invalid duration "9223372036854775808ns"'),
    ("9223372036854775.808us", 'time: invalid duration "9223372036854775.808us"'),
    ("9223372036854ms775us808ns", 'time: invalid duration "9223372036854ms775us808ns"'),
    ("-9223372036854775809ns", 'time: invalid duration "-9223372036854775809ns"'),
    ("3000000h", 'time: invalid duration "3000000h"'),
]

# Go's time_test.go durationTests (Duration.String).
FORMAT = [
    (0, "0s"),
    (1, "1ns"),
    (1100, "1.1µs"),
    (2200 * 10**3, "2.2ms"),
    (3300 * 10**6, "3.3s"),
    (4 * 60 * 10**9 + 5 * 10**9, "4m5s"),
    (4 * 60 * 10**9 + 5001 * 10**6, "4m5.001s"),
    (5 * 3600 * 10**9 + 6 * 60 * 10**9 + 7001 * 10**6, "5h6m7.001s"),
    (8 * 60 * 10**9 + 1, "8m0.000000001s"),
    (INT64_MAX, "2562047h47m16.854775807s"),
    (INT64_MIN, "-2562047h47m16.854775808s"),
    (3600 * 10**9, "1h0m0s"),
    (90 * 60 * 10**9, "1h30m0s"),
    (300 * 10**6, "300ms"),
    (-(10**9), "-1s"),
]


@pytest.mark.parametrize(("text", "ns"), PARSE_OK)
def test_parse_duration_ns(text: str, ns: int) -> None:
    assert c.parse_duration_ns(text) == ns


@pytest.mark.parametrize(("text", "message"), PARSE_ERR)
def test_parse_duration_errors_read_as_go(text: str, message: str) -> None:
    with pytest.raises(ValueError) as err:
        c.parse_duration_ns(text)
    assert str(err.value) == message


def test_parse_duration_refuses_non_strings() -> None:
    with pytest.raises(TypeError):
        c.parse_duration_ns(300)  # type: ignore[arg-type]


@pytest.mark.parametrize(("ns", "text"), FORMAT)
def test_format_duration_ns(ns: int, text: str) -> None:
    assert c.format_duration_ns(ns) == text


def test_format_duration_ns_out_of_range() -> None:
    with pytest.raises(ValueError):
        c.format_duration_ns(INT64_MAX + 1)


def test_timedelta_forms() -> None:
    assert c.parse_duration("1h30m") == timedelta(hours=1, minutes=30)
    assert c.parse_duration("300ms") == timedelta(milliseconds=300)
    assert c.format_duration(timedelta(minutes=5)) == "5m0s"
    assert c.format_duration(timedelta(0)) == "0s"
    assert c.format_duration(timedelta(microseconds=1500)) == "1.5ms"
    # Below a microsecond rounds up, so a positive duration stays positive.
    assert c.parse_duration("1ns") == timedelta(microseconds=1)
    assert c.parse_duration("-1ns") == timedelta(0)
    assert c.parse_duration("1001ns") == timedelta(microseconds=2)


@given(st.integers(min_value=INT64_MIN, max_value=INT64_MAX))
def test_format_then_parse_is_exact(ns: int) -> None:
    assert c.parse_duration_ns(c.format_duration_ns(ns)) == ns


_UNIT_NS = {
    "h": 3600 * 10**9,
    "m": 60 * 10**9,
    "s": 10**9,
    "ms": 10**6,
    "us": 10**3,
    "µs": 10**3,
    "ns": 1,
}


@given(
    st.lists(
        st.tuples(st.integers(min_value=0, max_value=10**6), st.sampled_from(sorted(_UNIT_NS))),
        min_size=1,
        max_size=6,
    ),
    st.sampled_from(["", "-", "+"]),
)
def test_parse_integer_components_sum_exactly(parts: list[tuple[int, str]], sign: str) -> None:
    text = sign + "".join(f"{n}{u}" for n, u in parts)
    total = sum(n * _UNIT_NS[u] for n, u in parts)
    assert c.parse_duration_ns(text) == (-total if sign == "-" else total)


@given(
    st.integers(min_value=0, max_value=10**6),
    st.integers(min_value=0, max_value=10**9 - 1),
    st.sampled_from(sorted(_UNIT_NS)),
)
def test_parse_fraction_close_to_exact(whole: int, frac: int, unit: str) -> None:
    # Go multiplies the fraction in float64 and truncates: never above the exact value,
    # and below it by less than a nanosecond per started unit of rounding error.
    digits = str(frac).rjust(9, "0")
    exact_num = (whole * 10**9 + frac) * _UNIT_NS[unit]
    got = c.parse_duration_ns(f"{whole}.{digits}{unit}")
    assert exact_num // 10**9 - 1 <= got <= -(-exact_num // 10**9)


@given(st.integers(min_value=-(INT64_MAX // 1000), max_value=INT64_MAX // 1000))
def test_timedelta_round_trip_at_microseconds(us: int) -> None:
    td = timedelta(microseconds=us)
    assert c.parse_duration(c.format_duration(td)) == td


# ============================================================================ feature gates
def test_gate_defaults_cover_every_kueue_gate() -> None:
    assert len(c.FEATURE_GATE_DEFAULTS) == 80
    # The gates the spec names, at their HEAD defaults.
    on = [
        "PartialAdmission",
        "FlavorFungibility",
        "PrioritySortingWithinCohort",
        "ReclaimablePods",
        "AdmissionFairSharing",
        "FairSharingPreemptWithinNominal",
        "FairSharingPrioritizeNonBorrowing",
        "SchedulingEquivalenceHashing",
        "FlavorFungibilityPreserveScanProgress",
        "RecomputeAssignmentUponPreemptionTargetsOverlap",
        "UnadmittedWorkloadsObservability",
        "WorkloadPriorityClassDefaulting",
        "AdmissionGatedBy",
        "TopologyAwareScheduling",
        "ElasticJobsViaWorkloadSlices",
        "LocalQueueMetrics",
        "LWSImmutableGroupSize",
        "VisibilityOnDemand",
        "QuotaCheckStrategy",
    ]
    off = [
        "UnadmittedWorkloadsExplicitStatus",
        "PrioritizePreemptorWorkloads",
        "PriorityBoost",
        "ConcurrentAdmission",
        "DisableWaitForPodsReady",
        "ShortWorkloadNames",
    ]
    assert all(c.FEATURE_GATE_DEFAULTS[g] for g in on)
    assert not any(c.FEATURE_GATE_DEFAULTS[g] for g in off)
    for feature, deps in c.FEATURE_GATE_DEPENDENCIES.items():
        assert feature in c.FEATURE_GATE_DEFAULTS
        assert all(d in c.FEATURE_GATE_DEFAULTS for d in deps)


_TAS_OFF = {
    "TopologyAwareScheduling": False,
    "TASHandleOverlappingFlavors": False,
    "TASFailedNodeReplacement": False,
    "TASFailedNodeReplacementFailFast": False,
    "TASReplaceNodeOnPodTermination": False,
    "TASReplaceNodeOnNodeTaints": False,
    "TASMultiLayerTopology": False,
    "TASRecomputeAssignmentWithinSchedulingCycle": False,
    "TASProfileMixed": False,
}

# pkg/config/validation_test.go TestLoadAndValidateFeatureGates (file map only: kuota has
# no --feature-gates flag). Detail None: Kueue's test ignores it too.
GATE_CASES: list[tuple[str, dict[str, bool], str | bool | None]] = [
    ("no feature gates", {}, False),
    (
        "cannot set TAS profile with TAS disabled",
        {**_TAS_OFF, "TASProfileMixed": True},
        "TASProfileMixed is enabled, but depends on features that are disabled: [TopologyAwareScheduling]",
    ),
    (
        "TASReplaceNodeDueToNotReadyOverFixedTime requires TASFailedNodeReplacement",
        {
            "TASReplaceNodeDueToNotReadyOverFixedTime": True,
            "TopologyAwareScheduling": True,
            "TASFailedNodeReplacement": False,
            "TASFailedNodeReplacementFailFast": False,
            "TASReplaceNodeOnPodTermination": False,
            "TASProfileMixed": False,
        },
        "TASReplaceNodeDueToNotReadyOverFixedTime is enabled, but depends on features that are disabled: [TASFailedNodeReplacement]",
    ),
    (
        "ElasticJobsViaWorkloadSlicesWithTAS requires ElasticJobsViaWorkloadSlices",
        {
            "ElasticJobsViaWorkloadSlicesWithTAS": True,
            "TopologyAwareScheduling": True,
            "ElasticJobsViaWorkloadSlices": False,
            "TASProfileMixed": False,
        },
        "ElasticJobsViaWorkloadSlicesWithTAS is enabled, but depends on features that are disabled: [ElasticJobsViaWorkloadSlices]",
    ),
    (
        "ElasticJobsViaWorkloadSlicesWithTAS requires TopologyAwareScheduling",
        {
            **_TAS_OFF,
            "ElasticJobsViaWorkloadSlicesWithTAS": True,
            "ElasticJobsViaWorkloadSlices": True,
        },
        "ElasticJobsViaWorkloadSlicesWithTAS is enabled, but depends on features that are disabled: [TopologyAwareScheduling]",
    ),
    (
        "ElasticJobsViaWorkloadSlicesWithTAS valid with its dependencies",
        {
            "ElasticJobsViaWorkloadSlicesWithTAS": True,
            "ElasticJobsViaWorkloadSlices": True,
            "TopologyAwareScheduling": True,
            "TASProfileMixed": False,
        },
        False,
    ),
    (
        "multiple errors at once",
        {
            **_TAS_OFF,
            "TASProfileMixed": True,
            "TASHandleOverlappingFlavors": True,
            "ElasticJobsViaWorkloadSlicesWithTAS": True,
            "ElasticJobsViaWorkloadSlices": False,
        },
        None,
    ),
    (
        "TASHandleOverlappingFlavors requires TopologyAwareScheduling",
        {**_TAS_OFF, "TASHandleOverlappingFlavors": True},
        "TASHandleOverlappingFlavors is enabled, but depends on features that are disabled: [TopologyAwareScheduling]",
    ),
    (
        "TASHandleOverlappingFlavors valid with its dependencies",
        {"TopologyAwareScheduling": True, "TASHandleOverlappingFlavors": True},
        False,
    ),
    (
        "TASRecomputeAssignmentWithinSchedulingCycle requires TopologyAwareScheduling",
        {**_TAS_OFF, "TASRecomputeAssignmentWithinSchedulingCycle": True},
        "TASRecomputeAssignmentWithinSchedulingCycle is enabled, but depends on features that are disabled: [TopologyAwareScheduling]",
    ),
    (
        "TASFailedNodeReplacement requires TopologyAwareScheduling",
        {**_TAS_OFF, "TASFailedNodeReplacement": True},
        "TASFailedNodeReplacement is enabled, but depends on features that are disabled: [TopologyAwareScheduling]",
    ),
    (
        "TASBalancedPlacement requires TopologyAwareScheduling",
        {**_TAS_OFF, "TASBalancedPlacement": True},
        "TASBalancedPlacement is enabled, but depends on features that are disabled: [TopologyAwareScheduling]",
    ),
    (
        "TASReplaceNodeOnNodeTaints requires TopologyAwareScheduling",
        {**_TAS_OFF, "TASReplaceNodeOnNodeTaints": True},
        "TASReplaceNodeOnNodeTaints is enabled, but depends on features that are disabled: [TopologyAwareScheduling]",
    ),
    (
        "TASMultiLayerTopology requires TopologyAwareScheduling",
        {**_TAS_OFF, "TASMultiLayerTopology": True},
        "TASMultiLayerTopology is enabled, but depends on features that are disabled: [TopologyAwareScheduling]",
    ),
    (
        "TASRespectNodeAffinityPreferred requires TopologyAwareScheduling",
        {**_TAS_OFF, "TASRespectNodeAffinityPreferred": True},
        "TASRespectNodeAffinityPreferred is enabled, but depends on features that are disabled: [TopologyAwareScheduling]",
    ),
    (
        "TASFailedNodeReplacementFailFast requires TASFailedNodeReplacement",
        {
            "TopologyAwareScheduling": True,
            "TASFailedNodeReplacement": False,
            "TASFailedNodeReplacementFailFast": True,
            "TASReplaceNodeOnPodTermination": False,
            "TASMultiLayerTopology": False,
        },
        "TASFailedNodeReplacementFailFast is enabled, but depends on features that are disabled: [TASFailedNodeReplacement]",
    ),
    (
        "TASReplaceNodeOnPodTermination requires TASFailedNodeReplacement",
        {
            "TopologyAwareScheduling": True,
            "TASFailedNodeReplacement": False,
            "TASFailedNodeReplacementFailFast": False,
            "TASReplaceNodeOnPodTermination": True,
        },
        "TASReplaceNodeOnPodTermination is enabled, but depends on features that are disabled: [TASFailedNodeReplacement]",
    ),
    (
        "TASFailedNodeReplacementFailFast requires both",
        {**_TAS_OFF, "TASFailedNodeReplacementFailFast": True},
        "TASFailedNodeReplacementFailFast is enabled, but depends on features that are disabled: [TopologyAwareScheduling TASFailedNodeReplacement]",
    ),
    (
        "TASReplaceNodeOnPodTermination requires both",
        {**_TAS_OFF, "TASReplaceNodeOnPodTermination": True},
        None,
    ),
    (
        "all TAS sub-features valid",
        {
            "TopologyAwareScheduling": True,
            "TASFailedNodeReplacement": True,
            "TASFailedNodeReplacementFailFast": True,
            "TASReplaceNodeOnPodTermination": True,
            "TASBalancedPlacement": True,
            "TASReplaceNodeOnNodeTaints": True,
            "TASMultiLayerTopology": True,
            "TASRespectNodeAffinityPreferred": True,
            "TASHandleOverlappingFlavors": True,
        },
        False,
    ),
    (
        "KueueDRAIntegrationExtendedResource requires KueueDRAIntegration",
        {"KueueDRAIntegrationExtendedResource": True, "KueueDRAIntegration": False},
        None,
    ),
    (
        "KueueDRAIntegrationPartitionableDevices requires KueueDRAIntegration",
        {"KueueDRAIntegrationPartitionableDevices": True, "KueueDRAIntegration": False},
        None,
    ),
    (
        "KueueDRAIntegrationConsumableCapacity requires KueueDRAIntegration",
        {"KueueDRAIntegrationConsumableCapacity": True, "KueueDRAIntegration": False},
        None,
    ),
    (
        "FlavorFungibilityPreserveScanProgress requires FlavorFungibility",
        {"FlavorFungibility": False},
        "FlavorFungibilityPreserveScanProgress is enabled, but depends on features that are disabled: [FlavorFungibility]",
    ),
    ("unknown gate", {"NoSuchGate": True}, "unrecognized feature gate: NoSuchGate"),
    (
        "locked gate",
        {"TLSOptions": False},
        "cannot set feature gate TLSOptions to false, feature is locked to true",
    ),
    (
        "locked gate at its default is fine",
        {"ManagedJobsNamespaceSelectorAlwaysRespected": True},
        False,
    ),
]


@pytest.mark.parametrize(
    ("name", "overrides", "detail"), GATE_CASES, ids=[x[0] for x in GATE_CASES]
)
def test_validate_feature_gates(
    name: str, overrides: dict[str, bool], detail: str | bool | None
) -> None:
    gates, errs = c.validate_feature_gates(overrides)
    if detail is False:
        assert errs == []
        for k, v in overrides.items():
            assert gates[k] is v
        return
    assert [(x.type, x.path) for x in errs] == [(e.INVALID, "featureGates")]
    if detail is not None:
        assert errs[0].detail == detail
    assert gates == dict(c.FEATURE_GATE_DEFAULTS)  # Kueue does not start: nothing applied


def test_all_alpha_switches_unnamed_alpha_gates() -> None:
    gates, errs = c.validate_feature_gates({"AllAlpha": True, "PriorityBoost": False})
    assert errs == []
    assert gates["ConcurrentAdmission"] and gates["ShortWorkloadNames"]
    assert not gates["PriorityBoost"]  # named explicitly: the explicit value wins
    assert gates["PartialAdmission"]  # beta: untouched


# ============================================================================ defaults
def _defaulted_v1beta2(**over: Any) -> dict[str, Any]:
    """SetDefaults_Configuration's output for ``{}`` (v1beta2), with ``over`` replacing keys."""
    base: dict[str, Any] = {
        "namespace": "kueue-system",
        "webhook": {"port": 9443, "certDir": "/tmp/k8s-webhook-server/serving-certs"},
        "leaderElection": {
            "leaderElect": True,
            "leaseDuration": "15s",
            "renewDeadline": "10s",
            "retryPeriod": "2s",
            "resourceLock": "leases",
            "resourceName": "c1f6bfd2.kueue.x-k8s.io",
        },
        "metrics": {"bindAddress": ":8443", "localQueueMetrics": {"enable": True}},
        "health": {"healthProbeBindAddress": ":8081"},
        "managedJobsNamespaceSelector": {
            "matchExpressions": [
                {
                    "key": "kubernetes.io/metadata.name",
                    "operator": "NotIn",
                    "values": ["kube-system", "kueue-system"],
                }
            ]
        },
        "internalCertManagement": {
            "enable": True,
            "webhookServiceName": "kueue-webhook-service",
            "webhookSecretName": "kueue-webhook-server-cert",
        },
        "waitForPodsReady": {
            "timeout": "30m0s",
            "blockAdmission": False,
            "recoveryTimeout": "30m0s",
            "requeuingStrategy": {
                "timestamp": "Eviction",
                "backoffBaseSeconds": 60,
                "backoffMaxSeconds": 3600,
            },
        },
        "clientConnection": {"qps": 300.0, "burst": 500},
        "integrations": {"frameworks": ["batch/job"]},
        "multiKueue": {
            "gcInterval": "1m0s",
            "origin": "multikueue",
            "workerLostTimeout": "15m0s",
            "dispatcherName": "kueue.x-k8s.io/multikueue-dispatcher-all-at-once",
        },
        "visibilityServer": {"bindPort": 8082},
    }
    base.update(over)
    return {k: v for k, v in base.items() if v is not None}


_NO_CERTS = {"internalCertManagement": {"enable": False}}
_TENANT_SELECTOR = {
    "matchExpressions": [
        {
            "key": "kubernetes.io/metadata.name",
            "operator": "NotIn",
            "values": ["kube-system", "kueue-tenant-a"],
        }
    ]
}
_WFPR_DEFAULT_REQUEUE = {
    "timestamp": "Eviction",
    "backoffBaseSeconds": 60,
    "backoffMaxSeconds": 3600,
}

# apis/config/v1beta2/defaults_test.go TestSetDefaults_Configuration
V1BETA2_DEFAULTS: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("defaulting namespace", _NO_CERTS, _defaulted_v1beta2(**_NO_CERTS)),
    (
        "defaulting ControllerManager",
        {"leaderElection": {"leaderElect": True}, **_NO_CERTS},
        _defaulted_v1beta2(**_NO_CERTS),
    ),
    (
        "should not default ControllerManager",
        {
            "webhook": {"port": 9444, "certDir": "/tmp/test"},
            "metrics": {"bindAddress": ":38081", "localQueueMetrics": {"enable": False}},
            "health": {"healthProbeBindAddress": ":38080"},
            "leaderElection": {
                "leaderElect": True,
                "leaseDuration": "15s",
                "renewDeadline": "10s",
                "retryPeriod": "2s",
                "resourceLock": "leases",
                "resourceName": "foo.kueue.x-k8s.io",
            },
            **_NO_CERTS,
            "integrations": {"frameworks": ["batch/job"]},
            "visibilityServer": {"bindPort": 8082},
        },
        _defaulted_v1beta2(
            webhook={"port": 9444, "certDir": "/tmp/test"},
            metrics={"bindAddress": ":38081", "localQueueMetrics": {}},
            health={"healthProbeBindAddress": ":38080"},
            leaderElection={
                "leaderElect": True,
                "leaseDuration": "15s",
                "renewDeadline": "10s",
                "retryPeriod": "2s",
                "resourceLock": "leases",
                "resourceName": "foo.kueue.x-k8s.io",
            },
            **_NO_CERTS,
        ),
    ),
    (
        "should not set LeaderElectionID",
        {"leaderElection": {"leaderElect": False}, **_NO_CERTS},
        _defaulted_v1beta2(
            leaderElection={
                "leaderElect": False,
                "leaseDuration": "15s",
                "renewDeadline": "10s",
                "retryPeriod": "2s",
                "resourceLock": "leases",
                "resourceName": "c1f6bfd2.kueue.x-k8s.io",
            },
            **_NO_CERTS,
        ),
    ),
    (
        "defaulting InternalCertManagement",
        {"namespace": "kueue-tenant-a"},
        _defaulted_v1beta2(
            namespace="kueue-tenant-a", managedJobsNamespaceSelector=_TENANT_SELECTOR
        ),
    ),
    (
        "should not default InternalCertManagement",
        {"namespace": "kueue-tenant-a", **_NO_CERTS},
        _defaulted_v1beta2(
            namespace="kueue-tenant-a", managedJobsNamespaceSelector=_TENANT_SELECTOR, **_NO_CERTS
        ),
    ),
    (
        "should not default values in custom ClientConnection",
        {
            "namespace": "kueue-tenant-a",
            **_NO_CERTS,
            "clientConnection": {"qps": 123.0, "burst": 456},
        },
        _defaulted_v1beta2(
            namespace="kueue-tenant-a",
            managedJobsNamespaceSelector=_TENANT_SELECTOR,
            **_NO_CERTS,
            clientConnection={"qps": 123.0, "burst": 456},
        ),
    ),
    (
        "should default empty custom ClientConnection",
        {"namespace": "kueue-tenant-a", **_NO_CERTS, "clientConnection": {}},
        _defaulted_v1beta2(
            namespace="kueue-tenant-a", managedJobsNamespaceSelector=_TENANT_SELECTOR, **_NO_CERTS
        ),
    ),
    (
        "defaulting waitForPodsReady values",
        {"waitForPodsReady": {}, **_NO_CERTS},
        _defaulted_v1beta2(**_NO_CERTS),
    ),
    (
        "defaulting waitForPodsReady recoveryTimeout to timeout",
        {"waitForPodsReady": {"timeout": "5m0s"}, **_NO_CERTS},
        _defaulted_v1beta2(
            **_NO_CERTS,
            waitForPodsReady={
                "timeout": "5m0s",
                "blockAdmission": False,
                "recoveryTimeout": "5m0s",
                "requeuingStrategy": _WFPR_DEFAULT_REQUEUE,
            },
        ),
    ),
    (
        "respecting provided waitForPodsReady values",
        {
            "waitForPodsReady": {
                "timeout": "1m0s",
                "recoveryTimeout": "1m0s",
                "requeuingStrategy": {
                    "timestamp": "Creation",
                    "backoffBaseSeconds": 63,
                    "backoffMaxSeconds": 1800,
                },
            },
            **_NO_CERTS,
        },
        _defaulted_v1beta2(
            **_NO_CERTS,
            waitForPodsReady={
                "timeout": "1m0s",
                "blockAdmission": False,
                "recoveryTimeout": "1m0s",
                "requeuingStrategy": {
                    "timestamp": "Creation",
                    "backoffBaseSeconds": 63,
                    "backoffMaxSeconds": 1800,
                },
            },
        ),
    ),
    (
        "disabling waitForPodsReady recoveryTimeout with zero value",
        {"waitForPodsReady": {"timeout": "5m0s", "recoveryTimeout": "0s"}, **_NO_CERTS},
        _defaulted_v1beta2(
            **_NO_CERTS,
            waitForPodsReady={
                "timeout": "5m0s",
                "blockAdmission": False,
                "recoveryTimeout": "0s",
                "requeuingStrategy": _WFPR_DEFAULT_REQUEUE,
            },
        ),
    ),
    (
        "zero waitForPodsReady timeout means the default",
        {"waitForPodsReady": {"timeout": "0s"}, **_NO_CERTS},
        _defaulted_v1beta2(**_NO_CERTS),
    ),
    (
        "integrations",
        {**_NO_CERTS, "integrations": {"frameworks": ["a", "b"]}},
        _defaulted_v1beta2(**_NO_CERTS, integrations={"frameworks": ["a", "b"]}),
    ),
    (
        "empty integrations.frameworks defaults",
        {**_NO_CERTS, "integrations": {"frameworks": []}},
        _defaulted_v1beta2(**_NO_CERTS),
    ),
    (
        "multiKueue",
        {
            **_NO_CERTS,
            "multiKueue": {
                "gcInterval": "1s",
                "origin": "multikueue-manager1",
                "workerLostTimeout": "1m0s",
                "dispatcherName": "kueue.x-k8s.io/multikueue-dispatcher-incremental",
            },
        },
        _defaulted_v1beta2(
            **_NO_CERTS,
            multiKueue={
                "gcInterval": "1s",
                "origin": "multikueue-manager1",
                "workerLostTimeout": "1m0s",
                "dispatcherName": "kueue.x-k8s.io/multikueue-dispatcher-incremental",
                "incrementalDispatcherConfig": {"stepSize": 3},
            },
        ),
    ),
    (
        "multiKueue origin is an empty value",
        {
            **_NO_CERTS,
            "multiKueue": {"gcInterval": "1s", "origin": "", "workerLostTimeout": "1m0s"},
        },
        _defaulted_v1beta2(
            **_NO_CERTS,
            multiKueue={
                "gcInterval": "1s",
                "origin": "multikueue",
                "workerLostTimeout": "1m0s",
                "dispatcherName": "kueue.x-k8s.io/multikueue-dispatcher-all-at-once",
            },
        ),
    ),
    (
        "multiKueue GCInterval 0",
        {**_NO_CERTS, "multiKueue": {"gcInterval": "0s", "origin": "multikueue-manager1"}},
        _defaulted_v1beta2(
            **_NO_CERTS,
            multiKueue={
                "gcInterval": "0s",
                "origin": "multikueue-manager1",
                "workerLostTimeout": "15m0s",
                "dispatcherName": "kueue.x-k8s.io/multikueue-dispatcher-all-at-once",
            },
        ),
    ),
    (
        "set object retention policy for workloads",
        {
            **_NO_CERTS,
            "objectRetentionPolicies": {
                "workloads": {"afterFinished": "30m0s", "afterDeactivatedByKueue": "30m0s"}
            },
        },
        _defaulted_v1beta2(
            **_NO_CERTS,
            objectRetentionPolicies={
                "workloads": {"afterFinished": "30m0s", "afterDeactivatedByKueue": "30m0s"}
            },
        ),
    ),
    (
        "resources.transformations strategy",
        {
            **_NO_CERTS,
            "resources": {
                "transformations": [
                    {"input": "cpu"},
                    {"input": "memory", "strategy": "Replace"},
                    {"input": "ephemeral-storage", "strategy": ""},
                ]
            },
        },
        _defaulted_v1beta2(
            **_NO_CERTS,
            resources={
                "transformations": [
                    {"input": "cpu", "strategy": "Retain"},
                    {"input": "memory", "strategy": "Replace"},
                    {"input": "ephemeral-storage", "strategy": "Retain"},
                ]
            },
        ),
    ),
    (
        "admissionFairSharing sampling interval",
        {**_NO_CERTS, "admissionFairSharing": {"usageHalfLifeTime": "168h0m0s"}},
        _defaulted_v1beta2(
            **_NO_CERTS,
            admissionFairSharing={"usageHalfLifeTime": "168h0m0s", "usageSamplingInterval": "5m0s"},
        ),
    ),
    (
        "explicit zero client connection and webhook port are kept",
        {**_NO_CERTS, "clientConnection": {"qps": 0.0, "burst": 0}, "webhook": {"port": 0}},
        _defaulted_v1beta2(
            **_NO_CERTS,
            clientConnection={"qps": 0.0, "burst": 0},
            webhook={"port": 0, "certDir": "/tmp/k8s-webhook-server/serving-certs"},
        ),
    ),
]


@pytest.mark.parametrize(
    ("name", "original", "want"), V1BETA2_DEFAULTS, ids=[x[0] for x in V1BETA2_DEFAULTS]
)
def test_defaults_v1beta2(name: str, original: dict[str, Any], want: dict[str, Any]) -> None:
    assert wire(c.default_v1beta2(v2(copy.deepcopy(original)))) == want


def _defaulted_v1beta1(**over: Any) -> dict[str, Any]:
    """v1beta1's defaults for ``{}``: waitForPodsReady present but disabled, no visibility server."""
    out = _defaulted_v1beta2(waitForPodsReady={}, visibilityServer=None)
    out.update(over)
    return {k: v for k, v in out.items() if v is not None}


# apis/config/v1beta1/defaults_test.go TestSetDefaults_Configuration (the cases that differ)
V1BETA1_DEFAULTS: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("defaulting namespace", _NO_CERTS, _defaulted_v1beta1(**_NO_CERTS)),
    (
        "defaulting waitForPodsReady values",
        {"waitForPodsReady": {"enable": True}, **_NO_CERTS},
        _defaulted_v1beta1(
            **_NO_CERTS,
            waitForPodsReady={
                "enable": True,
                "timeout": "5m0s",
                "blockAdmission": True,
                "recoveryTimeout": "5m0s",
                "requeuingStrategy": _WFPR_DEFAULT_REQUEUE,
            },
        ),
    ),
    (
        "set waitForPodsReady.blockAdmission to false, and recoveryTimeout to nil when enable is false",
        {"waitForPodsReady": {"enable": False}, **_NO_CERTS},
        _defaulted_v1beta1(**_NO_CERTS),
    ),
    (
        "respecting provided waitForPodsReady values",
        {
            "waitForPodsReady": {
                "enable": True,
                "timeout": "1m0s",
                "blockAdmission": False,
                "requeuingStrategy": {"timestamp": "Creation", "backoffLimitCount": 10},
            },
            **_NO_CERTS,
        },
        _defaulted_v1beta1(
            **_NO_CERTS,
            waitForPodsReady={
                "enable": True,
                "timeout": "1m0s",
                "blockAdmission": False,
                "recoveryTimeout": "1m0s",
                "requeuingStrategy": {
                    "timestamp": "Creation",
                    "backoffLimitCount": 10,
                    "backoffBaseSeconds": 60,
                    "backoffMaxSeconds": 3600,
                },
            },
        ),
    ),
    (
        "explicit zero timeout is kept (v1beta1 timeout is a pointer)",
        {"waitForPodsReady": {"enable": True, "timeout": "0s"}, **_NO_CERTS},
        _defaulted_v1beta1(
            **_NO_CERTS,
            waitForPodsReady={
                "enable": True,
                "timeout": "0s",
                "blockAdmission": True,
                "recoveryTimeout": "0s",
                "requeuingStrategy": _WFPR_DEFAULT_REQUEUE,
            },
        ),
    ),
    (
        "multiKueue incremental dispatcher gets no config in v1beta1",
        {
            **_NO_CERTS,
            "multiKueue": {"dispatcherName": "kueue.x-k8s.io/multikueue-dispatcher-incremental"},
        },
        _defaulted_v1beta1(
            **_NO_CERTS,
            multiKueue={
                "gcInterval": "1m0s",
                "origin": "multikueue",
                "workerLostTimeout": "15m0s",
                "dispatcherName": "kueue.x-k8s.io/multikueue-dispatcher-incremental",
            },
        ),
    ),
    (
        "add default fair sharing configuration when enabled",
        {**_NO_CERTS, "fairSharing": {"enable": True}},
        _defaulted_v1beta1(
            **_NO_CERTS,
            fairSharing={
                "enable": True,
                "preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"],
            },
        ),
    ),
    (
        "fair sharing left alone when disabled",
        {**_NO_CERTS, "fairSharing": {"enable": False}},
        _defaulted_v1beta1(**_NO_CERTS, fairSharing={}),
    ),
    (
        "resources.transformations strategy",
        {**_NO_CERTS, "resources": {"transformations": [{"input": "cpu"}]}},
        _defaulted_v1beta1(
            **_NO_CERTS, resources={"transformations": [{"input": "cpu", "strategy": "Retain"}]}
        ),
    ),
]


@pytest.mark.parametrize(
    ("name", "original", "want"), V1BETA1_DEFAULTS, ids=[x[0] for x in V1BETA1_DEFAULTS]
)
def test_defaults_v1beta1(name: str, original: dict[str, Any], want: dict[str, Any]) -> None:
    assert wire(c.default_v1beta1(v1(copy.deepcopy(original)))) == want


def test_empty_file_per_version() -> None:
    # The decisive difference: v1beta2 waits for pods (30m, not blocking), v1beta1 does not.
    cfg2, errs2 = c.load_config({"apiVersion": c.V1BETA2, "kind": "Configuration"})
    cfg1, errs1 = c.load_config({"apiVersion": c.V1BETA1, "kind": "Configuration"})
    assert errs1 == errs2 == []
    assert cfg2 is not None and cfg1 is not None
    assert cfg2.wait_for_pods_ready == c.WaitForPodsReady(
        timeout=timedelta(minutes=30),
        block_admission=False,
        recovery_timeout=timedelta(minutes=30),
        requeuing_strategy=c.RequeuingStrategy("Eviction", None, 60, 3600),
    )
    assert cfg1.wait_for_pods_ready is None
    assert cfg2.fair_sharing is None and cfg1.fair_sharing is None
    assert cfg2.namespace == cfg1.namespace == "kueue-system"
    assert cfg2.integrations.frameworks == ("batch/job",)
    assert cfg2.resources.quota_check_strategy == "BlockUndeclared"
    assert cfg1.api_version == c.V1BETA1 and cfg2.api_version == c.V1BETA2


def test_v1beta1_enabled_wait_for_pods_ready() -> None:
    cfg, errs = c.load_config({"apiVersion": c.V1BETA1, "waitForPodsReady": {"enable": True}})
    assert errs == [] and cfg is not None
    assert cfg.wait_for_pods_ready == c.WaitForPodsReady(
        timeout=timedelta(minutes=5),
        block_admission=True,
        recovery_timeout=timedelta(minutes=5),
        requeuing_strategy=c.RequeuingStrategy("Eviction", None, 60, 3600),
    )


# ============================================================================ conversion
# apis/config/v1beta1/configuration_conversion_test.go
CONVERT_TO: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("minimal Configuration", {}, {}),
    (
        "with FairSharing",
        {
            "fairSharing": {
                "enable": True,
                "preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"],
            }
        },
        {
            "fairSharing": {
                "preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]
            }
        },
    ),
    (
        "with FairSharing disabled",
        {"fairSharing": {"enable": False, "preemptionStrategies": ["LessThanOrEqualToFinalShare"]}},
        {},
    ),
    (
        "with FairSharing enabled, but preemption strategies are empty",
        {"fairSharing": {"enable": True}},
        {
            "fairSharing": {
                "preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]
            }
        },
    ),
    (
        "with WaitForPodsReady",
        {"waitForPodsReady": {"enable": True}},
        {"waitForPodsReady": {"timeout": "5m0s", "blockAdmission": True}},
    ),
    ("with WaitForPodsReady disabled", {"waitForPodsReady": {"enable": False}}, {}),
    (
        "podOptions and queueVisibility are dropped",
        {
            "integrations": {"frameworks": ["pod"], "podOptions": {"podSelector": {}}},
            "queueVisibility": {"updateIntervalSeconds": 5},
        },
        {"integrations": {"frameworks": ["pod"]}},
    ),
]


@pytest.mark.parametrize(("name", "src", "want"), CONVERT_TO, ids=[x[0] for x in CONVERT_TO])
def test_v1beta1_to_v1beta2(name: str, src: dict[str, Any], want: dict[str, Any]) -> None:
    assert wire(c.v1beta1_to_v1beta2(v1(src))) == want


CONVERT_FROM: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("minimal Configuration", {}, {}),
    (
        "with FairSharing",
        {
            "fairSharing": {
                "preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]
            }
        },
        {
            "fairSharing": {
                "enable": True,
                "preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"],
            }
        },
    ),
    (
        "with WaitForPodsReady",
        {"waitForPodsReady": {"timeout": "5m0s"}},
        {"waitForPodsReady": {"enable": True, "blockAdmission": False, "timeout": "5m0s"}},
    ),
    (
        "v1beta2-only fields are dropped",
        {
            "visibilityServer": {"bindPort": 1},
            "resources": {
                "quotaCheckStrategy": "IgnoreUndeclared",
                "deviceClassMappings": [{"name": "a", "sources": [{}]}],
            },
            "multiKueue": {"clusterProfile": {}, "incrementalDispatcherConfig": {"stepSize": 2}},
            "metrics": {
                "customLabels": [{"name": "a", "sourceKind": "Cohort", "trackedValues": ["x"]}]
            },
        },
        {
            "resources": {"deviceClassMappings": [{"name": "a"}]},
            "multiKueue": {},
            "metrics": {"customLabels": [{"name": "a"}]},
        },
    ),
]


@pytest.mark.parametrize(("name", "src", "want"), CONVERT_FROM, ids=[x[0] for x in CONVERT_FROM])
def test_v1beta2_to_v1beta1(name: str, src: dict[str, Any], want: dict[str, Any]) -> None:
    assert wire(c.v1beta2_to_v1beta1(v2(src))) == want


@pytest.mark.parametrize(
    "src",
    [
        {},
        {
            "fairSharing": {
                "enable": True,
                "preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"],
            }
        },
    ],
)
def test_conversion_round_trip(src: dict[str, Any]) -> None:
    assert wire(c.v1beta2_to_v1beta1(c.v1beta1_to_v1beta2(v1(src)))) == src


def test_legacy_v1beta1_file_converts() -> None:
    cfg, errs = c.load_config(fixture("v1beta1-legacy.yaml"))
    assert errs == [] and cfg is not None
    assert cfg.api_version == c.V1BETA1
    assert cfg.manage_jobs_without_queue_name
    wfpr = cfg.wait_for_pods_ready
    assert wfpr is not None
    assert (wfpr.timeout, wfpr.block_admission, wfpr.recovery_timeout) == (
        timedelta(minutes=5),
        True,
        timedelta(minutes=5),
    )
    assert wfpr.requeuing_strategy == c.RequeuingStrategy("Eviction", 5, 60, 3600)
    assert cfg.fair_sharing == c.FairSharing(
        ("LessThanOrEqualToFinalShare", "LessThanInitialShare")
    )
    assert cfg.integrations.frameworks == ("batch/job", "pod")
    assert "podOptions" not in wire(cfg.source)["integrations"]


# ============================================================================ validation
R, INV, NS, D, F, TM, TL = (
    e.REQUIRED,
    e.INVALID,
    e.NOT_SUPPORTED,
    e.DUPLICATE,
    e.FORBIDDEN,
    e.TOO_MANY,
    e.TOO_LONG,
)
JOB = {"integrations": {"frameworks": ["batch/job"]}}
SYSTEM_SELECTOR = {
    "matchExpressions": [
        {
            "key": "kubernetes.io/metadata.name",
            "operator": "NotIn",
            "values": ["kube-system", "kueue-system"],
        }
    ]
}
EXEC = {
    "command": "test-command",
    "apiVersion": "client.authentication.k8s.io/v1",
    "interactiveMode": "Never",
}
CEL = {"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}


def _counter(
    name: str = "memory", driver: str = "gpu.nvidia.com", selector: Any = CEL
) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "driver": driver}
    if selector is not None:
        out["deviceSelector"] = selector
    return {"counter": out}


def _capacity(name: str = "memory", driver: str = "gpu.example.com") -> dict[str, Any]:
    return {
        "capacity": {
            "name": name,
            "driver": driver,
            "deviceSelector": {"cel": {"expression": "device.driver == 'gpu.example.com'"}},
        }
    }


def _dcm(*mappings: dict[str, Any]) -> dict[str, Any]:
    return {**JOB, "resources": {"deviceClassMappings": list(mappings)}}


def _labels(*labels: dict[str, Any]) -> dict[str, Any]:
    return {**JOB, "metrics": {"customLabels": list(labels)}}


def _selector(sel: dict[str, Any]) -> dict[str, Any]:
    return {**JOB, "managedJobsNamespaceSelector": sel}


def _wfpr(**w: Any) -> dict[str, Any]:
    return {**JOB, "waitForPodsReady": {"timeout": "5m0s", **w}}


# Each case: (name, raw v1beta2 Configuration (not defaulted, as Kueue's tests), gate
# overrides, expected [(type, path)] or [(type, path, detail)]).
Case = tuple[str, dict[str, Any], dict[str, bool], list[tuple[str, ...]]]
VALIDATION: list[Case] = [
    # ---- integrations (pkg/config/validation_test.go TestValidate)
    ("empty", {}, {}, [(R, "integrations", "cannot be empty")]),
    (
        "empty integrations.frameworks",
        {"integrations": {}},
        {},
        [(R, "integrations.frameworks", "cannot be empty")],
    ),
    (
        "unregistered integrations.frameworks",
        {"integrations": {"frameworks": ["unregistered/jobframework"]}},
        {},
        [(NS, "integrations.frameworks[0]")],
    ),
    (
        "duplicate integrations.frameworks",
        {"integrations": {"frameworks": ["batch/job", "batch/job"]}},
        {},
        [(D, "integrations.frameworks[1]")],
    ),
    (
        "valid integrations",
        {
            "integrations": {"frameworks": list(c.BUILTIN_FRAMEWORKS)},
            "managedJobsNamespaceSelector": SYSTEM_SELECTOR,
        },
        {},
        [],
    ),
    (
        "duplicate frameworks between frameworks and externalFrameworks",
        {"integrations": {"frameworks": ["batch/job"], "externalFrameworks": ["Job.v1.batch"]}},
        {},
        [(D, "integrations.externalFrameworks[0]")],
    ),
    (
        "invalid format integrations.externalFrameworks",
        {"integrations": {"frameworks": ["batch/job"], "externalFrameworks": ["invalid"]}},
        {},
        [(INV, "integrations.externalFrameworks[0]", "must be format, 'Kind.version.group.com'")],
    ),
    (
        "duplicate integrations.externalFrameworks",
        {
            "integrations": {
                "frameworks": ["batch/job"],
                "externalFrameworks": ["Foo.v1.example.com", "Foo.v1.example.com"],
            }
        },
        {},
        [(D, "integrations.externalFrameworks[1]")],
    ),
    (
        "valid integrations.externalFrameworks",
        {
            "integrations": {
                "frameworks": ["batch/job"],
                "externalFrameworks": ["Foo.v1.example.com", "Bar.v2.example.com"],
            }
        },
        {},
        [],
    ),
    # ---- managedJobsNamespaceSelector
    (
        "nil managedJobsNamespaceSelector with pod framework",
        {"integrations": {"frameworks": ["pod"]}},
        {},
        [(R, "managedJobsNamespaceSelector", "cannot be empty when pod integration is enabled")],
    ),
    ("valid managedJobsNamespaceSelector", _selector(SYSTEM_SELECTOR), {}, []),
    (
        "prohibited namespace in MatchLabels",
        _selector({"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}}),
        {},
        [(INV, "managedJobsNamespaceSelector", 'should not match the "kube-system" namespace')],
    ),
    (
        "prohibited namespace in MatchExpressions with operator In",
        _selector(
            {
                "matchExpressions": [
                    {
                        "key": "kubernetes.io/metadata.name",
                        "operator": "In",
                        "values": ["kube-system"],
                    }
                ]
            }
        ),
        {},
        [(INV, "managedJobsNamespaceSelector", 'should not match the "kube-system" namespace')],
    ),
    (
        "kueue's own namespace must not match",
        {
            **_selector(
                {
                    "matchExpressions": [
                        {
                            "key": "kubernetes.io/metadata.name",
                            "operator": "NotIn",
                            "values": ["kube-system"],
                        }
                    ]
                }
            ),
            "namespace": "kueue-system",
        },
        {},
        [(INV, "managedJobsNamespaceSelector", 'should not match the "kueue-system" namespace')],
    ),
    (
        "empty selector matches everything",
        {**_selector({}), "namespace": "kueue-system"},
        {},
        [
            (INV, "managedJobsNamespaceSelector", 'should not match the "kube-system" namespace'),
            (INV, "managedJobsNamespaceSelector", 'should not match the "kueue-system" namespace'),
        ],
    ),
    (
        "pod integration checks the selector too",
        {
            "integrations": {"frameworks": ["pod"]},
            "managedJobsNamespaceSelector": {
                "matchLabels": {"kubernetes.io/metadata.name": "kube-system"}
            },
        },
        {},
        [(INV, "managedJobsNamespaceSelector"), (INV, "managedJobsNamespaceSelector")],
    ),
    (
        "invalid selector requirement",
        _selector(
            {
                "matchExpressions": [
                    {"key": "bad key", "operator": "In"},
                    {"key": "a", "operator": "Exists", "values": ["x"]},
                ]
            }
        ),
        {},
        [
            (R, "managedJobsNamespaceSelector.matchExpressions[0].values"),
            (INV, "managedJobsNamespaceSelector.matchExpressions[0].key"),
            (F, "managedJobsNamespaceSelector.matchExpressions[1].values"),
        ],
    ),
    (
        "invalid selector label",
        _selector({"matchLabels": {"a": "bad value"}}),
        {},
        [(INV, "managedJobsNamespaceSelector.matchLabels")],
    ),
    # ---- waitForPodsReady
    (
        "no supported waitForPodsReady.requeuingStrategy.timestamp",
        _wfpr(requeuingStrategy={"timestamp": "NoSupported"}),
        {},
        [
            (
                NS,
                "waitForPodsReady.requeuingStrategy.timestamp",
                'supported values: "Creation", "Eviction"',
            )
        ],
    ),
    (
        "invalid an empty waitForPodsReady.timeout",
        {**JOB, "waitForPodsReady": {"timeout": "0s"}},
        {},
        [(R, "waitForPodsReady.timeout", "must be specified")],
    ),
    (
        "negative waitForPodsReady.timeout",
        {**JOB, "waitForPodsReady": {"timeout": "-1ns"}},
        {},
        [(INV, "waitForPodsReady.timeout", "must be greater than or equal to 0")],
    ),
    (
        "negative waitForPodsReady.recoveryTimeout",
        _wfpr(recoveryTimeout="-1ns"),
        {},
        [(INV, "waitForPodsReady.recoveryTimeout")],
    ),
    (
        "valid waitForPodsReady",
        {
            **JOB,
            "waitForPodsReady": {
                "timeout": "50ns",
                "recoveryTimeout": "3ns",
                "blockAdmission": False,
                "requeuingStrategy": {
                    "timestamp": "Creation",
                    "backoffLimitCount": 10,
                    "backoffBaseSeconds": 30,
                    "backoffMaxSeconds": 1800,
                },
            },
        },
        {},
        [],
    ),
    (
        "negative backoffLimitCount",
        _wfpr(requeuingStrategy={"backoffLimitCount": -1}),
        {},
        [(INV, "waitForPodsReady.requeuingStrategy.backoffLimitCount")],
    ),
    (
        "negative backoffBaseSeconds",
        _wfpr(requeuingStrategy={"backoffBaseSeconds": -1}),
        {},
        [(INV, "waitForPodsReady.requeuingStrategy.backoffBaseSeconds")],
    ),
    (
        "negative backoffMaxSeconds",
        _wfpr(requeuingStrategy={"backoffMaxSeconds": -1}),
        {},
        [(INV, "waitForPodsReady.requeuingStrategy.backoffMaxSeconds")],
    ),
    (
        "waitForPodsReady not checked when DisableWaitForPodsReady",
        {**JOB, "waitForPodsReady": {"timeout": "-1s"}},
        {"DisableWaitForPodsReady": True},
        [],
    ),
    # ---- multiKueue
    (
        "negative multiKueue.gcInterval",
        {**JOB, "multiKueue": {"gcInterval": "-1s"}},
        {},
        [(INV, "multiKueue.gcInterval")],
    ),
    (
        "negative multiKueue.workerLostTimeout",
        {**JOB, "multiKueue": {"workerLostTimeout": "-1s"}},
        {},
        [(INV, "multiKueue.workerLostTimeout")],
    ),
    (
        "invalid .multiKueue.origin label value",
        {**JOB, "multiKueue": {"origin": "=]"}},
        {},
        [(INV, "multiKueue.origin")],
    ),
    (
        "valid .multiKueue configuration",
        {**JOB, "multiKueue": {"gcInterval": "1s", "origin": "valid", "workerLostTimeout": "2s"}},
        {},
        [],
    ),
    (
        "valid incrementalDispatcherConfig with incremental dispatcher",
        {
            **JOB,
            "multiKueue": {
                "dispatcherName": c.DISPATCHER_INCREMENTAL,
                "incrementalDispatcherConfig": {"stepSize": 2},
            },
        },
        {},
        [],
    ),
    (
        "incrementalDispatcherConfig without incremental dispatcher",
        {
            **JOB,
            "multiKueue": {
                "dispatcherName": c.DISPATCHER_ALL_AT_ONCE,
                "incrementalDispatcherConfig": {"stepSize": 2},
            },
        },
        {},
        [(INV, "multiKueue.incrementalDispatcherConfig")],
    ),
    (
        "incrementalDispatcherConfig.stepSize below minimum",
        {
            **JOB,
            "multiKueue": {
                "dispatcherName": c.DISPATCHER_INCREMENTAL,
                "incrementalDispatcherConfig": {"stepSize": 0},
            },
        },
        {},
        [
            (
                INV,
                "multiKueue.incrementalDispatcherConfig.stepSize",
                "must be greater than or equal to 1",
            )
        ],
    ),
    (
        "empty accessProviders.name",
        {
            **JOB,
            "multiKueue": {
                "clusterProfile": {"accessProviders": [{"name": "", "execConfig": EXEC}]}
            },
        },
        {},
        [(R, "multiKueue.clusterProfile.accessProviders.name")],
    ),
    (
        "empty accessProviders.execConfig.command",
        {
            **JOB,
            "multiKueue": {
                "clusterProfile": {
                    "accessProviders": [{"name": "p", "execConfig": {**EXEC, "command": ""}}]
                }
            },
        },
        {},
        [(R, "multiKueue.clusterProfile.accessProviders.execConfig.command")],
    ),
    (
        "empty accessProviders.execConfig.apiVersion",
        {
            **JOB,
            "multiKueue": {
                "clusterProfile": {
                    "accessProviders": [{"name": "p", "execConfig": {**EXEC, "apiVersion": ""}}]
                }
            },
        },
        {},
        [(R, "multiKueue.clusterProfile.accessProviders.execConfig.apiVersion")],
    ),
    (
        "empty accessProviders.execConfig.env.name",
        {
            **JOB,
            "multiKueue": {
                "clusterProfile": {
                    "accessProviders": [
                        {"name": "p", "execConfig": {**EXEC, "env": [{"name": "", "value": "v"}]}}
                    ]
                }
            },
        },
        {},
        [(R, "multiKueue.clusterProfile.accessProviders.execConfig.env.name")],
    ),
    (
        "empty accessProviders.execConfig.interactiveMode",
        {
            **JOB,
            "multiKueue": {
                "clusterProfile": {
                    "accessProviders": [
                        {"name": "p", "execConfig": {**EXEC, "interactiveMode": ""}}
                    ]
                }
            },
        },
        {},
        [(R, "multiKueue.clusterProfile.accessProviders.execConfig.interactiveMode")],
    ),
    (
        "invalid accessProviders.execConfig.interactiveMode",
        {
            **JOB,
            "multiKueue": {
                "clusterProfile": {
                    "accessProviders": [
                        {"name": "p", "execConfig": {**EXEC, "interactiveMode": "Invalid"}}
                    ]
                }
            },
        },
        {},
        [
            (
                NS,
                "multiKueue.clusterProfile.accessProviders.execConfig.interactiveMode",
                'supported values: "Never", "IfAvailable", "Always"',
            )
        ],
    ),
    (
        "valid clusterProfile",
        {
            **JOB,
            "multiKueue": {
                "clusterProfile": {
                    "accessProviders": [
                        {"name": "p", "execConfig": {**EXEC, "env": [{"name": "V", "value": "v"}]}}
                    ]
                }
            },
        },
        {},
        [],
    ),
    (
        "valid clusterProfile credentialsProviders",
        {
            **JOB,
            "multiKueue": {
                "clusterProfile": {"credentialsProviders": [{"name": "legacy", "execConfig": EXEC}]}
            },
        },
        {},
        [],
    ),
    (
        "accessProviders and credentialsProviders are mutually exclusive",
        {
            **JOB,
            "multiKueue": {
                "clusterProfile": {
                    "accessProviders": [{"name": "p", "execConfig": EXEC}],
                    "credentialsProviders": [{"name": "p", "execConfig": EXEC}],
                }
            },
        },
        {},
        [
            (
                F,
                "multiKueue.clusterProfile.credentialsProviders",
                "must not be specified when accessProviders is specified",
            )
        ],
    ),
    (
        "invalid credentialsProviders",
        {
            **JOB,
            "multiKueue": {
                "clusterProfile": {
                    "credentialsProviders": [
                        {"name": "legacy", "execConfig": {**EXEC, "command": ""}}
                    ]
                }
            },
        },
        {},
        [(R, "multiKueue.clusterProfile.credentialsProviders.execConfig.command")],
    ),
    (
        "multiKueue externalFrameworks: valid",
        {**JOB, "multiKueue": {"externalFrameworks": [{"name": "Foo.v1.example.com"}]}},
        {},
        [],
    ),
    (
        "multiKueue externalFrameworks: bad format",
        {**JOB, "multiKueue": {"externalFrameworks": [{"name": "Foo"}]}},
        {},
        [(INV, "multiKueue.externalFrameworks[0].name", "must be in 'kind.version.group' format")],
    ),
    (
        "multiKueue externalFrameworks: duplicate",
        {
            **JOB,
            "multiKueue": {
                "externalFrameworks": [
                    {"name": "Foo.v1.example.com"},
                    {"name": "Foo.v1.example.com"},
                ]
            },
        },
        {},
        [(D, "multiKueue.externalFrameworks[1].name")],
    ),
    (
        "multiKueue externalFrameworks: conflicts with a built-in adapter",
        {**JOB, "multiKueue": {"externalFrameworks": [{"name": "Job.v1.batch"}]}},
        {},
        [
            (
                INV,
                "multiKueue.externalFrameworks[0].name",
                "conflicts with a built-in MultiKueue adapter",
            )
        ],
    ),
    (
        "multiKueue externalFrameworks: no adapter for a disabled integration",
        {
            **JOB,
            "multiKueue": {"externalFrameworks": [{"name": "JobSet.v1alpha2.jobset.x-k8s.io"}]},
        },
        {},
        [],
    ),
    # ---- fairSharing
    (
        "invalid an empty preemption strategy",
        {**JOB, "fairSharing": {}},
        {},
        [(R, "fairSharing.preemptionStrategies", "must be specified")],
    ),
    (
        "unsupported preemption strategy",
        {
            **JOB,
            "fairSharing": {
                "preemptionStrategies": [
                    "LessThanOrEqualToFinalShare",
                    "UNKNOWN",
                    "LessThanInitialShare",
                    "LessThanOrEqualToFinalShare",
                ]
            },
        },
        {},
        [
            (
                NS,
                "fairSharing.preemptionStrategies",
                'supported values: "LessThanOrEqualToFinalShare", "LessThanInitialShare", "LessThanOrEqualToFinalShare,LessThanInitialShare"',
            )
        ],
    ),
    (
        "reversed preemption strategies",
        {
            **JOB,
            "fairSharing": {
                "preemptionStrategies": ["LessThanInitialShare", "LessThanOrEqualToFinalShare"]
            },
        },
        {},
        [(NS, "fairSharing.preemptionStrategies")],
    ),
    (
        "valid preemption strategy",
        {
            **JOB,
            "fairSharing": {
                "preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]
            },
        },
        {},
        [],
    ),
    # ---- admissionFairSharing
    (
        "valid admissionFairSharing",
        {
            **JOB,
            "admissionFairSharing": {
                "usageHalfLifeTime": "1s",
                "usageSamplingInterval": "1s",
                "resourceWeights": {"cpu": 0.5, "memory": 0.5},
            },
        },
        {},
        [],
    ),
    (
        "invalid usageHalfLifeTime",
        {
            **JOB,
            "admissionFairSharing": {"usageHalfLifeTime": "-1s", "usageSamplingInterval": "1s"},
        },
        {},
        [(INV, "admissionFairSharing.usageHalfLifeTime")],
    ),
    (
        "invalid usageSamplingInterval",
        {**JOB, "admissionFairSharing": {"usageSamplingInterval": "-1s"}},
        {},
        [(INV, "admissionFairSharing.usageSamplingInterval", "must be greater than 0")],
    ),
    (
        "invalid resourceWeights",
        {
            **JOB,
            "admissionFairSharing": {
                "usageSamplingInterval": "1s",
                "resourceWeights": {"cpu": -0.5},
            },
        },
        {},
        [(INV, "admissionFairSharing.resourceWeights[cpu]")],
    ),
    # ---- internalCertManagement
    (
        "invalid webhookSecretName",
        {**JOB, "internalCertManagement": {"enable": True, "webhookSecretName": ":)"}},
        {},
        [(INV, "internalCertManagement.webhookSecretName")],
    ),
    (
        "invalid webhookServiceName",
        {**JOB, "internalCertManagement": {"enable": True, "webhookServiceName": "0-invalid"}},
        {},
        [(INV, "internalCertManagement.webhookServiceName")],
    ),
    (
        "disabled internalCertManagement is not checked",
        {**JOB, "internalCertManagement": {"enable": False, "webhookServiceName": "0-invalid"}},
        {},
        [],
    ),
    (
        "valid internalCertManagement",
        {
            **JOB,
            "internalCertManagement": {
                "enable": True,
                "webhookServiceName": "webhook-svc",
                "webhookSecretName": "webhook-sec",
            },
        },
        {},
        [],
    ),
    # ---- resources.transformations
    (
        "invalid transformations strategy",
        {**JOB, "resources": {"transformations": [{"input": "cpu", "strategy": "invalid"}]}},
        {},
        [(NS, "resources.transformations[0].strategy", 'supported values: "Retain", "Replace"')],
    ),
    (
        "duplicate transformations input",
        {
            **JOB,
            "resources": {
                "transformations": [
                    {"input": "cpu", "strategy": "Retain"},
                    {"input": "memory", "strategy": "Retain"},
                    {"input": "cpu", "strategy": "Retain"},
                ]
            },
        },
        {},
        [(D, "resources.transformations[2].input")],
    ),
    (
        "valid transformations",
        {
            **JOB,
            "resources": {
                "transformations": [
                    {"input": "cpu", "strategy": "Retain"},
                    {"input": "memory", "strategy": "Replace"},
                ]
            },
        },
        {},
        [],
    ),
    # ---- objectRetentionPolicies
    (
        "negative afterFinished",
        {**JOB, "objectRetentionPolicies": {"workloads": {"afterFinished": "-1ns"}}},
        {},
        [(INV, "objectRetentionPolicies.workloads.afterFinished")],
    ),
    (
        "zero afterFinished",
        {**JOB, "objectRetentionPolicies": {"workloads": {"afterFinished": "0s"}}},
        {},
        [],
    ),
    (
        "positive afterFinished",
        {**JOB, "objectRetentionPolicies": {"workloads": {"afterFinished": "1ns"}}},
        {},
        [],
    ),
    (
        "negative afterDeactivatedByKueue",
        {**JOB, "objectRetentionPolicies": {"workloads": {"afterDeactivatedByKueue": "-1ns"}}},
        {},
        [(INV, "objectRetentionPolicies.workloads.afterDeactivatedByKueue")],
    ),
    (
        "zero afterDeactivatedByKueue",
        {**JOB, "objectRetentionPolicies": {"workloads": {"afterDeactivatedByKueue": "0s"}}},
        {},
        [],
    ),
    # ---- tls
    (
        "valid TLS 1.2 with cipher suites",
        {
            **JOB,
            "tls": {
                "minVersion": "VersionTLS12",
                "cipherSuites": ["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"],
            },
        },
        {},
        [],
    ),
    ("valid TLS 1.3 without cipher suites", {**JOB, "tls": {"minVersion": "VersionTLS13"}}, {}, []),
    (
        "invalid TLS 1.3 with cipher suites",
        {
            **JOB,
            "tls": {
                "minVersion": "VersionTLS13",
                "cipherSuites": ["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"],
            },
        },
        {},
        [(INV, "tls.cipherSuites", "may not be specified when `minVersion` is 'VersionTLS13'")],
    ),
    (
        "invalid TLS version and valid cipher suites",
        {
            **JOB,
            "tls": {
                "minVersion": "DUMMY",
                "cipherSuites": ["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"],
            },
        },
        {},
        [
            (
                INV,
                "tls",
                'invalid minVersion: unknown tls version "DUMMY". Please use VersionTLS12 or VersionTLS13',
            )
        ],
    ),
    (
        "invalid TLS version and invalid cipher suites",
        {**JOB, "tls": {"minVersion": "DUMMY", "cipherSuites": ["DUMMY"]}},
        {},
        [(INV, "tls")],
    ),
    (
        "old TLS version",
        {**JOB, "tls": {"minVersion": "VersionTLS11"}},
        {},
        [(INV, "tls", "invalid minVersion. Please use VersionTLS12 or VersionTLS13")],
    ),
    (
        "valid TLS curve preferences",
        {**JOB, "tls": {"minVersion": "VersionTLS12", "curvePreferences": [23, 29]}},
        {},
        [],
    ),
    (
        "invalid TLS curve preferences",
        {**JOB, "tls": {"minVersion": "VersionTLS12", "curvePreferences": [0]}},
        {},
        [
            (
                INV,
                "tls",
                "invalid curve preferences: curve preference 0 is out of range (must be 1-65535)",
            )
        ],
    ),
    (
        "unknown TLS curve",
        {**JOB, "tls": {"curvePreferences": [23, 23]}},
        {},
        [(INV, "tls", "invalid curve preferences: duplicate curve preference 23")],
    ),
    # ---- visibilityServer
    (
        "invalid visibilityServer.bindAddress",
        {**JOB, "visibilityServer": {"bindAddress": "invalid"}},
        {},
        [(INV, "visibilityServer.bindAddress", "must be a valid IP address")],
    ),
    (
        "IPv6 zone is not an IP",
        {**JOB, "visibilityServer": {"bindAddress": "fe80::1%eth0"}},
        {},
        [(INV, "visibilityServer.bindAddress")],
    ),
    (
        "valid visibilityServer.bindAddress",
        {**JOB, "visibilityServer": {"bindAddress": "127.0.0.1"}},
        {},
        [],
    ),
    ("valid IPv6 bindAddress", {**JOB, "visibilityServer": {"bindAddress": "::"}}, {}, []),
    (
        "invalid visibilityServer.bindPort",
        {**JOB, "visibilityServer": {"bindPort": 0}},
        {},
        [(INV, "visibilityServer.bindPort", "must be a valid port number (1-65535)")],
    ),
    ("valid visibilityServer.bindPort", {**JOB, "visibilityServer": {"bindPort": 8080}}, {}, []),
    # ---- quotaCheckStrategy
    (
        "IgnoreUndeclared not allowed with excludeResourcePrefixes",
        {
            **JOB,
            "resources": {
                "quotaCheckStrategy": "IgnoreUndeclared",
                "excludeResourcePrefixes": ["foo.com/device"],
            },
        },
        {},
        [
            (
                INV,
                "resources.quotaCheckStrategy",
                "excludeResourcePrefixes is not allowed when quotaCheckStrategy is IgnoreUndeclared",
            )
        ],
    ),
    (
        "IgnoreUndeclared allowed without excludeResourcePrefixes",
        {**JOB, "resources": {"quotaCheckStrategy": "IgnoreUndeclared"}},
        {},
        [],
    ),
    (
        "BlockUndeclared allowed with excludeResourcePrefixes",
        {
            **JOB,
            "resources": {
                "quotaCheckStrategy": "BlockUndeclared",
                "excludeResourcePrefixes": ["foo.com/device"],
            },
        },
        {},
        [],
    ),
    (
        "quotaCheckStrategy with unsupported value",
        {**JOB, "resources": {"quotaCheckStrategy": "test"}},
        {},
        [
            (
                NS,
                "resources.quotaCheckStrategy",
                'supported values: "IgnoreUndeclared", "BlockUndeclared"',
            )
        ],
    ),
    (
        "quotaCheckStrategy skipped when its gate is off",
        {**JOB, "resources": {"quotaCheckStrategy": "test"}},
        {"QuotaCheckStrategy": False},
        [],
    ),
    # ---- DRA sources (TestValidate)
    (
        "valid counter source",
        _dcm(
            {"name": "gpu.memory", "deviceClassNames": ["mig.nvidia.com"], "sources": [_counter()]}
        ),
        {},
        [],
    ),
    (
        "multi-counter: same DeviceClass with different counter names",
        _dcm(
            {"name": "gpu.memory", "deviceClassNames": ["mig.nvidia.com"], "sources": [_counter()]},
            {
                "name": "gpu.compute",
                "deviceClassNames": ["mig.nvidia.com"],
                "sources": [_counter("multiprocessors")],
            },
        ),
        {},
        [],
    ),
    (
        "multi-counter: same DeviceClass with same counter name",
        _dcm(
            {"name": "gpu.memory", "deviceClassNames": ["mig.nvidia.com"], "sources": [_counter()]},
            {
                "name": "gpu.memory2",
                "deviceClassNames": ["mig.nvidia.com"],
                "sources": [_counter()],
            },
        ),
        {},
        [
            (
                INV,
                "resources.deviceClassMappings[1].deviceClassNames[0]",
                'device class already has a counter source for counter "memory"',
            )
        ],
    ),
    (
        "multi-counter: whole-device then counter",
        _dcm(
            {"name": "gpu", "deviceClassNames": ["gpu.nvidia.com"]},
            {"name": "gpu.memory", "deviceClassNames": ["gpu.nvidia.com"], "sources": [_counter()]},
        ),
        {},
        [
            (
                INV,
                "resources.deviceClassMappings[1].deviceClassNames[0]",
                "device class already mapped to resource gpu",
            )
        ],
    ),
    (
        "multi-counter: counter then whole-device",
        _dcm(
            {"name": "gpu.memory", "deviceClassNames": ["gpu.nvidia.com"], "sources": [_counter()]},
            {"name": "gpu", "deviceClassNames": ["gpu.nvidia.com"]},
        ),
        {},
        [(INV, "resources.deviceClassMappings[1].deviceClassNames[0]")],
    ),
    (
        "counter sources with their gate off",
        _dcm(
            {"name": "gpu.memory", "deviceClassNames": ["mig.nvidia.com"], "sources": [_counter()]}
        ),
        {"KueueDRAIntegrationPartitionableDevices": False},
        [
            (
                INV,
                "resources.deviceClassMappings[0].sources[0].counter",
                "counter sources require KueueDRAIntegrationPartitionableDevices to be enabled",
            )
        ],
    ),
    (
        "sources: missing driver",
        _dcm(
            {
                "name": "gpu.memory",
                "deviceClassNames": ["mig.nvidia.com"],
                "sources": [_counter(driver="")],
            }
        ),
        {},
        [(R, "resources.deviceClassMappings[0].sources[0].counter.driver")],
    ),
    (
        "sources: missing name",
        _dcm(
            {
                "name": "gpu.memory",
                "deviceClassNames": ["mig.nvidia.com"],
                "sources": [_counter(name="")],
            }
        ),
        {},
        [(R, "resources.deviceClassMappings[0].sources[0].counter.name")],
    ),
    (
        "sources: invalid counter name",
        _dcm(
            {
                "name": "gpu.memory",
                "deviceClassNames": ["mig.nvidia.com"],
                "sources": [_counter(name="INVALID_NAME")],
            }
        ),
        {},
        [(INV, "resources.deviceClassMappings[0].sources[0].counter.name")],
    ),
    (
        "sources: invalid driver",
        _dcm(
            {
                "name": "gpu.memory",
                "deviceClassNames": ["mig.nvidia.com"],
                "sources": [_counter(driver="NOT_VALID!!")],
            }
        ),
        {},
        [(INV, "resources.deviceClassMappings[0].sources[0].counter.driver")],
    ),
    (
        "sources: driver too long",
        _dcm(
            {
                "name": "gpu.memory",
                "deviceClassNames": ["mig.nvidia.com"],
                "sources": [
                    _counter(
                        driver="gpu-accelerator.nvidia-corporation.datacenter.example.com.internal"
                    )
                ],
            }
        ),
        {},
        [
            (
                INV,
                "resources.deviceClassMappings[0].sources[0].counter.driver",
                "must not exceed 63 characters",
            )
        ],
    ),
    (
        "sources: missing deviceSelector",
        _dcm(
            {
                "name": "gpu.memory",
                "deviceClassNames": ["mig.nvidia.com"],
                "sources": [_counter(selector=None)],
            }
        ),
        {},
        [(R, "resources.deviceClassMappings[0].sources[0].counter.deviceSelector.cel.expression")],
    ),
    (
        "sources: multiple counters",
        _dcm(
            {
                "name": "gpu.memory",
                "deviceClassNames": ["mig.nvidia.com"],
                "sources": [_counter(), _counter("multiprocessors")],
            }
        ),
        {},
        [],
    ),
    (
        "sources: empty entry",
        _dcm({"name": "gpu.memory", "deviceClassNames": ["mig.nvidia.com"], "sources": [{}]}),
        {},
        [
            (
                R,
                "resources.deviceClassMappings[0].sources[0]",
                "exactly one source type must be set per entry",
            )
        ],
    ),
    (
        "sources: both kinds in one entry",
        _dcm(
            {
                "name": "gpu.memory",
                "deviceClassNames": ["mig.nvidia.com"],
                "sources": [{**_counter(), **_capacity()}],
            }
        ),
        {},
        [
            (
                INV,
                "resources.deviceClassMappings[0].sources[0]",
                "exactly one source type must be set per entry",
            )
        ],
    ),
    (
        "valid capacity source",
        _dcm(
            {
                "name": "gpu.memory",
                "deviceClassNames": ["vgpu.example.com"],
                "sources": [_capacity()],
            }
        ),
        {"KueueDRAIntegrationConsumableCapacity": True},
        [],
    ),
    (
        "valid capacity source with qualified name",
        _dcm(
            {
                "name": "gpu.memory",
                "deviceClassNames": ["vgpu.example.com"],
                "sources": [_capacity("gpu.example.com/memory")],
            }
        ),
        {"KueueDRAIntegrationConsumableCapacity": True},
        [],
    ),
    (
        "capacity source with its gate off",
        _dcm(
            {
                "name": "gpu.memory",
                "deviceClassNames": ["vgpu.example.com"],
                "sources": [_capacity()],
            }
        ),
        {},
        [
            (
                INV,
                "resources.deviceClassMappings[0].sources[0].capacity",
                "capacity sources require KueueDRAIntegrationConsumableCapacity to be enabled",
            )
        ],
    ),
    (
        "multiple capacity sources",
        _dcm(
            {
                "name": "gpu.memory",
                "deviceClassNames": ["vgpu.example.com"],
                "sources": [_capacity(), _capacity("cores")],
            }
        ),
        {"KueueDRAIntegrationConsumableCapacity": True},
        [],
    ),
    (
        "counter and capacity mixing rejected",
        _dcm(
            {
                "name": "gpu.memory",
                "deviceClassNames": ["mig.nvidia.com"],
                "sources": [_counter(), _capacity("cores", "gpu.nvidia.com")],
            }
        ),
        {"KueueDRAIntegrationConsumableCapacity": True},
        [
            (
                INV,
                "resources.deviceClassMappings[0].sources",
                "cannot mix counter and capacity sources in the same mapping",
            )
        ],
    ),
    (
        "capacity source with mixed-case driver",
        _dcm(
            {
                "name": "gpu.memory",
                "deviceClassNames": ["vgpu.example.com"],
                "sources": [_capacity(driver="Gpu.Example.Com")],
            }
        ),
        {"KueueDRAIntegrationConsumableCapacity": True},
        [(INV, "resources.deviceClassMappings[0].sources[0].capacity.driver")],
    ),
    # ---- DRA capacity names (TestValidateDeviceClassMappings)
    (
        "valid capacity C identifier",
        _dcm(
            {
                "name": "g",
                "deviceClassNames": ["v.example.com"],
                "sources": [_capacity("gpu.example.com/Memory_Bytes")],
            }
        ),
        {"KueueDRAIntegrationConsumableCapacity": True},
        [],
    ),
    (
        "valid capacity name with uppercase domain",
        _dcm(
            {
                "name": "g",
                "deviceClassNames": ["v.example.com"],
                "sources": [_capacity("GPU.example.com/memory")],
            }
        ),
        {"KueueDRAIntegrationConsumableCapacity": True},
        [],
    ),
    (
        "capacity name with empty domain",
        _dcm(
            {"name": "g", "deviceClassNames": ["v.example.com"], "sources": [_capacity("/memory")]}
        ),
        {"KueueDRAIntegrationConsumableCapacity": True},
        [
            (
                INV,
                "resources.deviceClassMappings[0].sources[0].capacity.name",
                "the domain must not be empty",
            )
        ],
    ),
    (
        "capacity name with invalid C identifier",
        _dcm(
            {
                "name": "g",
                "deviceClassNames": ["v.example.com"],
                "sources": [_capacity("gpu.example.com/memory-bytes")],
            }
        ),
        {"KueueDRAIntegrationConsumableCapacity": True},
        [(INV, "resources.deviceClassMappings[0].sources[0].capacity.name")],
    ),
    (
        "capacity name domain too long",
        _dcm(
            {
                "name": "g",
                "deviceClassNames": ["v.example.com"],
                "sources": [_capacity("a" * 64 + "/memory")],
            }
        ),
        {"KueueDRAIntegrationConsumableCapacity": True},
        [(TL, "resources.deviceClassMappings[0].sources[0].capacity.name")],
    ),
    (
        "capacity name identifier too long",
        _dcm(
            {
                "name": "g",
                "deviceClassNames": ["v.example.com"],
                "sources": [_capacity("gpu.example.com/" + "a" * 33)],
            }
        ),
        {"KueueDRAIntegrationConsumableCapacity": True},
        [(TL, "resources.deviceClassMappings[0].sources[0].capacity.name")],
    ),
    # ---- DRA mappings (TestValidateDeviceClassMappings)
    ("nil DRA config", {**JOB, "resources": {}}, {}, []),
    (
        "valid multiple resources",
        _dcm(
            {"name": "whole-foo", "deviceClassNames": ["foo.com/device"]},
            {"name": "shared-bar", "deviceClassNames": ["bar.com/device-1g", "bar.com/device-2g"]},
        ),
        {},
        [],
    ),
    (
        "invalid resource name",
        _dcm({"name": "@invalid-name", "deviceClassNames": ["foo.com/device"]}),
        {},
        [(INV, "resources.deviceClassMappings[0].name")],
    ),
    (
        "duplicate resource names",
        _dcm(
            {"name": "dup", "deviceClassNames": ["foo.com/device"]},
            {"name": "dup", "deviceClassNames": ["bar.com/device"]},
        ),
        {},
        [(D, "resources.deviceClassMappings[1].name")],
    ),
    (
        "empty device class names",
        _dcm({"name": "empty-devices", "deviceClassNames": []}),
        {},
        [
            (
                R,
                "resources.deviceClassMappings[0].deviceClassNames",
                "at least one device class name is required",
            )
        ],
    ),
    (
        "invalid device class name",
        _dcm({"name": "valid-name", "deviceClassNames": ["valid.com/device", "@invalid-device"]}),
        {},
        [(INV, "resources.deviceClassMappings[0].deviceClassNames[1]")],
    ),
    (
        "device class conflict",
        _dcm(
            {"name": "first", "deviceClassNames": ["foo.com/device"]},
            {"name": "second", "deviceClassNames": ["foo.com/device"]},
        ),
        {},
        [
            (
                INV,
                "resources.deviceClassMappings[1].deviceClassNames[0]",
                "device class already mapped to resource first",
            )
        ],
    ),
    (
        "multiple validation errors",
        _dcm(
            {"name": "@invalid", "deviceClassNames": []},
            {"name": "valid-name", "deviceClassNames": ["@invalid-device", "valid.com/device"]},
        ),
        {},
        [
            (INV, "resources.deviceClassMappings[0].name"),
            (R, "resources.deviceClassMappings[0].deviceClassNames"),
            (INV, "resources.deviceClassMappings[1].deviceClassNames[0]"),
        ],
    ),
    (
        "duplicate device class names within a mapping",
        _dcm(
            {
                "name": "d",
                "deviceClassNames": ["foo.com/device", "bar.com/device", "foo.com/device"],
            }
        ),
        {},
        [(D, "resources.deviceClassMappings[0].deviceClassNames[2]")],
    ),
    (
        "empty string resource name",
        _dcm({"name": "", "deviceClassNames": ["foo.com/device"]}),
        {},
        [(INV, "resources.deviceClassMappings[0].name")],
    ),
    (
        "whitespace in resource name",
        _dcm({"name": "foo bar", "deviceClassNames": ["foo.com/device"]}),
        {},
        [(INV, "resources.deviceClassMappings[0].name")],
    ),
    (
        "empty string device class name",
        _dcm({"name": "v", "deviceClassNames": [""]}),
        {},
        [(INV, "resources.deviceClassMappings[0].deviceClassNames[0]")],
    ),
    (
        "max length resource name",
        _dcm({"name": "a" * 240 + "/" + "b" * 12, "deviceClassNames": ["foo.com/device"]}),
        {},
        [],
    ),
    (
        "over max length resource name",
        _dcm({"name": "a" * 240 + "/" + "b" * 14, "deviceClassNames": ["foo.com/device"]}),
        {},
        [(INV, "resources.deviceClassMappings[0].name", "must not exceed 253 characters")],
    ),
    (
        "over max length device class name",
        _dcm({"name": "v", "deviceClassNames": ["x" * 240 + "/" + "y" * 14]}),
        {},
        [
            (
                INV,
                "resources.deviceClassMappings[0].deviceClassNames[0]",
                "must not exceed 253 characters",
            )
        ],
    ),
    (
        "too many device class mappings",
        _dcm(
            *(
                {"name": f"resource-{i}", "deviceClassNames": [f"device-{i}.example.com"]}
                for i in range(17)
            )
        ),
        {},
        [(TM, "resources.deviceClassMappings", "must have at most 16 items")],
    ),
    (
        "exactly max device class mappings",
        _dcm(
            *(
                {"name": f"resource-{i}", "deviceClassNames": [f"device-{i}.example.com"]}
                for i in range(16)
            )
        ),
        {},
        [],
    ),
    (
        "too many device class names per mapping",
        _dcm({"name": "m", "deviceClassNames": [f"device-{i}.example.com" for i in range(9)]}),
        {},
        [(TM, "resources.deviceClassMappings[0].deviceClassNames")],
    ),
    (
        "exactly max device class names per mapping",
        _dcm({"name": "m", "deviceClassNames": [f"device-{i}.example.com" for i in range(8)]}),
        {},
        [],
    ),
    # ---- metrics.customLabels (TestValidateCustomLabels)
    (
        "valid custom labels",
        _labels(
            {"name": "team"},
            {"name": "env", "sourceLabelKey": "environment"},
            {"name": "cost", "sourceAnnotationKey": "billing/cost"},
        ),
        {},
        [],
    ),
    (
        "valid workload label with tracked values",
        _labels({"name": "team", "sourceKind": "Workload", "trackedValues": ["a"]}),
        {},
        [],
    ),
    (
        "invalid name - special chars",
        _labels({"name": "team-name"}),
        {},
        [(INV, "metrics.customLabels[0].name", "must match ^[a-zA-Z][a-zA-Z0-9_]*$")],
    ),
    (
        "invalid name - leading digit",
        _labels({"name": "1team"}),
        {},
        [(INV, "metrics.customLabels[0].name", "must match ^[a-zA-Z][a-zA-Z0-9_]*$")],
    ),
    (
        "invalid name - empty",
        _labels({"name": ""}),
        {},
        [
            (INV, "metrics.customLabels[0].name", "must match ^[a-zA-Z][a-zA-Z0-9_]*$"),
            (
                INV,
                "metrics.customLabels[0].name",
                "name part must be non-empty; name part must consist of alphanumeric characters, '-', '_' or '.', and must "
                "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            ),
        ],
    ),
    (
        "duplicate names",
        _labels({"name": "team"}, {"name": "team"}),
        {},
        [(D, "metrics.customLabels[1].name")],
    ),
    (
        "mutually exclusive sources",
        _labels(
            {
                "name": "team",
                "sourceLabelKey": "team-label",
                "sourceAnnotationKey": "team-annotation",
            }
        ),
        {},
        [
            (
                INV,
                "metrics.customLabels[0]",
                "sourceLabelKey and sourceAnnotationKey are mutually exclusive",
            )
        ],
    ),
    (
        "invalid sourceLabelKey",
        _labels({"name": "team", "sourceLabelKey": "invalid key with spaces"}),
        {},
        [
            (
                INV,
                "metrics.customLabels[0].sourceLabelKey",
                "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            )
        ],
    ),
    (
        "invalid sourceAnnotationKey",
        _labels({"name": "team", "sourceAnnotationKey": "invalid key with spaces"}),
        {},
        [(INV, "metrics.customLabels[0].sourceAnnotationKey")],
    ),
    (
        "unknown source kind",
        _labels({"name": "team", "sourceKind": "Unknown"}),
        {},
        [(INV, "metrics.customLabels", "unknown source kind: Unknown")],
    ),
    (
        "too many custom labels in total",
        _labels(*({"name": f"c{i}"} for i in range(1, 22))),
        {},
        [
            (TM, "metrics.customLabels", "must have at most 20 items"),
            (
                INV,
                "metrics.customLabels",
                "too many custom labels for source kind ClusterQueue: found 21, expected <= 6",
            ),
        ],
    ),
    (
        "too many cohort labels",
        _labels(*({"name": f"c{i}", "sourceKind": "Cohort"} for i in range(9))),
        {},
        [
            (
                INV,
                "metrics.customLabels",
                "too many custom labels for source kind Cohort: found 9, expected <= 6",
            )
        ],
    ),
    (
        "too many local queue labels",
        _labels(*({"name": f"lq{i}", "sourceKind": "LocalQueue"} for i in range(7))),
        {},
        [
            (
                INV,
                "metrics.customLabels",
                "too many custom labels for source kind LocalQueue: found 7, expected <= 6",
            )
        ],
    ),
    (
        "too many workload labels",
        _labels(
            *(
                {"name": f"wl{i}", "sourceKind": "Workload", "trackedValues": ["v"]}
                for i in range(3)
            )
        ),
        {},
        [
            (
                INV,
                "metrics.customLabels",
                "too many custom labels for source kind Workload: found 3, expected <= 2",
            )
        ],
    ),
    (
        "workload without tracked values",
        _labels({"name": "team", "sourceKind": "Workload"}),
        {},
        [
            (
                INV,
                "metrics.customLabels[0].trackedValues",
                "must not be empty when sourceKind is 'Workload'",
            )
        ],
    ),
    (
        "too many tracked values",
        _labels(
            {"name": "team", "sourceKind": "Cohort", "trackedValues": [str(i) for i in range(17)]}
        ),
        {},
        [(TM, "metrics.customLabels[0].trackedValues", "must have at most 16 items")],
    ),
    (
        "too many tracked values for workload",
        _labels(
            {"name": "team", "sourceKind": "Workload", "trackedValues": [str(i) for i in range(13)]}
        ),
        {},
        [
            (
                INV,
                "metrics.customLabels[0].trackedValues",
                "must not be greater than 12 when sourceKind is 'Workload'",
            )
        ],
    ),
    (
        "duplicate tracked values",
        _labels({"name": "team", "sourceKind": "Cohort", "trackedValues": ["a", "b", "a"]}),
        {},
        [(INV, "metrics.customLabels[0].trackedValues", "must not contain duplicates")],
    ),
]


@pytest.mark.parametrize(
    ("name", "raw", "gates", "want"), VALIDATION, ids=[x[0] for x in VALIDATION]
)
def test_validate(
    name: str, raw: dict[str, Any], gates: dict[str, bool], want: list[tuple[str, ...]]
) -> None:
    got = c.validate(v2(raw), gates)
    assert [(x.type, x.path) for x in got] == [w[:2] for w in want]
    for g, w in zip(got, want, strict=True):
        if len(w) == 3:
            assert g.detail == w[2]


def test_validation_cases_cover_every_rule() -> None:
    # Each rule function of validation.go has an accepted and a rejected case above.
    rejected = {w[1].split("[")[0].split(".")[0] for _, _, _, want in VALIDATION for w in want}
    assert {
        "integrations",
        "managedJobsNamespaceSelector",
        "waitForPodsReady",
        "multiKueue",
        "fairSharing",
        "admissionFairSharing",
        "internalCertManagement",
        "resources",
        "objectRetentionPolicies",
        "tls",
        "visibilityServer",
        "metrics",
    } <= rejected
    assert len(c._RULES) == 14


def test_multiple_custom_label_kinds_over_their_limits() -> None:
    labels = (
        [{"name": f"c{i}", "sourceKind": "Cohort"} for i in range(1, 10)]
        + [{"name": f"l{i}", "sourceKind": "LocalQueue"} for i in range(1, 11)]
        + [{"name": f"w{i}", "sourceKind": "Workload", "trackedValues": ["a"]} for i in range(1, 6)]
    )
    got = [x.detail for x in c.validate(v2(_labels(*labels))) if x.type != e.TOO_MANY]
    assert got == [
        "too many custom labels for source kind Cohort: found 9, expected <= 6",
        "too many custom labels for source kind LocalQueue: found 10, expected <= 6",
        "too many custom labels for source kind Workload: found 5, expected <= 2",
    ]


def test_error_messages_read_as_kubernetes() -> None:
    errs = c.validate(
        v2({**JOB, "internalCertManagement": {"enable": True, "webhookServiceName": "0-invalid"}})
    )
    assert str(errs[0]) == (
        'internalCertManagement.webhookServiceName: Invalid value: "0-invalid": a DNS-1035 label must consist of '
        "lower case alphanumeric characters or '-', start with an alphabetic character, and end with an "
        "alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
        "'[a-z]([-a-z0-9]*[a-z0-9])?')"
    )
    errs = c.validate(v2({**JOB, "waitForPodsReady": {"timeout": "-1s"}}))
    assert (
        str(errs[0])
        == 'waitForPodsReady.timeout: Invalid value: "-1s": must be greater than or equal to 0'
    )


# ============================================================================ load_config
def test_load_config_defaults_then_validates() -> None:
    # A negative timeout survives defaulting (only zero is defaulted), is copied into
    # recoveryTimeout, and both are refused.
    cfg, errs = c.load_config({"waitForPodsReady": {"timeout": "-5m"}})
    assert cfg is None
    assert [(x.type, x.path) for x in errs] == [
        (e.INVALID, "waitForPodsReady.timeout"),
        (e.INVALID, "waitForPodsReady.recoveryTimeout"),
    ]


def test_load_config_prefixes_paths() -> None:
    _, errs = c.load_config({"fairSharing": {}}, "config")
    assert [(x.type, x.path) for x in errs] == [
        (e.REQUIRED, "config.fairSharing.preemptionStrategies")
    ]


def test_unknown_fields_are_refused_with_their_paths() -> None:
    cfg, errs = c.load_config(fixture("unknown-fields.yaml"))
    assert cfg is None
    assert sorted((x.type, x.path) for x in errs) == [
        (c.UNKNOWN_FIELD, "invalidField"),
        (c.UNKNOWN_FIELD, "namespaces"),
    ]
    _, errs = c.load_config({"waitForPodsReady": {"timeout": "5m", "enable": True}})
    assert [(x.type, x.path) for x in errs] == [(c.UNKNOWN_FIELD, "waitForPodsReady.enable")]
    assert str(errs[0]) == "waitForPodsReady.enable: Unknown field"
    # v1beta1 has no visibilityServer.
    _, errs = c.load_config({"apiVersion": c.V1BETA1, "visibilityServer": {}})
    assert [(x.type, x.path) for x in errs] == [(c.UNKNOWN_FIELD, "visibilityServer")]


def test_type_errors_are_collected() -> None:
    cfg, errs = c.load_config(
        {"waitForPodsReady": {"timeout": 300}, "clientConnection": {"burst": "many"}, "bogus": 1}
    )
    assert cfg is None
    assert sorted((x.type, x.path) for x in errs) == [
        (e.INVALID, "clientConnection.burst"),
        (e.INVALID, "waitForPodsReady.timeout"),
        (c.UNKNOWN_FIELD, "bogus"),
    ]


def test_bad_durations_are_decode_errors() -> None:
    _, errs = c.load_config(
        {"waitForPodsReady": {"timeout": "5 minutes"}, "multiKueue": {"gcInterval": "1d"}}
    )
    assert [(x.path, x.detail) for x in errs] == [
        ("waitForPodsReady.timeout", 'time: unknown unit " minutes" in duration "5 minutes"'),
        ("multiKueue.gcInterval", 'time: unknown unit "d" in duration "1d"'),
    ]


def test_api_version_and_kind() -> None:
    _, errs = c.load_config({"apiVersion": "config.kueue.x-k8s.io/v1alpha1", "kind": "Config"})
    assert [(x.type, x.path) for x in errs] == [
        (e.NOT_SUPPORTED, "apiVersion"),
        (e.NOT_SUPPORTED, "kind"),
    ]
    _, errs = c.load_config(["not", "a", "mapping"])
    assert [x.path for x in errs] == [""]


def test_feature_gate_errors_and_validation_are_both_reported() -> None:
    _, errs = c.load_config({"featureGates": {"NoSuchGate": True}, "fairSharing": {}})
    assert [(x.type, x.path) for x in errs] == [
        (e.INVALID, "featureGates"),
        (e.REQUIRED, "fairSharing.preemptionStrategies"),
    ]


def test_gates_from_the_file_drive_validation_and_the_model() -> None:
    cfg, errs = c.load_config(
        {"featureGates": {"DisableWaitForPodsReady": True, "PartialAdmission": False}}
    )
    assert errs == [] and cfg is not None
    assert cfg.wait_for_pods_ready is None  # waitforpodsready.Enabled is false
    assert not cfg.gate("PartialAdmission")
    assert cfg.gate("FlavorFungibility")
    with pytest.raises(KeyError, match="NoSuchGate"):
        cfg.gate("NoSuchGate")
    cfg, _ = c.load_config(
        {
            "resources": {"quotaCheckStrategy": "IgnoreUndeclared"},
            "featureGates": {"QuotaCheckStrategy": False},
        }
    )
    assert cfg is not None and cfg.resources.quota_check_strategy == "BlockUndeclared"


@pytest.mark.parametrize(
    "name",
    [
        "kueue-shipped-v1beta2.yaml",
        "dra-counter-v1beta2.yaml",
        "full-v1beta2.yaml",
        "full-v1beta1.yaml",
        "v1beta1-legacy.yaml",
    ],
)
def test_fixtures_load(name: str) -> None:
    cfg, errs = c.load_config(fixture(name))
    assert errs == [], [str(x) for x in errs]
    assert cfg is not None


def test_shipped_config() -> None:
    cfg, _ = c.load_config(fixture("kueue-shipped-v1beta2.yaml"))
    assert cfg is not None
    assert cfg.integrations.enabled_frameworks >= {"pod", "deployment", "batch/job"}
    assert cfg.wait_for_pods_ready is not None and cfg.wait_for_pods_ready.timeout == timedelta(
        minutes=30
    )
    assert wire(cfg.source)["controller"]["groupKindConcurrency"]["Workload.kueue.x-k8s.io"] == 10


def test_full_v1beta2_model() -> None:
    cfg, _ = c.load_config(fixture("full-v1beta2.yaml"))
    assert cfg is not None
    assert cfg.namespace == "kueue-tenant-a"
    assert cfg.manage_jobs_without_queue_name
    assert cfg.managed_jobs_namespace_selector.match_labels == {
        "kueue.openshift.io/managed": "true"
    }
    assert cfg.wait_for_pods_ready == c.WaitForPodsReady(
        timedelta(minutes=5),
        True,
        timedelta(minutes=3),
        c.RequeuingStrategy("Creation", 3, 30, 1800),
    )
    assert cfg.fair_sharing == c.FairSharing(
        ("LessThanOrEqualToFinalShare", "LessThanInitialShare")
    )
    afs = cfg.admission_fair_sharing
    assert afs is not None and cfg.admission_fair_sharing_enabled
    assert (afs.usage_half_life_time, afs.usage_sampling_interval) == (
        timedelta(days=7),
        timedelta(minutes=1),
    )
    assert afs.resource_weights == {"cpu": 0.0, "example.com/gpu": 100.0}
    assert cfg.integrations == c.Integrations(
        ("batch/job", "pod", "leaderworkerset.x-k8s.io/leaderworkerset"),
        ("Foo.v1.example.com",),
        ("team",),
    )
    (t,) = cfg.resources.transformations
    assert (t.input, t.strategy, t.multiply_by) == (
        "nvidia.com/mig-1g.5gb",
        "Replace",
        "example.com/replicas",
    )
    assert str(t.outputs["example.com/accelerator-memory"]) == "5Gi"
    assert cfg.resources.exclude_resource_prefixes == ("example.com/ignored",)
    assert cfg.resources.device_class_mappings == (
        c.DeviceClassMapping("gpu.memory", ("gpu.example.com",)),
    )
    assert cfg.object_retention == c.ObjectRetention(timedelta(minutes=30), timedelta(hours=1))
    assert not cfg.gate("PartialAdmission")


@pytest.mark.parametrize(
    ("name", "version"), [("full-v1beta2.yaml", "v1beta2"), ("full-v1beta1.yaml", "v1beta1")]
)
def test_fixture_round_trips_in_its_version(name: str, version: str) -> None:
    raw = fixture(name)
    cfg, errs = c.decode_config(raw)
    assert errs == [] and cfg is not None
    assert c.to_wire(cfg, version) == raw


def test_to_wire_converts_and_prints_go_durations() -> None:
    cfg, _ = c.decode_config(
        {"apiVersion": c.V1BETA1, "waitForPodsReady": {"enable": True, "timeout": "90s"}}
    )
    assert cfg is not None
    out = c.to_wire(cfg, c.V1BETA1)
    assert out == {
        "apiVersion": c.V1BETA1,
        "kind": "Configuration",
        "waitForPodsReady": {"enable": True, "timeout": "1m30s"},
    }
    assert c.to_wire(cfg, "v1beta2")["waitForPodsReady"] == {
        "timeout": "1m30s",
        "blockAdmission": True,
    }
    with pytest.raises(ValueError, match="unsupported"):
        c.to_wire(cfg, "v1")
    # The written form decodes to the same configuration.
    again, errs = c.decode_config(out)
    assert errs == [] and again is not None
    assert wire(again) == wire(cfg) | {"waitForPodsReady": {"enable": True, "timeout": "1m30s"}}


# ============================================================================ scenarios
def test_scenario_block_is_v1beta2_shaped() -> None:
    cfg = c.config_from_scenario(None)
    assert cfg.wait_for_pods_ready is not None  # v1beta2: on by default
    cfg = c.config_from_scenario(
        {
            "waitForPodsReady": {
                "timeout": "1s",
                "blockAdmission": True,
                "requeuingStrategy": {
                    "timestamp": "Eviction",
                    "backoffLimitCount": 2,
                    "backoffBaseSeconds": 1,
                },
            }
        }
    )
    assert cfg.wait_for_pods_ready == c.WaitForPodsReady(
        timedelta(seconds=1),
        True,
        timedelta(seconds=1),
        c.RequeuingStrategy("Eviction", 2, 1, 3600),
    )


def test_scenario_block_with_api_version_and_gates() -> None:
    cfg = c.config_from_scenario({"apiVersion": c.V1BETA1}, {"PrioritizePreemptorWorkloads": True})
    assert cfg.wait_for_pods_ready is None
    assert cfg.gate("PrioritizePreemptorWorkloads")
    cfg = c.config_from_scenario(
        {"featureGates": {"PriorityBoost": True}}, {"ConcurrentAdmission": True}
    )
    assert cfg.gate("PriorityBoost") and cfg.gate("ConcurrentAdmission")


def test_scenario_errors_name_the_block() -> None:
    with pytest.raises(c.ConfigError) as err:
        c.config_from_scenario({"fairSharing": {"preemptionStrategies": ["Nope"]}})
    assert [x.path for x in err.value.errors] == ["config.fairSharing.preemptionStrategies"]
    assert "config.fairSharing.preemptionStrategies: Unsupported value" in str(err.value)


def test_scenario_resource_transformations() -> None:
    cfg = c.config_from_scenario(
        {
            "resources": {
                "transformations": [
                    {"input": "kueue.x-k8s.io/cpu", "strategy": "Replace", "outputs": {"cpu": "2"}}
                ]
            }
        }
    )
    (t,) = cfg.resources.transformations
    assert t.strategy == "Replace" and str(t.outputs["cpu"]) == "2"
