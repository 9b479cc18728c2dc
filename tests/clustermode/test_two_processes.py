"""Cluster mode end to end, two processes talking only over HTTPS: ``kuota
serve --without-kueue`` (the cluster) and ``kuota controller`` (Kueue)
against its kubeconfig, on the examples in real time (--speed); with
``--paced`` the cluster's clock steps only once the controller has handled
each instant (runtime/pacing.py), so both decide as ``kuota run`` does."""

from __future__ import annotations

import json
import signal
import time
import urllib.request
from datetime import timedelta
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner
from tests.clustermode.twoproc import (
    WorkloadLog,
    check_writes,
    finished,
    finished_at,
    free_port,
    outcome,
    run_embedded,
    start_controller,
    start_paced,
    state_items,
    wait_for,
    webhook_admitted,
    with_lead,
)
from tests.server.conftest import EXAMPLES, needs_kubectl, start_server

from kuota.cli.serve_command import serve

SPEED = 100
LEAD = timedelta(seconds=8 * SPEED)  # the controller leads before the first Job


def _all_finished(served, n: int):  # type: ignore[no-untyped-def]
    def check() -> dict | str:
        got = outcome(served.json("get", "workloads", "-A")["items"])
        if len(got) == n and all(v["finished"] for v in got.values()):
            return got
        return f"{sum(1 for v in got.values() if v['finished'])} of {n} finished"

    return check


def _get(port: int, path: str) -> tuple[int, str]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as r:
        return r.status, r.read().decode()


@needs_kubectl
def test_quickstart_two_processes(tmp_path: Path) -> None:
    world = webhook_admitted(EXAMPLES / "quickstart", tmp_path / "world", compress=30, lead=LEAD)
    want = run_embedded(world, tmp_path / "run")
    served = start_server(
        tmp_path / "state",
        str(world),
        "--without-kueue",
        "--speed",
        str(SPEED),
        home=tmp_path / "home",
    )
    log = WorkloadLog(served)
    ctl = start_controller(served)
    try:
        health, metrics = ctl.port("health probes"), ctl.port("metrics")
        ctl.wait_line("leading", 120)
        assert _get(health, "/healthz") == (200, "ok") and _get(health, "/readyz") == (200, "ok")
        assert "# TYPE" in _get(metrics, "/metrics")[1]  # prometheus-client's exposition
        got = wait_for(_all_finished(served, len(want)), 90, "every workload finished")
        table = served.ok("get", "workloads", "-A")
        cqs = served.json("get", "clusterqueues")["items"]
    finally:
        log.stop()
        assert ctl.stop() == 0  # a clean stop: the lease released
        served.stop()
    # Every workload of the embedded run, admitted to the same ClusterQueue,
    # ended the same way, and shown by kubectl.
    assert {k: (v["finished"], v["cluster_queue"]) for k, v in got.items()} == {
        k: (v["finished"], v["cluster_queue"]) for k, v in want.items()
    }
    assert len(table.strip().splitlines()) == len(want) + 1 and "ADMITTED" in table
    counts = check_writes(log, cqs)
    assert counts["admissions"] >= len(want)
    assert any('"msg": "leader elected"' in line for line in ctl.logs)  # JSON logs
    json.loads(next(line for line in ctl.logs if "leader elected" in line))


@needs_kubectl
def test_failover_to_the_second_replica(tmp_path: Path) -> None:
    world = webhook_admitted(EXAMPLES / "quickstart", tmp_path / "world", compress=30, lead=LEAD)
    served = start_server(
        tmp_path / "state",
        str(world),
        "--without-kueue",
        "--speed",
        str(SPEED),
        home=tmp_path / "home",
    )
    log = WorkloadLog(served)
    first = start_controller(served)
    first.wait_line("leading", 120)
    second = start_controller(served)
    try:
        second.wait_line("waiting for lease", 120)
        # Mid-run: some workloads admitted, most still to come.
        wait_for(lambda: len(log.writes) > 40, 120, "the run under way", every=0.1)
        killed = time.monotonic()
        first.stop(signal.SIGKILL)
        second.wait_line("leading", 120)
        took = second.when("leading") - killed
        n = len(outcome(served.json("get", "workloads", "-A")["items"]))
        wait_for(_all_finished(served, 80), 240, "every workload finished")
        lease = served.json("get", "leases", "-n", "kueue-system", "c1f6bfd2.kueue.x-k8s.io")
        cqs = served.json("get", "clusterqueues")["items"]
    finally:
        log.stop()
        second.stop()
        served.stop()
    # client-go's rule: the lease is free once unrenewed for leaseDuration (15 s)
    # as the candidate observed it, checked every retryPeriod (2 s, jittered by
    # up to 1.2x). The candidate sees the leader's last renewal up to one
    # jittered period late, and takes the free lease up to one period after
    # it expires: at most 15 + 2 x 2.4 s after the kill (+1 s for the logs).
    assert took <= 15 + 2 * (2 * 1.2) + 1, took
    assert lease["spec"]["leaseTransitions"] >= 1
    assert n <= 80
    check_writes(log, cqs)  # none booked twice, quota never exceeded


def _paced_cluster(world: Path, tmp_path: Path) -> tuple[Any, Path]:
    """``kuota serve --without-kueue --paced`` of a world (at 1000x), and the
    world's Configuration in a file of its own, for the controller."""
    config = tmp_path / "config.yaml"
    docs = yaml.safe_load_all((world / "world.yaml").read_text())
    config.write_text(yaml.safe_dump(next(d for d in docs if d["kind"] == "Configuration")))
    return start_paced(world, tmp_path), config


@needs_kubectl
def test_pod_groups_paced_decide_as_kuota_run(tmp_path: Path) -> None:
    """Two pod groups for one group's quota: the same admissions, at the same
    instants, as ``kuota run``, though the controller is another process."""
    world = webhook_admitted(EXAMPLES / "pod-groups", tmp_path / "world")
    want = run_embedded(world, tmp_path / "run")
    want_at = finished_at(tmp_path / "run")
    served, config = _paced_cluster(world, tmp_path)
    log = WorkloadLog(served)
    ctl = start_controller(served, "--config", str(config))
    try:
        got = wait_for(_all_finished(served, len(want)), 120, "every workload finished")
        items = served.json("get", "workloads", "-A")["items"]
        cqs = served.json("get", "clusterqueues")["items"]
    finally:
        log.stop()
        assert ctl.stop() == 0
        served.stop()
    assert got == want  # how each ended, where, in which flavors, its evictions
    assert dict(finished(w) for w in items) == want_at  # at the same instants
    check_writes(log, cqs)


def _instants(workloads: list[dict]) -> dict[str, tuple[str | None, str | None]]:
    """Per Workload (by its Job: the Workloads' names hash the Job's uid):
    when it last got its quota and when it finished."""
    out: dict[str, tuple[str | None, str | None]] = {}
    for w in workloads:
        conds = {c["type"]: c["lastTransitionTime"] for c in w["status"].get("conditions") or ()}
        owner = w["metadata"]["ownerReferences"][0]["name"]
        out[f"{w['metadata']['namespace']}/{owner}"] = (
            conds.get("QuotaReserved"),
            conds.get("Finished"),
        )
    return out


@needs_kubectl
def test_quickstart_paced_decides_as_kuota_run(tmp_path: Path) -> None:
    """The quickstart's 80 Jobs, preemptions and PodsReady timeouts among
    them: every decision (ClusterQueue, flavors, evictions, how it ended)
    and its instants as ``kuota run``'s, though Kueue is another process.
    A controller's deadline (a PodsReady timeout) is acted on at its instant,
    after the cluster's own events of it, and the first admissions are
    stamped with the world's time, not the wall clock's."""
    world = webhook_admitted(EXAMPLES / "quickstart", tmp_path / "world")
    run = tmp_path / "run"
    want = run_embedded(world, run)
    want_at = _instants(state_items(run, "workloads", "-A"))
    served = start_paced(world, tmp_path)
    ctl = start_controller(served)
    try:
        got = wait_for(_all_finished(served, len(want)), 240, "every workload finished")
        items = served.json("get", "workloads", "-A")["items"]
    finally:
        assert ctl.stop() == 0
        served.stop()
    assert got == want
    assert _instants(items) == want_at


def test_paced_needs_without_kueue(tmp_path: Path) -> None:
    r = CliRunner().invoke(serve, ["--state", str(tmp_path), "--paced"])
    assert r.exit_code == 2
    assert "--paced goes with --without-kueue" in r.output


def _decisions(workloads: list[dict]) -> dict[str, Any]:
    """Per Workload (its name without the hash of its owner's uid): where it
    holds quota and each condition's type, status and reason (which records
    a preemption and its requeue)."""
    out: dict[str, Any] = {}
    for w in workloads:
        st = w.get("status") or {}
        key = f"{w['metadata']['namespace']}/{w['metadata']['name'].rsplit('-', 1)[0]}"
        out[key] = (
            (st.get("admission") or {}).get("clusterQueue"),
            sorted((c["type"], c["status"], c["reason"]) for c in st.get("conditions") or ()),
        )
    return out


def _serving_settled(served, want: dict) -> Any:  # type: ignore[no-untyped-def]
    def check() -> dict | str:
        got = _decisions(served.json("get", "workloads", "-A")["items"])
        return got if got == want else f"not yet: {got}"

    return check


def test_serving_paced_through_the_controllers_webhooks(tmp_path: Path) -> None:
    """The serving example (a LeaderWorkerSet beside batch Jobs) in two
    processes. Nothing is pre-mutated: the world's objects arrive after the
    controller leads and, with the pods the LWS and StatefulSet controllers
    make, pass Kueue's webhooks in the other process (serve calls them as
    kube-apiserver does). The same admissions and the preemption of
    ``kuota run``."""
    world = with_lead(EXAMPLES / "serving", tmp_path / "world", timedelta(seconds=30))
    run_embedded(world, tmp_path / "run")
    want = _decisions(state_items(tmp_path / "run", "workloads", "-A"))
    assert any(("Preempted", "False", "QuotaReserved") in c for _, c in want.values())
    served, config = _paced_cluster(world, tmp_path)
    log = WorkloadLog(served)
    url = f"https://127.0.0.1:{free_port()}"  # Kueue's webhooks, served by the controller
    ctl = start_controller(served, "--config", str(config), "--webhook-url", url)
    try:
        wait_for(_serving_settled(served, want), 150, "the embedded run's outcome")
        pods = served.json("get", "pods", "-n", "inference")["items"]
        cqs = served.json("get", "clusterqueues")["items"]
    finally:
        log.stop()
        assert ctl.stop() == 0
        served.stop()
    # The LWS's pods were made by serve's controllers and mutated by Kueue's
    # pod webhook over HTTPS: managed, grouped, released from their gate.
    assert len(pods) == 8
    for p in pods:
        meta = p["metadata"]
        assert meta["labels"]["kueue.x-k8s.io/managed"] == "true", meta
        assert meta["annotations"]["kueue.x-k8s.io/pod-group-name"].startswith(
            "leaderworkerset-llama-405b-"
        ), meta
        assert not p["spec"].get("schedulingGates"), p["spec"]
    check_writes(log, cqs)
