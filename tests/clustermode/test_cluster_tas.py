"""Topology-aware scheduling in cluster mode: ``kuota controller`` reads the
cluster's nodes and pods over the API server, assigns each Job's pods to
topology domains and ungates them, and the cluster's kube-scheduler places
them there — the same assignments, pods per host and instants as ``kuota
run`` of the same world (Kueue's TAS samples on the nodes of its kind
cluster)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import yaml
from tests.clustermode.twoproc import (
    WorkloadLog,
    check_writes,
    finished,
    finished_at,
    outcome,
    run_embedded,
    start_controller,
    start_paced,
    state_items,
    wait_for,
    webhook_admitted,
)
from tests.server.conftest import REPO, needs_kubectl

DATA = REPO / "tests" / "data" / "tas"
SAMPLES = DATA / "kueue-examples"
JOBS = ("sample-job-required", "sample-job-preferred", "sample-job-unconstrained")


def _world(dst: Path) -> Path:
    """Kueue's TAS samples as a world: the Jobs named (not generated, so both
    runs name them alike) and each given a run time."""
    src = dst.parent / "src"
    src.mkdir(parents=True)
    (src / "nodes.yaml").write_text((DATA / "kind-nodes.yaml").read_text())
    (src / "queues.yaml").write_text((SAMPLES / "sample-queues.yaml").read_text())
    for name in JOBS:
        job = yaml.safe_load((SAMPLES / f"{name}.yaml").read_text())
        meta = job["metadata"]
        meta["name"] = meta.pop("generateName")
        meta["namespace"] = "default"
        tmpl = job["spec"]["template"].setdefault("metadata", {})
        tmpl.setdefault("annotations", {})["kuota.dev/duration"] = "10m"
        (src / f"{name}.yaml").write_text(yaml.safe_dump(job))
    return webhook_admitted(src, dst)


def _placements(workloads: list[dict[str, Any]]) -> dict[str, Any]:
    """Per Job: its pod sets' topology assignments as admitted."""
    out: dict[str, Any] = {}
    for w in workloads:
        owner = w["metadata"]["ownerReferences"][0]["name"]
        psas = (w["status"].get("admission") or {}).get("podSetAssignments") or ()
        out[owner] = [p.get("topologyAssignment") for p in psas]
    return out


def _pods_per_host(pods: list[dict[str, Any]]) -> dict[str, Counter[str]]:
    out: dict[str, Counter[str]] = {}
    for p in pods:
        job = p["metadata"]["labels"].get("job-name") or p["metadata"]["ownerReferences"][0]["name"]
        out.setdefault(job, Counter())[p["spec"].get("nodeName") or ""] += 1
    return out


@needs_kubectl
def test_tas_samples_paced_place_as_kuota_run(tmp_path: Path) -> None:
    world = _world(tmp_path / "world")
    run = tmp_path / "run"
    want = run_embedded(world, run)
    want_at = finished_at(run)
    want_placed = _placements(state_items(run, "workloads", "-A"))
    want_hosts = _pods_per_host(state_items(run, "pods", "-n", "default"))
    assert len(want) == 3 and all(p and p[0] for p in want_placed.values())
    served = start_paced(world, tmp_path)
    log = WorkloadLog(served)
    ctl = start_controller(served)
    try:

        def done() -> dict[str, Any] | str:
            got = outcome(served.json("get", "workloads", "-A")["items"])
            n = sum(1 for v in got.values() if v["finished"])
            return got if len(got) == 3 and n == 3 else f"{n} of 3 finished"

        got = wait_for(done, 180, "every workload finished")
        items = served.json("get", "workloads", "-A")["items"]
        pods = served.json("get", "pods", "-n", "default")["items"]
        cqs = served.json("get", "clusterqueues")["items"]
    finally:
        log.stop()
        assert ctl.stop() == 0
        served.stop()
    assert got == want
    assert _placements(items) == want_placed  # the same domains, pod counts per host
    assert _pods_per_host(pods) == want_hosts  # and the pods ran there
    assert dict(finished(w) for w in items) == want_at
    check_writes(log, cqs)
