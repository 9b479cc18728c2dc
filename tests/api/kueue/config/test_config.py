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

from kuota.api import errors as e
from kuota.api.base import dec_hook, enc_hook
from kuota.api.kueue import config as c
from kuota.api.kueue.config import checks

FIXTURES = Path(__file__).parents[3] / "fixtures" / "config"
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def fixture(name: str) -> Any:
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
    with pytest.raises(ValueError, match="a duration is a string"):
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
    # Go's durations are int64 nanoseconds: beyond that ParseDuration refuses.
    if total > (2**63 if sign == "-" else 2**63 - 1):
        with pytest.raises(ValueError, match="invalid duration"):
            c.parse_duration_ns(text)
        return
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


GATE_CASES = fixture("feature-gate-cases.yaml")


@pytest.mark.parametrize("case", GATE_CASES, ids=[x["name"] for x in GATE_CASES])
def test_validate_feature_gates(case: dict[str, Any]) -> None:
    overrides = case["featureGates"]
    gates, errs = c.validate_feature_gates(overrides)
    if case.get("ok"):
        assert errs == []
        for k, v in overrides.items():
            assert gates[k] is v
        return
    assert [(x.type, x.path) for x in errs] == [(e.INVALID, "featureGates")]
    if "detail" in case:
        assert errs[0].detail == case["detail"]
    assert gates == dict(c.FEATURE_GATE_DEFAULTS)  # Kueue does not start: nothing applied


def test_all_alpha_switches_unnamed_alpha_gates() -> None:
    gates, errs = c.validate_feature_gates({"AllAlpha": True, "PriorityBoost": False})
    assert errs == []
    assert gates["ConcurrentAdmission"] and gates["ShortWorkloadNames"]
    assert not gates["PriorityBoost"]  # named explicitly: the explicit value wins
    assert gates["PartialAdmission"]  # beta: untouched


# ============================================================================ defaults
DEFAULTS = yaml.safe_load((FIXTURES / "defaults-cases.yaml").read_text())


@pytest.mark.parametrize(
    "case", DEFAULTS["cases"], ids=[f"{x['version']}: {x['name']}" for x in DEFAULTS["cases"]]
)
def test_defaults(case: dict[str, Any]) -> None:
    want = {**DEFAULTS["base"][case["version"]], **(case.get("want") or {})}
    want = {k: v for k, v in want.items() if v is not None}
    original = copy.deepcopy(case["original"])
    if case["version"] == "v1beta2":
        got = c.default_v1beta2(v2(original))
    else:
        got = c.default_v1beta1(v1(original))
    assert wire(got) == want


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
CONVERSIONS = fixture("conversion-cases.yaml")


@pytest.mark.parametrize(
    "case", CONVERSIONS, ids=[f"{x['direction']}: {x['name']}" for x in CONVERSIONS]
)
def test_conversion(case: dict[str, Any]) -> None:
    if case["direction"] == "v1beta1-to-v1beta2":
        got = c.v1beta1_to_v1beta2(v1(case["from"]))
    else:
        got = c.v1beta2_to_v1beta1(v2(case["from"]))
    assert wire(got) == case["to"]


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
JOB = {"integrations": {"frameworks": ["batch/job"]}}
ERROR_TYPES = {
    "Required": e.REQUIRED,
    "Invalid": e.INVALID,
    "NotSupported": e.NOT_SUPPORTED,
    "Duplicate": e.DUPLICATE,
    "Forbidden": e.FORBIDDEN,
    "TooMany": e.TOO_MANY,
    "TooLong": e.TOO_LONG,
}
VALIDATION = fixture("validation-cases.yaml")


def _labels(*labels: dict[str, Any]) -> dict[str, Any]:
    return {**JOB, "metrics": {"customLabels": list(labels)}}


@pytest.mark.parametrize("case", VALIDATION, ids=[x["name"] for x in VALIDATION])
def test_validate(case: dict[str, Any]) -> None:
    want = case.get("errors") or []
    got = c.validate(v2(case["config"]), case.get("gates"))
    assert [(x.type, x.path) for x in got] == [(ERROR_TYPES[w[0]], w[1]) for w in want]
    for g, w in zip(got, want, strict=True):
        if len(w) == 3:
            assert g.detail == w[2]


def test_validation_cases_cover_every_rule() -> None:
    # Each rule function of validation.go has an accepted and a rejected case above.
    rejected = {
        w[1].split("[")[0].split(".")[0] for case in VALIDATION for w in case.get("errors") or ()
    }
    accepted = {next(iter(case["config"]), "") for case in VALIDATION if not case.get("errors")}
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
    assert len(checks._RULES) == 14
    assert "integrations" in accepted


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


def test_nulls_leave_fields_alone() -> None:
    # Kueue's own sample writes ``backoffLimitCount: null``; Go's decoder skips nulls.
    cfg, errs = c.load_config(
        {
            "apiVersion": c.V1BETA1,
            "waitForPodsReady": {"enable": True, "requeuingStrategy": {"backoffLimitCount": None}},
            "objectRetentionPolicies": {"workloads": {"afterFinished": None}},
            "manageJobsWithoutQueueName": None,
        }
    )
    assert errs == [] and cfg is not None
    assert cfg.wait_for_pods_ready is not None
    assert cfg.wait_for_pods_ready.requeuing_strategy.backoff_limit_count is None
    assert cfg.object_retention == c.ObjectRetention()


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
        # (its sources kept: what they are decides how Kueue charges the class)
        c.DeviceClassMapping(
            "gpu.memory",
            ("gpu.example.com",),
            (
                c.DeviceSource(
                    "counter", "memory", "gpu.example.com", "device.driver == 'gpu.example.com'"
                ),
            ),
        ),
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
