"""Cluster mode under faults, checked from the recorded Workload writes as
the failover test is: the API server restarted mid-run (the controller
lists again and goes on), and a share of the controller's writes failed
with 409s and 5xx, some after the write was applied (retried: every
workload finishes, none is given quota twice, quota is never exceeded).
A webhook that times out and failurePolicy: tests/webhooks/
test_serve_calls_webhooks.py."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from tests.clustermode.faultproxy import fault_proxy
from tests.clustermode.twoproc import (
    WorkloadLog,
    check_writes,
    free_port,
    outcome,
    start_controller,
    wait_for,
    webhook_admitted,
)
from tests.server.conftest import EXAMPLES, needs_kubectl, start_server

SPEED = 100
LEAD = timedelta(seconds=8 * SPEED)
WORKLOADS = 80  # the quickstart's Jobs


def _all_finished(served: Any) -> Any:
    def check() -> Any:
        got = outcome(served.json("get", "workloads", "-A")["items"])
        done = sum(1 for v in got.values() if v["finished"])
        return got if len(got) == WORKLOADS and done == WORKLOADS else f"{done} finished"

    return check


@needs_kubectl
def test_the_controller_goes_on_after_the_api_server_restarts(tmp_path: Path) -> None:
    world = webhook_admitted(EXAMPLES / "quickstart", tmp_path / "world", compress=30, lead=LEAD)
    port = free_port()
    args = ("--without-kueue", "--speed", str(SPEED), "--port", str(port))
    served = start_server(tmp_path / "state", str(world), *args, home=tmp_path / "home")
    log = WorkloadLog(served)
    ctl = start_controller(served)
    try:
        ctl.wait_line("leading", 120)
        wait_for(lambda: len(log.writes) > 40, 120, "the run under way", every=0.1)
        assert served.stop() == 0
        before = len(log.writes)
        time.sleep(2)  # the controller's requests and watches fail meanwhile
        assert ctl.proc.poll() is None
        # The world again: its Jobs still to arrive are input, not state (a
        # resumed serve creates only those not made yet).
        served = start_server(tmp_path / "state", str(world), *args, home=tmp_path / "home")
        try:
            got = wait_for(_all_finished(served), 240, "every workload finished")
        except AssertionError as err:
            # (what the controller said, to tell a stall from slowness)
            tail = "".join(ctl.logs[-40:])
            raise AssertionError(f"{err}\n--- the controller's last log lines:\n{tail}") from err
        cqs = served.json("get", "clusterqueues")["items"]
        assert ctl.proc.poll() is None  # it never exited: it listed again and went on
    finally:
        log.stop()
        code = ctl.stop()
        served.stop()
    assert code == 0
    assert len(log.writes) > before
    assert all(v["finished"] for v in got.values())
    counts = check_writes(log, cqs)  # none booked twice, quota never exceeded
    assert counts["admissions"] >= WORKLOADS


@needs_kubectl
def test_injected_conflicts_and_server_errors_are_retried(tmp_path: Path) -> None:
    token = "root-token-for-the-fault-test"
    tokens = tmp_path / "tokens.csv"
    tokens.write_text(f'{token},root,1,"system:masters"\n')
    world = webhook_admitted(EXAMPLES / "quickstart", tmp_path / "world", compress=30, lead=LEAD)
    served = start_server(
        tmp_path / "state",
        str(world),
        "--without-kueue",
        "--speed",
        str(SPEED),
        "--token-auth-file",
        str(tokens),
        home=tmp_path / "home",
    )
    log = WorkloadLog(served)
    ctl = None
    try:
        with fault_proxy(served.kubeconfig, token, tmp_path / "proxied", share=0.15) as (
            proxy,
            kc,
        ):
            ctl = start_controller(served, "--kubeconfig", str(kc))
            ctl.wait_line("leading", 120)
            got = wait_for(_all_finished(served), 240, "every workload finished")
            cqs = served.json("get", "clusterqueues")["items"]
            injected = dict(proxy.injected)
    finally:
        log.stop()
        if ctl is not None:
            ctl.stop()
        served.stop()
    # Each kind of fault happened, many times, and the run still ended well.
    assert all(injected.get(k, 0) >= 5 for k in ("conflict", "unavailable", "lost-answer")), (
        injected
    )
    assert all(v["finished"] for v in got.values())
    counts = check_writes(log, cqs)  # none booked twice, quota never exceeded
    assert counts["admissions"] >= WORKLOADS


@needs_kubectl
def test_a_refused_event_write_is_dropped_not_raised(tmp_path: Path) -> None:
    """Events are best effort (client-go's broadcaster): an API server that
    refuses one (403 here: RBAC grants the writer no events) leaves the
    write that recorded it alone."""
    from datetime import UTC, datetime

    import yaml

    from kuota.api.decode import decode_object
    from kuota.store.kube import KubeStore, load_kubeconfig

    tokens = tmp_path / "tokens.csv"
    tokens.write_text('nobody-token,nobody,9,"team"\n')
    served = start_server(
        tmp_path / "state", "--token-auth-file", str(tokens), home=tmp_path / "home"
    )
    kc = yaml.safe_load(served.kubeconfig.read_text())
    for u in kc["users"]:
        u["user"] = {"token": "nobody-token"}
    path = tmp_path / "nobody"
    path.write_text(yaml.safe_dump(kc))
    event = decode_object(
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "w.1", "namespace": "default"},
            "involvedObject": {"kind": "Workload", "name": "w", "namespace": "default"},
            "reason": "QuotaReserved",
            "message": "m",
            "type": "Normal",
            "firstTimestamp": datetime(2026, 1, 1, tzinfo=UTC).isoformat(),
        }
    ).obj
    store = KubeStore(load_kubeconfig(str(path)), retry_for=2.0)
    try:
        assert store.create(event) is event  # refused (403), dropped
    finally:
        store.close()
        served.stop()


@needs_kubectl
def test_events_are_never_read_back(tmp_path: Path) -> None:
    """The manager's role (Kueue's too) may create, patch and delete Events
    but not get them. A create whose answer was lost is not read back, a
    repeat is a patch of its count (client-go's correlator), an expired one
    is deleted without a read: no GET on events goes out."""
    from datetime import UTC, datetime

    from kuota.api.decode import decode_object
    from kuota.runtime.clock import VirtualClock
    from kuota.runtime.recorder import EventRecorder
    from kuota.store.kube import KubeStore, load_kubeconfig

    token = "root-token-for-the-event-test"
    tokens = tmp_path / "tokens.csv"
    tokens.write_text(f'{token},root,1,"system:masters"\n')
    served = start_server(
        tmp_path / "state", "--token-auth-file", str(tokens), home=tmp_path / "home"
    )
    about = decode_object(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "subject", "namespace": "default", "uid": "u-1"},
        }
    ).obj
    start = datetime(2026, 1, 1, tzinfo=UTC)
    try:
        # The first write (the Event's create) is applied but its answer lost.
        with fault_proxy(
            served.kubeconfig, token, tmp_path / "proxied", share=0.0, plan=["lost-answer"]
        ) as (proxy, kc):
            store = KubeStore(load_kubeconfig(str(kc)), retry_for=10.0)
            clock = VirtualClock(start)
            rec = EventRecorder(store, clock)
            try:
                rec.event(about, "Normal", "Tested", "once", "kuota-test")
                clock.wait_until(start + timedelta(minutes=1))
                rec.event(about, "Normal", "Tested", "once", "kuota-test")  # a repeat
                assert store.events.flush(30)  # (sent off the recorder's thread, in order)
                events = served.json("get", "events", "-n", "default")["items"]
                assert [(e["reason"], e["count"]) for e in events] == [("Tested", 2)]
                clock.wait_until(start + timedelta(hours=2))
                rec.event(about, "Normal", "Later", "after the first expired", "kuota-test")
            finally:
                store.close()
            seen = list(proxy.seen)
            injected = dict(proxy.injected)
        events = served.json("get", "events", "-n", "default")["items"]
    finally:
        served.stop()
    assert injected == {"lost-answer": 1}
    assert [e["reason"] for e in events] == ["Later"]  # the first one expired, deleted
    methods = [m for m, path in seen if "/events" in path]
    assert "GET" not in methods, seen
    assert methods.count("POST") == 3 and "PATCH" in methods and "DELETE" in methods, methods
