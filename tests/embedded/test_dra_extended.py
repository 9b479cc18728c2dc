"""DRA-backed extended resources (Kueue's KueueDRAIntegrationExtendedResource,
Kubernetes' DRAExtendedResource): Kueue's sample
(site/static/examples/dra/sample-dra-extended-resource-job.yaml, copied in
``kueue_examples/dra``) with its queues (sample-dra-queues.yaml) and the
DeviceClass of Kueue's "Set up DRA" page (site/content/en/docs/tasks/manage/
setup_dra.md, "Set up the extended resource path": ``extendedResourceName:
example.com/gpu``), on a node whose driver publishes GPUs in a ResourceSlice
and reports no example.com/gpu of its own. Kueue charges the request to
example.com/gpu; the simulated kube-scheduler places the pod where the
class's devices are free, as the DRA extended-resource plugin does, so the
job runs (and, given a run time, completes) instead of staying Pending
"Insufficient example.com/gpu" until PodsReadyTimeout evicts it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kuota.cli.main import main

DRA = Path(__file__).parent / "kueue_examples" / "dra"
SAMPLE = "sample-dra-extended-resource-job.yaml"
# The docs' DeviceClass; a Configuration with waitForPodsReady (a pod that
# never starts is evicted: what the run did before the scheduler knew the
# devices); a node with two GPUs published by the driver.
WORLD = """\
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
waitForPodsReady:
  timeout: 5m
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.example.com
spec:
  extendedResourceName: example.com/gpu
  selectors:
  - cel:
      expression: device.driver == "gpu.example.com"
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
  - name: gpu-1
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-nic.example.com}
spec:
  driver: nic.example.com
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: nic-0
---
apiVersion: v1
kind: Node
metadata: {name: node-1}
status:
  capacity: {cpu: "8", memory: 32Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
"""


def _get(state: Path, kind: str) -> list[dict[str, Any]]:
    r = CliRunner().invoke(main, ["get", kind, "-A", "--state", str(state), "-o", "json"])
    assert r.exit_code == 0, r.output
    items: list[dict[str, Any]] = json.loads(r.output)["items"]
    return items


def _run(tmp_path: Path, jobs: list[str], until: str) -> tuple[Path, str]:
    world = tmp_path / "world"
    world.mkdir()
    (world / "config.yaml").write_text(WORLD)
    (world / "sample-dra-queues.yaml").write_text((DRA / "sample-dra-queues.yaml").read_text())
    (world / "jobs.yaml").write_text("\n---\n".join(jobs))
    state = tmp_path / "state"
    r = CliRunner().invoke(main, ["run", str(world), "--state", str(state), "--until", until])
    assert r.exit_code == 0, r.output
    return state, r.output


def test_sample_runs_on_the_node_whose_devices_back_the_resource(tmp_path: Path) -> None:
    state, out = _run(tmp_path, [(DRA / SAMPLE).read_text()], "30m")
    (wl,) = _get(state, "workloads")
    (psa,) = wl["status"]["admission"]["podSetAssignments"]
    assert psa["resourceUsage"] == {"cpu": "1", "example.com/gpu": "1", "memory": "200Mi"}
    (pod,) = _get(state, "pods")
    assert (pod["spec"]["nodeName"], pod["status"]["phase"]) == ("node-1", "Running")
    assert "1 admission of 1 workload; no evictions" in out


def _timed(n: int) -> str:
    # The sample's agnhost "pause" never exits: the simulated kubelet is told a run time.
    return (
        (DRA / SAMPLE)
        .read_text()
        .replace("generateName: sample-dra-extended-job-", f"name: sample-dra-extended-job-{n}")
        .replace(
            "  template:\n    spec:\n",
            "  template:\n    metadata: {annotations: {kuota.dev/duration: 3m}}\n    spec:\n",
        )
    )


def test_devices_of_the_class_bound_the_pods_a_node_takes(tmp_path: Path) -> None:
    # Quota (8) admits three; the node's two GPUs (the NIC is another
    # driver's) run two at a time: the third waits (3m, within
    # waitForPodsReady's 5m), then runs and all complete.
    state, out = _run(tmp_path, [_timed(n) for n in range(3)], "1h")
    jobs = _get(state, "jobs")
    assert sorted(j["status"].get("succeeded") for j in jobs) == [1, 1, 1]
    starts = sorted(p["status"]["startTime"] for p in _get(state, "pods"))
    assert starts[0] == starts[1] < starts[2]  # the third started when a GPU was freed
    assert "no evictions" in out


SCENARIOS = Path(__file__).parents[1] / "scenarios" / "dra"


@pytest.mark.parametrize(
    ("scenario", "message"),
    [
        (
            "38-extended-resource-non-integer-misconfigured.yaml",
            "spec.podSets[0].template.spec.containers[0].resources.requests.example.com/gpu:"
            ' Invalid value: "500m": extended resource quantity must be an integer',
        ),
        (
            "37-extended-resource-counters-misconfigured.yaml",
            'spec.podSets[0].template.spec.containers[0]: Invalid value: "example.com/gpu":'
            " extended resource example.com/gpu resolves to DeviceClass gpu.example.com with"
            " counters configured; use ResourceClaimTemplates with CEL selectors for"
            " counter-based quota",
        ),
    ],
)
def test_refusals_carry_kueues_messages(tmp_path: Path, scenario: str, message: str) -> None:
    # The scenario's objects and Configuration as a world: the scenario
    # checks the reason (Misconfigured), this the text Kueue writes.
    s = yaml.safe_load((SCENARIOS / scenario).read_text())
    cfg = {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration", **s["config"]}
    world = tmp_path / "world"
    world.mkdir()
    (world / "all.yaml").write_text(yaml.safe_dump_all([cfg, *s["objects"]]))
    state = tmp_path / "state"
    r = CliRunner().invoke(main, ["run", str(world), "--state", str(state), "--until", "1m"])
    assert r.exit_code == 0, r.output
    (wl,) = _get(state, "workloads")
    cond = next(c for c in wl["status"]["conditions"] if c["type"] == "QuotaReserved")
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "Misconfigured", message)
