"""ClusterQueue and LocalQueue status writes.

They follow Kueue's UpdatesBatchPeriod (one second): a stream of workload
changes at many instants gives at most one status write per queue and second
of (virtual) time, a change after a quiet second is written at once, and the
last state always reaches the store. In real time a busy scheduler may go
seconds without settling (finishes keep coming due and keep the round going);
the statuses are still written at least every second, not only when it
settles."""

from __future__ import annotations

from datetime import timedelta
from itertools import pairwise
from typing import Any

import msgspec

from kuota.api.kueue import types as kt
from kuota.embedded.controlplane import ControlPlane
from kuota.sim.bench import T0, Runner, default_config
from kuota.sim.benchgen import Arrival, generate, parse, workload
from kuota.store.resources import CLUSTER_QUEUE as CQ
from kuota.store.resources import LOCAL_QUEUE as LQ
from kuota.store.resources import WORKLOAD


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


def _world(clock: Any = None) -> tuple[ControlPlane, str]:
    """One ClusterQueue of one cpu, its LocalQueue, and the bench's runner
    (an admitted workload finishes its runtime later)."""
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
    cp = ControlPlane(default_config(), T0, clock=clock, cluster=False)
    cp.mgr.recorder.enabled = False
    cp.mgr.add(Runner())
    cp.create(world.objects)
    cp.mgr.run_until_idle()
    return cp, world.objects[-1].metadata.namespace


def test_queue_statuses_are_written_while_a_real_time_round_runs() -> None:
    clock = BusyClock()
    cp, ns = _world(clock)
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


def _status_writes(cp: ControlPlane, kind: str) -> list[tuple[Any, Any]]:
    """(clock time, status) of every status write of that kind, as it happens."""
    seen: list[tuple[Any, Any]] = []
    rtype = LQ if kind == "LocalQueue" else CQ

    def on_change(etype: str, obj: Any, old: Any | None) -> None:
        if etype == "MODIFIED" and old is not None and obj.status != old.status:
            seen.append((cp.clock.now(), obj.status))

    cp.mgr.informer(rtype).on_change(on_change)
    return seen


def test_queue_statuses_are_written_once_per_batch_period() -> None:
    cp, ns = _world()
    lq_writes = _status_writes(cp, "LocalQueue")
    cq_writes = _status_writes(cp, "ClusterQueue")
    # Sixty one-cpu workloads, one every 100 ms for 6 s, each running 300 ms
    # on one cpu: the queues change at about 120 instants over 18 s, and the
    # backlog grows, then drains, so the status differs at every second.
    arrivals = [Arrival(i * 100, ns, f"w{i}", "w", 0, 1000, 1, 300) for i in range(60)]
    cp.submit([workload(a, T0) for a in arrivals])
    cp.run()
    for writes in (lq_writes, cq_writes):
        times = [t for t, _ in writes]
        assert 15 <= len(writes) <= 20, times  # ~18 s of changes, not ~120 instants
        assert all(b - a >= timedelta(seconds=1) for a, b in pairwise(times))
    # The backlog is seen while it lasts.
    assert max(st.pending_workloads for _, st in lq_writes) >= 30
    # The last state reaches the store: everything finished, nothing held.
    lq = cp.store.get(LQ, ns, ns)
    assert lq.status.pending_workloads == 0 and lq.status.admitted_workloads == 0
    cq_name = lq.spec.cluster_queue
    cq = cp.store.get(CQ, "", cq_name)
    assert cq.status.pending_workloads == 0 and cq.status.admitted_workloads == 0
    assert lq_writes[-1][1] == lq.status


def test_a_quiet_queue_is_written_at_once() -> None:
    """After a second without changes, the next change is written at its own
    instant (no period to wait out)."""
    cp, ns = _world()
    lq_writes = _status_writes(cp, "LocalQueue")
    # Two workloads 5 s apart, each running 1 s.
    arrivals = [
        Arrival(0, ns, "a", "w", 0, 1000, 1, 1000),
        Arrival(5000, ns, "b", "w", 0, 1000, 1, 1000),
    ]
    cp.submit([workload(a, T0) for a in arrivals])
    cp.run()
    times = [t for t, _ in lq_writes]
    # b comes after seconds of quiet: its admission (5 s) and its finish
    # (6 s, a period later) are each written at their own instant.
    assert T0 + timedelta(seconds=5) in times, times
    assert T0 + timedelta(seconds=6) in times, times
    assert all(t <= T0 + timedelta(seconds=6) for t in times), times


def test_a_workload_that_moves_queues_leaves_the_old_ones_counted_right() -> None:
    """The queues a workload was counted in at the last status write are
    written again when it moves, within one batch period, to another
    LocalQueue (and ClusterQueue), or is deleted and made again there."""
    cp, ns = _world()
    # A second LocalQueue in the same namespace, on a ClusterQueue of its own.
    cq0 = cp.store.get(LQ, ns, ns).spec.cluster_queue
    cq1 = msgspec.structs.replace(cp.store.get(CQ, "", cq0), metadata=kt.ObjectMeta(name="other"))
    lq1 = kt.LocalQueue(
        metadata=kt.ObjectMeta(name="other", namespace=ns),
        spec=kt.LocalQueueSpec(cluster_queue="other"),
    )
    cp.create([cq1, lq1])
    # Five cpus where the cohort has two: it waits wherever it is.
    big = workload(Arrival(0, ns, "w", "w", 0, 5000, 1, 1000), T0)
    cp.create([big])
    cp.run()

    def pending() -> tuple[int, int, int, int]:
        lq0, lq = cp.store.get(LQ, ns, ns), cp.store.get(LQ, ns, "other")
        c0, c1 = cp.store.get(CQ, "", cq0), cp.store.get(CQ, "", "other")
        return (
            lq0.status.pending_workloads,
            c0.status.pending_workloads,
            lq.status.pending_workloads,
            c1.status.pending_workloads,
        )

    assert pending() == (1, 1, 0, 0)
    wl = cp.store.get(WORKLOAD, ns, "w")
    moved = msgspec.structs.replace(wl, spec=msgspec.structs.replace(wl.spec, queue_name="other"))
    cp.store.update(moved)
    cp.run()
    assert pending() == (0, 0, 1, 1)
    # Deleted and made again under the same name in the first queue, at one instant.
    cp.store.delete(WORKLOAD, ns, "w")
    cp.create([big])
    cp.run()
    assert pending() == (1, 1, 0, 0)
