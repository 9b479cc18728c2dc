"""The preemption oracle and search the cycle and the flavor assigner ask
(Kueue's Preemptor): fair sharing's search is in ``fairsharing``; classic
preemption's, Kueue's classical/, is here."""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Final

from kuota.quota.tree import (
    FR,
    Cohort,
    Usage,
    fits_in_quota,
    lowest_fitting_subtree,
    within_nominal,
)
from kuota.quota.workload import WorkloadInfo, is_evicted
from kuota.scheduler.cache import ClusterQueueState
from kuota.scheduler.preemption.fairsharing import fair_targets
from kuota.scheduler.preemption.search import BaseKey, CandidateSearch, HolderEntry, OrderKey
from kuota.scheduler.preemption.targets import (
    IN_CLUSTER_QUEUE,
    IN_COHORT_RECLAIM_WHILE_BORROWING,
    IN_COHORT_RECLAMATION,
    NO_CANDIDATES,
    PREEMPT,
    RECLAIM,
    Target,
    satisfies_policy,
)
from kuota.scheduler.tas.assign import TASAssigner

# A classical candidate: the workload, the lowest common ancestor of its queue
# and the preemptor's (None: the same queue), its variant.
_Cand = tuple[WorkloadInfo, Cohort | None, int]

# A queue whose holders are candidates: (queue, lca, the preemptor's advantage).
_Source = tuple[ClusterQueueState, Cohort | None, bool]

heapify: Final = heapq.heapify
heappop: Final = heapq.heappop
heapreplace: Final = heapq.heapreplace
_NO_LIMIT: Final = 1 << 62  # (priorities are int32)
# How a search that returned no targets ended (Preemptor._none): no candidate
# at all, or every attempt walked without a fit.
_NO_CANDIDATE: Final = 1
_NO_FIT: Final = 2

# Candidate variants.
_WITHIN_CQ: Final = 1
_HIERARCHICAL: Final = 2
_RECLAIM_NO_BORROW: Final = 3
_RECLAIM_WHILE_BORROW: Final = 4
_VARIANT_REASON: Final = {
    _WITHIN_CQ: IN_CLUSTER_QUEUE,
    _HIERARCHICAL: IN_COHORT_RECLAMATION,
    _RECLAIM_NO_BORROW: IN_COHORT_RECLAMATION,
    _RECLAIM_WHILE_BORROW: IN_COHORT_RECLAIM_WHILE_BORROWING,
}


class Preemptor(CandidateSearch):
    # ------------------------------------------------------------ entry points
    def get_targets(
        self,
        wl: WorkloadInfo,
        cq: ClusterQueueState,
        frs_need: frozenset[FR],
        usage: Usage,
        tas: TASAssigner | None = None,
    ) -> list[Target]:
        """The workloads to evict to make room; with ``tas``, room on the
        topology too (Kueue's workloadFits with the TAS requests)."""
        if tas is not None and tas.requests:
            self._memo = None
            self._tas = tas
            try:
                if self.fair:
                    return fair_targets(self, wl, cq, frs_need, usage)
                return self._classical(wl, cq, frs_need, usage)
            finally:
                self._tas = None
        m, self._memo = self._memo, None
        if m is not None and m[0] is wl and m[1] is cq and frs_need == frozenset((m[2],)):
            fr, qty = m[2], m[3]
            if usage == {fr: qty}:
                self._none, self._advs = m[5], m[6]
                return list(m[4])
            if (
                m[5]
                and usage.get(fr) == qty
                and (m[5] == _NO_CANDIDATE or self._advantages(cq, usage) == m[6])
            ):
                # The simulation found nothing for fr alone; the full requests
                # (fr's amount the same) find nothing either. The advantage
                # a tree level gives needs every resource to fit there
                # (fits_in_quota) and fr's remainder is the same: the queues
                # collected are the same or fewer, and whether a holder is a
                # candidate does not depend on it, so with no candidate at
                # all there is none here. With the same advantages at every
                # level, the walk is the same (the same candidates, order,
                # variants and attempts) and only its fit test is stricter
                # (every resource, fr's amount the same): it never fits.
                self._none = m[5]
                return []
        self._ties = False
        self._none = 0
        if self.fair:
            return fair_targets(self, wl, cq, frs_need, usage)
        return self._classical(wl, cq, frs_need, usage)

    def simulate(
        self, wl: WorkloadInfo, cq: ClusterQueueState, fr: FR, qty: int
    ) -> tuple[int, int]:
        """The preemption oracle: can preemption make room for qty of fr?

        The cycle asks get_targets the same question of the assignment this
        answer decided, right after (one flavor, one resource: the common
        case): the targets are kept for it (until forget, at the next
        assignment), and so is a search that found nothing (the full
        requests find nothing either: get_targets). The answer is the same
        by construction: nothing changes in between (the removals below are
        put back exactly), and a search that met candidates its order could
        not tell apart, whose outcome the order of the holders' dicts (which a
        search moves) could decide, or a fair-sharing or
        admission-fair-sharing search, is not kept."""
        targets = self.get_targets(wl, cq, frozenset((fr,)), {fr: qty})
        keep = not (self.fair or self.lq_usage is not None or self._ties)
        if not targets:
            self._memo = (wl, cq, fr, qty, targets, self._none, self._advs) if keep else None
            return NO_CANDIDATES, lowest_fitting_subtree(cq.node, fr, qty)[0]
        revert = self.snap.simulate_removal(t.info for t in targets)
        borrow = lowest_fitting_subtree(cq.node, fr, qty)[0]
        revert()
        self._memo = (wl, cq, fr, qty, targets, 0, ()) if keep else None
        if any(t.info.cluster_queue == cq.name for t in targets):
            return PREEMPT, borrow
        return RECLAIM, borrow

    def forget(self) -> None:
        """Drop the kept simulation: the state may change from here."""
        self._memo = None

    def _sorted_split(
        self, lst: list[_Cand], key: Callable[[WorkloadInfo], OrderKey]
    ) -> tuple[list[_Cand], list[_Cand]]:
        """Classical candidates in CandidatesOrdering (with admission fair
        sharing), split into the evicted (a prefix: the order puts them
        first) and the others."""
        if len(lst) > 1:
            self._sort(lst, key, _first)
        ev = [e for e in lst if is_evicted(e[0].obj)]
        return ev, [e for e in lst if not is_evicted(e[0].obj)]

    # ------------------------------------------------------------ classical
    def _classify(
        self,
        wl: WorkloadInfo,
        cq: ClusterQueueState,
        cand: WorkloadInfo,
        frs: frozenset[FR],
        advantage: bool,
    ) -> int:
        if not cand.uses_any(frs):
            return 0
        same = cand.cluster_queue == cq.name
        policy = cq.preemption.within_cluster_queue if same else cq.preemption.reclaim_within_cohort
        if not satisfies_policy(wl, cand, policy, self.eviction_ts):
            return 0
        if same:
            return _WITHIN_CQ
        if advantage:
            return _HIERARCHICAL
        bwc = cq.preemption.borrow_within_cohort
        if bwc is None or bwc.policy == "Never":
            return _RECLAIM_NO_BORROW
        if cand.priority >= wl.priority:
            return _RECLAIM_NO_BORROW
        if bwc.max_priority_threshold is not None and cand.priority > bwc.max_priority_threshold:
            return _RECLAIM_NO_BORROW
        return _RECLAIM_WHILE_BORROW

    def _classical(
        self, wl: WorkloadInfo, cq: ClusterQueueState, frs: frozenset[FR], usage: Usage
    ) -> list[Target]:
        # The queues whose holders are candidates, per group, in Kueue's
        # order of collection: (queue, lca, whether the preemptor has the
        # advantage there).
        same: list[_Source] = []
        if cq.preemption.within_cluster_queue != "Never":
            same.append((cq, None, False))
        hier: list[_Source] = []
        prio: list[_Source] = []
        bwc = cq.preemption.borrow_within_cohort
        bwc_forbidden = bwc is None or bwc.policy == "Never"
        # Without borrowWithinCohort, a queue at or over its nominal quota tries
        # with borrowing only (see attempts below), where a workload of another
        # queue that may be reclaimed only without borrowing (every one under a
        # subtree the preemptor has no advantage in) is never valid: those are
        # not collected, sorted or walked. A queue borrowing while others wait
        # would otherwise scan every holder of the cohort each time it is tried.
        borrow_only = bwc_forbidden and not self._under_nominal(cq, frs)
        node = cq.node
        advs: list[bool] = []  # the advantage at each level (see get_targets)
        if node.parent is not None and cq.preemption.reclaim_within_cohort != "Never":
            advantage, remaining = fits_in_quota(node, usage)
            previous: Cohort | None = None
            for root in node.path_to_root():
                advs.append(advantage)
                if advantage or not borrow_only:
                    into = hier if advantage else prio
                    self._collect(cq, frs, root, root, previous, advantage, into)
                fits, remaining = fits_in_quota(root, remaining)
                advantage = advantage or fits
                previous = root
        if not (same or hier or prio):
            self._none = _NO_CANDIDATE  # no queue to take from
            return []
        candidates: _InOrder
        if self.lq_usage is not None:
            # Admission fair sharing orders by LocalQueue usage too: every
            # candidate classified and sorted.
            key = self._order_key(cq.name)
            split = self._sorted_split
            eager = self._eager
            (he, hn) = split(eager(wl, cq, frs, hier), key)
            (pe, pn) = split(eager(wl, cq, frs, prio), key)
            (se, sn) = split(eager(wl, cq, frs, same), key)
            candidates = _InOrder([], he + pe + se + hn + pn + sn)
            has_hier, has_prio, has_same = bool(he or hn), bool(pe or pn), bool(se or sn)
        else:
            groups = [self._lazy(wl, cq, frs, g) for g in (hier, prio, same)]
            candidates = _InOrder(groups, [])
            has_hier, has_prio, has_same = (g.peek() is not None for g in groups)
        if not (has_same or has_hier or has_prio):
            self._none = _NO_CANDIDATE
            return []  # nothing to try (the attempts below would find nothing)

        no_other = not has_hier and not has_prio
        attempts: tuple[bool, ...]
        if no_other or borrow_only:
            attempts = (True,)
        elif bwc_forbidden and not has_hier:
            attempts = (False, True)
        else:
            attempts = (True, False)

        for allow_borrowing in attempts:
            targets: list[Target] = []
            n = 0
            while (c := candidates.at(n)) is not None:
                n += 1
                cand, lca, variant = c
                if not self._valid(cq, cand, lca, variant, frs, allow_borrowing):
                    continue
                cand_cq = self.snap.cq_of(cand)
                if cand_cq is None:
                    continue
                self.snap.take(cand)
                targets.append(Target(cand, _VARIANT_REASON[variant], cand_cq))
                if self._fits(cq, usage, allow_borrowing):
                    targets = self._fill_back(cq, usage, targets, allow_borrowing)
                    self._restore(targets)
                    return targets
            self._restore(targets)
        self._none, self._advs = _NO_FIT, tuple(advs)
        return []

    def _advantages(self, cq: ClusterQueueState, usage: Usage) -> tuple[bool, ...]:
        """The advantage at each level of the queue's tree that _classical
        would collect the candidates with for ``usage``."""
        node = cq.node
        if node.parent is None or cq.preemption.reclaim_within_cohort == "Never":
            return ()
        out: list[bool] = []
        advantage, remaining = fits_in_quota(node, usage)
        for root in node.path_to_root():
            out.append(advantage)
            fits, remaining = fits_in_quota(root, remaining)
            advantage = advantage or fits
        return tuple(out)

    def _under_nominal(self, cq: ClusterQueueState, frs: frozenset[FR]) -> bool:
        for fr in frs:
            q = cq.node.quotas.get(fr)
            if (q.nominal if q else 0) <= cq.node.usage.get(fr, 0):
                return False
        return True

    def _valid(
        self,
        cq: ClusterQueueState,
        cand: WorkloadInfo,
        lca: Cohort | None,
        variant: int,
        frs: frozenset[FR],
        allow_borrowing: bool,
    ) -> bool:
        if cand.cluster_queue == cq.name:
            return True
        if allow_borrowing and variant == _RECLAIM_NO_BORROW:
            return False
        ccq = self.snap.cq_of(cand)
        if ccq is None:
            return False
        if within_nominal(ccq.node, frs):
            return False
        for node in ccq.node.path_to_root():
            if node is lca:
                break
            if within_nominal(node, frs):
                return False
        return True

    def _collect(
        self,
        cq: ClusterQueueState,
        frs: frozenset[FR],
        current: Cohort,
        subtree_root: Cohort,
        skip: Cohort | None,
        advantage: bool,
        out: list[_Source],
    ) -> None:
        for child in self._child_cohorts(current):
            if child is skip or within_nominal(child, frs):
                continue
            self._collect(cq, frs, child, subtree_root, skip, advantage, out)
        for ccq in self._active_cqs(current):
            if ccq is cq or within_nominal(ccq.node, frs):
                continue
            out.append((ccq, subtree_root, advantage))

    def _eager(
        self, wl: WorkloadInfo, cq: ClusterQueueState, frs: frozenset[FR], sources: list[_Source]
    ) -> list[_Cand]:
        """Every candidate of the queues, in the order of collection."""
        out: list[_Cand] = []
        for ccq, lca, advantage in sources:
            for cand in ccq.workloads.values():
                v = self._classify(wl, cq, cand, frs, advantage)
                if v:
                    out.append((cand, lca, v))
        return out

    def _lazy(
        self, wl: WorkloadInfo, cq: ClusterQueueState, frs: frozenset[FR], sources: list[_Source]
    ) -> _Group:
        lists = [self._holders_in_order(src[0]) for src in sources]
        for src in sources:
            if src[0].cand_dups:
                self._ties = True
        return _Group(self, wl, cq, frs, sources, lists)


class _Group:
    """One group's candidates (hierarchical, other queues, the preemptor's
    queue) in CandidatesOrdering, as far as the walk asks: the queues' kept
    orders (search.py's _holders_in_order) merged, ties broken by the order
    of collection and then the holders' dict, as the eager enumeration does;
    each holder classified (a valid candidate, and which) as the merge
    reaches it: a search mostly takes a few of a cohort's thousands."""

    __slots__ = (
        "cq",
        "frs",
        "heap",
        "limits",
        "lists",
        "p",
        "ready",
        "ready_evicted",
        "sources",
        "wl",
    )

    def __init__(
        self,
        p: Preemptor,
        wl: WorkloadInfo,
        cq: ClusterQueueState,
        frs: frozenset[FR],
        sources: list[_Source],
        lists: list[list[HolderEntry]],
    ) -> None:
        self.p = p
        self.wl = wl
        self.cq = cq
        self.frs = frs
        self.sources = sources
        self.lists = lists
        heap: list[tuple[BaseKey, int, int, int]] = []
        for i, entries in enumerate(lists):
            if entries:
                e = entries[0]
                heap.append((e[0], i, e[1], 0))
        heapify(heap)
        self.heap = heap
        # Per queue, the lowest priority its policy toward the preemptor
        # protects for sure (_classify's satisfies_policy), if any.
        limits: list[int] = []
        for src in sources:
            pre = cq.preemption
            policy = pre.within_cluster_queue if src[0] is cq else pre.reclaim_within_cohort
            if policy == "LowerPriority":
                limits.append(wl.priority)
            elif policy == "LowerOrNewerEqualPriority":
                limits.append(wl.priority + 1)
            else:
                limits.append(_NO_LIMIT)
        self.limits = limits
        self.ready: _Cand | None = None
        self.ready_evicted = False

    def peek(self) -> _Cand | None:
        """The next valid candidate, None past the last."""
        if self.ready is not None:
            return self.ready
        heap = self.heap
        p = self.p
        limits = self.limits
        while heap:
            key, i, _pos, j = heap[0]
            if key[0] == 1 and key[1] >= limits[i]:
                # Not evicted, and from here on of a priority the policy
                # protects (the rest come in ascending priority): none of this
                # queue's holders left is a candidate.
                heappop(heap)
                continue
            entries = self.lists[i]
            cand = entries[j][2]
            if j + 1 < len(entries):
                e = entries[j + 1]
                heapreplace(heap, (e[0], i, e[1], j + 1))
            else:
                heappop(heap)
            if heap and heap[0][0] == key:
                p._ties = True  # the order could not tell these two apart
            _, lca, advantage = self.sources[i]
            v = p._classify(self.wl, self.cq, cand, self.frs, advantage)
            if v:
                c: _Cand = (cand, lca, v)
                self.ready, self.ready_evicted = c, key[0] == 0
                return c
        return None

    def take(self) -> _Cand:
        c = self.ready
        assert c is not None
        self.ready = None
        return c


class _InOrder:
    """The candidates in Kueue's order, put in order as far as asked: the
    evicted of each group (hierarchical, other queues, the preemptor's
    queue), then the rest of each group, in CandidatesOrdering."""

    def __init__(self, groups: list[_Group], done: list[_Cand]) -> None:
        self.groups = groups
        self.done = done  # those put in order so far
        self.evicted = True  # still taking the evicted (the groups' prefixes)
        self.group = 0

    def at(self, n: int) -> _Cand | None:
        """The n-th candidate, None past the last."""
        done = self.done
        while len(done) <= n:
            if not self._next():
                return None
        return done[n]

    def _next(self) -> bool:
        groups = self.groups
        while self.group < len(groups):
            g = groups[self.group]
            if g.peek() is not None and (not self.evicted or g.ready_evicted):
                self.done.append(g.take())
                return True
            self.group += 1
            if self.group == len(groups) and self.evicted:
                self.evicted, self.group = False, 0
        return False


def _first(e: _Cand) -> WorkloadInfo:
    return e[0]
