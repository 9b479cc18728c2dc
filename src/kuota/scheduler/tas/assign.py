"""TAS in the flavor assigner (Kueue's tas_flavorassigner.go and the TAS half
of assignFlavors): which pod sets ask for topology, whether a flavor can serve
them, and their placement once quota is found: a pod set whose pods fit the
quota but not the topology needs preemption; one that would not fit even on
an empty topology does not fit at all."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Final

from kuota.api.kueue import types as kt
from kuota.api.kueue.v1beta1 import domains_of, ta_from_domains
from kuota.quota.requests import pod_requests
from kuota.quota.workload import WorkloadInfo, has_quota_reservation
from kuota.scheduler.cache import ClusterQueueState
from kuota.scheduler.flavorassigner.assignment import (
    FIT,
    NO_FIT,
    PREEMPT_MODE,
    Assignment,
    PodSetAssignment,
)
from kuota.scheduler.tas.placement import Assignment as TopologyAssignment
from kuota.scheduler.tas.placement import PodSetRequest, find, has_level
from kuota.scheduler.tas.snapshot import (
    HOSTNAME,
    PODS,
    FlavorTopology,
    TASNode,
    count_in,
    domain_id,
    node_matches_flavor,
)

TOPOLOGY_PLACEMENT_FAILED: Final = "TopologyPlacementFailed"
# DelayedTopologyRequestState (workload_types.go).
DELAYED_PENDING: Final = "Pending"
DELAYED_READY: Final = "Ready"


def explicit(ps: kt.PodSet) -> bool:
    """workload.IsExplicitlyRequestingTAS."""
    tr = ps.topology_request
    return tr is not None and (
        tr.unconstrained is not None
        or tr.required is not None
        or tr.preferred is not None
        or tr.pod_set_slice_required_topology is not None
        or tr.pod_set_slice_size is not None
        or bool(tr.podset_slice_required_topology_constraints)
    )


def slice_layers(tr: kt.PodSetTopologyRequest | None) -> list[tuple[str, int]]:
    """utiltas.PodSetSliceRequiredTopologyConstraints: the multi-layer
    constraints, else the one slice layer (size 0 when not given), as
    (level, size) outermost first."""
    if tr is None:
        return []
    if tr.podset_slice_required_topology_constraints:
        return [(c.topology, c.size) for c in tr.podset_slice_required_topology_constraints]
    if tr.pod_set_slice_required_topology is None:
        return []
    return [(tr.pod_set_slice_required_topology, tr.pod_set_slice_size or 0)]


class TASInputs:
    """What the core knows of the cluster for TAS: Topologies, the flavors,
    the nodes, the usage of pods Kueue did not place (per node), and the
    workloads holding topology assignments."""

    def __init__(self) -> None:
        self.topologies: dict[str, kt.Topology] = {}
        self.nodes: dict[str, TASNode] = {}
        # pod key -> (node, requests) of the pods Kueue did not place
        self.pods: dict[str, tuple[str, dict[str, int]]] = {}
        self.least_free_profile = True  # TASProfileMixed
        self.balanced = False  # TASBalancedPlacement
        self.overlapping = True  # TASHandleOverlappingFlavors
        # Per workload, its topology usage for a set of flavors, kept while
        # its admission is the same object (a cycle builds many snapshots
        # from the same holders); cleared after each cycle.
        self.usage_cache: dict[
            str, tuple[object, frozenset[str], list[tuple[str, dict[str, int]]]]
        ] = {}
        # Per flavor, the usage of failed nodes' pods placed again in this
        # cycle, at their old domains: Kueue's snapshot of the cycle still
        # holds the old assignment (cleared after the cycle).
        self.replaced: dict[str, list[tuple[str, dict[str, int]]]] = {}
        # Per flavor, the topology usage this cycle has reserved so far
        # (Kueue's ClusterQueueSnapshot.AddUsage of a preemptor's or a
        # deferred workload's TAS usage); the cycle takes it out at its end.
        self.held: dict[str, list[tuple[str, dict[str, int]]]] = {}

    def flavor_topology(
        self,
        flavor: kt.ResourceFlavor,
        workloads: Iterable[kt.Workload],
        node_flavors: frozenset[str] = frozenset(),
    ) -> FlavorTopology | None:
        """The flavor's snapshot (TASFlavorCache.snapshot), or None when its
        Topology is not known. With TASHandleOverlappingFlavors, a topology
        whose lowest level is the node counts on each node the usage of every
        flavor of ``node_flavors`` (those TAS flavors whose lowest level is the
        node too): flavors selecting the same nodes share them."""
        tname = flavor.spec.topology_name
        topo = self.topologies.get(tname) if tname is not None else None
        if tname is None or topo is None:
            return None
        levels = [lv.node_label for lv in topo.spec.levels]
        labels = flavor.spec.node_labels or {}
        nodes = [
            n
            for _, n in sorted(self.nodes.items())
            if n.ready and node_matches_flavor(n.labels, labels, levels)
        ]
        ft = FlavorTopology(tname, levels, nodes, list(flavor.spec.tolerations or ()))
        for node, usage in self.pods.values():
            ft.add_non_tas_usage(node, usage)
        fname = flavor.metadata.name
        counted = {fname}
        if self.overlapping and ft.lowest_is_node and fname in node_flavors:
            counted = set(node_flavors)
        fkey = frozenset(counted)
        cache = self.usage_cache
        for wl in workloads:
            adm = wl.status.admission if wl.status is not None else None
            if adm is None:
                continue
            key = f"{wl.metadata.namespace}/{wl.metadata.name}"
            hit = cache.get(key)
            if hit is not None and hit[0] is adm and hit[1] == fkey:
                usages = hit[2]
            else:
                usages = tas_usage(wl, fkey)
                cache[key] = (adm, fkey, usages)
            for did, usage in usages:
                ft.add_tas_usage(did, usage)
        for did, usage in self.replaced.get(fname, ()):
            ft.add_tas_usage(did, usage)
        for did, usage in self.held.get(fname, ()):
            ft.add_tas_usage(did, usage)
        return ft


def tas_usage(wl: kt.Workload, flavors: Collection[str]) -> list[tuple[str, dict[str, int]]]:
    """Workload.TASUsage for the flavors: per assigned domain, its pods' requests."""
    adm = wl.status.admission if wl.status is not None else None
    if adm is None:
        return []
    out: list[tuple[str, dict[str, int]]] = []
    specs = {ps.name: ps for ps in wl.spec.pod_sets}
    for psa in adm.pod_set_assignments:
        ta = psa.topology_assignment
        if ta is None or not any(f in flavors for f in (psa.flavors or {}).values()):
            continue
        ps = specs.get(psa.name)
        if ps is None:
            continue
        single = dict(pod_requests(ps.template.spec)) if ps.template.spec is not None else {}
        for values, count in domains_of(ta):
            usage = {r: q * count for r, q in single.items()}
            usage[PODS] = usage.get(PODS, 0) + count
            out.append((domain_id(values), usage))
    return out


def assignment_tas_usage(
    a: Assignment, pod_sets: list[kt.PodSet], tas_flavors: Iterable[str]
) -> dict[str, list[tuple[str, dict[str, int], int]]]:
    """Assignment.ComputeTASNetUsage of a new workload: per TAS flavor, each
    assigned domain with its single pod's requests and pod count."""
    out: dict[str, list[tuple[str, dict[str, int], int]]] = {}
    specs = {ps.name: ps for ps in pod_sets}
    tas = set(tas_flavors)
    for psa in a.podsets:
        ta = psa.topology
        ps = specs.get(psa.name)
        if ta is None or ps is None:
            continue
        fname = next((f.name for f in psa.flavors.values() if f.name in tas), None)
        if fname is None:
            continue
        single = dict(pod_requests(ps.template.spec)) if ps.template.spec is not None else {}
        dom = out.setdefault(fname, [])
        for values, count in domains_of(ta):
            dom.append((domain_id(values), single, count))
    return out


def to_api(a: TopologyAssignment) -> kt.TopologyAssignment:
    """tas.V1Beta2From: the domains packed into one slice."""
    return ta_from_domains(a.levels, a.domains)


def request_of(
    ps: kt.PodSet, count: int, implied: bool, updates: list[kt.PodSetUpdate]
) -> PodSetRequest:
    """TASPodSetRequests of a pod set: its pods' requests, topology request,
    and node selection with the ready admission checks' updates merged."""
    spec = ps.template.spec
    tr = ps.topology_request
    selector = dict(spec.node_selector or {}) if spec is not None else {}
    tolerations = list(spec.tolerations or ()) if spec is not None else []
    for u in updates:
        selector.update(u.node_selector or {})
        tolerations += list(u.tolerations or ())
    aff = spec.affinity if spec is not None else None
    na = aff.node_affinity if aff is not None else None
    layers = slice_layers(tr)
    return PodSetRequest(
        ps.name,
        count,
        dict(pod_requests(spec)) if spec is not None else {},
        required=tr.required if tr is not None else None,
        preferred=tr.preferred if tr is not None else None,
        unconstrained=bool(tr is not None and tr.unconstrained),
        slice_level=layers[0][0] if layers else None,
        slice_size=layers[0][1] if layers else None,
        inner_layers=layers[1:],
        implied=implied,
        group=tr.pod_set_group_name if tr is not None else None,
        node_selector=selector,
        affinity=na.required_during_scheduling_ignored_during_execution if na is not None else None,
        tolerations=tolerations,
    )


def flavor_mismatch(
    ps: kt.PodSet,
    fname: str,
    flavor: kt.ResourceFlavor,
    tas_only: bool,
    topo: FlavorTopology | None,
    covered: frozenset[str],
) -> str | None:
    """checkPodSetAndFlavorMatchForTAS."""
    if explicit(ps) or tas_only:
        if not explicit(ps):
            return None  # a TAS-only queue: every flavor is a TAS flavor
        if flavor.spec.topology_name is None:
            spec = ps.template.spec
            req = pod_requests(spec) if spec is not None else {}
            if not any(r in covered for r in req):
                return None
            return f'Flavor "{fname}" does not support TopologyAwareScheduling'
        if topo is None:
            return f'Flavor "{fname}" information missing in TAS cache'
        if not has_level(topo, request_of(ps, ps.count, False, [])):
            return f'Flavor "{fname}" does not contain the requested level'
        return None
    if flavor.spec.topology_name is not None:
        return f'Flavor "{fname}" supports only TopologyAwareScheduling'
    return None


def find_for_flavor(
    topo: FlavorTopology,
    requests: list[PodSetRequest],
    simulate_empty: bool,
    least_free_profile: bool,
    balanced: bool = False,
) -> tuple[dict[str, TopologyAssignment], str, str]:
    """FindTopologyAssignmentsForFlavor: pod sets in order, a group's two pod
    sets together (the one-pod set its leader), each placement's usage assumed
    by the next. Returns the assignments, or the failing pod set and reason."""
    groups: dict[str, list[PodSetRequest]] = {}
    order: list[str] = []
    for i, r in enumerate(requests):
        key = r.group if r.group is not None else str(i)
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(r)
    assumed: dict[str, dict[str, int]] = {}
    out: dict[str, TopologyAssignment] = {}
    for key in order:
        trs = groups[key]
        leader: PodSetRequest | None = None
        workers = trs[0]
        if len(trs) == 2:
            # findLeaderAndWorkers: the pod set of one pod leads.
            if trs[0].count == 1:
                leader, workers = trs[0], trs[1]
            else:
                leader, workers = trs[1], trs[0]
        found, reason = find(
            topo, workers, leader, assumed, simulate_empty, least_free_profile, balanced
        )
        if reason:
            return out, workers.name, reason
        for r in trs:
            a = found[r.name]
            out[r.name] = a
            single = dict(r.single)
            single[PODS] = single.get(PODS, 0) + 1
            for values, count in a.domains:
                did = values[-1] if topo.lowest_is_node else domain_id(values)
                u = assumed.setdefault(did, {})
                for res, q in single.items():
                    u[res] = u.get(res, 0) + q * count
    return out, "", ""


class TASAssigner:
    """TAS for one workload in one ClusterQueue: the queue's TAS flavors'
    snapshots (built once, on first need) and the two passes of Kueue's
    assignFlavors, on the live usage then on an empty topology."""

    def __init__(
        self,
        inputs: TASInputs,
        flavors: dict[str, kt.ResourceFlavor],
        cq_flavors: list[str],
        holders: dict[str, ClusterQueueState],
        pod_sets: list[kt.PodSet],
        multikueue: bool = False,
        prov_flavors: frozenset[str] = frozenset(),
    ) -> None:
        self.inputs = inputs
        # HasMultiKueueAdmissionCheck, and the flavors a ProvisioningRequest
        # check applies to (flavorsWithProvReqAdmissionCheck): where the
        # topology is left for later (podSetTopologyRequest).
        self.multikueue = multikueue
        self.prov_flavors = prov_flavors
        self.flavors = flavors
        # The quota holders (key -> queue), live: a preemption search takes
        # candidates out of them, and their topology usage goes with them.
        self.holders = holders
        self.pod_sets = pod_sets
        # The pod sets' requests per TAS flavor, kept from place() for fits().
        self.requests: dict[str, list[PodSetRequest]] = {}
        self.tas_flavors = [
            f for f in cq_flavors if f in flavors and flavors[f].spec.topology_name is not None
        ]
        # IsTASOnly: every flavor of the queue names a Topology.
        self.tas_only = bool(cq_flavors) and len(self.tas_flavors) == len(cq_flavors)
        self._snapshots: dict[str, FlavorTopology | None] = {}

    def snapshot(self, fname: str) -> FlavorTopology | None:
        if fname not in self._snapshots:
            self._snapshots[fname] = self._fresh(fname)
        return self._snapshots[fname]

    def _fresh(self, fname: str, without: frozenset[str] = frozenset()) -> FlavorTopology | None:
        """The flavor's topology with the usage of the quota holders now
        (but those of ``without``, workloads simulated gone)."""
        rf = self.flavors.get(fname)
        if rf is None:
            return None
        held = [
            cq.workloads[k].obj
            for k, cq in self.holders.items()
            if k in cq.workloads and k not in without
        ]
        return self.inputs.flavor_topology(rf, held, self._node_flavors())

    def _node_flavors(self) -> frozenset[str]:
        """The TAS flavors whose topology's lowest level is the node."""
        topologies = self.inputs.topologies
        out = []
        for name, rf in self.flavors.items():
            topo = topologies.get(rf.spec.topology_name or "")
            if (
                topo is not None
                and topo.spec.levels
                and topo.spec.levels[-1].node_label == HOSTNAME
            ):
                out.append(name)
        return frozenset(out)

    def place_for_preemption(self, a: Assignment, info: WorkloadInfo, simulate_empty: bool) -> None:
        """Kueue's updateAssignmentForTAS: a preempting assignment gets the
        topology it would take once its targets are gone (the caller takes
        them out of the holders), or, with no targets, on an empty topology:
        the capacity the cycle reserves for it."""
        names = {ps.name: i for i, ps in enumerate(self.pod_sets)}
        least = self.inputs.least_free_profile
        balanced = self.inputs.balanced
        requests = self._requests_of(a, info, False)
        for fname in sorted(requests):
            topo = self._fresh(fname)
            if topo is None:
                continue
            got, _, reason = find_for_flavor(topo, requests[fname], simulate_empty, least, balanced)
            for r in requests[fname]:
                ta = got.get(r.name) if not reason else None
                a.podsets[names[r.name]].topology = to_api(ta) if ta is not None else None

    def usage_fits(
        self, usage: dict[str, list[tuple[str, dict[str, int], int]]], without: frozenset[str]
    ) -> bool:
        """TASFlavorSnapshot.Fits for each flavor: every domain's leaf has room
        for its pods, on the usage now (the holders of ``without`` gone)."""
        for fname, domains in usage.items():
            topo = self._fresh(fname, without)
            if topo is None:
                continue
            for did, single, count in domains:
                leaf = topo.leaves.get(did)
                if leaf is None:
                    return False
                if count_in(single, topo.remaining(leaf, False))[0] < count:
                    return False
        return True

    def fits(self) -> bool:
        """workloadFits' TAS half for the preemption search: the pod sets
        still placed, on the usage of the holders left (candidates taken out)."""
        least = self.inputs.least_free_profile
        balanced = self.inputs.balanced
        for fname in sorted(self.requests):
            topo = self._fresh(fname)
            if (
                topo is not None
                and find_for_flavor(topo, self.requests[fname], False, least, balanced)[2]
            ):
                return False
        return True

    def requested(self, ps: kt.PodSet) -> bool:
        """isTASRequested: explicitly, or implied by a TAS-only queue."""
        return explicit(ps) or self.tas_only

    def flavor_mismatch(self, ps_index: int, fname: str, covered: frozenset[str]) -> str | None:
        rf = self.flavors.get(fname)
        if rf is None:
            return None
        ps = self.pod_sets[ps_index]
        topo = self.snapshot(fname) if rf.spec.topology_name is not None else None
        return flavor_mismatch(ps, fname, rf, self.tas_only, topo, covered)

    def _requests_of(
        self, a: Assignment, info: WorkloadInfo, mark_errors: bool
    ) -> dict[str, list[PodSetRequest]]:
        """Assignment.WorkloadsTopologyRequests: the TAS pod sets' requests
        per flavor (a pod set without one TAS flavor marked, if asked)."""
        by_flavor: dict[str, list[PodSetRequest]] = {}
        ready_updates: list[kt.PodSetUpdate] = []
        st = info.obj.status
        for ac in (st.admission_checks if st is not None else None) or ():
            if ac.state == "Ready":
                ready_updates += list(ac.pod_set_updates or ())
        for i, ps in enumerate(self.pod_sets):
            if i >= len(a.podsets) or not self.requested(ps):
                continue
            psa = a.podsets[i]
            if psa.error is not None or psa.count == 0:
                continue
            tas = sorted({f.name for f in psa.flavors.values() if f.name in self.tas_flavors})
            if len(tas) != 1:
                if mark_errors and not tas:
                    self._error(a, psa, "no TAS flavor assigned")
                elif mark_errors:
                    self._error(a, psa, f"multiple TAS flavors assigned: {', '.join(tas)}")
                continue
            if self.multikueue or (
                tas[0] in self.prov_flavors and not has_quota_reservation(info.obj)
            ):
                # The topology is assigned by the MultiKueue worker, or once
                # the ProvisioningRequest is provisioned (the second pass).
                psa.delayed = DELAYED_PENDING
                continue
            updates = [u for u in ready_updates if u.name == ps.name]
            implied = not explicit(ps) and self.tas_only
            by_flavor.setdefault(tas[0], []).append(request_of(ps, psa.count, implied, updates))
        return by_flavor

    def place(self, a: Assignment, info: WorkloadInfo, cq: ClusterQueueState) -> None:
        """The TAS half of assignFlavors on a quota assignment that fits or
        needs preemption."""
        by_flavor = self.requests = self._requests_of(a, info, True)
        if not by_flavor:
            return
        names = {ps.name: i for i, ps in enumerate(self.pod_sets)}
        least = self.inputs.least_free_profile
        balanced = self.inputs.balanced
        if a.mode() == FIT:
            failed = False
            found: dict[str, TopologyAssignment] = {}
            for fname in sorted(by_flavor):
                topo = self.snapshot(fname)
                if topo is None:
                    continue
                got, ps_name, reason = find_for_flavor(
                    topo, by_flavor[fname], False, least, balanced
                )
                if reason:
                    psa = a.podsets[names[ps_name]]
                    psa.reasons.append(reason)
                    _set_mode(a, psa, PREEMPT_MODE)
                    failed = True
                    break
                found.update(got)
            if not failed:
                for ps_name, ta in found.items():
                    a.podsets[names[ps_name]].topology = to_api(ta)
        if a.mode() == PREEMPT_MODE:
            for fname in sorted(by_flavor):
                topo = self.snapshot(fname)
                if topo is None:
                    continue
                _, ps_name, reason = find_for_flavor(topo, by_flavor[fname], True, least, balanced)
                if reason:
                    # Not even an empty topology holds it: no preemption helps.
                    psa = a.podsets[names[ps_name]]
                    psa.attempts[fname] = (NO_FIT, TOPOLOGY_PLACEMENT_FAILED)
                    _set_mode(a, psa, NO_FIT)
                    return
            for reqs in by_flavor.values():
                for r in reqs:
                    _set_mode(a, a.podsets[names[r.name]], PREEMPT_MODE)

    def _error(self, a: Assignment, psa: PodSetAssignment, err: str) -> None:
        psa.error = err
        a.podsets_mode = None
        a.forced_mode = None


def _set_mode(a: Assignment, psa: PodSetAssignment, mode: int) -> None:
    """updateMode: every flavor of the pod set, and the assignment's mode."""
    for f in psa.flavors.values():
        f.mode = mode
    a.podsets_mode = None
    a.forced_mode = None
