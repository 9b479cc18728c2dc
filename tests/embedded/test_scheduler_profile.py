"""OpenShift's Scheduler config in a world: its profile decides how pods pack
onto GPU nodes (HighNodeUtilization keeps a whole node free for an 8-GPU pod
that LowNodeUtilization strands), and its defaultNodeSelector lands on every
pod."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from kuota.cli.world import load_world
from kuota.store.resources import POD

from .world import T0, cluster_queue, control_plane, flavor, job, local_queue, namespace, node, obj


def scheduler(profile: str, selector: str = "") -> Any:
    return obj(
        {
            "apiVersion": "config.openshift.io/v1",
            "kind": "Scheduler",
            "metadata": {"name": "cluster"},
            "spec": {"profile": profile, "defaultNodeSelector": selector},
        }
    )


def placed(profile: str) -> dict[str, str | None]:
    cp = control_plane(cluster=True, scheduler=scheduler(profile))
    cp.create(
        [
            namespace("team"),
            flavor("default", {}),
            cluster_queue("cq", {"default": 16}),
            local_queue("team", "main", "cq"),
            node("gpu-0", 8, {}),
            node("gpu-1", 8, {}),
        ]
    )
    cp.create([job("team", f"small-{i}", 2, duration="2h") for i in range(4)])
    cp.run(until=T0 + timedelta(minutes=1))
    cp.create([job("team", "big", 8, duration="1h")])
    cp.run(until=T0 + timedelta(minutes=2))
    return {
        p.metadata.labels["job-name"]: p.spec.node_name for p in cp.store.list(POD, "team").items
    }


def test_high_node_utilization_keeps_a_whole_node_for_the_big_pod() -> None:
    high = placed("HighNodeUtilization")
    assert {high[f"small-{i}"] for i in range(4)} == {"gpu-0"}
    assert high["big"] == "gpu-1"


def test_low_node_utilization_spreads_and_strands_the_big_pod() -> None:
    low = placed("")  # the default profile
    assert sorted(low[f"small-{i}"] for i in range(4)) == ["gpu-0", "gpu-0", "gpu-1", "gpu-1"]
    assert low["big"] is None  # admitted by quota, but no node has 8 GPUs free


def test_world_reads_the_scheduler_config(tmp_path: Path) -> None:
    f = tmp_path / "world.yaml"
    f.write_text(
        "apiVersion: config.openshift.io/v1\nkind: Scheduler\nmetadata: {name: cluster}\n"
        "spec: {profile: NoScoring, defaultNodeSelector: 'pool=batch'}\n---\n"
        "apiVersion: config.openshift.io/v1\nkind: Scheduler\nmetadata: {name: other}\n"
        "spec: {profile: HighNodeUtilization}\n"
    )
    world = load_world([str(f)])
    assert world.scheduler.spec.profile == "NoScoring"
    # The second one is named, not silently dropped.
    assert any("metadata.name" in p and "cluster" in p for p in world.problems), world.problems


def test_default_node_selector_lands_on_pods() -> None:
    cp = control_plane(cluster=True, scheduler=scheduler("", "pool=batch"))
    cp.create(
        [
            namespace("team"),
            flavor("default", {}),
            cluster_queue("cq", {"default": 8}),
            local_queue("team", "main", "cq"),
            node("other", 8, {}),
            node("batch-0", 8, {"pool": "batch"}),
        ]
    )
    cp.create([job("team", "j", 2, duration="1h")])
    cp.run(until=T0 + timedelta(minutes=1))
    (pod,) = cp.store.list(POD, "team").items
    assert pod.spec.node_selector["pool"] == "batch"
    assert pod.spec.node_name == "batch-0"
