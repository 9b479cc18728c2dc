"""Fair-sharing preemption (Kueue's pkg/scheduler/preemption/fairsharing):
victims taken from the ClusterQueues whose dominant resource share is highest,
each allowed by the configured strategies."""

from __future__ import annotations

from collections.abc import Iterator

from kuota.quota.tree import (
    DRS,
    FR,
    NEGATIVE_DRS,
    Cohort,
    Node,
    Usage,
    add_usage,
    compare_drs,
    drs,
    is_borrowing,
    remove_usage,
)
from kuota.quota.workload import WorkloadInfo
from kuota.scheduler.cache import ClusterQueueState
from kuota.scheduler.preemption.search import CandidateSearch
from kuota.scheduler.preemption.targets import (
    IN_CLUSTER_QUEUE,
    IN_COHORT_FAIR_SHARING,
    IN_COHORT_RECLAMATION,
    Target,
    satisfies_policy,
)


def fair_targets(
    p: CandidateSearch, wl: WorkloadInfo, cq: ClusterQueueState, frs: frozenset[FR], usage: Usage
) -> list[Target]:
    candidates: list[WorkloadInfo] = []
    pol = cq.preemption
    if pol.within_cluster_queue != "Never":
        for c in cq.workloads.values():
            if satisfies_policy(wl, c, pol.within_cluster_queue, p.eviction_ts) and (
                c.uses_any(frs)
            ):
                candidates.append(c)
    node = cq.node
    if node.parent is not None and pol.reclaim_within_cohort != "Never":
        root = node.root()
        assert isinstance(root, Cohort)
        for other in p._subtree_cqs(root):
            if other is cq or not any(is_borrowing(other.node, fr) for fr in frs):
                continue
            for c in other.workloads.values():
                if satisfies_policy(wl, c, pol.reclaim_within_cohort, p.eviction_ts) and (
                    c.uses_any(frs)
                ):
                    candidates.append(c)
    if not candidates:
        return []
    p._sort(candidates, p._order_key(cq.name), _itself)
    add_usage(node, usage)
    fits, targets, retry = _fs_first(p, wl, cq, frs, usage, candidates)
    if not fits and len(p.strategies) > 1:
        fits, targets = _fs_second(p, cq, usage, retry, targets)
    remove_usage(node, usage)
    if not fits:
        p._restore(targets)
        return []
    targets = p._fill_back(cq, usage, targets, True)
    p._restore(targets)
    return targets


def _fits_fs(p: CandidateSearch, cq: ClusterQueueState, usage: Usage) -> bool:
    remove_usage(cq.node, usage)
    ok = p._fits(cq, usage, True)
    add_usage(cq.node, usage)
    return ok


def _fs_first(
    p: CandidateSearch,
    wl: WorkloadInfo,
    cq: ClusterQueueState,
    frs: frozenset[FR],
    usage: Usage,
    candidates: list[WorkloadInfo],
) -> tuple[bool, list[Target], list[WorkloadInfo]]:
    strategy = p.strategies[0]
    ordering = _TargetOrdering(p, cq, candidates)
    targets: list[Target] = []
    retry: list[WorkloadInfo] = []
    within = p.within_nominal_gate and not any(is_borrowing(cq.node, fr) for fr in frs)
    for target in ordering.iter():
        if target is cq:
            w = ordering.pop(target)
            p.snap.take(w)
            targets.append(Target(w, IN_CLUSTER_QUEUE, target))
            if _fits_fs(p, cq, usage):
                return True, targets, []
            continue
        if within:
            w = ordering.pop(target)
            p.snap.take(w)
            targets.append(Target(w, IN_COHORT_RECLAMATION, target))
            if _fits_fs(p, cq, usage):
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
                p.snap.take(w)
                targets.append(Target(w, IN_COHORT_FAIR_SHARING, target))
                if _fits_fs(p, cq, usage):
                    return True, targets, []
                break
            retry.append(w)
    return False, targets, retry


def _fs_second(
    p: CandidateSearch,
    cq: ClusterQueueState,
    usage: Usage,
    retry: list[WorkloadInfo],
    targets: list[Target],
) -> tuple[bool, list[Target]]:
    ordering = _TargetOrdering(p, cq, retry)
    for target in ordering.iter():
        new_share, old_share = ordering.shares(target)
        w = ordering.pop(target)
        if compare_drs(new_share, old_share) < 0:
            p.snap.take(w)
            targets.append(Target(w, IN_COHORT_FAIR_SHARING, target))
            if _fits_fs(p, cq, usage):
                return True, targets
        ordering.drop(target)
    return False, targets


def _itself(w: WorkloadInfo) -> WorkloadInfo:
    return w


def _strategy(name: str, preemptor_new: DRS, target_old: DRS, target_new: DRS) -> bool:
    if name == "LessThanInitialShare":
        return compare_drs(preemptor_new, target_old) < 0
    return compare_drs(preemptor_new, target_new) <= 0


class _TargetOrdering:
    """Which ClusterQueue to take the next victim from (fairsharing/ordering.go)."""

    def __init__(
        self, p: CandidateSearch, cq: ClusterQueueState, candidates: list[WorkloadInfo]
    ) -> None:
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
