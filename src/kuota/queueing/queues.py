"""Pending workloads: one queue per ClusterQueue, fed through LocalQueues.

Each ClusterQueue keeps an active heap (the workloads that compete for the
next cycle) and an inadmissible set (parked until an event that can change
their fate). Ordering, requeueing and wake-ups follow Kueue's
pkg/cache/queue (cluster_queue.go, manager.go, inadmissible_workloads.go).
Time is passed in; nothing here reads a clock.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime

from kuota.quota.workload import (
    WorkloadInfo,
    condition_false,
)

# Requeue reasons (Kueue's RequeueReason).
FAILED_AFTER_NOMINATION = "FailedAfterNomination"
NAMESPACE_MISMATCH = "NamespaceMismatch"
GENERIC = ""
PREEMPTION_GATED = "PreemptionGated"
PENDING_PREEMPTION = "PendingPreemption"
PREEMPTION_FAILED = "PreemptionFailed"
NO_FIT = "NoFit"
PREEMPTION_NO_CANDIDATES = "PreemptionNoCandidates"

_IMMEDIATE_BEST_EFFORT = frozenset((FAILED_AFTER_NOMINATION, PENDING_PREEMPTION, PREEMPTION_FAILED))

# A heap entry: (-priority, queue-order timestamp, UID, push sequence, key).
_Entry = tuple[int, datetime, str, int, str]


def backoff_expired(info: WorkloadInfo, now: datetime) -> bool:
    """Kueue's backoffWaitingTimeExpired."""
    st = info.obj.status
    if st is None or (not st.conditions and st.requeue_state is None):
        return True  # nothing to wait for (most parked workloads, checked at every wake)
    if condition_false(info.obj, "Requeued"):
        return False
    rs = st.requeue_state
    if rs is None or rs.requeue_at is None:
        return True
    return now >= rs.requeue_at


@dataclass
class ClusterQueueQueue:
    """The pending workloads of one ClusterQueue."""

    name: str
    strategy: str = "BestEffortFIFO"
    active: bool = True
    eviction_timestamp: bool = True  # waitForPodsReady requeuing timestamp is Eviction
    # Admission fair sharing: the usage of a LocalQueue ("namespace/name"), read
    # at every pop. Kueue fixes the ordering when it creates the queue.
    lq_usage: Callable[[str], float] | None = None
    _heap: list[_Entry] = field(default_factory=list)
    # With lq_usage: one heap per LocalQueue (its workloads share one usage).
    _lq_heaps: dict[str, list[_Entry]] = field(default_factory=dict)
    _in_heap: dict[str, tuple[int, WorkloadInfo]] = field(default_factory=dict)
    inadmissible: dict[str, WorkloadInfo] = field(default_factory=dict)
    inflight: dict[str, WorkloadInfo] = field(default_factory=dict)
    sticky: str | None = None  # the preemptor that stays at the head (BestEffortFIFO)
    preemptor: str | None = None
    pop_cycle: int = 0
    queue_inadmissible_cycle: int = -1
    _seq: Iterator[int] = field(default_factory=itertools.count)
    # A wake not yet carried out: (its time, the namespace matcher). Wakes come
    # with every quota release in a cohort; moving the parked workloads waits
    # for the next look at the queue, which sees the same result.
    _wake: tuple[datetime, Callable[[str], bool]] | None = None
    # Kueue's SchedulingEquivalenceHashing (BestEffortFIFO): once a workload
    # is parked for not fitting, the active ones of the same scheduling shape
    # are parked with it, and newcomers of that shape park at once, until the
    # next wake. They would fail alike; trying each costs a full evaluation.
    equivalence_hashing: bool = True
    _parked_shapes: set[bytes] = field(default_factory=set)
    # Workloads parked by shape whose heap entry is still in the heap, with
    # that entry's push sequence. A wake that finds the same info parked makes
    # the entry live again instead of pushing a new one: the bulk park and the
    # wake after it are the queue's hottest path, and re-pushing (with a new
    # order key) costs the same work again for the same place in the order.
    # Only workloads with a UID are kept: the UID ranks before the sequence,
    # so between two of them the old sequence decides nothing a new one would.
    _parked_seq: dict[str, tuple[int, WorkloadInfo]] = field(default_factory=dict)

    # -- the active heap
    def _key(self, info: WorkloadInfo, seq: int) -> _Entry:
        return (*info.order_key(self.eviction_timestamp), seq, info.key)

    def push_active(self, info: WorkloadInfo) -> None:
        self._parked_seq.pop(info.key, None)
        seq = next(self._seq)
        self._in_heap[info.key] = (seq, info)
        if self.lq_usage is None:
            heapq.heappush(self._heap, self._key(info, seq))
        else:
            heap = self._lq_heaps.setdefault(lq_key(info), [])
            heapq.heappush(heap, self._key(info, seq))

    def remove_active(self, key: str) -> bool:
        return self._in_heap.pop(key, None) is not None

    def has_active(self) -> bool:
        """Is anything waiting to be a head (after any pending wake)?"""
        self.flush_wake()
        return bool(self._in_heap)

    def get_active(self, key: str) -> WorkloadInfo | None:
        e = self._in_heap.get(key)
        return e[1] if e else None

    def pop(self) -> WorkloadInfo | None:
        self.flush_wake()
        self.pop_cycle += 1
        info = self._pop_by_usage() if self.lq_usage is not None else self._pop()
        if info is not None:
            self.inflight[info.key] = info
        return info

    def _pop(self) -> WorkloadInfo | None:
        if self.sticky is not None and self.sticky in self._in_heap:
            return self._in_heap.pop(self.sticky)[1]
        top = _live_top(self._heap, self._in_heap, self._parked_seq)
        if top is None:
            return None
        heapq.heappop(self._heap)
        return self._in_heap.pop(top[-1])[1]

    def _pop_by_usage(self) -> WorkloadInfo | None:
        """Kueue's queueOrderingFunc: the less used LocalQueue first, then the
        sticky preemptor, then priority and time. A LocalQueue's workloads
        share its usage, so each LocalQueue has its own heap and the head is
        the best of their heads, by the usage read now (Kueue's comparator
        reads the ledger live and re-heapifies when usage moves: at a pop while
        a penalty is pending, after a sampling tick, on a weight change)."""
        assert self.lq_usage is not None
        sticky = self._in_heap.get(self.sticky) if self.sticky is not None else None
        sticky_lq = lq_key(sticky[1]) if sticky is not None else None
        best: tuple[float, int, _Entry] | None = None
        best_lq = ""
        for lq in list(self._lq_heaps):
            heap = self._lq_heaps[lq]
            top = _live_top(heap, self._in_heap, self._parked_seq)
            if top is None:
                del self._lq_heaps[lq]
                continue
            rank = 1
            if sticky is not None and lq == sticky_lq:
                top, rank = self._key(sticky[1], sticky[0]), 0
            usage = self.lq_usage(lq)
            # Go's cmp.Compare puts NaN before every number.
            cand = (-math.inf if math.isnan(usage) else usage, rank, top)
            if best is None or cand < best:
                best, best_lq = cand, lq
        if best is None:
            return None
        if best[1] == 1:
            heapq.heappop(self._lq_heaps[best_lq])
        return self._in_heap.pop(best[2][-1])[1]

    def has(self, key: str) -> bool:
        return key in self._in_heap or key in self.inadmissible or key in self.inflight

    def pending_count(self) -> int:
        return len(self._in_heap) + len(self.inadmissible)

    # -- Kueue's PushOrUpdate: a new or changed workload enters the queue
    def push_or_update(self, info: WorkloadInfo, now: datetime) -> None:
        key = info.key
        if key in self.inflight:
            self.inflight[key] = info
            return
        old = self.inadmissible.get(key)
        if old is not None:
            if _same_for_queueing(old, info):
                self.inadmissible[key] = info
                return
            del self.inadmissible[key]
        if self.get_active(key) is None and not backoff_expired(info, now):
            self.inadmissible[key] = info
            return
        if (
            self._parked_shapes
            and self.strategy == "BestEffortFIFO"
            and self.get_active(key) is None
            and info.scheduling_hash in self._parked_shapes
        ):
            self.inadmissible[key] = info  # its shape already failed since the last wake
            return
        self.remove_active(key)
        self.push_active(info)

    def delete(self, key: str) -> None:
        self.inadmissible.pop(key, None)
        self._parked_seq.pop(key, None)
        self.remove_active(key)
        self.inflight.pop(key, None)
        if self.preemptor == key:
            self.preemptor = None
            self.sticky = None

    # -- after a cycle: Kueue's RequeueIfNotPresent
    def requeue(
        self, info: WorkloadInfo, reason: str, now: datetime, pending_flavors: bool
    ) -> bool:
        if self.strategy == "StrictFIFO":
            immediate = reason != NAMESPACE_MISMATCH
        else:
            immediate = reason in _IMMEDIATE_BEST_EFFORT
        key = info.key
        if reason == PENDING_PREEMPTION:
            self.preemptor = key
            self.sticky = key if self.strategy == "BestEffortFIFO" else None
        self.inflight.pop(key, None)
        if backoff_expired(info, now) and (
            immediate or self.queue_inadmissible_cycle >= self.pop_cycle or pending_flavors
        ):
            self.inadmissible.pop(key, None)
            if self.get_active(key) is None:
                self.push_active(info)
                return True
            return False
        if key in self.inadmissible or self.get_active(key) is not None:
            return False
        self.inadmissible[key] = info
        if (
            self.equivalence_hashing
            and self.strategy == "BestEffortFIFO"
            and reason in (NO_FIT, PREEMPTION_NO_CANDIDATES)
        ):
            self._park_shape(info.scheduling_hash)
        return True

    def _park_shape(self, shape: bytes) -> None:
        """Kueue's handleInadmissibleHash: park the active workloads of this shape."""
        self._parked_shapes.add(shape)
        parked = [k for k, (_, o) in self._in_heap.items() if o.scheduling_hash == shape]
        for k in parked:
            e = self._in_heap.pop(k)  # its heap entry goes stale until a wake
            self.inadmissible[k] = e[1]
            if e[1].uid:
                self._parked_seq[k] = e

    def requeue_inadmissible(self, now: datetime, namespace_matches: Callable[[str], bool]) -> None:
        """Kueue's queueInadmissibleWorkloads: wake the parked workloads.

        Carried out lazily (flush_wake). Exact: between a wake and the next
        look, a workload requeued is made active anyway (this wake's cycle
        mark), and repeated wakes move what the last one would, so only the
        last wake's time and matcher count."""
        self.queue_inadmissible_cycle = self.pop_cycle
        self._parked_shapes.clear()  # woken workloads are judged afresh
        if self.inadmissible:
            self._wake = (now, namespace_matches)

    def flush_wake(self) -> None:
        if self._wake is None:
            return
        now, namespace_matches = self._wake
        self._wake = None
        matches: dict[str, bool] = {}  # per namespace: the selector is the same for all
        inadmissible, parked, in_heap = self.inadmissible, self._parked_seq, self._in_heap
        for key, info in list(inadmissible.items()):
            wl = info.obj
            ns = wl.metadata.namespace
            ok = matches.get(ns)
            if ok is None:
                ok = matches[ns] = namespace_matches(ns)
            if not ok:
                continue
            if not backoff_expired(info, now):
                continue
            del inadmissible[key]
            e = parked.pop(key, None)
            if e is not None and e[1] is info:
                in_heap[key] = e  # its entry is still in the heap
            else:
                self.push_active(info)


def lq_key(info: WorkloadInfo) -> str:
    """The workload's LocalQueue, "namespace/name"."""
    return f"{info.namespace}/{info.queue_name}"


def _live_top(
    heap: list[_Entry],
    live: dict[str, tuple[int, WorkloadInfo]],
    parked: dict[str, tuple[int, WorkloadInfo]],
) -> _Entry | None:
    """The heap's first entry that is still queued, dropping stale ones (and
    forgetting a parked workload's entry once it is dropped)."""
    while heap:
        top = heap[0]
        seq, key = top[3], top[4]
        e = live.get(key)
        if e is not None and e[0] == seq:
            return top
        heapq.heappop(heap)
        p = parked.get(key)
        if p is not None and p[0] == seq:
            del parked[key]
    return None


def _same_for_queueing(old: WorkloadInfo, new: WorkloadInfo) -> bool:
    """Whether an update leaves a parked workload parked (Kueue's PushOrUpdate)."""
    # Kueue compares the spec after LimitRange/RuntimeClass adjustment; the
    # requests computed from it stand for that here.
    if [(p.count, p.requests) for p in old.podsets] != [(p.count, p.requests) for p in new.podsets]:
        return False
    if old.signature != new.signature or old.priority != new.priority:
        return False
    return old.obj is new.obj or old.obj.spec == new.obj.spec


@dataclass
class LocalQueueEntry:
    namespace: str
    name: str
    cluster_queue: str
    stopped: bool = False
    items: dict[str, WorkloadInfo] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"
