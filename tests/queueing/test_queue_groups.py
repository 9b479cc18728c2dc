"""The pending queue of one ClusterQueue, driven directly: Kueue's
scheduling-equivalence parking (a shape that did not fit parks every active
workload of that shape, newcomers of it park at once) and the wake that
brings them all back, kept per LocalQueue and shape; a strategy change
re-files everything; a cohort tree's wake reaches each queue lazily."""

from __future__ import annotations

from datetime import timedelta

from kuota.api.kueue import types as kt
from kuota.queueing.queue_manager import QueueManager
from kuota.queueing.queues import NO_FIT, ClusterQueueQueue
from kuota.quota.workload import PodSetResources, WorkloadInfo
from kuota.sim.bench import T0
from kuota.sim.benchgen import Arrival, workload


def info(name: str, cpu: int, prio: int = 0, at_ms: int = 0) -> WorkloadInfo:
    wl = workload(Arrival(at_ms, "ns", name, "c", prio, cpu, 1, 0), T0)
    wl.metadata.uid = f"uid-{name}"
    return WorkloadInfo(wl, [PodSetResources("main", 1, {"cpu": cpu})], prio)


def everything(q: ClusterQueueQueue) -> list[str]:
    out = []
    while (i := q.pop()) is not None:
        out.append(i.key.split("/")[1])
        q.inflight.pop(i.key, None)
    return out


def test_a_shape_that_does_not_fit_parks_its_kind_until_the_next_wake() -> None:
    q = ClusterQueueQueue("cq")
    now = T0
    for i, (name, cpu) in enumerate([("big1", 4000), ("small1", 1000), ("big2", 4000)]):
        q.push_or_update(info(name, cpu, at_ms=i), now)
    head = q.pop()
    assert head is not None and head.key == "ns/big1"
    q.requeue(head, NO_FIT, now, False)
    # big2 has big1's shape: parked unevaluated, with it; small1 stays.
    assert q.is_inadmissible("ns/big2") and q.get_active("ns/big2") is None
    assert q.get_active("ns/small1") is not None
    q.push_or_update(info("big3", 4000, at_ms=5), now)  # a newcomer of that shape
    assert q.is_inadmissible("ns/big3")
    assert q.pending_count() == 4 and q.has_inadmissible()
    q.requeue_inadmissible(now + timedelta(seconds=1), lambda ns: True)
    q.flush_wake()  # carried out at the next look; this is one
    assert not q.has_inadmissible()
    assert everything(q) == ["big1", "small1", "big2", "big3"]  # creation order again


def test_a_wake_leaves_the_namespaces_the_selector_does_not_match() -> None:
    q = ClusterQueueQueue("cq")
    a = info("a", 4000)
    q.push_or_update(a, T0)
    q.push_or_update(info("b", 4000, at_ms=1), T0)
    q.requeue(q.pop(), NO_FIT, T0, False)  # type: ignore[arg-type]
    q.requeue_inadmissible(T0, lambda ns: ns != "ns")
    assert everything(q) == []
    assert q.is_inadmissible("ns/a") and q.is_inadmissible("ns/b")


def test_a_strategy_change_files_every_workload_again() -> None:
    q = ClusterQueueQueue("cq")
    q.push_or_update(info("low", 1000, prio=1), T0)
    q.push_or_update(info("high", 2000, prio=9, at_ms=1), T0)
    q.push_or_update(info("high2", 2000, prio=9, at_ms=2), T0)
    q.requeue(q.pop(), NO_FIT, T0, False)  # type: ignore[arg-type]  # "high": parks high2
    q.strategy = "StrictFIFO"  # shapes no longer group; the parked stay parked
    assert q.is_inadmissible("ns/high2") and q.get_active("ns/low") is not None
    q.requeue_inadmissible(T0, lambda ns: True)
    assert everything(q) == ["high", "high2", "low"]


def test_a_tree_wake_reaches_each_queue_at_its_next_use() -> None:
    m = QueueManager()
    trees = {"a": "t", "b": "t"}
    m.tree_of = trees.get
    for name in ("a", "b"):
        m.set_cluster_queue(name, "BestEffortFIFO", True, True, T0)
        m.set_local_queue("ns", f"lq-{name}", name, False, T0)
    wl = info("w", 1000)
    wl.obj.spec.queue_name = "lq-b"
    assert m.add_or_update(wl, T0)
    ((_, head),) = m.heads()
    m.requeue(head, NO_FIT, T0, False)
    assert m.queued("ns/w") == "inadmissible"
    m.wake_tree("t", lambda: ["a", "b"], T0, lambda cq, ns: True)
    assert m.cqs["b"].is_inadmissible("ns/w")  # nothing moved yet
    assert m.queued("ns/w") == "active"  # the next look catches up
    assert [h.key for _, h in m.heads()] == ["ns/w"]


def test_a_queue_made_best_effort_parks_by_shape() -> None:
    q = ClusterQueueQueue("cq", strategy="StrictFIFO")
    q.push_or_update(info("big1", 4000), T0)
    q.push_or_update(info("big2", 4000, at_ms=1), T0)
    q.push_or_update(info("small", 1000, at_ms=2), T0)
    q.strategy = "BestEffortFIFO"
    q.requeue(q.pop(), NO_FIT, T0, False)  # type: ignore[arg-type]
    assert q.is_inadmissible("ns/big2")
    assert everything(q) == ["small"]


def test_a_wake_leaves_group_members_whose_backoff_runs() -> None:
    """A workload queued while its requeue backoff ran marks its group: the
    wake after a bulk park checks each member and leaves that one parked
    until its backoff is over; the others of the group come back in order."""
    q = ClusterQueueQueue("cq")
    waiting = info("b", 4000, at_ms=1)
    waiting.obj.status = kt.WorkloadStatus(
        requeue_state=kt.RequeueState(count=1, requeue_at=T0 + timedelta(seconds=10))
    )
    for i in (info("a", 4000), waiting, info("c", 4000, at_ms=2), info("d", 4000, at_ms=3)):
        q.push_active(i, T0)
    head = q.pop()
    assert head is not None and head.key == "ns/a"
    q.requeue(head, NO_FIT, T0, False)  # parks b, c and d with it
    assert q.get_active("ns/c") is None
    q.requeue_inadmissible(T0 + timedelta(seconds=1), lambda ns: True)
    assert everything(q) == ["a", "c", "d"]
    assert q.is_inadmissible("ns/b")
    q.requeue_inadmissible(T0 + timedelta(seconds=11), lambda ns: True)
    assert everything(q) == ["b"]
