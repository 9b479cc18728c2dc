"""waitForPodsReady in virtual time: a Job whose pods cannot all be placed is
evicted after the timeout, requeued after Kueue's exponential backoff, and
deactivated once backoffLimitCount is exceeded."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from kuota.store.resources import JOB
from kuota.store.resources import WORKLOAD as WL

from .world import (
    T0,
    cluster_queue,
    config,
    control_plane,
    flavor,
    job,
    local_queue,
    namespace,
    node,
)


def _cond(obj: Any, ctype: str) -> Any:
    for c in (obj.status.conditions if obj.status else None) or ():
        if c.type == ctype:
            return c
    return None


def _plane() -> Any:
    cfg = config(
        waitForPodsReady={
            "timeout": "5m",
            "blockAdmission": False,
            "requeuingStrategy": {
                "timestamp": "Eviction",
                "backoffBaseSeconds": 60,
                "backoffLimitCount": 2,
            },
        }
    )
    cp = control_plane(cfg, cluster=True)
    cp.create(
        [
            namespace("team"),
            flavor("a100", {"gpu": "a100"}),
            cluster_queue("cq", {"a100": 4}),
            local_queue("team", "main", "cq"),
            # Quota for 4 GPUs but a node with 2: two of the pods never run.
            node("small", 2, {"gpu": "a100"}),
        ]
    )
    cp.create([job("team", "gang", 1, pods=4, duration=None)])
    return cp


def _wl(cp: Any) -> Any:
    return cp.store.list(WL, "team").items[0]


def test_timeout_evicts_then_backoff_requeues_then_deactivates() -> None:
    cp = _plane()
    cp.mgr.run_until_idle()
    wl = _wl(cp)
    assert _cond(wl, "Admitted").status == "True"
    assert _cond(wl, "PodsReady").reason == "WaitForStart"

    # Just before the 5 minute timeout nothing has happened.
    cp.run(until=T0 + timedelta(minutes=5) - timedelta(seconds=1))
    assert _cond(_wl(cp), "Evicted") is None

    cp.run(until=T0 + timedelta(minutes=5))
    wl = _wl(cp)
    ev = _cond(wl, "Evicted")
    assert (ev.status, ev.reason) == ("True", "PodsReadyTimeout")
    assert ev.last_transition_time == T0 + timedelta(minutes=5)
    assert wl.status.requeue_state.count == 1
    assert wl.status.requeue_state.requeue_at == T0 + timedelta(minutes=6)  # base 60 s
    assert cp.store.get(JOB, "team", "gang").spec.suspend is True

    # Re-admitted when the backoff ends, timed out again 5 minutes later, and
    # the second backoff is twice the first (120 s).
    cp.run(until=T0 + timedelta(minutes=6))
    wl = _wl(cp)
    assert _cond(wl, "QuotaReserved").status == "True"
    assert _cond(wl, "Admitted").last_transition_time == T0 + timedelta(minutes=6)
    assert cp.store.get(JOB, "team", "gang").spec.suspend is False
    cp.run(until=T0 + timedelta(minutes=11))
    wl = _wl(cp)
    assert wl.status.requeue_state.count == 2
    assert wl.status.requeue_state.requeue_at == T0 + timedelta(minutes=13)

    # The third timeout exceeds backoffLimitCount 2: deactivated for good.
    cp.run()
    wl = _wl(cp)
    assert wl.spec.active is False
    ev = _cond(wl, "Evicted")
    assert ev.reason == "DeactivatedDueToRequeuingLimitExceeded"
    assert ev.last_transition_time == T0 + timedelta(minutes=18)
    assert cp.store.get(JOB, "team", "gang").spec.suspend is True
    assert cp.clock.now() == T0 + timedelta(minutes=18)  # nothing more can happen


def test_pods_ready_is_reported_when_every_pod_runs() -> None:
    cp = _plane()
    cp.create([node("big", 4, {"gpu": "a100"})])
    cp.mgr.run_until_idle()
    pr = _cond(_wl(cp), "PodsReady")
    assert (pr.status, pr.reason) == ("True", "Started")
    cp.run(until=T0 + timedelta(hours=1))
    assert _cond(_wl(cp), "Evicted") is None
