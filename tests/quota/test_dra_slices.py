"""kuota.quota.dra: counter- and capacity-based DRA charges from ResourceSlice
devices, through ``claim_requests`` (what one pod of a podSet is charged, or
Kueue's message). The cases are Kueue's unit tests (kueue@ff69552e
pkg/dra/counters_test.go TestComputeCounterCharges, TestGroupSlicesByPool,
TestSelectorErrorPaths; pkg/dra/capacity_test.go TestRoundToValidValues,
TestRoundToValidRange, TestComputeCapacityCharge), each device set put in a
ResourceSlice and charged as a workload's claim would be."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from kuota.api import base
from kuota.api.k8s.resource import DeviceClass, ResourceClaimTemplate, ResourceSlice
from kuota.api.kueue.config import DeviceClassMapping, DeviceSource
from kuota.api.kueue.types import PodSet
from kuota.api.quantity import Quantity
from kuota.quota.dra import (
    DraContext,
    Slices,
    claim_requests,
    device_class_capacities,
    device_class_counters,
    device_class_resources,
)

Doc = dict[str, Any]
INT64_MAX = 2**63 - 1
DRIVER = "gpu.nvidia.com"
REQ = "spec.podSets[0].template.spec.resourceClaims[0].devices.requests[0]"


def _conv(doc: Doc, typ: type) -> Any:
    return msgspec.convert(doc, typ, dec_hook=base.dec_hook)


def dev(name: str, memory: str | None = None, profile: str = "x", **extra: Any) -> Doc:
    """makeDevice: a profile attribute and, given a memory, one counter set."""
    d: Doc = {"name": name, "attributes": {"gpu.nvidia.com/profile": {"string": profile}}}
    if memory is not None:
        d["consumesCounters"] = [
            {"counterSet": "gpu-counter-set", "counters": {"memory": {"value": memory}}}
        ]
    d.update(extra)
    return d


def rslice(name: str, devices: list[Doc], pool: str = "pool", gen: int = 1, count: int = 1) -> Doc:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": DRIVER,
            "nodeName": "n",
            "pool": {"name": pool, "generation": gen, "resourceSliceCount": count},
            "devices": devices,
        },
    }


def context(
    slices: list[Doc],
    kind: str = "counter",
    count: int = 1,
    request: Doc | None = None,
    classes: tuple[str, ...] = ("gpu.example.com",),
    class_selector: str | None = None,
) -> tuple[PodSet, DraContext]:
    """A podSet of one claim (one request of ``count`` devices of class
    gpu.example.com) and a context whose mapping charges that class through
    a ``kind`` source named memory of driver gpu.nvidia.com."""
    ex: Doc = {"deviceClassName": "gpu.example.com", "allocationMode": "ExactCount"}
    ex["count"] = count
    ex.update(request or {})
    tmpl = _conv(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "t", "namespace": "ns"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": ex}]}}},
        },
        ResourceClaimTemplate,
    )
    dcs: dict[str, DeviceClass] = {}
    for name in classes:
        spec: Doc = {}
        if class_selector:
            spec["selectors"] = [{"cel": {"expression": class_selector}}]
        dcs[name] = _conv(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceClass",
                "metadata": {"name": name},
                "spec": spec,
            },
            DeviceClass,
        )
    src = DeviceSource(kind, "memory", DRIVER, f"device.driver == '{DRIVER}'")
    mappings = [DeviceClassMapping("gpu.memory", ("gpu.example.com",), (src,))]
    ctx = DraContext(
        {"t": tmpl},
        device_class_resources(mappings),
        counters=device_class_counters(mappings),
        capacities=device_class_capacities(mappings),
        consumable=True,
        slices=Slices(tuple(_conv(s, ResourceSlice) for s in slices), dcs),
    )
    ps = _conv(
        {
            "name": "main",
            "count": 1,
            "template": {
                "spec": {
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}],
                    "containers": [{"name": "c"}],
                }
            },
        },
        PodSet,
    )
    return ps, ctx


def charge(slices: list[Doc], **kw: Any) -> tuple[dict[str, int], str]:
    ps, ctx = context(slices, **kw)
    return claim_requests(ps, 0, ctx)


def q(text: str) -> int:
    return Quantity.parse(text).value()


# -- TestComputeCounterCharges ------------------------------------------------

MULTI_SET = {
    "name": "multi-set-device",
    "consumesCounters": [
        {"counterSet": "set-a", "counters": {"memory": {"value": "10Gi"}}},
        {"counterSet": "set-b", "counters": {"memory": {"value": "30Gi"}}},
    ],
}
TWO_COUNTERS = dev("mig-1g10gb-0", "9856Mi")
TWO_COUNTERS["consumesCounters"][0]["counters"]["multiprocessors"] = {"value": "14"}


@pytest.mark.parametrize(
    ("devices", "count", "want"),
    [
        ([dev("mig-1g10gb-0", "9856Mi")], 1, q("9856Mi")),
        ([dev("mig-1g10gb-0", "9856Mi")], 3, 9856 * 1024 * 1024 * 3),
        ([dev(f"mig-1g10gb-{i}", "9856Mi") for i in range(3)], 1, q("9856Mi")),
        ([dev("mig-1g10gb-0", "9856Mi"), dev("mig-3g40gb-0", "40Gi")], 1, q("40Gi")),
        ([TWO_COUNTERS], 1, q("9856Mi")),
        ([MULTI_SET], 1, q("30Gi")),
        ([dev("big-counter-0", "8000000000000000000")], 2, INT64_MAX),
        ([dev("truncating-0", "10000000000000000000")], 2, INT64_MAX),
        ([dev("overmax-0", "9223372036854775808")], 1, INT64_MAX),
        ([dev("negative-0", "-5")], 2, 0),
        ([dev("fractional-0", "500m")], 1, 1),
        ([dev("negative-count1-0", "-5")], 1, 0),
        ([dev("negative-fractional-0", "-500m")], 1, 0),
    ],
    ids=[
        "single device, count=1",
        "single device, count=3",
        "multiple devices same value, MAX is same",
        "multiple devices different values, MAX wins",
        "counter not in config, skipped",
        "multiple ConsumesCounters entries, MAX across counter sets",
        "count multiplication saturates instead of overflowing int64",
        "counter that Value() would truncate is clamped before multiply",
        "counter above int64 is clamped at count=1",
        "negative counter is clamped to zero",
        "fractional counter rounds up at count=1",
        "negative counter is clamped to zero at count=1",
        "sub-integer negative counter is clamped to zero",
    ],
)
def test_counter_charge(devices: list[Doc], count: int, want: int) -> None:
    # (the Go test hands count=N with one matched device; here N devices
    # must match for a request of N, so the slice holds copies of the first)
    devices = devices + [
        {**devices[0], "name": f"{devices[0]['name']}-copy{i}"} for i in range(count - len(devices))
    ]
    assert charge([rslice("s", devices)], count=count) == ({"gpu.memory": want}, "")


def test_counter_charge_without_consumes_counters_is_refused() -> None:
    # "no consumesCounters, no deviceSelector": nothing to charge (nil), which
    # processCounterCharge turns into its retryable error.
    assert charge([rslice("s", [dev("whole-gpu-0")])]) == (
        {},
        f'{REQ}: Internal error: matched devices have no consumesCounters entry for counter "memory"',
    )


# -- TestGroupSlicesByPool: only complete pools' devices are charged ----------


@pytest.mark.parametrize(
    ("slices", "want"),
    [
        (
            [
                rslice("slice1", [dev("a", "1Gi")], "node1-gpu0", 1, 2),
                rslice("slice2", [dev("b", "2Gi")], "node1-gpu0", 1, 2),
            ],
            q("2Gi"),
        ),
        ([rslice("slice1", [dev("a", "1Gi")], "node1-gpu0", 1, 2)], None),
        (
            [
                rslice("slice1", [dev("a", "1Gi")], "node1-gpu0", 1, 2),
                rslice("slice2", [dev("b", "1Gi")], "node1-gpu0", 1, 2),
                rslice("slice3", [dev("c", "3Gi")], "node1-gpu1", 1, 2),
                rslice("slice4", [dev("d", "1Gi")], "node1-gpu1", 1, 2),
            ],
            q("3Gi"),
        ),
        (
            [
                rslice("slice1-old", [dev("a", "9Gi")], "node1-gpu0", 1, 2),
                rslice("slice2-old", [dev("b", "9Gi")], "node1-gpu0", 1, 2),
                rslice("slice1-new", [dev("c", "1Gi")], "node1-gpu0", 2, 2),
                rslice("slice2-new", [dev("d", "2Gi")], "node1-gpu0", 2, 2),
            ],
            q("2Gi"),
        ),
        (
            [
                rslice("slice1-old", [dev("a", "9Gi")], "node1-gpu0", 1, 2),
                rslice("slice2-old", [dev("b", "9Gi")], "node1-gpu0", 1, 2),
                rslice("slice1-new", [dev("c", "1Gi")], "node1-gpu0", 2, 2),
            ],
            None,
        ),
    ],
    ids=[
        "single pool, complete",
        "single pool, incomplete",
        "two pools",
        "higher generation replaces older",
        "mixed generation, incomplete new",
    ],
)
def test_pools(slices: list[Doc], want: int | None) -> None:
    if want is None:
        assert charge(slices) == (
            {},
            f"{REQ}: Internal error: insufficient matching devices for counter driver:"
            " 0 device(s) match but 1 requested",
        )
    else:
        assert charge(slices) == ({"gpu.memory": want}, "")


def test_pools_of_other_drivers_are_not_read() -> None:
    # "filter by driver"
    other = rslice("slice2", [dev("n", "50Gi")], "node1-net0")
    other["spec"]["driver"] = "net.example.com"
    assert charge([rslice("slice1", [dev("g", "1Gi")], "node1-gpu0"), other]) == (
        {"gpu.memory": q("1Gi")},
        "",
    )


# -- TestSelectorErrorPaths -------------------------------------------------


def test_missing_device_class() -> None:
    assert charge([rslice("s", [dev("g", "1Gi")])], classes=()) == (
        {},
        f"{REQ}: Internal error: failed to get DeviceClass gpu.example.com:"
        ' deviceclasses.resource.k8s.io "gpu.example.com" not found',
    )


def test_request_selector_that_does_not_compile() -> None:
    got, msg = charge(
        [rslice("s", [dev("g", "1Gi")])],
        request={"selectors": [{"cel": {"expression": "device.driver =="}}]},
    )
    assert got == {}
    assert msg.startswith(
        f'{REQ}.exactly.selectors: Invalid value: "null": ResourceClaimTemplate t: {REQ[48:]}'
        '.exactly.selectors[0].cel.expression: Invalid value: "device.driver ==": CEL compilation'
        " failed: "
    ), msg


def test_attribute_without_value_fails_evaluation() -> None:
    bad = {"name": "gpu-0", "attributes": {"gpu.example.com/type": {}}}
    bad["consumesCounters"] = dev("x", "1Gi")["consumesCounters"]
    assert charge([rslice("s", [bad])]) == (
        {},
        f"{REQ}: Internal error: CEL evaluation error in deviceSelector for device gpu-0:"
        " unsupported attribute value",
    )


def test_class_and_request_selectors_narrow_the_match() -> None:
    devices = [dev("small", "1Gi", "1g"), dev("big", "7Gi", "7g"), dev("mid", "3Gi", "3g")]
    sel = {
        "selectors": [
            {"cel": {"expression": "device.attributes['gpu.nvidia.com'].profile != '7g'"}}
        ]
    }
    assert charge([rslice("s", devices)], request=sel) == ({"gpu.memory": q("3Gi")}, "")
    assert charge(
        [rslice("s", devices)],
        request=sel,
        class_selector="device.attributes['gpu.nvidia.com'].profile == '1g'",
    ) == ({"gpu.memory": q("1Gi")}, "")


# -- capacity_test.go --------------------------------------------------------


def cap_dev(name: str, value: str, policy: Doc | None = None) -> Doc:
    c: Doc = {"value": value}
    if policy is not None:
        c["requestPolicy"] = policy
    return {"name": name, "capacity": {"memory": c}, "allowMultipleAllocations": True}


def cap_charge(
    devices: list[Doc], request: str | None, count: int = 1
) -> tuple[dict[str, int], str]:
    extra = {"capacity": {"requests": {"memory": request}}} if request else {}
    return charge([rslice("s", devices)], kind="capacity", count=count, request=extra)


@pytest.mark.parametrize(
    ("value", "valid", "want"),
    [
        ("20Gi", ["10Gi", "20Gi", "40Gi"], "20Gi"),
        ("15Gi", ["10Gi", "20Gi", "40Gi"], "20Gi"),
        ("5Gi", ["10Gi", "20Gi", "40Gi"], "10Gi"),
        ("50Gi", ["10Gi", "20Gi", "40Gi"], None),
        ("80Gi", ["80Gi"], "80Gi"),
    ],
    ids=[
        "exact match",
        "round up to next",
        "below minimum rounds to first",
        "exceeds all values",
        "single valid value exact",
    ],
)
def test_round_to_valid_values(value: str, valid: list[str], want: str | None) -> None:
    got = cap_charge([cap_dev("gpu-0", "80Gi", {"validValues": valid})], value)
    if want is None:
        assert got == ({}, _POLICY_REJECTS)
    else:
        assert got == ({"gpu.memory": q(want)}, "")


_POLICY_REJECTS = (
    f'{REQ}: Invalid value: "null": capacity request cannot be satisfied by any matched'
    ' device\'s RequestPolicy for dimension "memory"'
)


@pytest.mark.parametrize(
    ("value", "lo", "hi", "step", "want"),
    [
        ("20Gi", "1Gi", "80Gi", "1Gi", "20Gi"),
        ("15500Mi", "1Gi", "80Gi", "1Gi", "16Gi"),
        ("500Mi", "1Gi", "80Gi", "1Gi", "1Gi"),
        ("81Gi", "1Gi", "80Gi", "1Gi", None),
        ("15500Mi", "1Gi", "80Gi", None, "15500Mi"),
        ("15500Mi", None, "80Gi", "1Gi", "15500Mi"),
        ("25Gi", "10Gi", "80Gi", "20Gi", "30Gi"),
        ("30Gi", "10Gi", "80Gi", "20Gi", "30Gi"),
    ],
    ids=[
        "already aligned",
        "round up to step",
        "below min rounds to min",
        "exceeds max after rounding",
        "no step no rounding",
        "step without min skips alignment",
        "large step alignment",
        "exact step boundary",
    ],
)
def test_round_to_valid_range(
    value: str, lo: str | None, hi: str, step: str | None, want: str | None
) -> None:
    vr = {k: v for k, v in (("min", lo), ("max", hi), ("step", step)) if v is not None}
    got = cap_charge([cap_dev("gpu-0", "100Gi", {"validRange": vr})], value)
    if want is None:
        assert got == ({}, _POLICY_REJECTS)
    else:
        assert got == ({"gpu.memory": q(want)}, "")


@pytest.mark.parametrize(
    ("devices", "asked", "want"),
    [
        ([cap_dev("gpu-0", "80Gi")], "20Gi", {"gpu.memory": q("20Gi")}),
        ([cap_dev("gpu-0", "80Gi", {"default": "40Gi"})], None, {"gpu.memory": q("40Gi")}),
        (
            [
                cap_dev("gpu-0", "80Gi", {"default": "40Gi"}),
                cap_dev("gpu-1", "100Gi", {"default": "10Gi"}),
            ],
            None,
            {"gpu.memory": q("40Gi")},
        ),
        (
            [{"name": "gpu-0"}],
            None,
            f'{REQ}: Internal error: matched devices have no capacity dimension "memory"',
        ),
        (
            [
                cap_dev("gpu-0", "80Gi", {"validValues": ["10Gi", "20Gi"]}),
                cap_dev("gpu-1", "80Gi", {"validValues": ["10Gi", "30Gi"]}),
            ],
            "50Gi",
            _POLICY_REJECTS,
        ),
        (
            [cap_dev("gpu-0", "80Gi", {"validValues": ["10Gi"]}), {"name": "gpu-1"}],
            "50Gi",
            _POLICY_REJECTS,
        ),
    ],
    ids=[
        "explicit request with single device",
        "no request uses device Default",
        "heterogeneous Defaults uses max",
        "no capacity dimension returns InternalError",
        "all policies reject returns Invalid not InternalError",
        "mixed devices some without dimension all with-dimension reject",
    ],
)
def test_capacity_charge(devices: list[Doc], asked: str | None, want: Any) -> None:
    got = cap_charge(devices, asked)
    assert got == ((want, "") if isinstance(want, dict) else ({}, want))


def test_capacity_sourced_class_is_a_device_count_with_the_gate_off() -> None:
    # KueueDRAIntegrationConsumableCapacity is alpha (off by default): the
    # claims pass then charges the class its device count.
    ps, ctx = context([rslice("s", [cap_dev("gpu-0", "80Gi")])], kind="capacity")
    ctx = DraContext(
        ctx.templates,
        ctx.class_resources,
        counters=ctx.counters,
        capacities=ctx.capacities,
        consumable=False,
        slices=ctx.slices,
    )
    assert claim_requests(ps, 0, ctx) == ({"gpu.memory": 1}, "")
