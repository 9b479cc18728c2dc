"""The queue manager: LocalQueues route workloads to their ClusterQueue's
queue; heads are taken once per cycle; parked workloads are woken by the
events that can change their fate (Kueue's pkg/cache/queue/manager.go)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Iterable
from datetime import datetime

from kuota.queueing.queues import ClusterQueueQueue, LocalQueueEntry, QueueMarks
from kuota.quota.workload import WorkloadInfo

# A pending tree wake: (epoch, time, namespace matcher, the tree's ClusterQueues,
# the manager's cycle count then).
_TreeWake = tuple[int, datetime, Callable[[str, str], bool], Callable[[], list[str]], int]


class QueueManager:
    def __init__(self, equivalence_hashing: bool = True) -> None:
        # Kueue's SchedulingEquivalenceHashing gate (beta, on by default).
        self.equivalence_hashing = equivalence_hashing
        self.cqs: dict[str, ClusterQueueQueue] = {}
        self.lqs: dict[str, LocalQueueEntry] = {}
        self.assigned: dict[str, str] = {}  # workload key -> LocalQueue key
        # Wakes of whole cohort trees, carried out per ClusterQueue at its
        # next use (see wake_tree): tree -> (epoch, time, namespace matcher,
        # the tree's ClusterQueues). ``tree_of`` names a queue's tree (None
        # for one outside any cohort); the owner keeps it true and calls
        # settle_wakes before a tree changes shape.
        self.tree_of: Callable[[str], Hashable | None] = _no_tree
        self._tree_wakes: dict[Hashable, _TreeWake] = {}
        self._epochs = itertools.count(1)
        # Which queues may give a head, which may hold parked workloads (the
        # queues keep these up); a cycle and a wake visit only those.
        self._marks = QueueMarks()
        self._cycles = 0  # heads() calls: the pops of every active queue
        self._wakes_new = False  # a tree wake since parked queues last caught up
        self._trees: dict[str, Hashable | None] = {}  # tree_of, until a tree changes shape
        self._rank: dict[str, int] = {}  # a queue's place in ``cqs`` (its creation)
        self._ranks = itertools.count()

    # -- ClusterQueues
    def set_cluster_queue(
        self,
        name: str,
        strategy: str,
        active: bool,
        eviction_timestamp: int,
        now: datetime,
        lq_usage: Callable[[str], float] | None = None,
    ) -> ClusterQueueQueue:
        """Create or update a ClusterQueue's queue; ``lq_usage`` (admission fair
        sharing) counts only when the queue is created, as in Kueue."""
        q = self._cq(name)
        if q is None:
            q = self.cqs[name] = ClusterQueueQueue(
                name,
                strategy,
                active,
                eviction_timestamp=eviction_timestamp,
                lq_usage=lq_usage,
                equivalence_hashing=self.equivalence_hashing,
                marks=self._marks,
            )
            q.pops_seen = self._cycles
            self._rank[name] = next(self._ranks)
            self._trees.pop(name, None)
            for lq in self.lqs.values():
                if lq.cluster_queue == name and not lq.stopped:
                    for info in lq.items.values():
                        if not q.has(info.key):
                            q.push_active(info, now)
            return q
        q.strategy = strategy
        q.active = active
        return q

    def delete_cluster_queue(self, name: str) -> None:
        self.cqs.pop(name, None)
        self._rank.pop(name, None)
        self._trees.pop(name, None)
        self._marks.ready.discard(name)
        self._marks.parked.discard(name)

    # -- LocalQueues
    def set_local_queue(
        self, namespace: str, name: str, cluster_queue: str, stopped: bool, now: datetime
    ) -> LocalQueueEntry:
        key = f"{namespace}/{name}"
        lq = self.lqs.get(key)
        if lq is None:
            lq = self.lqs[key] = LocalQueueEntry(namespace, name, cluster_queue, stopped)
            return lq
        if lq.cluster_queue != cluster_queue or lq.stopped != stopped:
            old = self._cq(lq.cluster_queue)
            if old is not None:
                for k in lq.items:
                    old.delete(k)
            lq.cluster_queue, lq.stopped = cluster_queue, stopped
            new = self._cq(cluster_queue)
            if new is not None and not stopped:
                for info in lq.items.values():
                    new.push_or_update(info, now)
        return lq

    def delete_local_queue(self, key: str) -> None:
        lq = self.lqs.pop(key, None)
        if lq is None:
            return
        cq = self._cq(lq.cluster_queue)
        if cq is not None:
            for k in lq.items:
                cq.delete(k)
        for k in lq.items:
            self.assigned.pop(k, None)

    # -- workloads
    def add_or_update(self, info: WorkloadInfo, now: datetime) -> bool:
        """File an admissible workload under its LocalQueue; True if it is now
        in a ClusterQueue's queue."""
        lq_key = f"{info.namespace}/{info.queue_name}"
        old_lq = self.assigned.get(info.key)
        if old_lq is not None and old_lq != lq_key:
            self.delete(info.key)
        lq = self.lqs.get(lq_key)
        if lq is None:
            return False
        cq = self._file(info, lq)
        if cq is None:
            return False
        info.cluster_queue = cq.name
        cq.push_or_update(info, now)
        return True

    def _file(self, info: WorkloadInfo, lq: LocalQueueEntry) -> ClusterQueueQueue | None:
        """Record the workload under its LocalQueue; its ClusterQueue's queue
        if the LocalQueue is running and points at an existing one."""
        self.assigned[info.key] = lq.key
        lq.items[info.key] = info
        if lq.stopped:
            return None
        return self._cq(lq.cluster_queue)

    def delete(self, key: str) -> None:
        lq_key = self.assigned.pop(key, None)
        if lq_key is None:
            return
        lq = self.lqs.get(lq_key)
        if lq is None:
            return
        lq.items.pop(key, None)
        cq = self._cq(lq.cluster_queue)
        if cq is not None:
            cq.delete(key)

    def cluster_queue_of(self, key: str) -> ClusterQueueQueue | None:
        lq_key = self.assigned.get(key)
        lq = self.lqs.get(lq_key) if lq_key else None
        if lq is None or lq.stopped:
            return None
        return self._cq(lq.cluster_queue)

    def no_fit_reason(self, key: str) -> str | None:
        """Kueue's GetNoFitReason: the reason an equivalent workload failed
        with, when this one waits parked because of it."""
        q = self.cluster_queue_of(key)
        return q.no_fit_reason(key) if q is not None else None

    def queued(self, key: str) -> str | None:
        """'active', 'inadmissible', 'inflight' or None."""
        cq = self.cluster_queue_of(key)
        if cq is None:
            return None
        cq.flush_wake()
        if cq.get_active(key) is not None:
            return "active"
        if cq.is_inadmissible(key):
            return "inadmissible"
        if key in cq.inflight:
            return "inflight"
        return None

    def any_heads(self) -> bool:
        """Would heads() return anything?"""
        self._wake_parked()
        # The queues that may, in ``cqs`` order: has_active carries out a
        # queue's wake, as many as a look at every queue would, no more.
        # (A name without a queue: one deleted, marked by a holder of it.)
        rank = self._rank
        for name in sorted(self._marks.ready, key=lambda n: rank.get(n, -1)):
            q = self.cqs.get(name)
            if q is not None and q.active and q.has_active():
                return True
        return False

    def heads(self) -> list[tuple[str, WorkloadInfo]]:
        """Pop the head of every active ClusterQueue, in name order. Only the
        queues that may have one are looked at; the others' (empty) pops are
        counted when next used (_cq)."""
        out: list[tuple[str, WorkloadInfo]] = []
        self._wake_parked()
        ready = self._marks.ready
        cycles = self._cycles
        self._cycles = cycles + 1
        for name in sorted(ready):
            q = self._cq(name, cycles)
            if q is None:
                ready.discard(name)
                continue
            if not q.active:
                continue
            info = q.pop()
            q.pops_seen = cycles + 1
            if not q.may_have_head():
                ready.discard(name)
            if info is None:
                continue
            info.cluster_queue = name
            lq_key = self.assigned.get(info.key)
            lq = self.lqs.get(lq_key) if lq_key else None
            if lq is not None:
                lq.items.pop(info.key, None)
            out.append((name, info))
        return out

    def requeue(
        self,
        info: WorkloadInfo,
        reason: str,
        now: datetime,
        pending_flavors: bool,
        qr_reason: str = "",
    ) -> bool:
        """Kueue's RequeueWorkload; ``qr_reason``: the QuotaReserved reason the
        scheduler gives it (kept for its shape when the shape is parked)."""
        lq_key = f"{info.namespace}/{info.queue_name}"
        lq = self.lqs.get(lq_key)
        if lq is None:
            for q in self.cqs.values():
                q.inflight.pop(info.key, None)
            return False
        cq = self._file(info, lq)
        if cq is None:
            return False
        return cq.requeue(info, reason, now, pending_flavors, qr_reason)

    def retry_inadmissible(
        self,
        cq_names: Iterable[str],
        now: datetime,
        namespace_matches: Callable[[str, str], bool],
    ) -> None:
        for name in cq_names:
            q = self._cq(name)
            if q is not None:
                _wake(q, now, namespace_matches)

    def wake_tree(
        self,
        tree: Hashable,
        members: Callable[[], list[str]],
        now: datetime,
        namespace_matches: Callable[[str, str], bool],
    ) -> None:
        """retry_inadmissible for every ClusterQueue of a cohort tree. A quota
        release wakes its whole tree (a hundred queues in Kueue's large
        bench world, at every finish): each queue catches up at its next use
        instead, and repeated wakes of a tree before then count once, as the
        last (a wake only marks the queue; see requeue_inadmissible)."""
        self._tree_wakes[tree] = (
            next(self._epochs),
            now,
            namespace_matches,
            members,
            self._cycles,
        )
        self._wakes_new = True

    def settle_wakes(self) -> None:
        """Carry out the pending tree wakes on every queue they reach (before
        a tree changes shape)."""
        self._trees.clear()
        self._wakes_new = False
        if not self._tree_wakes:
            return
        wakes, self._tree_wakes = self._tree_wakes, {}
        for w in wakes.values():
            for name in w[3]():
                q = self.cqs.get(name)
                if q is not None:
                    _catch_up(q, w)

    def _wake_parked(self) -> None:
        """Carry out the new tree wakes on the queues holding parked workloads
        (what a wake can make a head). On the others a wake only marks the
        time of the queue's last wake and forgets its parked shapes: that is
        carried out when the queue is next used (_cq), with its pop count of
        the wake's time, as a wake carried out at once would have left it."""
        if not self._wakes_new:
            return
        self._wakes_new = False
        wakes = self._tree_wakes
        parked = self._marks.parked
        for name in list(parked):
            q = self.cqs.get(name)
            if q is None or not q.has_inadmissible():
                parked.discard(name)
                continue
            w = wakes.get(self._tree(name))
            if w is not None:
                _catch_up(q, w)

    def _tree(self, name: str) -> Hashable | None:
        trees = self._trees
        if name in trees:
            return trees[name]
        tree = trees[name] = self.tree_of(name)
        return tree

    def _cq(self, name: str, cycles: int = -1) -> ClusterQueueQueue | None:
        """A queue, caught up with the wakes of its tree and with the (empty)
        pops of the cycles that passed it by (``cycles``: the count to catch
        up to, else the manager's)."""
        q = self.cqs.get(name)
        if q is None:
            return None
        if self._tree_wakes:
            tree = self._tree(name)
            w = self._tree_wakes.get(tree) if tree is not None else None
            if w is not None:
                _catch_up(q, w)
        now = cycles if cycles >= 0 else self._cycles
        if q.pops_seen != now:
            if q.active:
                q.pop_cycle += now - q.pops_seen
            q.pops_seen = now
        return q


def _catch_up(q: ClusterQueueQueue, w: _TreeWake) -> None:
    """Carry out a tree wake on one of its queues, once, as of its time."""
    if q.tree_wake < w[0]:
        q.tree_wake = w[0]
        # The queue's pops when the wake happened (none it counts yet if it
        # came to be after): an active queue is popped at every cycle.
        pops = q.pop_cycle
        if q.active and w[4] > q.pops_seen:
            pops += w[4] - q.pops_seen
        _wake(q, w[1], w[2], pops)


def _wake(
    q: ClusterQueueQueue,
    now: datetime,
    namespace_matches: Callable[[str, str], bool],
    pop_cycle: int = -1,
) -> None:
    if q.has_inadmissible():
        name = q.name
        q.requeue_inadmissible(now, lambda ns: namespace_matches(name, ns), pop_cycle)
    else:
        # Nothing parked: the matcher is not kept, so none is built.
        q.requeue_inadmissible(now, _no_namespace, pop_cycle)


def _no_tree(name: str) -> Hashable | None:
    return None


def _no_namespace(namespace: str) -> bool:
    return False
