"""The part of a preemption search both strategies share: Kueue's
CandidatesOrdering, the cohorts' queues in name order, and the fit test that
takes victims out and puts back those not needed."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import cmp_to_key
from typing import TypeVar

from kuota.quota.tree import FR, Cohort, Usage, borrowing_with, cq_available
from kuota.quota.workload import WorkloadInfo
from kuota.scheduler.cache import ClusterQueueState, Snapshot
from kuota.scheduler.preemption.targets import Target
from kuota.scheduler.tas.assign import TASAssigner

T = TypeVar("T")
# CandidatesOrdering without admission fair sharing: evicted first, other
# ClusterQueues first, lower priority, more recently reserved, UID.
OrderKey = tuple[int, int, int, float, str]


class CandidateSearch:
    """What both searches share: the candidates' order, the cohort tree's
    children sorted once per cycle, and fitting with victims taken out."""

    def __init__(
        self,
        snap: Snapshot,
        *,
        fair_sharing: bool,
        strategies: tuple[str, ...],
        eviction_ts: int,
        now: datetime,
        within_nominal_gate: bool = True,
        lq_usage: Callable[[WorkloadInfo], float | None] | None = None,
    ) -> None:
        self.snap = snap
        self.fair = fair_sharing
        self.strategies = strategies or ("LessThanOrEqualToFinalShare", "LessThanInitialShare")
        self.eviction_ts = eviction_ts
        self.now = now
        self.within_nominal_gate = within_nominal_gate
        # Admission fair sharing: a quota holder's LocalQueue usage (None outside
        # usage-based ClusterQueues); None when the feature is off.
        self.lq_usage = lq_usage
        self._cq_lists: dict[int, list[ClusterQueueState]] = {}
        self._cohort_lists: dict[int, list[Cohort]] = {}
        self._stamps: dict[datetime, float] = {}  # see _order_key
        # The last simulation's question and targets (see simulate), and
        # whether the last search met candidates its order could not tell apart.
        self._memo: tuple[WorkloadInfo, ClusterQueueState, FR, int, list[Target]] | None = None
        self._ties = False
        # The preemptor's topology requests, during a TAS-aware search.
        self._tas: TASAssigner | None = None

    # ------------------------------------------------------------ ordering
    def _order_key(self, cq_name: str) -> Callable[[WorkloadInfo], OrderKey]:
        now = self.now
        # The candidates of a cycle were reserved at a few instants (one per
        # cycle that admitted them, each condition sharing its cycle's
        # datetime): datetime.timestamp() is worked out once per instant.
        stamps = self._stamps

        def key(w: WorkloadInfo) -> OrderKey:
            # is_evicted and quota_reservation_time in one walk of the
            # conditions (the first of each type, as find_condition): every
            # holder of the cohort may be a candidate.
            obj = w.obj
            evicted = 1
            reserved = now
            st = obj.status
            if st is not None and st.conditions:
                seen_evicted = seen_reserved = False
                for c in st.conditions:
                    t = c.type
                    if t == "Evicted" and not seen_evicted:
                        seen_evicted = True
                        if c.status == "True":
                            evicted = 0
                    elif t == "QuotaReserved" and not seen_reserved:
                        seen_reserved = True
                        if c.status == "True" and c.last_transition_time is not None:
                            reserved = c.last_transition_time
            ts = stamps.get(reserved)
            if ts is None:
                ts = stamps[reserved] = -reserved.timestamp()
            return (
                evicted,
                1 if w.cluster_queue == cq_name else 0,
                w.priority,
                ts,
                obj.metadata.uid,
            )

        return key

    def _sort(
        self,
        items: list[T],
        key: Callable[[WorkloadInfo], OrderKey],
        workload: Callable[[T], WorkloadInfo],
    ) -> None:
        """Kueue's CandidatesOrdering. With admission fair sharing, two
        candidates of one ClusterQueue from different LocalQueues go by usage,
        the more used first, right after the other-ClusterQueues-first rule."""
        usage = self.lq_usage
        if usage is None:
            items.sort(key=lambda e: key(workload(e)))
            return

        def compare(x: T, y: T) -> int:
            a, b = workload(x), workload(y)
            ka, kb = key(a), key(b)
            if ka[:2] != kb[:2]:
                return -1 if ka[:2] < kb[:2] else 1
            if a.cluster_queue == b.cluster_queue and a.queue_name != b.queue_name:
                ua, ub = usage(a), usage(b)
                if ua is not None and ub is not None and ua != ub:
                    return -1 if ua > ub else 1
            return (ka > kb) - (ka < kb)

        items.sort(key=cmp_to_key(compare))

    def _active_cqs(self, cohort: Cohort) -> list[ClusterQueueState]:
        # A preemptor lives for one cycle, in which the tree's shape and the
        # queues' activity stay put: sort each cohort's children once.
        out = self._cq_lists.get(id(cohort))
        if out is None:
            out = []
            for name in sorted(cohort.child_cqs):
                st = self.snap.cqs.get(name)
                if st is not None and st.active:
                    out.append(st)
            self._cq_lists[id(cohort)] = out
        return out

    def _child_cohorts(self, cohort: Cohort) -> list[Cohort]:
        out = self._cohort_lists.get(id(cohort))
        if out is None:
            out = [cohort.child_cohorts[n] for n in sorted(cohort.child_cohorts)]
            self._cohort_lists[id(cohort)] = out
        return out

    def _subtree_cqs(self, cohort: Cohort) -> list[ClusterQueueState]:
        out = list(self._active_cqs(cohort))  # the cached list stays as it is
        for c in self._child_cohorts(cohort):
            out.extend(self._subtree_cqs(c))
        return out

    # ------------------------------------------------------------ fitting
    def _fits(self, cq: ClusterQueueState, usage: Usage, allow_borrowing: bool) -> bool:
        node = cq.node
        for fr, v in usage.items():
            if not allow_borrowing and borrowing_with(node, fr, v):
                return False
            if v > cq_available(node, fr):
                return False
        return self._tas is None or self._tas.fits()

    def _fill_back(
        self, cq: ClusterQueueState, usage: Usage, targets: list[Target], allow_borrowing: bool
    ) -> list[Target]:
        for i in range(len(targets) - 2, -1, -1):
            self.snap.put(targets[i].info)
            if self._fits(cq, usage, allow_borrowing):
                targets[i] = targets[-1]
                targets.pop()
            else:
                self.snap.take(targets[i].info)
        return targets

    def _restore(self, targets: list[Target]) -> None:
        for t in targets:
            self.snap.put(t.info)
