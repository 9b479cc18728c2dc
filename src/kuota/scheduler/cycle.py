"""One scheduling cycle as Kueue runs it (pkg/scheduler/scheduler.go): take
the head of every ClusterQueue, nominate each (flavors, preemption targets),
order the entries, then admit, preempt or leave each in turn against the quota
left in this cycle, and requeue the rest with the reason that decides where
they wait.

The cycle decides; it does not act. Each decision (admit, preempt, migrate,
requeue: ``scheduler.decisions``) is handed out as it is made, and the
admission core applies it before the cycle goes on (later entries see its
effect, as in Kueue). The cycle reads the core's state and asks its
admissibility, fair-sharing and timer parts; it never calls back into the
core."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Final

from kuota.api.kueue import types as kt
from kuota.api.kueue.multikueue_types import CONTROLLER_NAME as MULTIKUEUE_CONTROLLER
from kuota.api.kueue.provisioning_config import CONTROLLER_NAME as PROVISIONING_CONTROLLER
from kuota.queueing import queues as rq
from kuota.quota.tree import (
    DRS,
    Cohort,
    Usage,
    add_usage,
    compare_drs,
    cq_available,
    drs,
    remove_usage,
)
from kuota.quota.workload import (
    ORDER_NO_PRIORITY_SORTING,
    WorkloadInfo,
    has_closed_preemption_gate,
    is_admitted,
    queue_order_timestamp,
)
from kuota.scheduler.admission.admissibility import Admissibility
from kuota.scheduler.admission.admission_fair_sharing import AdmissionFairSharing
from kuota.scheduler.admission.state import CoreState
from kuota.scheduler.admission.timers import TimerIndex
from kuota.scheduler.cache import ClusterQueueState
from kuota.scheduler.decisions import Admit, Decision, Migrate, Preempt, Requeue
from kuota.scheduler.flavorassigner.assigner import ALLOWED_FLAVORS_ANNOTATION, FlavorAssigner
from kuota.scheduler.flavorassigner.assignment import (
    DEFERRED_FIT,
    FIT,
    NO_FIT,
    PREEMPT_MODE,
    Assignment,
)
from kuota.scheduler.preemption.preemptor import Preemptor
from kuota.scheduler.preemption.targets import Target
from kuota.scheduler.tas.assign import TASAssigner, assignment_tas_usage, explicit
from kuota.scheduler.tas.snapshot import PODS
from kuota.scheduler.views import CycleResult

# On a new workload slice (ElasticJobsViaWorkloadSlices): the key of the slice it replaces.
SLICE_REPLACEMENT_FOR: Final = "kueue.x-k8s.io/workload-slice-replacement-for"


@dataclass(init=False)
class Entry:
    info: WorkloadInfo
    cq: ClusterQueueState
    assignment: Assignment
    targets: list[Target]
    status: str  # "", skipped, preemptionGated, nominated, assumed
    message: str
    requeue_reason: str
    qr_reason: str
    skip_status: bool
    # Its ClusterQueue's preemptor: requeued waiting for the preemptions it issued.
    preemptor: bool

    # A hand-written __init__ (init=False): compiled (mypyc), the one dataclasses
    # generates stays interpreted, and these are made in every cycle.
    def __init__(
        self,
        info: WorkloadInfo,
        cq: ClusterQueueState,
        assignment: Assignment | None = None,
        targets: list[Target] | None = None,
        status: str = "",
        message: str = "",
        requeue_reason: str = rq.GENERIC,
        qr_reason: str = "",
        skip_status: bool = False,
        preemptor: bool = False,
    ) -> None:
        self.info = info
        self.cq = cq
        self.assignment = Assignment() if assignment is None else assignment
        self.targets = [] if targets is None else targets
        self.status = status
        self.message = message
        self.requeue_reason = requeue_reason
        self.qr_reason = qr_reason
        self.skip_status = skip_status
        self.preemptor = preemptor


class Cycle:
    def __init__(
        self,
        state: CoreState,
        adm: Admissibility,
        fair: AdmissionFairSharing,
        timers: TimerIndex,
    ) -> None:
        self.state = state
        self.adm = adm
        self.timers = timers
        self.snap = state.snap
        self.fair = state.config.fair_sharing is not None
        self.slices = state.gate("ElasticJobsViaWorkloadSlices")
        self.preemptors_first = state.gate("PrioritizePreemptorWorkloads")
        self.non_borrowing_first = state.gate("FairSharingPrioritizeNonBorrowing")
        self.concurrent_admission = state.gate("ConcurrentAdmission")
        # Kueue holds back a preemption a closed preemption gate guards only
        # with one of these gates on.
        self.preemption_gates = state.gate("ConcurrentAdmission") or state.gate(
            "MultiKueueOrchestratedPreemption"
        )
        self.eviction_ts = state.eviction_timestamp
        # PrioritySortingWithinCohort: priority between equal borrowing levels.
        self.by_priority = not state.eviction_timestamp & ORDER_NO_PRIORITY_SORTING
        self.preemptor = Preemptor(
            state.snap,
            fair_sharing=self.fair,
            strategies=state.config.fair_sharing.preemption_strategies
            if state.config.fair_sharing
            else (),
            eviction_ts=self.eviction_ts,
            now=state.now,
            within_nominal_gate=state.gate("FairSharingPreemptWithinNominal"),
            lq_usage=fair.usage_snapshot(),
        )
        self.undo: list[Callable[[], None]] = []
        # The topology domains (leaf ids) whose usage grew in this cycle since
        # nomination (an admission or a hold placed on a topology): a
        # nominated placement on none of them still fits, unchecked.
        self.tas_touched: set[str] = set()
        self.preempted: dict[str, WorkloadInfo] = {}
        # The same victims by the root of their quota tree: removing usage in
        # another tree cannot change what a queue has available.
        self.preempted_in_tree: dict[int, dict[str, WorkloadInfo]] = {}
        self.result = CycleResult()

    # ------------------------------------------------------------ run
    def decide(self, heads: list[tuple[str, WorkloadInfo]]) -> Iterator[Decision]:
        """The cycle's decisions on ``heads`` (the queues' heads, taken for
        this cycle), in order, each to be applied before the next is asked
        for; what it found is in ``result`` once it is done."""
        state = self.state
        entries: list[Entry] = []
        inadmissible: list[Entry] = []
        for cq_name, info in heads:
            e = Entry(info, self.snap.cqs[cq_name])
            if self.preemptors_first:
                q = state.queues.cqs.get(cq_name)
                e.preemptor = q is not None and q.preemptor == info.key
            if info.key in self.snap.holders:
                continue
            if not e.cq.active:
                e.message = f"ClusterQueue {cq_name} is inactive"
                e.qr_reason = "Suspended"
            elif (bad := self.adm.admissibility_error(info, cq_name)) is not None:
                e.message, requeue_reason = bad
                e.qr_reason = "Misconfigured"
                if requeue_reason:
                    e.requeue_reason = requeue_reason
            else:
                self._record(e, *self.assignments(e.info, e.cq))
                entries.append(e)
                continue
            inadmissible.append(e)

        if self.fair:
            yield from self._tournament(entries)
        else:
            for e in self._order(entries):
                d = self._process(e)
                if d is not None:
                    yield d
        for fn in reversed(self.undo):
            fn()
        for e in entries:
            if e.status != "assumed":
                yield self._requeue(e)
        for e in inadmissible:
            # Tried and left waiting, as Kueue's loop sees them: it goes on to
            # the heads behind (settle and the idle hook count these as tried).
            self.result.waiting[e.info.key] = e.message
            yield self._requeue(e)

    # ------------------------------------------------------------ nomination
    def _record(self, e: Entry, a: Assignment, targets: list[Target]) -> None:
        e.assignment = a
        e.targets = targets
        e.message = a.message()
        e.info.last_assignment = a

    def assignments(
        self,
        info: WorkloadInfo,
        cq: ClusterQueueState,
        nomination: dict[str, dict[str, str]] | None = None,
    ) -> tuple[Assignment, list[Target]]:
        state = self.state
        last = info.last_assignment
        if (
            isinstance(last, Assignment)
            and state.cycle_count - last.cycle > 1
            and cq.generation > last.generation
        ):
            last = info.last_assignment = None
        if not isinstance(last, Assignment):
            last = None
        replaced = self._replaced_slice(info, cq)
        fa = FlavorAssigner(
            info,
            cq,
            self.snap.flavors,
            self.preemptor,
            fair_sharing=self.fair,
            ignore_undeclared=state.ignore_undeclared,
            cycle=state.cycle_count,
            nomination=nomination,
            replaced=replaced,
            allowed=self._allowed_flavors(info),
            tas=self._tas_for(info, cq),
        )
        a, targets = self._initial_assignments(info, cq, fa, last, replaced)
        if fa.tas is not None and a.mode() == PREEMPT_MODE:
            self._place_for_preemption(fa.tas, info, a, targets)
        return a, targets

    def _initial_assignments(
        self,
        info: WorkloadInfo,
        cq: ClusterQueueState,
        fa: FlavorAssigner,
        last: Assignment | None,
        replaced: WorkloadInfo | None,
    ) -> tuple[Assignment, list[Target]]:
        """Kueue's getInitialAssignments."""
        full = fa.assign(None, last)
        mode = full.mode()
        # The replaced slice is a target from the start (taken out of the
        # tree when checking the fit); it is finished, not preempted.
        base = [Target(replaced, "", cq)] if replaced is not None else []
        if mode == FIT:
            return full, base
        if mode == PREEMPT_MODE:
            t = self.preemptor.get_targets(
                info, cq, full.frs_need_preemption(), full.total_requests_for(info), tas=fa.tas
            )
            if t:
                return full, base + t
        if self.state.gate("PartialAdmission") and info.can_be_partially_admitted():
            found = self._reduce(info, cq, fa, last)
            if found is not None:
                return found[0], base + found[1]
        return full, []

    def _place_for_preemption(
        self, tas: TASAssigner, info: WorkloadInfo, a: Assignment, targets: list[Target]
    ) -> None:
        """Kueue's updateAssignmentForTAS: the topology a preempting workload
        takes once its targets are gone, or with none, on an empty topology
        (what the cycle reserves for it)."""
        if not targets:
            tas.place_for_preemption(a, info, simulate_empty=True)
            return
        put_back = self.snap.lift([t.info for t in targets])
        try:
            tas.place_for_preemption(a, info, simulate_empty=False)
        finally:
            put_back()

    def _tas_for(self, info: WorkloadInfo, cq: ClusterQueueState) -> TASAssigner | None:
        """Topology-aware scheduling, when the queue has a flavor naming a
        Topology or a pod set asks for one; else None (nothing changes)."""
        state = self.state
        if not state.gate("TopologyAwareScheduling"):
            return None
        flavors = [f for rg in cq.resource_groups for f in rg.flavors]
        pod_sets = info.obj.spec.pod_sets
        rfs = state.flavors
        if not any(f in rfs and rfs[f].spec.topology_name is not None for f in flavors) and not any(
            explicit(ps) for ps in pod_sets
        ):
            return None
        multikueue = False
        prov: set[str] = set()
        for name, on in cq.admission_checks:
            ac = state.checks.get(name)
            ctrl = ac.spec.controller_name if ac is not None else ""
            if ctrl == MULTIKUEUE_CONTROLLER:
                multikueue = True
            elif ctrl == PROVISIONING_CONTROLLER:
                prov.update(on or flavors)
        return TASAssigner(
            state.tas, rfs, flavors, self.snap.holders, pod_sets, multikueue, frozenset(prov)
        )

    def _replacement_for(self, info: WorkloadInfo) -> str | None:
        """The key of the workload slice this one replaces, if slices are on."""
        annotations = info.obj.metadata.annotations
        return annotations.get(SLICE_REPLACEMENT_FOR) if annotations and self.slices else None

    def _split_replaced(self, e: Entry) -> tuple[list[Target], WorkloadInfo | None]:
        """Kueue's FindReplacedSliceTarget: the targets without the slice the
        entry replaces (the first one by that key), and that slice."""
        ref = self._replacement_for(e.info)
        if ref is not None:
            for i, t in enumerate(e.targets):
                if t.info.key == ref:
                    return e.targets[:i] + e.targets[i + 1 :], t.info
        return e.targets, None

    def _replaced_slice(self, info: WorkloadInfo, cq: ClusterQueueState) -> WorkloadInfo | None:
        """Kueue's ReplacedWorkloadSlice: the workload this one is a new slice
        of (its replacement-for annotation), if it holds quota in the same
        ClusterQueue and namespace."""
        ref = self._replacement_for(info)
        if ref is None:
            return None
        old = cq.workloads.get(ref)
        if old is None or old.namespace != info.namespace:
            return None
        return old

    def _reduce(
        self, info: WorkloadInfo, cq: ClusterQueueState, fa: FlavorAssigner, last: Assignment | None
    ) -> tuple[Assignment, list[Target]] | None:
        spec = info.obj.spec.pod_sets
        full = [ps.count for ps in spec]
        deltas = [
            ps.count - (ps.min_count if ps.min_count is not None else ps.count) for ps in spec
        ]
        total = sum(deltas)
        if total == 0:
            return None

        def attempt(i: int) -> tuple[Assignment, list[Target]] | None:
            counts = [f - (d * i // total) for f, d in zip(full, deltas, strict=True)]
            a = fa.assign(counts, last)
            m = a.mode()
            if m == FIT:
                return a, []
            if m == PREEMPT_MODE:
                t = self.preemptor.get_targets(
                    info, cq, a.frs_need_preemption(), a.total_requests_for(info)
                )
                if t:
                    return a, t
            return None

        lo, hi = 0, total + 1  # smallest i in [0, total] that fits
        best: tuple[Assignment, list[Target]] | None = None
        while lo < hi:
            mid = (lo + hi) // 2
            r = attempt(mid)
            if r is not None:
                best, hi = r, mid
            else:
                lo = mid + 1
        return best if lo <= total else None

    # ------------------------------------------------------------ ordering
    def _order(self, entries: list[Entry]) -> list[Entry]:
        if len(entries) < 2:
            return entries  # (most cycles: one head or none, nothing to order)
        et = self.eviction_ts
        by_priority = self.by_priority

        def key(e: Entry) -> tuple[int, int, int, object, float, str]:
            return (
                # PrioritizePreemptorWorkloads: those waiting on their own
                # preemptions first (False unless the gate is on).
                not e.preemptor,
                e.assignment.borrowing,
                -e.info.priority if by_priority else 0,
                queue_order_timestamp(e.info.obj, et),
                e.info.creation.timestamp(),
                e.info.key,
            )

        return sorted(entries, key=key)

    def _tournament(self, entries: list[Entry]) -> Iterator[Decision]:
        """Kueue's fair-sharing iterator: entries are picked and processed one
        at a time, so admissions earlier in the cycle count in later picks."""
        remaining = {e.cq.name: e for e in entries}
        while remaining:
            name = sorted(remaining)[0]
            e = remaining[name]
            if e.cq.node.parent is None:
                del remaining[name]
                d = self._process(e)
                if d is not None:
                    yield d
                continue
            root = e.cq.node.root()
            assert isinstance(root, Cohort)
            drs_values, requested = self._compute_drs(root, remaining)
            winner = self._run_tournament(root, remaining, drs_values, requested)
            assert winner is not None
            del remaining[winner.cq.name]
            d = self._process(winner)
            if d is not None:
                yield d

    def _compute_drs(
        self, root: Cohort, remaining: dict[str, Entry]
    ) -> tuple[dict[tuple[str, str], object], dict[str, Usage]]:
        values: dict[tuple[str, str], object] = {}
        requested: dict[str, Usage] = {}
        for cq in self._subtree_cq_names(root):
            e = remaining.get(cq)
            if e is None:
                continue
            usage = self._net_usage(e)
            node = e.cq.node
            add_usage(node, usage)
            requested[e.info.key] = usage
            d = drs(node)
            for anc in node.path_to_root():
                values[(anc.name, e.info.key)] = d
                d = drs(anc)
            remove_usage(node, usage)
        return values, requested

    def _subtree_cq_names(self, c: Cohort) -> list[str]:
        out = sorted(c.child_cqs)
        for n in sorted(c.child_cohorts):
            out += self._subtree_cq_names(c.child_cohorts[n])
        return out

    def _admitted_sibling(self, e: Entry, *, more_favorable: bool) -> WorkloadInfo | None:
        """Kueue's findAdmittedMore/LessFavorableSibling: an admitted variant
        of the same parent in this ClusterQueue whose flavor comes before
        (more favorable) or after this one's in the first resource group."""
        parent = _parent_uid(e.info.obj)
        groups = e.cq.resource_groups
        if parent is None or not groups:
            return None
        flavors = groups[0].flavors
        mine = _variant_flavor_index(e.info, flavors)
        if mine is None:
            return None
        for key in sorted(e.cq.workloads):
            other = e.cq.workloads[key]
            if other.key == e.info.key or _parent_uid(other.obj) != parent:
                continue
            if not is_admitted(other.obj):
                continue
            theirs = _variant_flavor_index(other, flavors)
            if theirs is None:
                continue
            if (theirs < mine) if more_favorable else (theirs > mine):
                return other
        return None

    def _migration_allowed(self, e: Entry) -> bool:
        """Kueue's isMigrationAllowed: not to a flavor after the policy's
        lastAcceptableFlavorName."""
        cq_obj = self.state.cq_objs.get(e.cq.name)
        policy = cq_obj.spec.concurrent_admission_policy if cq_obj is not None else None
        constraints = policy.migration.constraints if policy is not None else None
        last = constraints.last_acceptable_flavor_name if constraints is not None else None
        if last is None or not e.cq.resource_groups:
            return True
        flavors = e.cq.resource_groups[0].flavors
        mine = _variant_flavor_index(e.info, flavors)
        if mine is None:
            return False
        return last not in flavors or mine <= flavors.index(last)

    def _allowed_flavors(self, info: WorkloadInfo) -> frozenset[str] | None:
        """Kueue's IsFlavorAllowedForVariant: with ConcurrentAdmission, the
        flavors a workload's workload-allowed-resource-flavors annotation
        lists (comma-separated) are the only ones it may use."""
        if not self.concurrent_admission:
            return None
        listed = _listed_flavors(info)
        return None if listed is None else frozenset(listed)

    def _run_tournament(
        self,
        cohort: Cohort,
        remaining: dict[str, Entry],
        values: dict[tuple[str, str], object],
        requested: dict[str, Usage],
    ) -> Entry | None:
        cands: list[Entry] = []
        for n in sorted(cohort.child_cohorts):
            w = self._run_tournament(cohort.child_cohorts[n], remaining, values, requested)
            if w is not None:
                cands.append(w)
        for n in sorted(cohort.child_cqs):
            if n in remaining:
                cands.append(remaining[n])
        if not cands:
            return None
        et = self.eviction_ts
        preemptors_first = self.preemptors_first
        non_borrowing_first = self.non_borrowing_first

        def less(a: Entry, b: Entry) -> bool:
            # Kueue's entryComparer: a workload waiting on its own preemptions
            # first (PrioritizePreemptorWorkloads), then one whose subtree does
            # not borrow on its flavors (FairSharingPrioritizeNonBorrowing),
            # then DRS, priority, queue order.
            if preemptors_first and a.preemptor != b.preemptor:
                return a.preemptor
            ad = values.get((cohort.name, a.info.key), DRS())
            bd = values.get((cohort.name, b.info.key), DRS())
            assert isinstance(ad, DRS) and isinstance(bd, DRS)
            if non_borrowing_first:
                ab = ad.borrowing_on(requested.get(a.info.key, {}))
                bb = bd.borrowing_on(requested.get(b.info.key, {}))
                if ab != bb:
                    return not ab
            c = compare_drs(ad, bd)
            if c != 0:
                return c == -1
            if a.info.priority != b.info.priority and self.by_priority:
                return a.info.priority > b.info.priority
            return queue_order_timestamp(a.info.obj, et) < queue_order_timestamp(b.info.obj, et)

        best = cands[0]
        for cur in cands[1:]:
            if less(cur, best):
                best = cur
        return best

    # ------------------------------------------------------------ processing
    def _net_usage(self, e: Entry) -> Usage:
        return dict(e.assignment.usage)

    def _hold(self, cq: ClusterQueueState, usage: Usage, e: Entry | None = None) -> None:
        """Reserve usage for the rest of this cycle only; with ``e``, its
        assignment's topology usage too (ClusterQueueSnapshot.AddUsage)."""
        add_usage(cq.node, usage)
        self.undo.append(partial(remove_usage, cq.node, usage))
        if e is not None:
            for fname, domains in self._tas_usage(e).items():
                held = self.state.tas.held.setdefault(fname, [])
                n = len(held)
                for did, single, count in domains:
                    self.tas_touched.add(did)
                    u = {r: q * count for r, q in single.items()}
                    u[PODS] = u.get(PODS, 0) + count
                    held.append((did, u))
                self.undo.append(partial(_drop_held, held, n))

    def _tas_usage(self, e: Entry) -> dict[str, list[tuple[str, dict[str, int], int]]]:
        """The entry's topology usage (Assignment.Usage.TAS), per TAS flavor."""
        if not self.state.gate("TopologyAwareScheduling"):
            return {}
        if not any(ps.topology is not None for ps in e.assignment.podsets):
            return {}
        rfs = self.state.flavors
        tas_flavors = [f for f in rfs if rfs[f].spec.topology_name is not None]
        return assignment_tas_usage(e.assignment, e.info.obj.spec.pod_sets, tas_flavors)

    def _fits(self, e: Entry, usage: Usage, targets: list[Target]) -> int:
        """Kueue's fits: FITS_OK, FITS_NO_QUOTA or FITS_NO_TAS, with this
        cycle's victims and the entry's targets taken out first."""
        cq = e.cq
        in_tree = self.preempted_in_tree.get(id(cq.node.root()))
        victims = dict(in_tree or {})
        for t in targets:
            victims[t.info.key] = t.info
        if not victims:  # nothing to take out first
            ok = all(cq_available(cq.node, fr) >= q for fr, q in usage.items())
        else:
            revert = self.snap.simulate_removal(victims.values())
            ok = all(cq_available(cq.node, fr) >= q for fr, q in usage.items())
            revert()
        if not ok:
            return FITS_NO_QUOTA
        tas_usage = self._tas_usage(e) if self.tas_touched else None
        touched = self.tas_touched
        if tas_usage and any(d[0] in touched for ds in tas_usage.values() for d in ds):
            tas = self._tas_for(e.info, cq)
            # Victims anywhere free their domains (the topology is shared).
            gone = frozenset(self.preempted) | frozenset(victims)
            if tas is not None and not tas.usage_fits(tas_usage, gone):
                return FITS_NO_TAS
        return FITS_OK

    def _update_assignment(self, e: Entry) -> tuple[Usage, bool]:
        """Kueue's updateAssignmentIfNeeded."""
        usage = self._net_usage(e)
        overlap = any(t.info.key in self.preempted for t in e.targets)
        overlap = overlap and self.state.gate("RecomputeAssignmentUponPreemptionTargetsOverlap")
        mode = e.assignment.mode()
        if not overlap and mode == NO_FIT:
            return usage, False  # _process leaves it before consulting fits
        if not overlap and mode == PREEMPT_MODE and not e.targets and not self.tas_touched:
            # Its fit is not consulted; only a topology that no longer fits
            # (changed in this cycle) would send it to be recomputed.
            return usage, False
        check = self._fits(e, usage, e.targets)
        recompute_tas = check == FITS_NO_TAS and self.state.gate(
            "TASRecomputeAssignmentWithinSchedulingCycle"
        )
        if not overlap and not recompute_tas:
            return usage, check == FITS_OK
        put_back = None
        if overlap:
            # The victims of other preemptions in this cycle, as if gone. Only
            # those in this queue's tree can change its assignment.
            victims = self.preempted_in_tree.get(id(e.cq.node.root()), {})
            put_back = self.snap.lift(list(victims.values()))
        e.info.last_assignment = None
        nomination = e.assignment.flavors_by_podset()
        a, t = self.assignments(e.info, e.cq, nomination)
        self._record(e, a, t)
        if put_back is not None:
            put_back()
            if a.mode() == FIT:
                a.forced_mode = DEFERRED_FIT
        usage = self._net_usage(e)
        return usage, self._fits(e, usage, t) == FITS_OK

    def _process(self, e: Entry) -> Decision | None:
        """What to do with the entry: a decision to apply now, or None (it
        waits; its requeue comes at the end of the cycle)."""
        variant = self.concurrent_admission and _parent_uid(e.info.obj) is not None
        if variant and self._admitted_sibling(e, more_favorable=True) is not None:
            # Kueue's processEntry for a ConcurrentAdmission variant.
            e.status = "skipped"
            e.message = "A more favorable variant is already admitted"
            e.qr_reason = "PendingEvaluation"
            self.result.waiting[e.info.key] = e.message
            return None
        usage, fits = self._update_assignment(e)
        cq = e.cq
        mode = e.assignment.mode()
        if mode == NO_FIT:
            e.requeue_reason = rq.NO_FIT
            e.qr_reason = e.assignment.no_fit_reason
            self.result.waiting[e.info.key] = e.message
            return None
        if mode == PREEMPT_MODE and not e.targets:
            e.requeue_reason = rq.PREEMPTION_NO_CANDIDATES
            e.qr_reason = "WaitingForQuota"
            if cq.preemption.reclaim_within_cohort != "Any" or e.preemptor:
                # Kueue's reserveCapacityForUnreclaimablePreempt
                self._hold(cq, self._to_reserve(e), e)
            self.result.waiting[e.info.key] = e.message
            return None
        if (
            mode == PREEMPT_MODE
            and self.preemption_gates
            and has_closed_preemption_gate(e.info.obj)
        ):
            # Kueue's markPreemptionGated: no preemption is issued; all
            # flavors are tried again next time.
            e.status = "preemptionGated"
            e.message = "Workload requires preemption, but it's gated"
            e.qr_reason = "AdmissionGated"
            e.requeue_reason = rq.PREEMPTION_GATED
            e.info.last_assignment = None
            self.result.waiting[e.info.key] = e.message
            return None
        if mode == DEFERRED_FIT:
            e.message = (
                "Workload has overlapping preemption targets with another workload, "
                "but will fit after these preemptions complete"
            )
            e.qr_reason = "WaitingForPreemptedWorkloads"
            e.requeue_reason = rq.PENDING_PREEMPTION
            e.info.last_assignment = None
            self._hold(cq, usage, e)
            self.result.waiting[e.info.key] = e.message
            return None
        if any(t.info.key in self.preempted for t in e.targets):
            e.status = "skipped"
            e.message = "Workload has overlapping preemption targets with another workload"
            e.qr_reason = "WaitingForQuota"
            self.result.waiting[e.info.key] = e.message
            return None
        if not fits:
            e.status = "skipped"
            e.message = "Workload no longer fits after processing another workload"
            e.qr_reason = "WaitingForQuota"
            self.result.waiting[e.info.key] = e.message
            return None
        in_tree = self.preempted_in_tree.setdefault(id(cq.node.root()), {})
        for t in e.targets:
            self.preempted[t.info.key] = t.info
            in_tree[t.info.key] = t.info
        # The replaced slice is finished once this one is admitted, never preempted.
        targets, old_slice = self._split_replaced(e)
        if mode == PREEMPT_MODE:
            self._hold(cq, usage, e)
            e.qr_reason = "WaitingForPreemptedWorkloads"
            e.info.last_assignment = None
            n = len(targets)  # (each one counts, an already evicted one too)
            if n:
                e.message += f". Pending the preemption of {n} workload(s)"
                e.requeue_reason = rq.PENDING_PREEMPTION
            self.result.waiting[e.info.key] = e.message
            return Preempt(e.info, cq, targets)
        if self.timers.blocked_by_pods_ready():
            e.qr_reason = "WaitingForPodsReady"
            e.message = "waiting for all admitted workloads to be in PodsReady condition"
            e.status = "skipped"
            self.result.waiting[e.info.key] = e.message
            return None
        if variant:
            victim = self._admitted_sibling(e, more_favorable=False)
            if victim is not None:
                if not self._migration_allowed(e):
                    e.message = "Target flavor is below LastAcceptableFlavorName"
                    e.qr_reason = "PendingEvaluation"
                    self.result.waiting[e.info.key] = e.message
                    return None
                # Kueue's issueMigration: the sibling on a less preferred
                # flavor is evicted; this one waits for its quota.
                e.qr_reason = "WaitingForPreemptedWorkloads"
                e.info.last_assignment = None
                e.requeue_reason = rq.PENDING_MIGRATION
                e.message += ". Pending the migration of 1 workload(s)"
                self.result.waiting[e.info.key] = e.message
                return Migrate(victim.key, e.info)
        e.status = "assumed"
        self.result.admitted.append(e.info.key)
        if any(ps.topology is not None for ps in e.assignment.podsets):
            # (its placement is in the holders once applied)
            for domains in self._tas_usage(e).values():
                self.tas_touched.update(d[0] for d in domains)
        return Admit(e.info, cq, e.assignment, old_slice)

    def _to_reserve(self, e: Entry) -> Usage:
        cq = e.cq
        out: Usage = {}
        for fr, v in e.assignment.usage.items():
            q = cq.node.quotas.get(fr)
            nominal = q.nominal if q else 0
            used = cq.node.usage.get(fr, 0)
            if e.assignment.borrowing > 0:
                if q is None or q.borrowing_limit is None:
                    out[fr] = v
                else:
                    out[fr] = min(v, nominal + q.borrowing_limit - used)
            else:
                out[fr] = max(0, min(v, nominal - used))
        return out

    def _requeue(self, e: Entry) -> Requeue:
        if e.status != "" and e.requeue_reason == rq.GENERIC:
            e.requeue_reason = rq.FAILED_AFTER_NOMINATION
        return Requeue(
            e.info,
            e.requeue_reason,
            e.qr_reason,
            e.message,
            e.skip_status,
            e.status == "preemptionGated",
        )


_WORKLOAD_API: Final = "kueue.x-k8s.io/v1beta2"

# Kueue's FitsCheck.
FITS_OK: Final = 0
FITS_NO_QUOTA: Final = 1
FITS_NO_TAS: Final = 2


def _drop_held(held: list[tuple[str, dict[str, int]]], n: int) -> None:
    del held[n:]


def _parent_uid(wl: kt.Workload) -> str | None:
    """A ConcurrentAdmission variant's parent Workload (its owner), or None."""
    for ref in wl.metadata.owner_references or ():
        if ref.kind == "Workload" and ref.api_version == _WORKLOAD_API:
            return ref.uid
    return None


def _variant_flavor_index(info: WorkloadInfo, flavors: tuple[str, ...]) -> int | None:
    """The position of a variant's flavor (the first its allowed-flavors
    annotation names) among the flavors of its queue's first group."""
    listed = _listed_flavors(info)
    first = listed[0] if listed else ""
    if not first or first not in flavors:
        return None
    return flavors.index(first)


def _listed_flavors(info: WorkloadInfo) -> list[str] | None:
    """The workload-allowed-resource-flavors annotation as Kueue's csv.Parse
    reads it (items trimmed; none when blank), or None without it."""
    val = (info.obj.metadata.annotations or {}).get(ALLOWED_FLAVORS_ANNOTATION)
    if val is None:
        return None
    return [part.strip() for part in val.split(",")] if val.strip() else []
