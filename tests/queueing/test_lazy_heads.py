"""The queue manager looks only at the ClusterQueues that can give a head,
and carries a cohort tree's wake to a queue without parked workloads when it
next uses it. On random sequences of arrivals, cycles, requeues (every
reason), admissions, tree wakes (also between a cycle's pops and its
requeues), single-queue wakes and queues stopped and started, its heads,
its requeues (made active or parked) and where every workload waits are
those of the same manager made to carry out every wake and pop every active
queue at each cycle, as Kueue does (and kuota did)."""

from __future__ import annotations

import random
from datetime import timedelta

from kuota.queueing.queue_manager import QueueManager
from kuota.queueing.queues import (
    FAILED_AFTER_NOMINATION,
    GENERIC,
    NO_FIT,
    PENDING_PREEMPTION,
    PREEMPTION_NO_CANDIDATES,
)
from kuota.quota.workload import PodSetResources, WorkloadInfo
from kuota.sim.bench import T0
from kuota.sim.benchgen import Arrival, workload

CQS = [f"cq{i:02}" for i in range(12)]
TREES = {name: ("t1" if i < 5 else "t2" if i < 10 else None) for i, name in enumerate(CQS)}
REASONS = [NO_FIT, NO_FIT, PREEMPTION_NO_CANDIDATES, GENERIC, PENDING_PREEMPTION]
REASONS.append(FAILED_AFTER_NOMINATION)


def _heads(m: QueueManager, every: bool) -> list[tuple[str, WorkloadInfo]]:
    """``every``: every wake carried out and every active queue popped."""
    if every:
        m.settle_wakes()
        m._marks.ready.update(m.cqs)
    return m.heads()


def _any_heads(m: QueueManager, every: bool) -> bool:
    if every:
        m.settle_wakes()
        return any(q.active and q.has_active() for q in m.cqs.values())
    return m.any_heads()


def _info(i: int, cq: str, cpu: int, prio: int) -> WorkloadInfo:
    ns = "other" if i % 7 == 0 else "ns"
    wl = workload(Arrival(i, ns, f"w{i}", "c", prio, cpu, 1, 0), T0)
    wl.metadata.uid = f"uid-{i}"
    wl.spec.queue_name = f"lq-{cq}"
    return WorkloadInfo(wl, [PodSetResources("main", 1, {"cpu": cpu})], prio)


def _matches(cq: str, ns: str) -> bool:
    return ns != "other" or cq < "cq06"


def _run(seed: int, every: bool) -> list[object]:
    m = QueueManager()
    rng = random.Random(seed)
    m.tree_of = TREES.get
    now = T0
    seen: list[object] = []
    active = dict.fromkeys(CQS, True)
    for i, name in enumerate(CQS):
        m.set_cluster_queue(name, "StrictFIFO" if i % 4 == 3 else "BestEffortFIFO", True, 1, now)
        for ns in ("ns", "other"):
            m.set_local_queue(ns, f"lq-{name}", name, False, now)
    keys: list[str] = []

    def wake() -> None:
        tree = rng.choice(("t1", "t2"))
        members = [n for n in CQS if TREES[n] == tree]
        m.wake_tree(tree, lambda: members, now, _matches)

    for step in range(400):
        now += timedelta(seconds=rng.choice((0, 0, 1, 30)))
        op = rng.random()
        if op < 0.35:
            cq = rng.choice(CQS[:4] if rng.random() < 0.5 else CQS)
            info = _info(step, cq, rng.choice((1000, 2000, 4000)), rng.choice((0, 0, 5)))
            keys.append(info.key)
            seen.append(("add", m.add_or_update(info, now)))
        elif op < 0.75:
            heads = _heads(m, every)
            seen.append([(cq, h.key) for cq, h in heads])
            if rng.random() < 0.3:
                wake()  # a preemption or a finish within the cycle
            for cq, h in heads:
                if rng.random() < 0.25:
                    m.delete(h.key)  # admitted
                    continue
                reason = rng.choice(REASONS)
                m.requeue(h, reason, now, rng.random() < 0.1, "Pending")
                # Back among the active ones, or parked (a look without side effects).
                seen.append(m.cqs[cq].get_active(h.key) is not None)
        elif op < 0.87:
            wake()
        elif op < 0.9:
            m.retry_inadmissible([rng.choice(CQS)], now, _matches)
        elif op < 0.93:
            cq = rng.choice(CQS)
            active[cq] = not active[cq]
            m.set_cluster_queue(cq, "BestEffortFIFO", active[cq], 1, now)
        elif op < 0.96 and keys:
            m.delete(rng.choice(keys))
        else:
            seen.append(_any_heads(m, every))
        if step % 50 == 49:
            seen.append([m.queued(k) for k in keys])
    seen.append([m.queued(k) for k in keys])
    return seen


def test_heads_of_the_queues_that_may_have_one_are_the_heads_of_all() -> None:
    for seed in range(12):
        lazy, every = _run(seed, False), _run(seed, True)
        assert lazy == every, f"seed {seed}"
        # The sequences do what they are meant to: heads popped, requeues
        # both made active and parked.
        pops = sum(len(s) for s in lazy if isinstance(s, list) and s and isinstance(s[0], tuple))
        answers = [s for s in lazy if isinstance(s, bool)]
        assert pops > 50 and answers.count(True) > 10 and answers.count(False) > 10
