"""Where a workload goes: one flavor per podSet and resource group.

For each podSet, resource groups are decided in turn; each tries its flavors
in order, rules out those whose labels or taints the podSet cannot use, then
checks quota: fit, fit by borrowing, fit by preempting, or no fit. Flavor
fungibility decides whether to stop at a flavor or look further. Restated
from Kueue's pkg/scheduler/flavorassigner/flavorassigner.go.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from kuota.api.k8s import NodeSelectorRequirement, PodSpec, Taint, Toleration
from kuota.api.k8s.nodeselection import node_selector_requirement_matches
from kuota.api.kueue.types import ResourceFlavor
from kuota.quota.requests import resource_quantity
from kuota.quota.tree import (
    FR,
    Usage,
    cq_available,
    lowest_fitting_subtree,
    potential_available,
)
from kuota.quota.workload import PodSetResources, WorkloadInfo
from kuota.scheduler.preemption import NO_CANDIDATES, PREEMPT, Preemptor
from kuota.scheduler.snapshot import ClusterQueueState

# Flavor assignment modes (worst first).
NO_FIT: Final = 0
PREEMPT_MODE: Final = 1
DEFERRED_FIT: Final = 2
FIT: Final = 3

# Granular preemption modes (worst first).
PM_NOFIT: Final = 0
PM_NO_CANDIDATES: Final = 1
PM_PREEMPT: Final = 2
PM_RECLAIM: Final = 3
PM_FIT: Final = 4
_INF: Final = 1 << 62

NO_MATCHING_FLAVOR: Final = "NoMatchingFlavor"
EXCEEDS_MAX_QUOTA: Final = "ExceedsMaxQuota"
WAITING_FOR_QUOTA: Final = "WaitingForQuota"
_SEVERITY: Final = {
    "": 0,
    "TopologyPlacementFailed": 1,
    WAITING_FOR_QUOTA: 2,
    EXCEEDS_MAX_QUOTA: 3,
    NO_MATCHING_FLAVOR: 4,
}


def _most_severe(a: str, b: str) -> str:
    return a if _SEVERITY.get(a, 0) >= _SEVERITY.get(b, 0) else b


@dataclass(slots=True, init=False)
class FlavorAssignment:
    name: str
    mode: int
    tried_idx: int
    borrow: int

    # A hand-written __init__ (init=False): compiled (mypyc), the one dataclasses
    # generates stays interpreted, and these are made in every cycle.
    def __init__(self, name: str, mode: int, tried_idx: int = -1, borrow: int = 0) -> None:
        self.name = name
        self.mode = mode
        self.tried_idx = tried_idx
        self.borrow = borrow


@dataclass(slots=True, init=False)
class PodSetAssignment:
    name: str
    count: int
    requests: dict[str, int]  # including `pods` when the queue covers it
    flavors: dict[str, FlavorAssignment]
    reasons: list[str]
    error: str | None
    attempts: dict[str, tuple[int, str]]  # flavor -> (mode, reason)

    # A hand-written __init__ (init=False): compiled (mypyc), the one dataclasses
    # generates stays interpreted, and these are made in every cycle.
    def __init__(
        self,
        name: str,
        count: int,
        requests: dict[str, int],
        flavors: dict[str, FlavorAssignment] | None = None,
        reasons: list[str] | None = None,
        error: str | None = None,
        attempts: dict[str, tuple[int, str]] | None = None,
    ) -> None:
        self.name = name
        self.count = count
        self.requests = requests
        self.flavors = {} if flavors is None else flavors
        self.reasons = [] if reasons is None else reasons
        self.error = error
        self.attempts = {} if attempts is None else attempts

    def is_fit(self) -> bool:
        return self.error is None and not self.reasons

    def mode(self) -> int:
        if self.is_fit():
            return FIT
        if self.error is not None or not self.flavors:
            return NO_FIT
        return min(f.mode for f in self.flavors.values())

    def message(self) -> str:
        if self.error is not None:
            return self.error
        return ", ".join(sorted(self.reasons))


@dataclass(slots=True, init=False)
class Assignment:
    podsets: list[PodSetAssignment]
    borrowing: int
    usage: Usage
    last_tried: list[dict[str, int]]
    no_fit_reason: str
    forced_mode: int | None
    generation: int
    cycle: int
    # The podSets' own mode, kept: a podSet is complete when appended (see
    # FlavorAssigner._append, which resets this), and the cycle asks often.
    podsets_mode: int | None = field(repr=False, compare=False)
    # The admitted workload slice this one replaces (ElasticJobsViaWorkloadSlices):
    # its quota is already held, so only the difference is requested.
    replaced: WorkloadInfo | None = field(repr=False, compare=False)

    # A hand-written __init__ (init=False): compiled (mypyc), the one dataclasses
    # generates stays interpreted, and these are made in every cycle.
    def __init__(
        self,
        podsets: list[PodSetAssignment] | None = None,
        borrowing: int = 0,
        usage: Usage | None = None,
        last_tried: list[dict[str, int]] | None = None,
        no_fit_reason: str = "",
        forced_mode: int | None = None,
        generation: int = 0,
        cycle: int = 0,
        podsets_mode: int | None = None,
        replaced: WorkloadInfo | None = None,
    ) -> None:
        self.podsets = [] if podsets is None else podsets
        self.borrowing = borrowing
        self.usage = {} if usage is None else usage
        self.last_tried = [] if last_tried is None else last_tried
        self.no_fit_reason = no_fit_reason
        self.forced_mode = forced_mode
        self.generation = generation
        self.cycle = cycle
        self.podsets_mode = podsets_mode
        self.replaced = replaced

    def mode(self) -> int:
        if not self.podsets:
            return NO_FIT
        if self.forced_mode is not None:
            return self.forced_mode
        m = self.podsets_mode
        if m is None:
            m = self.podsets_mode = min(ps.mode() for ps in self.podsets)
        return m

    def message(self) -> str:
        parts = []
        for ps in self.podsets:
            if ps.is_fit():
                continue
            if ps.error is not None:
                return f"failed to assign flavors to pod set {ps.name}: {ps.error}"
            parts.append(f"couldn't assign flavors to pod set {ps.name}: {ps.message()}")
        return "; ".join(parts)

    def pending_flavors(self) -> bool:
        return any(i != -1 for d in self.last_tried for i in d.values())

    def flavors_by_podset(self) -> dict[str, dict[str, str]]:
        return {ps.name: {r: f.name for r, f in ps.flavors.items()} for ps in self.podsets}

    def frs_need_preemption(self) -> frozenset[FR]:
        return frozenset(
            (f.name, r)
            for ps in self.podsets
            for r, f in ps.flavors.items()
            if f.mode == PREEMPT_MODE
        )

    def total_requests_for(self, info: WorkloadInfo) -> Usage:
        """The workload's requests at the assigned counts, without `pods`."""
        out: Usage = {}
        for i, ps in enumerate(info.podsets):
            pa = self.podsets[i]
            # A replacing slice needs room for its new pods only.
            count = pa.count
            if self.replaced is not None:
                old = _old_podset(self.replaced, i)
                count = ps.count - (old.count if old is not None else 0)
            scaled = ps.scaled_to(count)
            for r, q in scaled.requests.items():
                if not q:
                    continue
                fa = pa.flavors.get(r)
                if fa is None:
                    continue
                fr = (fa.name, r)
                out[fr] = out.get(fr, 0) + q
        return out


def _in_spec_order(a: Assignment, order: list[int]) -> None:
    """Grouped pod sets were assigned group by group; the assignment lists
    them in the workload's order, as everything after it indexes them."""
    if order == sorted(order):
        return
    pos = sorted(range(len(order)), key=order.__getitem__)
    a.podsets = [a.podsets[k] for k in pos]
    a.last_tried = [a.last_tried[k] for k in pos]


def _old_podset(replaced: WorkloadInfo, i: int) -> PodSetResources | None:
    return replaced.podsets[i] if i < len(replaced.podsets) else None


def _old_request(replaced: WorkloadInfo, podset: str, resource: str) -> int:
    """Kueue's findOldPodSetRequest: by podSet name."""
    for ps in replaced.podsets:
        if ps.name == podset:
            return ps.requests.get(resource, 0)
    return 0


ALLOWED_FLAVORS_ANNOTATION: Final = "kueue.x-k8s.io/workload-allowed-resource-flavors"


class FlavorAssigner:
    def __init__(
        self,
        info: WorkloadInfo,
        cq: ClusterQueueState,
        flavors: dict[str, ResourceFlavor],
        preemptor: Preemptor,
        *,
        fair_sharing: bool,
        ignore_undeclared: bool = False,
        cycle: int = 0,
        nomination: dict[str, dict[str, str]] | None = None,
        replaced: WorkloadInfo | None = None,
        allowed: frozenset[str] | None = None,
    ) -> None:
        self.info = info
        self.cq = cq
        self.flavors = flavors
        self.preemptor = preemptor
        self.fair_sharing = fair_sharing
        self.ignore_undeclared = ignore_undeclared
        self.cycle = cycle
        self.nomination = nomination
        self.replaced = replaced
        self.allowed = allowed  # the only flavors it may use (ConcurrentAdmission), or None

    def assign(self, counts: list[int] | None = None, last: Assignment | None = None) -> Assignment:
        info, cq = self.info, self.cq
        # A simulation kept from an earlier assignment answers nothing here:
        # the cycle may have admitted or preempted since.
        self.preemptor.forget()
        a = Assignment(generation=cq.generation, cycle=self.cycle, replaced=self.replaced)
        covers_pods = cq.covers_pods()
        spec_podsets = info.obj.spec.pod_sets
        # Pod sets that name one podSetGroupName (a LeaderWorkerSet's leader and
        # workers) get one flavor per resource for their summed requests, in
        # the order their groups first appear (Kueue's assignFlavors).
        units: list[tuple[list[int], list[PodSetAssignment]]] = []
        by_group: dict[str, int] | None = None
        for i, ps in enumerate(info.podsets):
            res: PodSetResources = ps if counts is None else ps.scaled_to(counts[i])
            requests = dict(res.requests)
            if covers_pods:
                requests["pods"] = res.count
            psa = PodSetAssignment(ps.name, res.count, requests)
            tr = spec_podsets[i].topology_request
            if tr is None or not tr.pod_set_group_name:
                units.append(([i], [psa]))
                continue
            if by_group is None:
                by_group = {}
            u = by_group.get(tr.pod_set_group_name)
            if u is None:
                by_group[tr.pod_set_group_name] = len(units)
                units.append(([i], [psa]))
            else:
                units[u][0].append(i)
                units[u][1].append(psa)
        order: list[int] = []  # the spec index of each pod set appended
        for idxs, psas in units:
            first = idxs[0]
            specs = [spec_podsets[j].template.spec for j in idxs]
            if len(psas) == 1:
                requests = psas[0].requests
                gpsa = psas[0]
            else:
                requests = {}
                for m in psas:
                    for r, q in m.requests.items():
                        requests[r] = requests.get(r, 0) + q
                gpsa = PodSetAssignment(psas[0].name, psas[0].count, requests)
            group_flavors: dict[str, FlavorAssignment] = {}
            failed = False
            err: str | None = None
            group_reasons: list[str] = []
            for r in sorted(requests):
                q = requests[r]
                if cq.rg_for(r) is None:
                    if q == 0:
                        continue
                    if self.ignore_undeclared:
                        continue
                if r in group_flavors:
                    continue
                flv, reasons, err = self._find_flavor(
                    first, specs, requests, r, a.usage, gpsa, last
                )
                if err is not None or (not flv and requests):
                    group_flavors = {}
                    group_reasons = reasons
                    failed = True
                    break
                group_flavors.update(flv)
                group_reasons.extend(reasons)
            for m in psas:
                m.flavors = {r: f for r, f in group_flavors.items() if r in m.requests}
                m.reasons = group_reasons if len(psas) == 1 else list(group_reasons)
                m.error = err
                if m is not gpsa:
                    m.attempts = dict(gpsa.attempts)
                self._append(a, m)
            if by_group is not None:
                order.extend(idxs)
            if failed or err is not None:
                break
        if by_group is not None:
            _in_spec_order(a, order)
        self._resolve_no_fit(a)
        return a

    def _append(self, a: Assignment, psa: PodSetAssignment) -> None:
        a.podsets.append(psa)
        a.podsets_mode = None
        tried: dict[str, int] = {}
        for r, fa in psa.flavors.items():
            a.borrowing = max(a.borrowing, fa.borrow)
            fr = (fa.name, r)
            amount = psa.requests.get(r, 0)
            if a.replaced is not None:  # what the replaced slice holds is not asked again
                amount -= _old_request(a.replaced, psa.name, r)
            a.usage[fr] = a.usage.get(fr, 0) + amount
            tried[r] = fa.tried_idx
        a.last_tried.append(tried)

    def _resolve_no_fit(self, a: Assignment) -> None:
        if a.mode() != NO_FIT:
            return
        overall = ""
        for ps in a.podsets:
            if ps.mode() != NO_FIT:
                continue
            if not ps.attempts:
                overall = _most_severe(overall, NO_MATCHING_FLAVOR)
                continue
            rg_min: dict[int, str] = {}
            for i, (flavor, (mode, reason)) in enumerate(ps.attempts.items()):
                if mode != NO_FIT:
                    continue
                idxs = [j for j, rg in enumerate(self.cq.resource_groups) if flavor in rg.flavors]
                for j in idxs or [-1 - i]:
                    cur = rg_min.get(j)
                    if cur is None or _SEVERITY.get(reason, 0) < _SEVERITY.get(cur, 0):
                        rg_min[j] = reason
            ps_reason = ""
            for r in rg_min.values():
                ps_reason = _most_severe(ps_reason, r)
            overall = _most_severe(overall, ps_reason)
        a.no_fit_reason = overall

    def _find_flavor(
        self,
        ps_index: int,
        specs: list[PodSpec | None],
        requests: dict[str, int],
        res_name: str,
        assigned: Usage,
        psa: PodSetAssignment,
        last: Assignment | None,
    ) -> tuple[dict[str, FlavorAssignment], list[str], str | None]:
        cq = self.cq
        rg = cq.rg_for(res_name)
        if rg is None:
            return {}, [f"resource {res_name} unavailable in ClusterQueue"], None
        reasons: list[str] = []
        group_req = {r: v for r, v in sorted(requests.items()) if r in rg.covered}
        best: dict[str, FlavorAssignment] = {}
        best_mode = (PM_NOFIT, _INF)
        fung = cq.fungibility
        start = 0
        if last is not None and ps_index < len(last.last_tried):
            idx = last.last_tried[ps_index].get(res_name)
            if idx is not None:
                start = idx + 1
        attempted = -1
        ps_name = psa.name
        for idx in range(start, len(rg.flavors)):
            attempted = idx
            fname = rg.flavors[idx]
            if (
                self.nomination is not None
                and self.nomination.get(ps_name, {}).get(res_name) != fname
            ):
                reasons.append(
                    f"skipping flavor {fname} as it is not found in the nomination mapping "
                    f"for resource {res_name}"
                )
                continue
            if self.allowed is not None and fname not in self.allowed:
                reasons.append(
                    f"skipping flavor {fname} due to WorkloadAllowedResourceFlavorAnnotation "
                    "annotation"
                )
                continue
            why = None
            for spec in specs:
                why = self._check_flavor(fname, spec)
                if why is not None:
                    break
            if why is not None:
                reasons.append(why)
                psa.attempts[fname] = (NO_FIT, NO_MATCHING_FLAVOR)
                continue
            assignments: dict[str, FlavorAssignment] = {}
            rep = (PM_FIT, 0)
            max_borrow = 0
            flavor_no_fit = ""
            for r, val in group_req.items():
                fr = (fname, r)
                if self.replaced is not None:
                    # A replacing slice keeps the replaced one's flavors and asks
                    # for the difference only.
                    old = _old_podset(self.replaced, ps_index)
                    was = (old.flavors or {}).get(r, "") if old is not None else ""
                    if was != fname:
                        reasons.append(
                            f"could not assign {fname} flavor since the original workload "
                            f"is assigned: {was}"
                        )
                        flavor_no_fit = _most_severe(flavor_no_fit, NO_MATCHING_FLAVOR)
                        rep = (PM_NOFIT, _INF)
                    elif old is not None:
                        val -= old.requests.get(r, 0)
                pm, borrow, msg, nfr = self._fits_quota(fr, assigned.get(fr, 0), val)
                if msg is not None:
                    reasons.append(msg)
                    flavor_no_fit = _most_severe(flavor_no_fit, nfr)
                max_borrow = max(max_borrow, borrow)
                mode = (pm, borrow)
                if _preferred(rep, mode, fung.preference):
                    rep = mode
                if rep[0] == PM_NOFIT:
                    continue
                assignments[r] = FlavorAssignment(fname, _flavor_mode(pm), borrow=borrow)
            psa.attempts[fname] = (
                _flavor_mode(rep[0]),
                flavor_no_fit if rep[0] == PM_NOFIT else "",
            )
            if not _try_next(rep, fung.when_can_preempt, fung.when_can_borrow):
                best, best_mode = assignments, rep
                break
            if _preferred(rep, best_mode, fung.preference):
                best, best_mode = assignments, rep
        tried = -1 if attempted == len(rg.flavors) - 1 else attempted
        for fa in best.values():
            fa.tried_idx = tried
        if best_mode[0] == PM_FIT:
            return best, [], None
        return best, reasons, None

    def _check_flavor(self, fname: str, spec: PodSpec | None) -> str | None:
        return flavor_mismatch(self.flavors.get(fname), fname, spec)

    def _fits_quota(self, fr: FR, assumed: int, request: int) -> tuple[int, int, str | None, str]:
        cq = self.cq
        node = cq.node
        avail = cq_available(node, fr)
        max_cap = potential_available(node, fr)
        val = assumed + request
        r = fr[1]
        if val > max_cap:
            msg = (
                f"insufficient quota for {r} in flavor {fr[0]}, previously considered podsets "
                f"requests ({_q(r, assumed)}) + current podset request ({_q(r, request)}) > "
                f"maximum capacity ({_q(r, max_cap)})"
            )
            return PM_NOFIT, 0, msg, EXCEEDS_MAX_QUOTA
        borrow, may_reclaim = lowest_fitting_subtree(node, fr, val)
        if val <= avail:
            return PM_FIT, borrow, None, ""
        msg = (
            f"insufficient unused quota for {r} in flavor {fr[0]}, {_q(r, val - avail)} more needed"
        )
        q = node.quotas.get(fr)
        nominal = q.nominal if q else 0
        if nominal >= val or may_reclaim or self._can_preempt_while_borrowing():
            poss, borrow_after = self.preemptor.simulate(self.info, cq, fr, val)
            pm = {NO_CANDIDATES: PM_NO_CANDIDATES, PREEMPT: PM_PREEMPT}.get(poss, PM_RECLAIM)
            return pm, borrow_after, msg, ""
        return PM_NOFIT, borrow, msg, WAITING_FOR_QUOTA

    def _can_preempt_while_borrowing(self) -> bool:
        p = self.cq.preemption
        bwc = p.borrow_within_cohort
        return (bwc is not None and bwc.policy != "Never") or (
            self.fair_sharing and p.reclaim_within_cohort != "Never"
        )


def flavor_mismatch(flavor: ResourceFlavor | None, fname: str, spec: PodSpec | None) -> str | None:
    """Why a podSet cannot use a flavor (untolerated taint, node labels), or None."""
    if flavor is None:
        return f"flavor {fname} not found"
    fs = flavor.spec
    tolerations = list(spec.tolerations or ()) if spec else []
    tolerations += list(fs.tolerations or ())
    for taint in fs.node_taints or ():
        if taint.effect not in ("NoSchedule", "NoExecute"):
            continue
        if not any(_tolerates(t, taint) for t in tolerations):
            return f"untolerated taint {_taint_str(taint)} in flavor {fname}"
    labels = fs.node_labels or {}
    if spec is not None and not _selector_matches(spec, labels):
        return f"flavor {fname} doesn't match node affinity"
    return None


def _flavor_mode(pm: int) -> int:
    if pm == PM_NOFIT:
        return NO_FIT
    if pm == PM_FIT:
        return FIT
    return PREEMPT_MODE


def _preferred(a: tuple[int, int], b: tuple[int, int], preference: str | None) -> bool:
    """Kueue's isPreferred over (preemption mode, borrowing level)."""
    if a[0] == PM_NOFIT:
        return False
    if b[0] == PM_NOFIT:
        return True
    a_nc, b_nc = a[0] == PM_NO_CANDIDATES, b[0] == PM_NO_CANDIDATES
    if a_nc != b_nc:
        return not a_nc
    if preference == "PreemptionOverBorrowing":
        if a[1] != b[1]:
            return a[1] < b[1]
        return a[0] > b[0]
    if a[0] != b[0]:
        return a[0] > b[0]
    return a[1] < b[1]


def _try_next(mode: tuple[int, int], when_preempt: str, when_borrow: str) -> bool:
    if mode[0] in (PM_NOFIT, PM_NO_CANDIDATES):
        return True
    if mode[0] in (PM_PREEMPT, PM_RECLAIM) and when_preempt == "TryNextFlavor":
        return True
    return mode[1] != 0 and when_borrow == "TryNextFlavor"


def _q(resource: str, v: int) -> str:
    return str(resource_quantity(resource, v))


def _taint_str(t: Taint) -> str:
    # k8s Taint.ToString: key=value:effect
    if t.value:
        return f"{t.key}={t.value}:{t.effect}"
    return f"{t.key}:{t.effect}"


def _tolerates(t: Toleration, taint: Taint) -> bool:
    """k8s Toleration.ToleratesTaint."""
    if t.effect and t.effect != taint.effect:
        return False
    if t.key and t.key != taint.key:
        return False
    op = t.operator or "Equal"
    if op == "Exists":
        return True
    if op == "Equal":
        return (t.value or "") == (taint.value or "")
    return False


def _selector_matches(spec: PodSpec, labels: dict[str, str]) -> bool:
    """The podSet's nodeSelector and required node affinity, restricted to the
    flavor's own label keys, against a node carrying the flavor's labels."""
    keys = labels.keys()
    for k, v in (spec.node_selector or {}).items():
        if k in keys and labels[k] != v:
            return False
    aff = spec.affinity
    na = aff.node_affinity if aff is not None else None
    req = na.required_during_scheduling_ignored_during_execution if na is not None else None
    if req is None:
        return True
    terms: list[list[NodeSelectorRequirement]] = []
    for term in req.node_selector_terms or ():
        exprs = [e for e in (term.match_expressions or ()) if e.key in keys]
        if not exprs:
            return True  # an emptied term matches anything (terms are ORed)
        terms.append(exprs)
    if not terms:
        return True
    return any(all(node_selector_requirement_matches(e, labels) for e in t) for t in terms)
