"""MultiKueue with topology-aware scheduling end to end (issue 31), as Kueue's
test/e2e/multikueue/baseline/tas_test.go: one manager and two workers, each a
real ``kuota serve`` on 127.0.0.1 (examples/multikueue-tas).

The manager's ClusterQueue has a TAS flavor and a MultiKueue check: it
reserves quota for a Job requiring a rack without computing a topology (its
pod set's delayedTopologyRequest Pending; the manager has no nodes). worker1's
racks hold one 1-CPU node each, so only worker2 (a rack of two) admits it;
worker2's TAS assigns the rack, the manager's Workload then shows the check
Ready on "worker2", delayedTopologyRequest Ready and Admitted, and the pods in
worker2 run on that rack's nodes."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.controllers.multikueue.test_multikueue_e2e import (
    cond,
    get,
    owned_by,
    secret,
    serve_all,
    wait_for,
)
from tests.server.conftest import KUBECTL, REPO, Served

EXAMPLE = REPO / "examples" / "multikueue-tas"
RACK = "cloud.provider.com/topology-rack"

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")


@pytest.fixture
def clusters(tmp_path: Path) -> Iterator[dict[str, Served]]:
    manager_world = tmp_path / "manager-world"
    shutil.copytree(EXAMPLE / "manager", manager_world)
    config = (manager_world / "config.yaml").read_text()
    (manager_world / "config.yaml").write_text(config.replace("30s", "2s"))
    worlds = {
        "worker1": EXAMPLE / "worker1",
        "worker2": EXAMPLE / "worker2",
        "manager": manager_world,
    }
    with serve_all(worlds, tmp_path) as started:
        yield started


def test_manager_delays_the_topology_and_the_worker_assigns_it(
    clusters: dict[str, Served],
) -> None:
    manager, w1, w2 = clusters["manager"], clusters["worker1"], clusters["worker2"]
    for name, worker in (("worker1", w1), ("worker2", w2)):
        manager.ok("apply", "-f", "-", input=secret(f"{name}-secret", worker.kubeconfig))
    wait_for(
        "the check Active",
        lambda: cond(get(manager, "admissioncheck", "multikueue-ac"), "Active"),
    )
    # (the manager's queue is active: its TAS flavor needs no nodes there)
    wait_for(
        "the ClusterQueue Active",
        lambda: cond(get(manager, "clusterqueue", "cluster-queue"), "Active"),
    )

    manager.ok("apply", "-f", str(EXAMPLE / "job.yaml"))
    local = get(manager, "job", "tas-sample-job", "-n", "default")
    assert local["spec"]["managedBy"] == "kueue.x-k8s.io/multikueue"
    wl = wait_for(
        "the Job's workload admitted in the manager",
        lambda: (
            cond(owned_by(manager, "Job", "tas-sample-job"), "Admitted")
            and owned_by(manager, "Job", "tas-sample-job")
        ),
    )
    name = wl["metadata"]["name"]
    assert wl["spec"]["podSets"][0]["topologyRequest"]["required"] == RACK
    assert wl["status"]["clusterName"] == "worker2"
    [check] = wl["status"]["admissionChecks"]
    assert (check["state"], check["message"]) == ("Ready", 'The workload was admitted on "worker2"')
    admitted = cond(wl, "Admitted")
    assert admitted is not None
    assert (admitted["reason"], admitted["message"]) == ("Admitted", "The workload is admitted")
    # The manager's assignment: quota in the TAS flavor, the topology
    # delayed and now Ready, none computed there (waitForDelayedTopologyRequestReady).
    [psa] = wl["status"]["admission"]["podSetAssignments"]
    assert psa["flavors"] == {"cpu": "tas-flavor", "memory": "tas-flavor"}
    assert psa["delayedTopologyRequest"] == "Ready"
    assert "topologyAssignment" not in psa

    # worker2's copy carries the topology its TAS assigned (waitForTopologyAssignment).
    remote = wait_for(
        "the workload admitted in worker2",
        lambda: (r := get(w2, "workload", name, "-n", "default")) and cond(r, "Admitted") and r,
    )
    [rpsa] = remote["status"]["admission"]["podSetAssignments"]
    ta = rpsa["topologyAssignment"]
    # (the lowest level is the node's hostname: Kueue keeps that level alone)
    assert ta["levels"] == ["kubernetes.io/hostname"], ta
    # two domains of one pod each, the nodes w2-b and w2-c (rack r2)
    assert ta["slices"] == [
        {
            "domainCount": 2,
            "podCounts": {"universal": 1},
            "valuesPerLevel": [{"individual": {"prefix": "w2-", "roots": ["b", "c"]}}],
        }
    ]
    assert "delayedTopologyRequest" not in rpsa
    # (worker1 could place no two pods in one rack: its copy is gone)
    assert get(w1, "workload", name, "-n", "default") is None

    # The pods in worker2 run on the assigned rack's nodes, one each.
    def pods() -> list[dict[str, object]]:
        items = get(w2, "pods", "-n", "default")["items"]
        return [p for p in items if (p.get("spec") or {}).get("nodeName")]

    placed = wait_for("worker2's two pods bound", lambda: len(pods()) == 2 and pods())
    assert sorted(p["spec"]["nodeName"] for p in placed) == ["w2-b", "w2-c"]  # type: ignore[index]
    assert get(manager, "pods", "-n", "default")["items"] == []

    job = wait_for(
        "the Job Complete in the manager",
        lambda: (
            cond(get(manager, "job", "tas-sample-job", "-n", "default"), "Complete")
            and get(manager, "job", "tas-sample-job", "-n", "default")
        ),
    )
    assert job["status"]["succeeded"] == 2
    done = wait_for(
        "the manager's workload Finished",
        lambda: cond(owned_by(manager, "Job", "tas-sample-job"), "Finished"),
    )
    assert done["reason"] == "Succeeded"
