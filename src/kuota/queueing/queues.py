"""Pending workloads: one queue per ClusterQueue, fed through LocalQueues.

Each ClusterQueue keeps an active heap (the workloads that compete for the
next cycle) and an inadmissible set (parked until an event that can change
their fate). Ordering, requeueing and wake-ups follow Kueue's
pkg/cache/queue (cluster_queue.go, manager.go, inadmissible_workloads.go).
Time is passed in; nothing here reads a clock.
"""

from __future__ import annotations

import heapq
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from kuota.api.conditions import condition_false
from kuota.quota.workload import WorkloadInfo

# Bound once (Final: a C static when compiled, not a module-dict lookup per call).
heappop: Final = heapq.heappop
heappush: Final = heapq.heappush
heapreplace: Final = heapq.heapreplace

# Requeue reasons (Kueue's RequeueReason).
FAILED_AFTER_NOMINATION: Final = "FailedAfterNomination"
NAMESPACE_MISMATCH: Final = "NamespaceMismatch"
GENERIC: Final = ""
PREEMPTION_GATED: Final = "PreemptionGated"
PENDING_PREEMPTION: Final = "PendingPreemption"
PENDING_MIGRATION: Final = "PendingMigration"
PREEMPTION_FAILED: Final = "PreemptionFailed"
NO_FIT: Final = "NoFit"
PREEMPTION_NO_CANDIDATES: Final = "PreemptionNoCandidates"

_IMMEDIATE_BEST_EFFORT: Final = frozenset(
    (FAILED_AFTER_NOMINATION, PENDING_PREEMPTION, PENDING_MIGRATION, PREEMPTION_FAILED)
)

# A heap entry: (-priority, queue-order timestamp, UID, push sequence, key).
# Typed as a tuple of any length: compiled (mypyc), a fixed-length tuple is
# kept unboxed and boxed again at each store, so the group's heap, its record
# and the partition's heap would each hold a copy of every entry.
_Entry = tuple[Any, ...]


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


class QueueMarks:
    """The ClusterQueues worth a look, shared by the queues of one manager:
    ``ready``, those that may have a head (something active, or a wake not
    yet carried out), and ``parked``, those that may hold parked workloads.
    A queue adds its name when it becomes so; the manager drops the names
    it finds wrong. With a hundred queues, a cycle then visits the few that
    can give a head, and a wake reaches only the queues it can change."""

    def __init__(self) -> None:
        self.ready: set[str] = set()
        self.parked: set[str] = set()


class _Group:
    """The queued workloads of one LocalQueue that share one scheduling shape.

    Kueue parks ("bulk-moves to inadmissible") every active workload of a
    shape when one of them does not fit, and wakes all parked workloads at
    each quota release in the cohort. Kept per shape, both are one flag flip
    on a group instead of a move of each workload; the group's heap keeps its
    entries (and their places in the order) while it is parked.
    """

    __slots__ = (
        "dead",
        "gen",
        "heap",
        "live",
        "lq",
        "namespace",
        "parked",
        "rec",
        "recheck",
        "shape",
    )

    def __init__(self, lq: str, namespace: str, shape: bytes) -> None:
        self.lq = lq
        self.namespace = namespace
        self.shape = shape
        self.heap: list[_Entry] = []
        self.live = 0  # workloads queued in it
        self.parked = False
        # The partition heap holds (entry, gen, group) records; a record
        # counts while gen is the group's and entry is its ``rec``, which is
        # never after the group's first live entry.
        self.gen = 0
        self.rec: _Entry | None = None
        # Holds a workload whose backoff had not expired when it was queued:
        # a wake must then check each one (Kueue checks every parked one).
        self.recheck = False
        self.dead = False


class ClusterQueueQueue:
    """The pending workloads of one ClusterQueue.

    Queued workloads live in groups (one per LocalQueue and scheduling shape,
    see ``_Group``) whose heaps feed one heap of group heads per partition
    (the whole queue, or each LocalQueue under admission fair sharing). A
    workload is active when queued in a group that is not parked, and
    inadmissible when parked with its group or alone (``inadmissible``).
    """

    def __init__(
        self,
        name: str,
        strategy: str = "BestEffortFIFO",
        active: bool = True,
        eviction_timestamp: int = 1,  # ORDER_EVICTION_TS
        lq_usage: Callable[[str], float] | None = None,
        equivalence_hashing: bool = True,
        marks: QueueMarks | None = None,
    ) -> None:
        self.name = name
        self._marks = marks if marks is not None else QueueMarks()
        self.active = active
        self.eviction_timestamp = eviction_timestamp  # waitForPodsReady requeuing timestamp
        # Admission fair sharing: the usage of a LocalQueue ("namespace/name"),
        # read at every pop. Kueue fixes the ordering when it creates the queue.
        self.lq_usage = lq_usage
        self.equivalence_hashing = equivalence_hashing
        self._strategy = strategy
        self._by_hash = equivalence_hashing and strategy == "BestEffortFIFO"
        # key -> (push sequence, info, group) of every workload in a group.
        self._queued: dict[str, tuple[int, WorkloadInfo, _Group]] = {}
        self._n_active = 0  # of those, the ones in groups not parked
        self._groups: dict[tuple[str, bytes], _Group] = {}  # where pushes go
        self._by_shape: dict[bytes, list[_Group]] = {}
        self._parked_groups: dict[int, _Group] = {}
        self._tops: dict[str, list[tuple[_Entry, int, _Group]]] = {}
        # Workloads parked one by one (not with a group).
        self.inadmissible: dict[str, WorkloadInfo] = {}
        self.inflight: dict[str, WorkloadInfo] = {}
        self.sticky: str | None = None  # the preemptor that stays at the head (BestEffortFIFO)
        self.preemptor: str | None = None
        # Pops of this queue (Kueue pops every active queue each cycle, an
        # empty pop too). A manager skips queues with nothing to pop and
        # counts their pops when it next uses them (QueueManager._cq).
        self.pop_cycle = 0
        self.pops_seen = 0  # the manager's cycle count pop_cycle includes
        self.queue_inadmissible_cycle = -1
        self.tree_wake = 0  # the last tree wake (the manager's epoch) carried out here
        self._seq = 0  # (an int, not itertools.count: next() is a builtins lookup compiled)
        # A wake not yet carried out: (its time, the namespace matcher). Wakes
        # come with every quota release in a cohort; carrying one out waits
        # for the next look at the queue, which sees the same result.
        self._wake: tuple[datetime, Callable[[str], bool]] | None = None
        # Kueue's SchedulingEquivalenceHashing (BestEffortFIFO): the shapes
        # parked since the last wake; newcomers of these shapes park at once.
        # Each with the QuotaReserved reason of the workload that failed
        # (Kueue's hashToBulkMoveReason).
        self._parked_shapes: dict[bytes, str] = {}

    @property
    def strategy(self) -> str:
        return self._strategy

    @strategy.setter
    def strategy(self, value: str) -> None:
        self._strategy = value
        by_hash = self.equivalence_hashing and value == "BestEffortFIFO"
        if by_hash != self._by_hash:
            self._by_hash = by_hash
            self._regroup()

    def _regroup(self) -> None:
        """Groups split by shape only under BestEffortFIFO: file every queued
        workload again when the strategy changes that."""
        queued = sorted(self._queued.values(), key=lambda e: e[0])
        self._queued, self._n_active = {}, 0
        self._groups, self._by_shape, self._parked_groups, self._tops = {}, {}, {}, {}
        for _, info, g in queued:
            if g.parked:
                self._park_alone(info.key, info)
            else:
                self._push(info, self._group_for(info), not g.recheck)

    # -- groups
    def _group_for(self, info: WorkloadInfo) -> _Group:
        lq = lq_key(info)
        shape = info.scheduling_hash if self._by_hash else b""
        g = self._groups.get((lq, shape))
        if g is None:
            g = self._groups[(lq, shape)] = _Group(lq, info.namespace, shape)
            self._by_shape.setdefault(shape, []).append(g)
        return g

    def _entry(self, info: WorkloadInfo, seq: int) -> _Entry:
        return (*info.order_key(self.eviction_timestamp), seq, info.key)

    def _push(self, info: WorkloadInfo, g: _Group, expired: bool) -> None:
        seq = self._seq
        self._seq = seq + 1
        entry = self._entry(info, seq)
        heappush(g.heap, entry)
        self._queued[info.key] = (seq, info, g)
        g.live += 1
        if not expired:
            g.recheck = True
        if g.parked:
            return
        self._n_active += 1
        self._marks.ready.add(self.name)
        if g.rec is None or entry < g.rec:
            g.rec = entry
            heappush(self._tops.setdefault(self._partition(g), []), (entry, g.gen, g))

    def _partition(self, g: _Group) -> str:
        return g.lq if self.lq_usage is not None else ""

    def _unqueue(self, key: str) -> WorkloadInfo | None:
        """Take a workload out of its group (its heap entry goes stale)."""
        e = self._queued.pop(key, None)
        if e is None:
            return None
        g = e[2]
        g.live -= 1
        if not g.parked:
            self._n_active -= 1
        if g.live == 0:
            self._drop(g)
        return e[1]

    def _drop(self, g: _Group) -> None:
        g.dead = True
        k = (g.lq, g.shape)
        if self._groups.get(k) is g:
            del self._groups[k]
        same = self._by_shape[g.shape]
        same.remove(g)
        if not same:
            del self._by_shape[g.shape]
        self._parked_groups.pop(id(g), None)

    def _park_alone(self, key: str, info: WorkloadInfo) -> None:
        """Park one workload (not with its group)."""
        self.inadmissible[key] = info
        self._marks.parked.add(self.name)

    def _park(self, g: _Group) -> None:
        self._marks.parked.add(self.name)
        g.parked = True
        g.gen += 1
        g.rec = None
        self._n_active -= g.live
        self._parked_groups[id(g)] = g
        k = (g.lq, g.shape)
        if self._groups.get(k) is g:
            del self._groups[k]  # pushes that must be active start a new group

    def _unpark(self, g: _Group) -> None:
        g.parked = False
        self._n_active += g.live
        self._marks.ready.add(self.name)
        del self._parked_groups[id(g)]
        self._groups.setdefault((g.lq, g.shape), g)
        self._rearm(g)

    def _rearm(self, g: _Group) -> None:
        """Record the group's first live entry in its partition's heap."""
        top = _live_top(g.heap, self._queued)
        g.rec = top
        if top is not None:
            heappush(self._tops.setdefault(self._partition(g), []), (top, g.gen, g))

    def _peek(self, tops: list[tuple[_Entry, int, _Group]]) -> tuple[_Entry, _Group] | None:
        """The partition's first active entry, dropping records gone stale."""
        queued = self._queued
        while tops:
            entry, gen, g = tops[0]
            # Equality, not identity: compiled (mypyc), a tuple is boxed afresh
            # at each read, so the same entry need not be the same object.
            if g.dead or gen != g.gen or g.rec != entry:
                heappop(tops)
                continue
            e = queued.get(entry[4])
            if e is not None and e[0] == entry[3]:
                return entry, g
            # Its first entry left the queue: the record moves to the next.
            top = _live_top(g.heap, queued)
            g.rec = top
            if top is None:
                heappop(tops)
            else:
                heapreplace(tops, (top, g.gen, g))
        return None

    def _take(
        self, tops: list[tuple[_Entry, int, _Group]], entry: _Entry, g: _Group
    ) -> WorkloadInfo:
        heappop(tops)
        _live_top(g.heap, self._queued)  # drops stale entries: ``entry`` is first
        heappop(g.heap)
        info = self._unqueue(entry[4])
        assert info is not None
        if not g.dead:
            self._rearm(g)
        return info

    # -- the active workloads
    def push_active(self, info: WorkloadInfo, now: datetime | None = None) -> None:
        """Queue a workload as active; ``now`` tells whether its backoff is over
        (without it, a wake checks again)."""
        g = self._group_for(info)
        self._push(info, g, now is not None and backoff_expired(info, now))

    def has_active(self) -> bool:
        """Is anything waiting to be a head (after any pending wake)?"""
        if self._wake is not None:
            self.flush_wake()
        return self._n_active > 0

    def get_active(self, key: str) -> WorkloadInfo | None:
        e = self._queued.get(key)
        return e[1] if e is not None and not e[2].parked else None

    def is_inadmissible(self, key: str) -> bool:
        if key in self.inadmissible:
            return True
        e = self._queued.get(key)
        return e is not None and e[2].parked

    def has_inadmissible(self) -> bool:
        return bool(self.inadmissible) or len(self._queued) > self._n_active

    def _drop_inadmissible(self, key: str) -> None:
        if self.inadmissible.pop(key, None) is None:
            e = self._queued.get(key)
            if e is not None and e[2].parked:
                self._unqueue(key)

    def pop(self) -> WorkloadInfo | None:
        self.pop_cycle += 1  # an empty pop counts too, as Kueue's Pop
        if self._wake is None and self._n_active == 0:
            return None  # nothing active (every queue is popped each cycle)
        self.flush_wake()
        info = self._pop_by_usage() if self.lq_usage is not None else self._pop()
        if info is not None:
            self.inflight[info.key] = info
        return info

    def _pop(self) -> WorkloadInfo | None:
        if self.sticky is not None and self.get_active(self.sticky) is not None:
            return self._unqueue(self.sticky)
        tops = self._tops.get("")
        if not tops:
            return None
        top = self._peek(tops)
        if top is None:
            return None
        # (Unpacked by hand: compiled, f(*top) is a generic call through a tuple.)
        entry, g = top
        return self._take(tops, entry, g)

    def _pop_by_usage(self) -> WorkloadInfo | None:
        """Kueue's queueOrderingFunc: the less used LocalQueue first, then the
        sticky preemptor, then priority and time. A LocalQueue's workloads
        share its usage, so each LocalQueue has its own partition and the head
        is the best of their heads, by the usage read now (Kueue's comparator
        reads the ledger live and re-heapifies when usage moves: at a pop while
        a penalty is pending, after a sampling tick, on a weight change)."""
        assert self.lq_usage is not None
        sticky = self.get_active(self.sticky) if self.sticky is not None else None
        sticky_lq = lq_key(sticky) if sticky is not None else None
        best: tuple[float, int, _Entry] | None = None
        best_lq = ""
        best_top: tuple[_Entry, _Group] | None = None
        for lq in list(self._tops):
            tops = self._tops[lq]
            top = self._peek(tops)
            if top is None:
                del self._tops[lq]
                continue
            rank, first = 1, top[0]
            if sticky is not None and lq == sticky_lq:
                rank = 0
                first = self._entry_of(sticky)
            usage = self.lq_usage(lq)
            # Go's cmp.Compare puts NaN before every number.
            cand = (-math.inf if math.isnan(usage) else usage, rank, first)
            if best is None or cand < best:
                best, best_lq, best_top = cand, lq, top
        if best is None or best_top is None:
            return None
        if best[1] == 0:
            return self._unqueue(best[2][-1])
        entry, g = best_top
        return self._take(self._tops[best_lq], entry, g)

    def _entry_of(self, info: WorkloadInfo) -> _Entry:
        return self._entry(info, self._queued[info.key][0])

    def has(self, key: str) -> bool:
        return key in self._queued or key in self.inadmissible or key in self.inflight

    def pending_count(self) -> int:
        return len(self._queued) + len(self.inadmissible)

    # -- Kueue's PushOrUpdate: a new or changed workload enters the queue
    def push_or_update(self, info: WorkloadInfo, now: datetime) -> None:
        key = info.key
        if key in self.inflight:
            self.inflight[key] = info
            return
        alone = key in self.inadmissible
        old = self.inadmissible.get(key)
        if old is None:
            e = self._queued.get(key)
            if e is not None and e[2].parked:
                old = e[1]
        if old is not None:
            if _same_for_queueing(old, info):
                if not alone:
                    self._unqueue(key)  # out of its parked group
                self._park_alone(key, info)  # parked it stays, alone (in its place)
                return
            self._drop_inadmissible(key)
        active = self.get_active(key) is not None
        expired = backoff_expired(info, now)
        if not active and not expired:
            self._park_alone(key, info)
            return
        if (
            not active
            and self._parked_shapes
            and self._by_hash
            and info.scheduling_hash in self._parked_shapes
        ):
            self._park_alone(key, info)  # its shape already failed since the last wake
            return
        if active:
            self._unqueue(key)
        self._push(info, self._group_for(info), expired)

    def delete(self, key: str) -> None:
        self.inadmissible.pop(key, None)
        self._unqueue(key)
        self.inflight.pop(key, None)
        if self.preemptor == key:
            self.preemptor = None
            self.sticky = None

    # -- after a cycle: Kueue's RequeueIfNotPresent
    def requeue(
        self,
        info: WorkloadInfo,
        reason: str,
        now: datetime,
        pending_flavors: bool,
        qr_reason: str = "",
    ) -> bool:
        if self.strategy == "StrictFIFO":
            immediate = reason != NAMESPACE_MISMATCH
        else:
            immediate = reason in _IMMEDIATE_BEST_EFFORT
        key = info.key
        if reason in (PENDING_PREEMPTION, PENDING_MIGRATION):
            self.preemptor = key
            self.sticky = key if self.strategy == "BestEffortFIFO" else None
        self.inflight.pop(key, None)
        if backoff_expired(info, now) and (
            immediate or self.queue_inadmissible_cycle >= self.pop_cycle or pending_flavors
        ):
            self._drop_inadmissible(key)
            if self.get_active(key) is None:
                self._push(info, self._group_for(info), True)
                return True
            return False
        if self.is_inadmissible(key) or self.get_active(key) is not None:
            return False
        self._park_alone(key, info)
        if self._by_hash and reason in (NO_FIT, PREEMPTION_NO_CANDIDATES):
            self._park_shape(info.scheduling_hash, qr_reason or "PendingEvaluation")
        return True

    def no_fit_reason(self, key: str) -> str | None:
        """Kueue's GetNoFitReason: for a parked workload, the reason its shape
        was parked with."""
        info = self.inadmissible.get(key)
        return None if info is None else self._parked_shapes.get(info.scheduling_hash)

    def _park_shape(self, shape: bytes, reason: str) -> None:
        """Kueue's handleInadmissibleHash: park the active workloads of this shape."""
        self._parked_shapes[shape] = reason
        for g in list(self._by_shape.get(shape, ())):
            if not g.parked:
                self._park(g)

    def requeue_inadmissible(
        self,
        now: datetime,
        namespace_matches: Callable[[str], bool],
        pop_cycle: int = -1,
    ) -> None:
        """Kueue's queueInadmissibleWorkloads: wake the parked workloads.

        Carried out lazily (flush_wake). Exact: between a wake and the next
        look, a workload requeued is made active anyway (this wake's cycle
        mark), and repeated wakes move what the last one would, so only the
        last wake's time and matcher count. ``pop_cycle``: the queue's pops
        when the wake happened, for a wake carried out later (else now's)."""
        self.queue_inadmissible_cycle = pop_cycle if pop_cycle >= 0 else self.pop_cycle
        self._parked_shapes.clear()  # woken workloads are judged afresh
        if self.has_inadmissible():
            self._wake = (now, namespace_matches)
            self._marks.ready.add(self.name)

    def may_have_head(self) -> bool:
        """Could a pop give a workload (without carrying out the wake)?"""
        return self._n_active > 0 or self._wake is not None

    def flush_wake(self) -> None:
        if self._wake is None:
            return
        now, namespace_matches = self._wake
        self._wake = None
        matches: dict[str, bool] = {}  # per namespace: the selector is the same for all

        def ok(ns: str) -> bool:
            m = matches.get(ns)
            if m is None:
                m = matches[ns] = namespace_matches(ns)
            return m

        for g in list(self._parked_groups.values()):
            if not ok(g.namespace):
                continue
            if g.recheck:
                g.recheck = False
                # The group's live entries (one per member), in push order.
                queued = self._queued
                members = sorted(
                    (e[3], e[4])
                    for e in g.heap
                    if (q := queued.get(e[4])) is not None and q[0] == e[3]
                )
                waiting = [k for _, k in members if not backoff_expired(queued[k][1], now)]
                for k in waiting:
                    info = self._unqueue(k)
                    assert info is not None
                    self._park_alone(k, info)
                if g.dead:
                    continue
            self._unpark(g)
        inadmissible = self.inadmissible
        for key, info in list(inadmissible.items()):
            if not ok(info.namespace) or not backoff_expired(info, now):
                continue
            del inadmissible[key]
            self._push(info, self._group_for(info), True)


def lq_key(info: WorkloadInfo) -> str:
    """The workload's LocalQueue, "namespace/name" (interned: the groups and
    the LocalQueue entry that keep it share one string)."""
    return sys.intern(f"{info.namespace}/{info.queue_name}")


def _live_top(
    heap: list[_Entry], queued: dict[str, tuple[int, WorkloadInfo, _Group]]
) -> _Entry | None:
    """The heap's first entry that is still queued, dropping stale ones."""
    while heap:
        top = heap[0]
        e = queued.get(top[4])
        if e is not None and e[0] == top[3]:
            return top
        heappop(heap)
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
    # "namespace/name", made once: every workload filed under it keeps it.
    key: str = field(init=False, compare=False)

    def __post_init__(self) -> None:
        self.key = sys.intern(f"{self.namespace}/{self.name}")
