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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime

from kuota.quota.workload import (
    WorkloadInfo,
    condition_false,
    queue_order_timestamp,
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


def backoff_expired(info: WorkloadInfo, now: datetime) -> bool:
    """Kueue's backoffWaitingTimeExpired."""
    wl = info.obj
    if condition_false(wl, "Requeued"):
        return False
    rs = wl.status.requeue_state if wl.status is not None else None
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
    _heap: list[tuple[int, datetime, str, int, str]] = field(default_factory=list)
    _in_heap: dict[str, tuple[int, WorkloadInfo]] = field(default_factory=dict)
    inadmissible: dict[str, WorkloadInfo] = field(default_factory=dict)
    inflight: dict[str, WorkloadInfo] = field(default_factory=dict)
    sticky: str | None = None  # the preemptor that stays at the head (BestEffortFIFO)
    preemptor: str | None = None
    pop_cycle: int = 0
    queue_inadmissible_cycle: int = -1
    _seq: Iterator[int] = field(default_factory=itertools.count)

    # -- the active heap
    def _key(self, info: WorkloadInfo, seq: int) -> tuple[int, datetime, str, int, str]:
        ts = queue_order_timestamp(info.obj, self.eviction_timestamp)
        return (-info.priority, ts, info.uid, seq, info.key)

    def push_active(self, info: WorkloadInfo) -> None:
        seq = next(self._seq)
        self._in_heap[info.key] = (seq, info)
        heapq.heappush(self._heap, self._key(info, seq))

    def remove_active(self, key: str) -> bool:
        return self._in_heap.pop(key, None) is not None

    def get_active(self, key: str) -> WorkloadInfo | None:
        e = self._in_heap.get(key)
        return e[1] if e else None

    def pop(self) -> WorkloadInfo | None:
        self.pop_cycle += 1
        if self.sticky is not None and self.sticky in self._in_heap:
            _, info = self._in_heap.pop(self.sticky)
            self.inflight[info.key] = info
            return info
        while self._heap:
            *_, seq, key = heapq.heappop(self._heap)
            e = self._in_heap.get(key)
            if e is None or e[0] != seq:
                continue  # stale entry
            del self._in_heap[key]
            self.inflight[key] = e[1]
            return e[1]
        return None

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
        self.remove_active(key)
        self.push_active(info)

    def delete(self, key: str) -> None:
        self.inadmissible.pop(key, None)
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
        return True

    def requeue_inadmissible(self, now: datetime, namespace_matches: Callable[[str], bool]) -> int:
        """Kueue's queueInadmissibleWorkloads: wake the parked workloads."""
        self.queue_inadmissible_cycle = self.pop_cycle
        moved = 0
        for key, info in list(self.inadmissible.items()):
            if not namespace_matches(info.namespace) or not backoff_expired(info, now):
                continue
            del self.inadmissible[key]
            self.push_active(info)
            moved += 1
        return moved


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
