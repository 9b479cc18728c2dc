"""Counter- and capacity-based DRA quota (``deviceClassMappings[].sources``):
Kueue charges them from the devices ResourceSlices publish. Kueue's own
counter and capacity samples (site/static/examples/dra, copied in
``kueue_examples/dra``) with their docs' Configurations (site/content/en/docs/
tasks/manage/setup_dra.md): without a ResourceSlice the counter sample waits
with the error Kueue gives when no device matches (pkg/dra/counters.go
processCounterCharge); with the driver's ResourceSlice of the docs' output
(gpu-0 consuming a memory counter) it is charged the counter, as the docs'
"Verify counter-based quota is working" step shows; the capacity sample is
charged its ``capacity.requests`` (4Gi), as its step says."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from kuota.cli.main import main

DRA = Path(__file__).parent / "kueue_examples" / "dra"
# The counter Configuration of Kueue's "Set up DRA" page
# (site/content/en/docs/tasks/manage/setup_dra.md), and the DeviceClass.
CONFIG = """\
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
resources:
  deviceClassMappings:
  - name: gpu.memory
    deviceClassNames:
    - gpu.example.com
    sources:
    - counter:
        name: memory
        driver: gpu.example.com
        deviceSelector:
          cel:
            expression: "device.driver == 'gpu.example.com'"
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
"""


def _workloads(state: Path) -> list[dict[str, Any]]:
    r = CliRunner().invoke(main, ["get", "workloads", "-A", "--state", str(state), "-o", "json"])
    assert r.exit_code == 0, r.output
    items: list[dict[str, Any]] = json.loads(r.output)["items"]
    return items


def test_counter_sample_waits_with_kueues_no_matching_devices_error(tmp_path: Path) -> None:
    world = tmp_path / "world"
    world.mkdir()
    (world / "config.yaml").write_text(CONFIG)
    for name in ("sample-dra-counter-queues.yaml", "sample-dra-counter-job.yaml"):
        (world / name).write_text((DRA / name).read_text())
    state = tmp_path / "state"
    r = CliRunner().invoke(main, ["run", str(world), "--state", str(state), "--until", "5m"])
    assert r.exit_code == 0, r.output
    (wl,) = _workloads(state)
    assert "admission" not in wl["status"]  # not charged as a device count
    cond = next(c for c in wl["status"]["conditions"] if c["type"] == "QuotaReserved")
    assert (cond["status"], cond["reason"]) == ("False", "Misconfigured")
    assert cond["message"] == (
        "spec.podSets[0].template.spec.resourceClaims[0].devices.requests[0]: Internal error:"
        " insufficient matching devices for counter driver: 0 device(s) match but 1 requested"
    )


# What the docs' `kubectl get resourceslices` shows the driver publishing
# (gpu-0 consuming the memory counter; 80Gi, the docs' 85899345920 bytes).
COUNTER_SLICE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-gpu.example.com}
spec:
  driver: gpu.example.com
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  sharedCounters:
  - name: shared
    counters: {memory: {value: 80Gi}}
  devices:
  - name: gpu-0
    consumesCounters: [{counterSet: shared, counters: {memory: {value: 80Gi}}}]
"""
# The capacity Configuration of the same page, with its feature gate, and a
# shareable device publishing the capacity dimension the source names.
CAPACITY = """\
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
featureGates:
  KueueDRAIntegrationConsumableCapacity: true
resources:
  deviceClassMappings:
  - name: gpu.memory                   # Logical resource name for quota
    deviceClassNames:
    - gpu.example.com                  # DeviceClass name(s)
    sources:
    - capacity:
        name: "gpu.example.com/memory" # Capacity dimension to track
        driver: gpu.example.com        # DRA driver name
        deviceSelector:
          cel:
            expression: "device.driver == 'gpu.example.com'"
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-gpu.example.com}
spec:
  driver: gpu.example.com
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    allowMultipleAllocations: true
    capacity: {gpu.example.com/memory: {value: 80Gi}}
"""


def _run_sample(tmp_path: Path, config: str, kind: str) -> dict[str, Any]:
    world = tmp_path / "world"
    world.mkdir()
    (world / "config.yaml").write_text(config)
    for name in (f"sample-dra-{kind}-queues.yaml", f"sample-dra-{kind}-job.yaml"):
        (world / name).write_text((DRA / name).read_text())
    state = tmp_path / "state"
    r = CliRunner().invoke(main, ["run", str(world), "--state", str(state), "--until", "1m"])
    assert r.exit_code == 0, r.output
    (wl,) = _workloads(state)
    return wl


def test_counter_sample_is_charged_the_counter_its_device_consumes(tmp_path: Path) -> None:
    wl = _run_sample(tmp_path, CONFIG + "---\n" + COUNTER_SLICE, "counter")
    (psa,) = wl["status"]["admission"]["podSetAssignments"]
    assert psa["resourceUsage"] == {"cpu": "1", "gpu.memory": "80Gi", "memory": "200Mi"}


def test_capacity_sample_is_charged_its_capacity_request(tmp_path: Path) -> None:
    wl = _run_sample(tmp_path, CAPACITY, "capacity")
    (psa,) = wl["status"]["admission"]["podSetAssignments"]
    assert psa["resourceUsage"] == {"cpu": "1", "gpu.memory": "4Gi", "memory": "200Mi"}
