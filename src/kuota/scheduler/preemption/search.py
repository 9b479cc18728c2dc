"""The part of a preemption search both strategies share: Kueue's
CandidatesOrdering, the cohorts' queues in name order, and the fit test that
takes victims out and puts back those not needed."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from datetime import datetime
from functools import cmp_to_key
from typing import Any, TypeVar, cast

from kuota.quota.tree import FR, Cohort, Usage, borrowing_with, cq_available
from kuota.quota.workload import WorkloadInfo
from kuota.scheduler.cache import ClusterQueueState, Snapshot
from kuota.scheduler.preemption.targets import Target
from kuota.scheduler.tas.assign import TASAssigner

T = TypeVar("T")
# CandidatesOrdering without admission fair sharing: evicted first, other
# ClusterQueues first, lower priority, more recently reserved, UID.
OrderKey = tuple[int, int, int, float, str]
# The same but for the other-ClusterQueues-first field, with the holder's place
# among its queue's holders and the holder (see _holders_in_order).
BaseKey = tuple[int, int, float, str]
HolderEntry = tuple[BaseKey, int, WorkloadInfo]
# A simulation kept (Preemptor.simulate): the preemptor, its queue, the
# resource and amount, the targets, how it found none, its advantages.
Memo = tuple[WorkloadInfo, ClusterQueueState, FR, int, list[Target], int, tuple[bool, ...]]


def base_key(
    w: WorkloadInfo, now: datetime, stamps: dict[datetime, float]
) -> tuple[int, int, float, str, bool]:
    """CandidatesOrdering's fields but the queue's: (0 if evicted else 1,
    priority, minus the reservation time, UID) and whether the clock stood in
    for a missing reservation time. is_evicted and quota_reservation_time in
    one walk of the conditions (the first of each type, as find_condition).
    The candidates were reserved at a few instants (one per cycle that
    admitted them, each condition sharing its cycle's datetime): stamps
    keeps datetime.timestamp() per instant."""
    obj = w.obj
    evicted = 1
    reserved = now
    uses_now = True
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
                    uses_now = False
    ts = stamps.get(reserved)
    if ts is None:
        ts = stamps[reserved] = -reserved.timestamp()
    return (evicted, w.priority, ts, obj.metadata.uid, uses_now)


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
        # The last simulation's question and targets (see simulate), with how
        # it found none and its advantages (see _none); whether the last
        # search met candidates its order could not tell apart.
        self._memo: Memo | None = None
        self._ties = False
        # How the last search that returned no targets ended (0: not known, or
        # it found some), and the advantage it had at each level of the tree.
        self._none = 0
        self._advs: tuple[bool, ...] = ()
        # The preemptor's topology requests, during a TAS-aware search.
        self._tas: TASAssigner | None = None

    # ------------------------------------------------------------ ordering
    def _order_key(self, cq_name: str) -> Callable[[WorkloadInfo], OrderKey]:
        now = self.now
        stamps = self._stamps

        def key(w: WorkloadInfo) -> OrderKey:
            b = base_key(w, now, stamps)
            return (b[0], 1 if w.cluster_queue == cq_name else 0, b[1], b[2], b[3])

        return key

    def _holders_in_order(self, st: ClusterQueueState) -> list[HolderEntry]:
        """The queue's quota holders in CandidatesOrdering but for its
        other-ClusterQueues-first rule (constant within a search's group):
        (base key, place in the holders' dict, holder), sorted. Kept on the
        queue across cycles (a busy cohort's searches rank the same
        thousands of holders again and again): the holders that came, went
        or changed key since (ClusterQueueState.cand_log) are put in or
        taken out where they go. Built anew when there is no such list, when
        two keys are equal (the dict's order then counts), when it read the
        clock for a holder without a reservation time (at another instant)."""
        entries = st.cand_order
        if entries is not None:
            if st.cand_now is not None:
                if st.cand_now == self.now:
                    return entries
            elif not st.cand_log or self._apply_log(st, entries):
                return entries
        now = self.now
        stamps = self._stamps
        entries = []
        keys: dict[str, BaseKey] = {}
        uses_now = False
        for pos, w in enumerate(st.workloads.values()):
            b = base_key(w, now, stamps)
            if b[4]:
                uses_now = True
            k = (b[0], b[1], b[2], b[3])
            keys[w.key] = k
            entries.append((k, pos, w))
        # Keys end with the UID; the place breaks ties as the eager search's
        # enumeration of the holders does (so no holder is ever compared).
        entries.sort()
        dups = False
        for i in range(1, len(entries)):
            if entries[i - 1][0] == entries[i][0]:
                dups = True
                break
        st.cand_order, st.cand_dups, st.cand_keys = entries, dups, keys
        st.cand_now = now if uses_now else None
        st.cand_log.clear()
        return entries

    def _apply_log(self, st: ClusterQueueState, entries: list[HolderEntry]) -> bool:
        """Put the logged holders in and take them out of the kept order, in
        the order they came and went; False (the list dropped) when one
        would need the clock or tie with another."""
        keys = st.cand_keys
        now = self.now
        ok = True
        probe = cast(Any, entries)  # searched by key: (k,) sorts before (k, place, holder)
        log = st.cand_log
        n = len(log)
        skip = False
        for j in range(n):
            if skip:
                skip = False
                continue
            joined, w = log[j]
            if not joined and j + 1 < n:
                # Left and joined again at once under the same key (a holder
                # filed again, a search's victim put back): its entry takes the
                # new info where it is, as taking it out and putting it back
                # in would (keys are unique: a tie drops the list).
                back, w2 = log[j + 1]
                old = keys.get(w.key)
                if back and w2.key == w.key and old is not None:
                    b = base_key(w2, now, self._stamps)
                    k = (b[0], b[1], b[2], b[3])
                    if not b[4] and k == old:
                        i = bisect_left(probe, (old,))
                        if i < len(entries) and entries[i][2] is w:
                            entries[i] = (k, 0, w2)
                            skip = True
                            continue
            if joined:
                b = base_key(w, now, self._stamps)
                k = (b[0], b[1], b[2], b[3])
                i = bisect_left(probe, (k,))
                if b[4] or (i < len(entries) and entries[i][0] == k):
                    ok = False
                    break
                entries.insert(i, (k, 0, w))  # (the place counts only in a tie)
                keys[w.key] = k
            else:
                old = keys.pop(w.key, None)
                i = bisect_left(probe, (old,)) if old is not None else len(entries)
                if i >= len(entries) or entries[i][2] is not w:
                    ok = False
                    break
                del entries[i]
        st.cand_log.clear()
        if not ok:
            st.cand_order = None
        return ok

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
