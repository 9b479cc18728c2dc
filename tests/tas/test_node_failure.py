"""A node failing under an admitted TAS workload in ``kuota run`` (Kueue's
TASFailedNodeReplacement, TASReplaceNodeOnPodTermination and
TASFailedNodeReplacementFailFast, on by default in v0.19): the world's
``NodeOperation`` stops h1's kubelet at 00:10; once the taint manager has
evicted the workload's pod there (300 s later), the TAS node controller
marks h1 in ``status.unhealthyNodes`` and the scheduler's second pass places
that pod again in the required rack, or evicts the workload (NodeFailures)
when the rack has no room."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from kuota.cli.main import main

WORLD = Path(__file__).parents[1] / "fixtures" / "worlds" / "tas-node-failure.yaml"


def kuota(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def _run(world: Path, state: Path) -> tuple[str, dict[str, Any], list[dict[str, Any]]]:
    r = kuota("run", str(world), "--no-live", "--state", str(state))
    assert r.exit_code == 0, r.output
    wls = json.loads(kuota("get", "workloads", "-o", "json", "--state", str(state)).output)
    pods = json.loads(kuota("get", "pods", "-o", "json", "--state", str(state)).output)
    assert len(wls["items"]) == 1
    return r.output, wls["items"][0], pods["items"]


def _hosts(wl: dict[str, Any]) -> dict[str, int]:
    """The assignment's hosts and pod counts (v1beta2 slices, hosts h<n>)."""
    [psa] = wl["status"]["admission"]["podSetAssignments"]
    [sl] = psa["topologyAssignment"]["slices"]
    v = sl["valuesPerLevel"][0]
    hosts = (
        [v["individual"]["prefix"] + r for r in v["individual"]["roots"]]
        if "individual" in v
        else [v["universal"]]
    )
    counts = sl["podCounts"]
    n = counts.get("individual") or [counts["universal"]] * len(hosts)
    return dict(zip(hosts, n, strict=True))


def test_a_failed_nodes_pod_is_placed_again_in_the_rack(tmp_path: Path) -> None:
    out, wl, pods = _run(WORLD, tmp_path / "state")
    assert "1 admission of 1 workload; no evictions" in out, out
    assert _hosts(wl) == {"h2": 1, "h3": 1}
    assert "unhealthyNodes" not in wl["status"]
    conds = {c["type"]: c for c in wl["status"]["conditions"]}
    assert conds["Finished"]["status"] == "True"
    assert "Evicted" not in conds
    by_node = sorted((p["spec"]["nodeName"], p["status"]["phase"]) for p in pods)
    # h1's pod evicted by the taint manager; its replacement ran on h3.
    assert by_node == [("h1", "Failed"), ("h2", "Succeeded"), ("h3", "Succeeded")]
    [replacement] = [p for p in pods if p["spec"]["nodeName"] == "h3"]
    assert replacement["spec"]["nodeSelector"]["kubernetes.io/hostname"] == "h3"


def test_no_room_in_the_rack_evicts_the_workload(tmp_path: Path) -> None:
    """h3 too small for the pod: FailFast evicts with Kueue's message; the
    Job is suspended and waits (the rack's two healthy hosts no longer hold it)."""
    world = tmp_path / "world.yaml"
    text = WORLD.read_text()
    h3 = text.index("name: h3")
    world.write_text(text[:h3] + text[h3:].replace('cpu: "4"', 'cpu: "2"', 1))
    out, wl, _ = _run(world, tmp_path / "state")
    assert "1 admission of 1 workload; 1 eviction (1 NodeFailures)" in out, out
    conds = {c["type"]: c for c in wl["status"]["conditions"]}
    assert conds["Evicted"]["reason"] == "NodeFailures"
    assert conds["Evicted"]["message"] == (
        "Workload was evicted as there was no replacement for unhealthy node(s): h1"
    )
    assert conds["QuotaReserved"]["status"] == "False"
    assert "unhealthyNodes" not in wl["status"]


def test_a_node_tainted_against_the_pods_is_replaced(tmp_path: Path) -> None:
    """TASReplaceNodeOnNodeTaints: h1 stays Ready but gets a NoExecute taint
    the pods do not tolerate; the taint manager evicts its pod at once, and
    the pod's place moves to h3 as for a failed node."""
    world = tmp_path / "world.yaml"
    world.write_text(
        WORLD.read_text().replace(
            "spec: {nodeName: h1, operation: NotReady}",
            'spec: {nodeName: h1, operation: Taint, taints: ["maintenance=now:NoExecute"]}',
        )
    )
    out, wl, pods = _run(world, tmp_path / "state")
    assert "1 admission of 1 workload; no evictions" in out, out
    assert _hosts(wl) == {"h2": 1, "h3": 1}
    # (the evicted pod is gone: a Ready node's kubelet finished deleting it)
    by_node = sorted((p["spec"]["nodeName"], p["status"]["phase"]) for p in pods)
    assert by_node == [("h2", "Succeeded"), ("h3", "Succeeded")]


def test_without_fail_fast_a_failed_second_pass_is_a_warning(tmp_path: Path) -> None:
    """TASFailedNodeReplacementFailFast off: no room in the rack keeps the
    workload admitted on its old assignment and records Kueue's Warning
    SecondPassFailed on the Workload, with the flavor assigner's reason
    (scheduler.go requeueAndUpdate)."""
    world = tmp_path / "world.yaml"
    text = WORLD.read_text()
    h3 = text.index("name: h3")
    world.write_text(
        "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"
        "featureGates: {TASFailedNodeReplacementFailFast: false}\n---\n"
        + text[:h3]
        + text[h3:].replace('cpu: "4"', 'cpu: "2"', 1)
    )
    r = kuota("run", str(world), "--no-live", "--state", str(tmp_path / "state"))
    assert r.exit_code == 0, r.output
    assert "no evictions" in r.output, r.output
    events = json.loads(
        kuota("get", "events", "-o", "json", "--state", str(tmp_path / "state")).output
    )
    warned = [e for e in events["items"] if e["reason"] == "SecondPassFailed"]
    assert warned, [e["reason"] for e in events["items"]]
    ev = warned[0]
    assert ev["type"] == "Warning"
    assert ev["involvedObject"]["kind"] == "Workload"
    assert ev["message"].startswith(
        "couldn't assign flavors to pod set main: topology \"default\" doesn't allow to fit any of 1 pod(s)"
    ), ev["message"]
