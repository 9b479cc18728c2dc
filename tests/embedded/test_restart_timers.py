"""A journaled run restarted at the instant of a Kueue timer fires that timer
at that instant. A run killed after its clock reached a timer but before the
timer fired resumes exactly there: the core learns its workloads (and their
deadlines) only after its first look at the clock, and the timer must not
wait for the next event (the SIGKILL resume test diverged when it did)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from kuota.runtime.clock import VirtualClock
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


def test_a_pods_ready_timeout_due_at_the_restart_instant_evicts_at_that_instant(
    tmp_path: Path,
) -> None:
    cfg = config(waitForPodsReady={"timeout": "5m", "blockAdmission": False})
    state = tmp_path / "state"
    first = control_plane(cfg, state_dir=state)
    first.create(
        [
            namespace("team"),
            flavor("a100", {"gpu": "a100"}),
            cluster_queue("cq", {"a100": 4}),
            local_queue("team", "main", "cq"),
            node("small", 2, {"gpu": "a100"}),  # two of the four pods never run
        ]
    )
    first.create([job("team", "gang", 1, pods=4, duration=None)])
    first.run(until=T0 + timedelta(minutes=1))
    assert _cond(first.store.list(WL, "team").items[0], "Admitted").status == "True"
    first.close()

    deadline = T0 + timedelta(minutes=5)
    again = control_plane(cfg, state_dir=state, clock=VirtualClock(deadline))
    try:
        again.run(until=deadline)
        ev = _cond(again.store.list(WL, "team").items[0], "Evicted")
        assert ev is not None and (ev.status, ev.reason) == ("True", "PodsReadyTimeout")
        assert ev.last_transition_time == deadline
    finally:
        again.close()


class _WallClock:
    """A real-time clock (not virtual) the test moves by hand."""

    virtual = False

    def __init__(self, at: Any) -> None:
        self.at = at

    def now(self) -> Any:
        return self.at

    def wait_until(self, at: Any) -> None:
        self.at = max(self.at, at)


def test_a_timer_the_clock_passes_while_the_scheduler_is_quiet_is_written_at_once() -> None:
    """In real time the clock may pass a core timer before the manager has
    asked for it (the controller's next instant, a paced clock's step): the
    scheduler's quiet path then fires it. Its eviction is written and the
    queues tried at once, as when the timer's own request comes, not at the
    next unrelated event (cluster mode's stall after an API server restart,
    the paced quickstart's late PodsReady eviction)."""
    cfg = config(waitForPodsReady={"timeout": "5m", "blockAdmission": False})
    clock = _WallClock(T0)
    cp = control_plane(cfg, clock=clock)
    cp.create(
        [
            namespace("team"),
            flavor("a100", {"gpu": "a100"}),
            cluster_queue("cq", {"a100": 4}),
            local_queue("team", "main", "cq"),
            node("small", 2, {"gpu": "a100"}),  # two of the four pods never run
        ]
    )
    cp.create([job("team", "gang", 1, pods=4, duration=None)])
    cp.mgr.run_until_idle()
    assert _cond(cp.store.list(WL, "team").items[0], "Admitted").status == "True"
    clock.at = T0 + timedelta(minutes=6)
    # The manager's idle moment comes before its timer request is taken.
    for hook in cp.mgr.idle_hooks:
        hook()
    # Evicted at that moment, and (its pods' quota back) tried again at once.
    ev = _cond(cp.store.list(WL, "team").items[0], "Evicted")
    assert ev is not None and "Exceeded the PodsReady timeout" in ev.message
    assert ev.last_transition_time == clock.at
