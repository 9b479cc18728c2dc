"""Who yields: choosing the victims that let a workload fit.

Classic preemption (withinClusterQueue, reclaimWithinCohort,
borrowWithinCohort with its priority threshold, hierarchical reclaim) picks
Kueue's minimal set in Kueue's order; fair-sharing preemption compares
dominant resource shares with the configured strategies. Restated from
Kueue's pkg/scheduler/preemption (preemption.go, classical/, fairsharing/,
common/).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from functools import cmp_to_key
from typing import Final, TypeVar

from kuota.quota.tree import (
    DRS,
    FR,
    NEGATIVE_DRS,
    Cohort,
    Node,
    Usage,
    add_usage,
    borrowing_with,
    compare_drs,
    cq_available,
    drs,
    fits_in_quota,
    is_borrowing,
    lowest_fitting_subtree,
    remove_usage,
    within_nominal,
)
from kuota.quota.workload import (
    WorkloadInfo,
    is_evicted,
    queue_order_timestamp,
)
from kuota.scheduler.snapshot import ClusterQueueState, Snapshot

IN_CLUSTER_QUEUE: Final = "InClusterQueue"
IN_COHORT_RECLAMATION: Final = "InCohortReclamation"
IN_COHORT_FAIR_SHARING: Final = "InCohortFairSharing"
IN_COHORT_RECLAIM_WHILE_BORROWING: Final = "InCohortReclaimWhileBorrowing"

HUMAN_REASONS: Final = {
    IN_CLUSTER_QUEUE: "prioritization in the ClusterQueue",
    IN_COHORT_RECLAMATION: "reclamation within the cohort",
    IN_COHORT_FAIR_SHARING: "Fair Sharing within the cohort",
    IN_COHORT_RECLAIM_WHILE_BORROWING: "reclamation within the cohort while borrowing",
}

T = TypeVar("T")
# A classical candidate: the workload, the lowest common ancestor of its queue
# and the preemptor's (None: the same queue), its variant.
_Cand = tuple[WorkloadInfo, Cohort | None, int]
# CandidatesOrdering without admission fair sharing: evicted first, other
# ClusterQueues first, lower priority, more recently reserved, UID.
_OrderKey = tuple[int, int, int, float, str]

# Preemption possibilities the flavor assigner asks about.
NO_CANDIDATES: Final = 0
PREEMPT: Final = 1
RECLAIM: Final = 2

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


@dataclass(slots=True, init=False)
class Target:
    info: WorkloadInfo
    reason: str
    cq: ClusterQueueState

    # A hand-written __init__ (init=False): compiled (mypyc), the one dataclasses
    # generates stays interpreted, and these are made in every cycle.
    def __init__(self, info: WorkloadInfo, reason: str, cq: ClusterQueueState) -> None:
        self.info = info
        self.reason = reason
        self.cq = cq


def satisfies_policy(
    preemptor: WorkloadInfo, candidate: WorkloadInfo, policy: str, eviction_ts: int
) -> bool:
    if policy == "LowerPriority":
        return preemptor.priority > candidate.priority
    if policy == "LowerOrNewerEqualPriority":
        if preemptor.priority > candidate.priority:
            return True
        return preemptor.priority == candidate.priority and queue_order_timestamp(
            preemptor.obj, eviction_ts
        ) < queue_order_timestamp(candidate.obj, eviction_ts)
    return policy == "Any"


def cq_path(cq: ClusterQueueState) -> str:
    parts = [a.name for a in cq.node.path_to_root()]
    parts.reverse()
    return "/" + "/".join([*parts, cq.name])


class Preemptor:
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

    # ------------------------------------------------------------ ordering
    def _order_key(self, cq_name: str) -> Callable[[WorkloadInfo], _OrderKey]:
        now = self.now
        # The candidates of a cycle were reserved at a few instants (one per
        # cycle that admitted them, each condition sharing its cycle's
        # datetime): datetime.timestamp() is worked out once per instant.
        stamps = self._stamps

        def key(w: WorkloadInfo) -> _OrderKey:
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
        key: Callable[[WorkloadInfo], _OrderKey],
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

    def _sorted_split(
        self, lst: list[_Cand], key: Callable[[WorkloadInfo], _OrderKey]
    ) -> tuple[list[_Cand], list[_Cand]]:
        """Classical candidates in CandidatesOrdering, split into the evicted
        (a prefix: the order puts them first) and the others."""
        if self.lq_usage is not None:
            if len(lst) > 1:
                self._sort(lst, key, _first)
            ev = [e for e in lst if is_evicted(e[0].obj)]
            return ev, [e for e in lst if not is_evicted(e[0].obj)]
        # Each key computed once, its first field telling the evicted; the
        # position keeps the sort stable and never lets an entry be compared.
        dec = sorted([(key(e[0]), i, e) for i, e in enumerate(lst)])
        if not self._ties:
            for j in range(1, len(dec)):
                if dec[j - 1][0] == dec[j][0]:
                    self._ties = True
                    break
        return [d[2] for d in dec if d[0][0] == 0], [d[2] for d in dec if d[0][0] != 0]

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

    # ------------------------------------------------------------ entry points
    def get_targets(
        self, wl: WorkloadInfo, cq: ClusterQueueState, frs_need: frozenset[FR], usage: Usage
    ) -> list[Target]:
        m, self._memo = self._memo, None
        if m is not None and m[0] is wl and m[1] is cq:
            fr, qty = m[2], m[3]
            if frs_need == frozenset((fr,)) and usage == {fr: qty}:
                return list(m[4])
        self._ties = False
        if self.fair:
            return self._fair(wl, cq, frs_need, usage)
        return self._classical(wl, cq, frs_need, usage)

    def simulate(
        self, wl: WorkloadInfo, cq: ClusterQueueState, fr: FR, qty: int
    ) -> tuple[int, int]:
        """The preemption oracle: can preemption make room for qty of fr?

        The cycle asks get_targets the same question of the assignment this
        answer decided, right after (one flavor, one resource: the common
        case): the targets are kept for it (until forget, at the next
        assignment). The answer is the same by construction: nothing changes
        in between (the removals below are put back exactly), and a search
        that met candidates its order could not tell apart, whose outcome the
        order of the holders' dicts (which a search moves) could decide, or a
        fair-sharing or admission-fair-sharing search, is not kept."""
        targets = self.get_targets(wl, cq, frozenset((fr,)), {fr: qty})
        keep = not (self.fair or self.lq_usage is not None or self._ties)
        if not targets:
            self._memo = (wl, cq, fr, qty, targets) if keep else None
            return NO_CANDIDATES, lowest_fitting_subtree(cq.node, fr, qty)[0]
        revert = self.snap.simulate_removal(t.info for t in targets)
        borrow = lowest_fitting_subtree(cq.node, fr, qty)[0]
        revert()
        self._memo = (wl, cq, fr, qty, targets) if keep else None
        if any(t.info.cluster_queue == cq.name for t in targets):
            return PREEMPT, borrow
        return RECLAIM, borrow

    def forget(self) -> None:
        """Drop the kept simulation: the state may change from here."""
        self._memo = None

    # ------------------------------------------------------------ fitting
    def _fits(self, cq: ClusterQueueState, usage: Usage, allow_borrowing: bool) -> bool:
        node = cq.node
        for fr, v in usage.items():
            if not allow_borrowing and borrowing_with(node, fr, v):
                return False
            if v > cq_available(node, fr):
                return False
        return True

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
        # (workload, lca, variant)
        same: list[_Cand] = []
        if cq.preemption.within_cluster_queue != "Never":
            for cand in cq.workloads.values():
                v = self._classify(wl, cq, cand, frs, False)
                if v:
                    same.append((cand, None, v))
        hier: list[_Cand] = []
        prio: list[_Cand] = []
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
        if node.parent is not None and cq.preemption.reclaim_within_cohort != "Never":
            advantage, remaining = fits_in_quota(node, usage)
            previous: Cohort | None = None
            for root in node.path_to_root():
                if advantage or not borrow_only:
                    into = hier if advantage else prio
                    self._collect(wl, cq, frs, root, root, previous, advantage, into)
                fits, remaining = fits_in_quota(root, remaining)
                advantage = advantage or fits
                previous = root
        if not (same or hier or prio):
            return []  # nothing to try (the attempts below would find nothing)
        key = self._order_key(cq.name)
        split = self._sorted_split
        (he, hn), (pe, pn), (se, sn) = split(hier, key), split(prio, key), split(same, key)
        candidates = he + pe + se + hn + pn + sn

        no_other = not hier and not prio
        attempts: tuple[bool, ...]
        if no_other or borrow_only:
            attempts = (True,)
        elif bwc_forbidden and not hier:
            attempts = (False, True)
        else:
            attempts = (True, False)

        for allow_borrowing in attempts:
            targets: list[Target] = []
            for cand, lca, variant in candidates:
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
        return []

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
        wl: WorkloadInfo,
        cq: ClusterQueueState,
        frs: frozenset[FR],
        current: Cohort,
        subtree_root: Cohort,
        skip: Cohort | None,
        advantage: bool,
        out: list[_Cand],
    ) -> None:
        for child in self._child_cohorts(current):
            if child is skip or within_nominal(child, frs):
                continue
            self._collect(wl, cq, frs, child, subtree_root, skip, advantage, out)
        for ccq in self._active_cqs(current):
            if ccq is cq or within_nominal(ccq.node, frs):
                continue
            for cand in ccq.workloads.values():
                v = self._classify(wl, cq, cand, frs, advantage)
                if v:
                    out.append((cand, subtree_root, v))

    # ------------------------------------------------------------ fair sharing
    def _fair(
        self, wl: WorkloadInfo, cq: ClusterQueueState, frs: frozenset[FR], usage: Usage
    ) -> list[Target]:
        candidates: list[WorkloadInfo] = []
        pol = cq.preemption
        if pol.within_cluster_queue != "Never":
            for c in cq.workloads.values():
                if satisfies_policy(wl, c, pol.within_cluster_queue, self.eviction_ts) and (
                    c.uses_any(frs)
                ):
                    candidates.append(c)
        node = cq.node
        if node.parent is not None and pol.reclaim_within_cohort != "Never":
            root = node.root()
            assert isinstance(root, Cohort)
            for other in self._subtree_cqs(root):
                if other is cq or not any(is_borrowing(other.node, fr) for fr in frs):
                    continue
                for c in other.workloads.values():
                    if satisfies_policy(wl, c, pol.reclaim_within_cohort, self.eviction_ts) and (
                        c.uses_any(frs)
                    ):
                        candidates.append(c)
        if not candidates:
            return []
        self._sort(candidates, self._order_key(cq.name), _itself)
        add_usage(node, usage)
        fits, targets, retry = self._fs_first(wl, cq, frs, usage, candidates)
        if not fits and len(self.strategies) > 1:
            fits, targets = self._fs_second(cq, usage, retry, targets)
        remove_usage(node, usage)
        if not fits:
            self._restore(targets)
            return []
        targets = self._fill_back(cq, usage, targets, True)
        self._restore(targets)
        return targets

    def _fits_fs(self, cq: ClusterQueueState, usage: Usage) -> bool:
        remove_usage(cq.node, usage)
        ok = self._fits(cq, usage, True)
        add_usage(cq.node, usage)
        return ok

    def _fs_first(
        self,
        wl: WorkloadInfo,
        cq: ClusterQueueState,
        frs: frozenset[FR],
        usage: Usage,
        candidates: list[WorkloadInfo],
    ) -> tuple[bool, list[Target], list[WorkloadInfo]]:
        strategy = self.strategies[0]
        ordering = _TargetOrdering(self, cq, candidates)
        targets: list[Target] = []
        retry: list[WorkloadInfo] = []
        within = self.within_nominal_gate and not any(is_borrowing(cq.node, fr) for fr in frs)
        for target in ordering.iter():
            if target is cq:
                w = ordering.pop(target)
                self.snap.take(w)
                targets.append(Target(w, IN_CLUSTER_QUEUE, target))
                if self._fits_fs(cq, usage):
                    return True, targets, []
                continue
            if within:
                w = ordering.pop(target)
                self.snap.take(w)
                targets.append(Target(w, IN_COHORT_RECLAMATION, target))
                if self._fits_fs(cq, usage):
                    return True, targets, []
                continue
            new_share, old_share = ordering.shares(target)
            if new_share.share() == float("inf") and old_share.share() != float("inf"):
                while ordering.has(target):
                    retry.append(ordering.pop(target))
                continue
            while ordering.has(target):
                w = ordering.pop(target)
                target_new = ordering.share_after_removal(target, w)
                if _strategy(strategy, new_share, old_share, target_new):
                    self.snap.take(w)
                    targets.append(Target(w, IN_COHORT_FAIR_SHARING, target))
                    if self._fits_fs(cq, usage):
                        return True, targets, []
                    break
                retry.append(w)
        return False, targets, retry

    def _fs_second(
        self,
        cq: ClusterQueueState,
        usage: Usage,
        retry: list[WorkloadInfo],
        targets: list[Target],
    ) -> tuple[bool, list[Target]]:
        ordering = _TargetOrdering(self, cq, retry)
        for target in ordering.iter():
            new_share, old_share = ordering.shares(target)
            w = ordering.pop(target)
            if compare_drs(new_share, old_share) < 0:
                self.snap.take(w)
                targets.append(Target(w, IN_COHORT_FAIR_SHARING, target))
                if self._fits_fs(cq, usage):
                    return True, targets
            ordering.drop(target)
        return False, targets


def _first(e: _Cand) -> WorkloadInfo:
    return e[0]


def _itself(w: WorkloadInfo) -> WorkloadInfo:
    return w


def _strategy(name: str, preemptor_new: DRS, target_old: DRS, target_new: DRS) -> bool:
    if name == "LessThanInitialShare":
        return compare_drs(preemptor_new, target_old) < 0
    return compare_drs(preemptor_new, target_new) <= 0


class _TargetOrdering:
    """Which ClusterQueue to take the next victim from (fairsharing/ordering.go)."""

    def __init__(self, p: Preemptor, cq: ClusterQueueState, candidates: list[WorkloadInfo]) -> None:
        self.p = p
        self.cq = cq
        self.ancestors = {id(a) for a in cq.node.path_to_root()}
        self.by_cq: dict[str, list[WorkloadInfo]] = {}
        for c in candidates:
            self.by_cq.setdefault(c.cluster_queue or "", []).append(c)
        self.pruned_cqs: set[str] = set()
        self.pruned_cohorts: set[str] = set()

    def has(self, target: ClusterQueueState) -> bool:
        return bool(self.by_cq.get(target.name))

    def pop(self, target: ClusterQueueState) -> WorkloadInfo:
        return self.by_cq[target.name].pop(0)

    def drop(self, target: ClusterQueueState) -> None:
        self.pruned_cqs.add(target.name)

    def iter(self) -> Iterator[ClusterQueueState]:
        cq = self.cq
        if cq.node.parent is None:
            while cq.name not in self.pruned_cqs and self.has(cq):
                yield cq
            return
        root = cq.node.root()
        assert isinstance(root, Cohort)
        while root.name not in self.pruned_cohorts:
            t = self._next(root)
            if t is not None:
                yield t

    def _next(self, cohort: Cohort) -> ClusterQueueState | None:
        best_cq: ClusterQueueState | None = None
        best_cq_drs = NEGATIVE_DRS
        key = self.p._order_key(self.cq.name)
        for st in self.p._active_cqs(cohort):
            if st.name in self.pruned_cqs:
                continue
            d = drs(st.node)
            if (not d.borrowing and st is not self.cq) or not self.has(st):
                self.pruned_cqs.add(st.name)
                continue
            c = compare_drs(d, best_cq_drs)
            if c == 0 and best_cq is not None:
                if key(self.by_cq[st.name][0]) < key(self.by_cq[best_cq.name][0]):
                    best_cq = st
            elif c == 1:
                best_cq_drs, best_cq = d, st
        best_cohort: Cohort | None = None
        best_cohort_drs = NEGATIVE_DRS
        for child in self.p._child_cohorts(cohort):
            if child.name in self.pruned_cohorts:
                continue
            d = drs(child)
            if not d.borrowing and id(child) not in self.ancestors:
                self.pruned_cohorts.add(child.name)
            elif compare_drs(d, best_cohort_drs) >= 0:
                best_cohort_drs, best_cohort = d, child
        if best_cohort is None and best_cq is None:
            self.pruned_cohorts.add(cohort.name)
            return None
        if best_cohort is not None and compare_drs(best_cohort_drs, best_cq_drs) >= 0:
            return self._next(best_cohort)
        return best_cq

    def _lca(self, target: ClusterQueueState) -> Cohort:
        for a in target.node.path_to_root():
            if id(a) in self.ancestors:
                return a
        raise AssertionError("no common ancestor")

    @staticmethod
    def _almost(node: Node, lca: Cohort) -> Node:
        a: Node = node
        for anc in node.path_to_root():
            if anc is lca:
                return a
            a = anc
        raise AssertionError("no almost-common ancestor")

    def shares(self, target: ClusterQueueState) -> tuple[DRS, DRS]:
        lca = self._lca(target)
        return drs(self._almost(self.cq.node, lca)), drs(self._almost(target.node, lca))

    def share_after_removal(self, target: ClusterQueueState, w: WorkloadInfo) -> DRS:
        u = w.usage()
        remove_usage(target.node, u)
        lca = self._lca(target)
        d = drs(self._almost(target.node, lca))
        add_usage(target.node, u)
        return d


def preemption_message(
    preemptor: WorkloadInfo,
    reason: str,
    preemptor_cq: ClusterQueueState,
    target_cq: ClusterQueueState,
) -> str:
    job_uid = (preemptor.obj.metadata.labels or {}).get("kueue.x-k8s.io/job-uid") or "UNKNOWN"
    return (
        f"Preempted to accommodate a workload (UID: {preemptor.uid or 'UNKNOWN'}, "
        f"JobUID: {job_uid}) due to {HUMAN_REASONS.get(reason, 'UNKNOWN')}; "
        f"preemptor path: {cq_path(preemptor_cq)}; preemptee path: {cq_path(target_cq)}"
    )
