"""The queue manager: LocalQueues route workloads to their ClusterQueue's
queue; heads are taken once per cycle; parked workloads are woken by the
events that can change their fate (Kueue's pkg/cache/queue/manager.go)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime

from kuota.queueing.queues import ClusterQueueQueue, LocalQueueEntry
from kuota.quota.workload import WorkloadInfo


class QueueManager:
    def __init__(self, equivalence_hashing: bool = True) -> None:
        # Kueue's SchedulingEquivalenceHashing gate (beta, on by default).
        self.equivalence_hashing = equivalence_hashing
        self.cqs: dict[str, ClusterQueueQueue] = {}
        self.lqs: dict[str, LocalQueueEntry] = {}
        self.assigned: dict[str, str] = {}  # workload key -> LocalQueue key

    # -- ClusterQueues
    def set_cluster_queue(
        self,
        name: str,
        strategy: str,
        active: bool,
        eviction_timestamp: bool,
        now: datetime,
        lq_usage: Callable[[str], float] | None = None,
    ) -> ClusterQueueQueue:
        """Create or update a ClusterQueue's queue; ``lq_usage`` (admission fair
        sharing) counts only when the queue is created, as in Kueue."""
        q = self.cqs.get(name)
        if q is None:
            q = self.cqs[name] = ClusterQueueQueue(
                name,
                strategy,
                active,
                eviction_timestamp=eviction_timestamp,
                lq_usage=lq_usage,
                equivalence_hashing=self.equivalence_hashing,
            )
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
            old = self.cqs.get(lq.cluster_queue)
            if old is not None:
                for k in lq.items:
                    old.delete(k)
            lq.cluster_queue, lq.stopped = cluster_queue, stopped
            new = self.cqs.get(cluster_queue)
            if new is not None and not stopped:
                for info in lq.items.values():
                    new.push_or_update(info, now)
        return lq

    def delete_local_queue(self, key: str) -> None:
        lq = self.lqs.pop(key, None)
        if lq is None:
            return
        cq = self.cqs.get(lq.cluster_queue)
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
        return self.cqs.get(lq.cluster_queue)

    def delete(self, key: str) -> None:
        lq_key = self.assigned.pop(key, None)
        if lq_key is None:
            return
        lq = self.lqs.get(lq_key)
        if lq is None:
            return
        lq.items.pop(key, None)
        cq = self.cqs.get(lq.cluster_queue)
        if cq is not None:
            cq.delete(key)

    def cluster_queue_of(self, key: str) -> ClusterQueueQueue | None:
        lq_key = self.assigned.get(key)
        lq = self.lqs.get(lq_key) if lq_key else None
        if lq is None or lq.stopped:
            return None
        return self.cqs.get(lq.cluster_queue)

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
        return any(q.active and q.has_active() for q in self.cqs.values())

    def heads(self) -> list[tuple[str, WorkloadInfo]]:
        """Pop the head of every active ClusterQueue, in name order."""
        out: list[tuple[str, WorkloadInfo]] = []
        for name in sorted(self.cqs):
            q = self.cqs[name]
            if not q.active:
                continue
            info = q.pop()
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
        self, info: WorkloadInfo, reason: str, now: datetime, pending_flavors: bool
    ) -> bool:
        lq_key = f"{info.namespace}/{info.queue_name}"
        lq = self.lqs.get(lq_key)
        if lq is None:
            for q in self.cqs.values():
                q.inflight.pop(info.key, None)
            return False
        cq = self._file(info, lq)
        if cq is None:
            return False
        return cq.requeue(info, reason, now, pending_flavors)

    def retry_inadmissible(
        self,
        cq_names: Iterable[str],
        now: datetime,
        namespace_matches: Callable[[str, str], bool],
    ) -> None:
        for name in cq_names:
            q = self.cqs.get(name)
            if q is None:
                continue
            if q.has_inadmissible():
                q.requeue_inadmissible(now, lambda ns, n=name: namespace_matches(n, ns))
            else:
                # Nothing parked: the matcher is not kept, so none is built
                # (a release wakes every queue of its cohort).
                q.requeue_inadmissible(now, _no_namespace)


def _no_namespace(namespace: str) -> bool:
    return False
