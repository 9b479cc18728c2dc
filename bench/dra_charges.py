"""Benchmark: what Kueue's DRA quota costs per podSet (kuota.quota.dra
``claim_requests``): a device-count claim, a counter claim whose CEL
selectors pick MIG partitions out of ResourceSlices (8 nodes x 8 devices),
and a capacity claim, each charged 2,000 times (no cache: the core keeps one
answer per pod template and ResourceSlice generation, so this is the cost of
a template's first charge after a slice changes).

Reported as numbers and as ratios to a fixed pure-Python loop in the same
run (``make bench``), never asserted in tests.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import msgspec

import kuota
from kuota.api import base
from kuota.api.k8s.resource import DeviceClass, ResourceClaimTemplate, ResourceSlice
from kuota.api.kueue.config import DeviceClassMapping, DeviceSource
from kuota.api.kueue.types import PodSet
from kuota.quota.dra import (
    DraContext,
    Slices,
    claim_requests,
    device_class_capacities,
    device_class_counters,
    device_class_resources,
)

N = 2_000
DRIVER = "gpu.example.com"


def _conv(doc: dict[str, Any], typ: type) -> Any:
    return msgspec.convert(doc, typ, dec_hook=base.dec_hook)


def _slice(node: int) -> ResourceSlice:
    devices: list[dict[str, Any]] = [
        {
            "name": "gpu-0",
            "attributes": {"type": {"string": "gpu"}},
            "capacity": {"memory": {"value": "80Gi"}},
            "consumesCounters": [{"counterSet": "s", "counters": {"memory": {"value": "80Gi"}}}],
        }
    ]
    for i, (profile, mem) in enumerate([("1g.10gb", "10Gi")] * 4 + [("3g.40gb", "40Gi")] * 3):
        devices.append(
            {
                "name": f"gpu-0-mig-{i}",
                "attributes": {"type": {"string": "mig"}, "profile": {"string": profile}},
                "consumesCounters": [{"counterSet": "s", "counters": {"memory": {"value": mem}}}],
            }
        )
    return _conv(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"node-{node}"},
            "spec": {
                "driver": DRIVER,
                "nodeName": f"node-{node}",
                "pool": {"name": f"node-{node}", "generation": 1, "resourceSliceCount": 1},
                "devices": devices,
            },
        },
        ResourceSlice,
    )


def _template(name: str, cls: str, extra: dict[str, Any]) -> ResourceClaimTemplate:
    ex = {"deviceClassName": cls, "allocationMode": "ExactCount", "count": 1, **extra}
    return _conv(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "ns"},
            "spec": {"spec": {"devices": {"requests": [{"name": "r", "exactly": ex}]}}},
        },
        ResourceClaimTemplate,
    )


def _class(name: str, expr: str) -> DeviceClass:
    return _conv(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": expr}}]},
        },
        DeviceClass,
    )


def _podset(template: str) -> PodSet:
    return _conv(
        {
            "name": "main",
            "count": 1,
            "template": {
                "spec": {
                    "resourceClaims": [{"name": "c", "resourceClaimTemplateName": template}],
                    "containers": [{"name": "c"}],
                }
            },
        },
        PodSet,
    )


def _ref_loop_ms() -> float:
    """CPU ms of a fixed pure-Python loop (the yardstick of the ratios)."""
    t = time.process_time()
    acc: dict[int, int] = {}
    for i in range(200_000):
        acc[i & 1023] = acc.get(i & 1023, 0) + i
    return (time.process_time() - t) * 1000


def _cpu_ms(fn: Callable[[], object]) -> float:
    t = time.process_time()
    for _ in range(N):
        fn()
    return (time.process_time() - t) * 1000


def main() -> None:
    sel = "device.driver == 'gpu.example.com'"
    mappings = [
        DeviceClassMapping("example.com/gpu", ("plain.example.com",)),
        DeviceClassMapping(
            "gpu.memory",
            ("mig.example.com",),
            (DeviceSource("counter", "memory", DRIVER, sel),),
        ),
        DeviceClassMapping(
            "vgpu.memory",
            ("vgpu.example.com",),
            (DeviceSource("capacity", "memory", DRIVER, sel),),
        ),
    ]
    mig_sel = [{"cel": {"expression": "device.attributes['gpu.example.com'].profile == '1g.10gb'"}}]
    templates = {
        "plain": _template("plain", "plain.example.com", {}),
        "mig": _template("mig", "mig.example.com", {"selectors": mig_sel}),
        "vgpu": _template(
            "vgpu", "vgpu.example.com", {"capacity": {"requests": {"memory": "4Gi"}}}
        ),
    }
    classes = {
        "plain.example.com": _class("plain.example.com", sel),
        "mig.example.com": _class(
            "mig.example.com", "device.attributes['gpu.example.com'].type == 'mig'"
        ),
        "vgpu.example.com": _class(
            "vgpu.example.com", "device.attributes['gpu.example.com'].type == 'gpu'"
        ),
    }
    ctx = DraContext(
        templates,
        device_class_resources(mappings),
        counters=device_class_counters(mappings),
        capacities=device_class_capacities(mappings),
        consumable=True,
        slices=Slices(tuple(_slice(n) for n in range(8)), classes),
    )
    loop = min(_ref_loop_ms() for _ in range(5))
    print(f"build: {kuota.build()}; {N} charges each, 8 ResourceSlices of 8 devices")
    print(f"reference loop: {loop:.1f} ms CPU (x loop below = CPU / this)")
    for name, want in (
        ("plain", "example.com/gpu"),
        ("mig", "gpu.memory"),
        ("vgpu", "vgpu.memory"),
    ):
        ps = _podset(name)
        got, bad = claim_requests(ps, 0, ctx)
        assert not bad and want in got, (got, bad)
        ms = min(_cpu_ms(lambda ps=ps: claim_requests(ps, 0, ctx)) for _ in range(3))
        print(
            f"{name:>6} claim: {ms:.1f} ms CPU ({ms / N * 1e3:.1f} µs each, x loop {ms / loop:.2f})"
        )


if __name__ == "__main__":
    main()
