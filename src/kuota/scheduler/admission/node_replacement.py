"""The scheduler's second pass after a node failure (Kueue's
TASFailedNodeReplacement: ``NeedsSecondPass`` / ``needsSecondPassAfterNodeFailure``
and the scheduler's handling of such entries).

An admitted workload whose ``status.unhealthyNodes`` names a node of its
topology assignment (Kueue's TAS node controller marks it) keeps its quota;
each pod set on that node has the node's pods placed again
(``tas.replacement``), the admission rewritten with the merged assignment
and ``unhealthyNodes`` cleared (Kueue's admit). When no replacement fits,
TASFailedNodeReplacementFailFast evicts it (reason ``NodeFailures``, ``Workload
was evicted as there was no replacement for unhealthy node(s): <nodes>``);
without that gate it keeps its assignment and is tried again, with the
Warning ``SecondPassFailed`` and the reason.

Second passes run before the heads of the cycle (Kueue takes them from its
second-pass queue with the heads). Two nodes marked at once (the controller
marks a second failed node only here; Kueue's node controller evicts then
and there) evict with Kueue's message for multiple failures."""

from __future__ import annotations

from typing import Final

import msgspec

from kuota.api.conditions import condition_true
from kuota.api.kueue import types as kt
from kuota.api.kueue.v1beta1 import domains_of, ta_from_domains
from kuota.quota.workload import has_quota_reservation, is_evicted, is_finished
from kuota.scheduler.admission.delayed_topology import SECOND_PASS_FAILED, cannot_assign
from kuota.scheduler.admission.state import CoreState
from kuota.scheduler.admission.workloads import WorkloadController
from kuota.scheduler.tas.assign import explicit, request_of
from kuota.scheduler.tas.replacement import find_replacement
from kuota.scheduler.tas.snapshot import PODS, FlavorTopology

NODE_FAILURES: Final = "NodeFailures"
MULTIPLE_FAILURES: Final = (
    "Workload eviction triggered due to multiple TAS assigned node failures, including: {}"
)
NO_REPLACEMENT: Final = "Workload was evicted as there was no replacement for unhealthy node(s): {}"


def unhealthy_names(wl: kt.Workload) -> list[str]:
    st = wl.status
    return [n.name for n in (st.unhealthy_nodes if st is not None else None) or ()]


def assigned_to_unhealthy(wl: kt.Workload) -> bool:
    """HasTopologyAssignmentWithUnhealthyNode: admitted, with a node of its
    topology assignment marked unhealthy."""
    names = set(unhealthy_names(wl))
    if not names or not condition_true(wl, "Admitted"):
        return False
    adm = wl.status.admission if wl.status is not None else None
    for psa in (adm.pod_set_assignments if adm is not None else None) or ():
        ta = psa.topology_assignment
        if ta is not None and any(v[-1] in names for v, _ in domains_of(ta) if v):
            return True
    return False


def needs_second_pass(wl: kt.Workload) -> bool:
    """needsSecondPassAfterNodeFailure, within NeedsSecondPass."""
    if is_finished(wl) or is_evicted(wl) or not has_quota_reservation(wl):
        return False
    conds = (wl.status.conditions if wl.status is not None else None) or ()
    qr = next((c for c in conds if c.type == "QuotaReserved"), None)
    if qr is not None and qr.reason == "OnHold":
        return False
    return assigned_to_unhealthy(wl)


def tas_usage_of(
    domains: list[tuple[list[str], int]], single: dict[str, int]
) -> list[tuple[str, dict[str, int]]]:
    """The usage of ``domains``' pods, per domain id (as ``tas_usage``)."""
    out = []
    for values, n in domains:
        u = {r: q * n for r, q in single.items()}
        u[PODS] = u.get(PODS, 0) + n
        out.append((",".join(values), u))
    return out


class NodeReplacement:
    def __init__(self, state: CoreState, wlc: WorkloadController) -> None:
        self.state = state
        self.wlc = wlc

    def run(self) -> None:
        st = self.state
        if not (st.gate("TopologyAwareScheduling") and st.gate("TASFailedNodeReplacement")):
            return
        for key in sorted(st.unhealthy):
            wl = st.workloads.get(key)
            if wl is None or not needs_second_pass(wl):
                continue
            names = unhealthy_names(wl)
            if len(names) > 1:
                self.wlc.evict(key, NODE_FAILURES, MULTIPLE_FAILURES.format(", ".join(names)))
                continue
            reason = self._replace(key, wl, names[0])
            if not reason:
                continue
            if st.gate("TASFailedNodeReplacementFailFast"):
                self.wlc.evict(key, NODE_FAILURES, NO_REPLACEMENT.format(",".join(names)))
            else:  # kept, tried again: requeueAndUpdate's Warning
                st.events.append((key, "Warning", SECOND_PASS_FAILED, reason))

    def _replace(self, key: str, wl: kt.Workload, node: str) -> str:
        """The pod sets on ``node`` placed again; their new assignments
        written (and unhealthyNodes cleared) only if every one fits. Returns
        the first failure's reason."""
        st = self.state
        adm = wl.status.admission if wl.status is not None else None
        if adm is None:
            return "no admission"
        specs = {ps.name: ps for ps in wl.spec.pod_sets}
        cq = st.snap.holders.get(key)
        held = [cq.workloads[k].obj for k, cq in st.snap.holders.items() if k in cq.workloads]
        cq_flavors = [f for rg in cq.resource_groups for f in rg.flavors] if cq is not None else []
        tas_only = bool(cq_flavors) and all(
            f in st.flavors and st.flavors[f].spec.topology_name is not None for f in cq_flavors
        )
        updates: list[kt.PodSetUpdate] = []
        for ac in wl.status.admission_checks or ():  # type: ignore[union-attr]
            if ac.state == "Ready":
                updates += list(ac.pod_set_updates or ())
        topologies: dict[str, FlavorTopology | None] = {}
        assumed: dict[str, dict[str, int]] = {}
        new: dict[str, kt.TopologyAssignment] = {}
        for psa in adm.pod_set_assignments:
            ta = psa.topology_assignment
            ps = specs.get(psa.name)
            if ta is None or ps is None:
                continue
            existing = domains_of(ta)
            if not any(v and v[-1] == node for v, _ in existing):
                continue
            fname = next((f for f in (psa.flavors or {}).values() if f in st.flavors), None)
            if fname is None:
                return f"flavor of pod set {psa.name} not found"
            if fname not in topologies:
                topologies[fname] = st.tas.flavor_topology(st.flavors[fname], held)
            topo = topologies[fname]
            if topo is None:
                return f'Flavor "{fname}" information missing in TAS cache'
            implied = not explicit(ps) and tas_only
            count = psa.count if psa.count is not None else ps.count
            req = request_of(ps, count, implied, [u for u in updates if u.name == ps.name])
            merged, added, reason = find_replacement(
                topo,
                req,
                existing,
                node,
                assumed,
                st.tas.least_free_profile,
                st.tas.balanced,
            )
            if reason:
                return cannot_assign(psa.name, reason)
            new[psa.name] = ta_from_domains(list(ta.levels), merged)
            gone = [(v, n) for v, n in existing if v and v[-1] == node]
            usage = [(did, u) for did, u in tas_usage_of(gone, req.single)]
            st.tas.replaced.setdefault(fname, []).extend(usage)
            # (addAssumedUsage: the next pod set sees these pods)
            single = dict(req.single)
            single[PODS] = single.get(PODS, 0) + 1
            for values, n in added:
                did = values[-1] if topo.lowest_is_node else ",".join(values)
                u = assumed.setdefault(did, {})
                for r, q in single.items():
                    u[r] = u.get(r, 0) + q * n
        assert wl.status is not None
        # (a new admission: the old one may be shared with a stored object)
        wl.status.admission = msgspec.structs.replace(
            adm,
            pod_set_assignments=[
                msgspec.structs.replace(psa, topology_assignment=new[psa.name])
                if psa.name in new
                else psa
                for psa in adm.pod_set_assignments
            ],
        )
        wl.status.unhealthy_nodes = None
        st.touched.add(key)
        st.timer_dirty.add(key)
        return ""
