"""``kuota capacity``: how many more copies of a pod fit, where, and what stops
the next one per node; bad input gets a clear error naming the field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kuota.cli.main import main
from kuota.cluster import HIGH_NODE_UTILIZATION
from kuota.cluster.kubescheduler.cluster_capacity import estimate

from ..conftest import decode, node_manifest, pod_manifest

SPOT = [{"key": "spot", "value": "true", "effect": "NoSchedule"}]


def gpu_pod(name: str, gpus: str = "1", **kw: Any) -> dict[str, Any]:
    return pod_manifest(name, cpu="1", extra={"nvidia.com/gpu": gpus}, **kw)


def world_objects() -> list[dict[str, Any]]:
    resident = gpu_pod("resident", "2")
    resident["spec"]["nodeName"] = "gpu-1"
    return [
        node_manifest("cpu-1", cpu="16"),
        node_manifest("gpu-1", cpu="16", extra={"nvidia.com/gpu": "4"}),
        node_manifest("gpu-2", cpu="2", extra={"nvidia.com/gpu": "4"}),
        node_manifest("spot-1", cpu="16", extra={"nvidia.com/gpu": "8"}, taints=SPOT),
        resident,
    ]


def test_estimate_counts_after_the_pods_already_there() -> None:
    objs = [decode(o) for o in world_objects()]
    nodes = [o for o in objs if o.kind == "Node"]
    pods = [o for o in objs if o.kind == "Pod"]
    report = estimate(decode(gpu_pod("train")), nodes, pods)
    # gpu-1: 4 - 2 resident GPUs; gpu-2: 2 cpu for 1-cpu pods; spot-1 is tainted.
    assert report.count == 4
    assert report.per_node == {"gpu-1": 2, "gpu-2": 2}
    assert report.stop_reason == (
        "0/4 nodes are available: 1 Insufficient cpu, "
        "1 node(s) had untolerated taint {spot: true}, 2 Insufficient nvidia.com/gpu. "
        # As cluster-capacity reports it: DefaultPreemption's dry run included
        # (gpu-1 and gpu-2 are full of pods no less important than the copy).
        "preemption: 0/4 nodes are available: 2 No preemption victims found for incoming pod, "
        "2 Preemption is not helpful for scheduling."
    )
    assert report.why_not == {
        "cpu-1": ("Insufficient nvidia.com/gpu",),
        "gpu-1": ("Insufficient nvidia.com/gpu",),
        "gpu-2": ("Insufficient cpu",),
        "spot-1": ("node(s) had untolerated taint {spot: true}",),
    }


def test_estimate_with_tolerations_and_a_limit() -> None:
    objs = [decode(o) for o in world_objects()]
    nodes = [o for o in objs if o.kind == "Node"]
    tolerant = decode(gpu_pod("t", tolerations=[{"key": "spot", "operator": "Exists"}]))
    # 4 on gpu-1, 2 on gpu-2 (its 2 cpus), 8 on spot-1.
    packed = estimate(tolerant, nodes, [], profile=HIGH_NODE_UTILIZATION)
    assert (packed.count, packed.per_node) == (14, {"gpu-1": 4, "gpu-2": 2, "spot-1": 8})
    limited = estimate(tolerant, nodes, [], limit=3)
    assert (limited.count, limited.limited, limited.stop_reason) == (3, True, "")


def write(path: Path, *docs: dict[str, Any]) -> str:
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def test_cli_text_and_json(tmp_path: Path) -> None:
    world = write(tmp_path / "world.yaml", *world_objects())
    pod = write(tmp_path / "pod.yaml", gpu_pod("train"))
    r = CliRunner().invoke(main, ["capacity", "--pod", pod, world])
    assert r.exit_code == 0, r.output
    assert "The cluster can schedule 4 more instance(s) of the pod train" in r.output
    assert "\t- gpu-1: 2 instance(s)" in r.output
    assert "\t- spot-1: node(s) had untolerated taint {spot: true}" in r.output
    r = CliRunner().invoke(main, ["capacity", "--pod", pod, world, "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["instances"] == 4
    assert out["distribution"] == {"gpu-1": 2, "gpu-2": 2}
    assert out["requests"] == {"cpu": "1", "nvidia.com/gpu": "1"}


def test_cli_uses_the_worlds_scheduler_profile(tmp_path: Path) -> None:
    sched = {
        "apiVersion": "config.openshift.io/v1",
        "kind": "Scheduler",
        "metadata": {"name": "cluster"},
        "spec": {"profile": "HighNodeUtilization"},
    }
    world = write(tmp_path / "world.yaml", *world_objects(), sched)
    pod = write(tmp_path / "pod.yaml", gpu_pod("train"))
    r = CliRunner().invoke(main, ["capacity", "--pod", pod, world])
    assert r.exit_code == 0, r.output
    assert "(profile HighNodeUtilization)" in r.output
    # --profile still wins.
    r = CliRunner().invoke(main, ["capacity", "--pod", pod, world, "--profile", "NoScoring"])
    assert "(profile NoScoring)" in r.output


@pytest.mark.parametrize(
    ("bad", "field", "message"),
    [
        (
            "pod",
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
            ".nodeSelectorTerms[0].matchExpressions[0].operator",
            'Unsupported value: "Near"',
        ),
        ("capacity", "status.allocatable.cpu", 'Invalid value: "-4"'),
        ("taint", "spec.taints[0].effect", "Required value"),
    ],
)
def test_bad_input_names_the_field(tmp_path: Path, bad: str, field: str, message: str) -> None:
    objs = world_objects()
    pod = gpu_pod("train")
    if bad == "pod":
        pod["spec"]["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "a", "operator": "Near", "values": ["x"]}]}
                    ]
                }
            }
        }
    elif bad == "capacity":
        objs[0]["status"]["allocatable"]["cpu"] = "-4"
    else:
        objs[0]["spec"]["taints"] = [{"key": "spot", "value": "true"}]
    world = write(tmp_path / "world.yaml", *objs)
    pod_file = write(tmp_path / "pod.yaml", pod)
    r = CliRunner().invoke(main, ["capacity", "--pod", pod_file, world])
    assert r.exit_code == 2
    assert field in r.output and message in r.output
    assert "Traceback" not in r.output
    # kuota validate and kuota run refuse it the same way.
    r = CliRunner().invoke(main, ["validate", pod_file, world])
    assert r.exit_code == 1 and field in r.output and message in r.output
    r = CliRunner().invoke(main, ["run", pod_file, world, "--no-live"])
    flat = " ".join(r.output.split())  # the console wraps long lines
    assert r.exit_code == 2 and "nothing was run" in flat
    assert field.replace(" ", "") in flat.replace(" ", "") and "Traceback" not in flat


def test_cli_needs_a_world(tmp_path: Path) -> None:
    pod = write(tmp_path / "pod.yaml", gpu_pod("train"))
    r = CliRunner().invoke(main, ["capacity", "--pod", pod])
    assert r.exit_code == 2 and "give WORLD files or --state DIR" in r.output
    r = CliRunner().invoke(main, ["capacity", "--pod", str(tmp_path / "none.yaml"), pod])
    assert r.exit_code == 2
