"""In real time a busy scheduler may go seconds without settling (finishes
keep coming due and keep the round going); the ClusterQueue and LocalQueue
statuses are still written at least every second, not only when it settles."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from kuota.api.kueue import types as kt
from kuota.embedded.controlplane import ControlPlane
from kuota.sim.bench import T0, Runner, default_config
from kuota.sim.benchgen import Arrival, generate, parse, workload

LQ = (kt.GROUP, "LocalQueue")


class BusyClock:
    """Real (not virtual) time that moves on by itself at every look, as a
    wall clock does while the process works."""

    virtual = False

    def __init__(self) -> None:
        self.t = T0

    def now(self) -> Any:
        self.t += timedelta(milliseconds=20)
        return self.t

    def wait_until(self, at: Any) -> None:
        self.t = max(self.t, at)


def test_queue_statuses_are_written_while_a_real_time_round_runs() -> None:
    world = generate(
        parse(
            {
                "cohorts": [
                    {
                        "className": "c",
                        "count": 1,
                        "queuesSets": [{"className": "q", "count": 1, "nominalQuota": 1}],
                    }
                ]
            }
        ),
        T0,
    )
    clock = BusyClock()
    cp = ControlPlane(default_config(), T0, clock=clock, cluster=False)  # type: ignore[arg-type]
    cp.mgr.recorder.enabled = False
    cp.mgr.add(Runner())
    cp.create(world.objects)
    cp.mgr.run_until_idle()
    ns = world.objects[-1].metadata.namespace
    # Forty one-cpu workloads that finish as soon as admitted, one at a time.
    arrivals = [Arrival(0, ns, f"w{i}", "w", 0, 1000, 1, 0) for i in range(40)]
    cp.create([workload(a, T0) for a in arrivals])
    watch = cp.store.watch(None, cp.store.resource_version)
    start = clock.t
    cp.run()
    writes = [ev for ev in watch.poll() if ev.type == "MODIFIED" and ev.object.kind == "LocalQueue"]
    assert clock.t - start > timedelta(seconds=5)  # one long busy stretch
    assert len(writes) >= 5, len(writes)
    final = cp.store.get(LQ, ns, ns)
    assert final.status.pending_workloads == 0
