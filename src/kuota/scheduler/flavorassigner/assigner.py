"""The flavor assigner's search (Kueue's flavorassigner.go): resource groups
in turn, flavors in order, quota checked with borrowing and preemption."""

from __future__ import annotations

from typing import Final

from kuota.api.k8s import PodSpec
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
from kuota.scheduler.cache import ClusterQueueState
from kuota.scheduler.flavorassigner.assignment import (
    EXCEEDS_MAX_QUOTA,
    FIT,
    INF,
    NO_FIT,
    NO_MATCHING_FLAVOR,
    PM_FIT,
    PM_NO_CANDIDATES,
    PM_NOFIT,
    PM_PREEMPT,
    PM_RECLAIM,
    PREEMPT_MODE,
    SEVERITY,
    WAITING_FOR_QUOTA,
    Assignment,
    FlavorAssignment,
    PodSetAssignment,
    most_severe,
    old_podset,
)
from kuota.scheduler.flavorassigner.matching import flavor_mismatch
from kuota.scheduler.preemption.preemptor import Preemptor
from kuota.scheduler.preemption.targets import NO_CANDIDATES, PREEMPT
from kuota.scheduler.tas.assign import TASAssigner


def _in_spec_order(a: Assignment, order: list[int]) -> None:
    """Grouped pod sets were assigned group by group; the assignment lists
    them in the workload's order, as everything after it indexes them."""
    if order == sorted(order):
        return
    pos = sorted(range(len(order)), key=order.__getitem__)
    a.podsets = [a.podsets[k] for k in pos]
    a.last_tried = [a.last_tried[k] for k in pos]


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
        tas: TASAssigner | None = None,
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
        self.tas = tas  # topology-aware scheduling, when the queue or workload uses it

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
        if self.tas is not None and a.mode() != NO_FIT:
            self.tas.place(a, info, cq)
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
                overall = most_severe(overall, NO_MATCHING_FLAVOR)
                continue
            rg_min: dict[int, str] = {}
            for i, (flavor, (mode, reason)) in enumerate(ps.attempts.items()):
                if mode != NO_FIT:
                    continue
                idxs = [j for j, rg in enumerate(self.cq.resource_groups) if flavor in rg.flavors]
                for j in idxs or [-1 - i]:
                    cur = rg_min.get(j)
                    if cur is None or SEVERITY.get(reason, 0) < SEVERITY.get(cur, 0):
                        rg_min[j] = reason
            ps_reason = ""
            for r in rg_min.values():
                ps_reason = most_severe(ps_reason, r)
            overall = most_severe(overall, ps_reason)
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
        best_mode = (PM_NOFIT, INF)
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
            if why is None and self.tas is not None:
                why = self.tas.flavor_mismatch(ps_index, fname, rg.covered)
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
                    old = old_podset(self.replaced, ps_index)
                    was = (old.flavors or {}).get(r, "") if old is not None else ""
                    if was != fname:
                        reasons.append(
                            f"could not assign {fname} flavor since the original workload "
                            f"is assigned: {was}"
                        )
                        flavor_no_fit = most_severe(flavor_no_fit, NO_MATCHING_FLAVOR)
                        rep = (PM_NOFIT, INF)
                    elif old is not None:
                        val -= old.requests.get(r, 0)
                pm, borrow, msg, nfr = self._fits_quota(fr, assigned.get(fr, 0), val)
                if msg is not None:
                    reasons.append(msg)
                    flavor_no_fit = most_severe(flavor_no_fit, nfr)
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
            if poss == NO_CANDIDATES:
                pm = PM_NO_CANDIDATES
            elif poss == PREEMPT:
                pm = PM_PREEMPT
            else:
                pm = PM_RECLAIM
            return pm, borrow_after, msg, ""
        return PM_NOFIT, borrow, msg, WAITING_FOR_QUOTA

    def _can_preempt_while_borrowing(self) -> bool:
        p = self.cq.preemption
        bwc = p.borrow_within_cohort
        return (bwc is not None and bwc.policy != "Never") or (
            self.fair_sharing and p.reclaim_within_cohort != "Never"
        )


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


# Quantities as the reasons print them: every head that does not fit prints a
# few, mostly the same ones (a pure function of its arguments, so kept).
_Q_TEXT: Final[dict[tuple[str, int], str]] = {}
_Q_TEXT_MAX: Final = 4096


def _q(resource: str, v: int) -> str:
    key = (resource, v)
    text = _Q_TEXT.get(key)
    if text is None:
        if len(_Q_TEXT) >= _Q_TEXT_MAX:
            _Q_TEXT.clear()
        text = _Q_TEXT[key] = str(resource_quantity(resource, v))
    return text
