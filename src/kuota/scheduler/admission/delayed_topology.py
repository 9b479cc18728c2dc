"""The scheduler's second pass for a delayed topology request (Kueue's
``needsSecondPassForDelayedAssignment`` within ``NeedsSecondPass``, and the
second scheduling pass of a workload whose topology the first pass left
Pending: tas_flavorassigner.go ``podSetTopologyRequest``).

A ClusterQueue with a ProvisioningRequest check on a TAS flavor reserves
quota without a topology (delayedTopologyRequest Pending). Once every check
is Ready (the capacity provisioned), the workload, still holding its quota
and flavors, has the topology of those pod sets computed on the flavor's
topology now (the nodes provisioned included), written with
delayedTopologyRequest Ready, and is admitted. Where the topology does not
fit it keeps its reservation and is tried again after a backoff (Kueue's
second-pass queue: 1s doubling up to 30s), with Kueue's Warning
``SecondPassFailed`` and the reason it does not fit.

A MultiKueue check's delayed requests never come here: the worker assigns
the topology and the manager's requests turn Ready with the check."""

from __future__ import annotations

from datetime import timedelta
from typing import Final

import msgspec

from kuota.api.conditions import find_condition
from kuota.api.kueue import types as kt
from kuota.api.kueue.multikueue_types import CONTROLLER_NAME as MULTIKUEUE_CONTROLLER
from kuota.quota.workload import has_quota_reservation, is_admitted, is_evicted, is_finished
from kuota.scheduler.admission.admission_checks import topology_pending
from kuota.scheduler.admission.state import CoreState
from kuota.scheduler.admission.workloads import WorkloadController
from kuota.scheduler.tas.assign import (
    DELAYED_PENDING,
    DELAYED_READY,
    explicit,
    find_for_flavor,
    request_of,
    to_api,
)
from kuota.scheduler.tas.placement import PodSetRequest

# Kueue's secondPassQueue backoff: initialBackoff, factor 2, maxBackoff.
SECOND_PASS_BACKOFF: Final = timedelta(seconds=1)
SECOND_PASS_MAX_BACKOFF: Final = timedelta(seconds=30)
SECOND_PASS_FAILED: Final = "SecondPassFailed"  # the Warning of each failed second pass


def needs_second_pass(wl: kt.Workload) -> bool:
    """NeedsSecondPass's needsSecondPassForDelayedAssignment: reserving,
    every admission check Ready, a topology request Pending, not admitted."""
    if is_finished(wl) or is_evicted(wl) or not has_quota_reservation(wl):
        return False
    qr = find_condition(wl, "QuotaReserved")
    if qr is not None and qr.reason == "OnHold":
        return False
    checks = (wl.status.admission_checks if wl.status is not None else None) or ()
    return (
        len(checks) > 0
        and all(c.state == "Ready" for c in checks)
        and topology_pending(wl)
        and not is_admitted(wl)
    )


class DelayedTopology:
    def __init__(self, state: CoreState, wlc: WorkloadController) -> None:
        self.state = state
        self.wlc = wlc

    def run(self) -> None:
        st = self.state
        if not st.gate("TopologyAwareScheduling"):
            return
        for key in sorted(st.delayed_topology):
            wl = st.workloads.get(key)
            if wl is None or not topology_pending(wl):
                st.delayed_topology.discard(key)
                st.second_pass_at.pop(key, None)
                st.second_pass_failures.pop(key, None)
                continue
            if key in st.second_pass_at or not needs_second_pass(wl) or self._multikueue(key):
                # Backing off, its checks not all Ready, or a MultiKueue
                # queue's: Kueue's second pass delays that one again (only a
                # worker assigns it).
                continue
            failed = self._assign(key, wl)
            if not failed:
                st.second_pass_failures.pop(key, None)
                self.wlc.sync(key)  # SyncAdmittedCondition: admitted now
            else:
                st.events.append((key, "Warning", SECOND_PASS_FAILED, failed))
                # QueueSecondPassIfNeeded: again after 1s, 2s, 4s ... 30s.
                n = st.second_pass_failures.get(key, 0)
                st.second_pass_failures[key] = n + 1
                delay = min(SECOND_PASS_BACKOFF * (2**n), SECOND_PASS_MAX_BACKOFF)
                st.second_pass_at[key] = st.now + delay

    def _multikueue(self, key: str) -> bool:
        """HasMultiKueueAdmissionCheck of the queue the workload holds quota in."""
        cq = self.state.snap.holders.get(key)
        checks = self.state.checks
        for name, _ in cq.admission_checks if cq is not None else ():
            ac = checks.get(name)
            if ac is not None and ac.spec.controller_name == MULTIKUEUE_CONTROLLER:
                return True
        return False

    def _assign(self, key: str, wl: kt.Workload) -> str:
        """The Pending pod sets placed on their TAS flavors; the admission
        rewritten only if every one fits. Returns why not (Kueue's
        inadmissible message), "" when placed."""
        st = self.state
        adm = wl.status.admission if wl.status is not None else None
        cq = st.snap.holders.get(key)
        if adm is None or cq is None:
            return "the workload holds no quota"
        specs = {ps.name: ps for ps in wl.spec.pod_sets}
        cq_flavors = [f for rg in cq.resource_groups for f in rg.flavors]
        tas_only = bool(cq_flavors) and all(
            f in st.flavors and st.flavors[f].spec.topology_name is not None for f in cq_flavors
        )
        updates: list[kt.PodSetUpdate] = []
        for ac in wl.status.admission_checks or ():  # type: ignore[union-attr]
            if ac.state == "Ready":
                updates += list(ac.pod_set_updates or ())
        by_flavor: dict[str, list[PodSetRequest]] = {}
        for psa in adm.pod_set_assignments:
            ps = specs.get(psa.name)
            if (
                ps is None
                or psa.topology_assignment is not None
                or psa.delayed_topology_request != DELAYED_PENDING
            ):
                continue
            tas = sorted(
                {
                    f
                    for f in (psa.flavors or {}).values()
                    if f in st.flavors and st.flavors[f].spec.topology_name is not None
                }
            )
            if len(tas) != 1:  # onlyTASFlavor's errors
                why = (
                    "no TAS flavor assigned"
                    if not tas
                    else "more than one TAS flavor assigned: " + ", ".join(tas)
                )
                return cannot_assign(psa.name, why)
            implied = not explicit(ps) and tas_only
            count = psa.count if psa.count is not None else ps.count
            req = request_of(ps, count, implied, [u for u in updates if u.name == ps.name])
            by_flavor.setdefault(tas[0], []).append(req)
        held = [c.workloads[k].obj for k, c in st.snap.holders.items() if k in c.workloads]
        found: dict[str, kt.TopologyAssignment] = {}
        for fname in sorted(by_flavor):
            topo = st.tas.flavor_topology(st.flavors[fname], held)
            if topo is None:
                return cannot_assign(
                    by_flavor[fname][0].name, f'Flavor "{fname}" information missing in TAS cache'
                )
            got, failed_ps, reason = find_for_flavor(
                topo, by_flavor[fname], False, st.tas.least_free_profile, st.tas.balanced
            )
            if reason:
                return cannot_assign(failed_ps, reason)  # tried again in a later cycle
            found.update((name, to_api(a)) for name, a in got.items())
        assert wl.status is not None
        # (a new admission: the old one may be shared with a stored object)
        wl.status.admission = msgspec.structs.replace(
            adm,
            pod_set_assignments=[
                msgspec.structs.replace(
                    psa, topology_assignment=found[psa.name], delayed_topology_request=DELAYED_READY
                )
                if psa.name in found
                else psa
                for psa in adm.pod_set_assignments
            ],
        )
        st.touched.add(key)
        return ""


def cannot_assign(pod_set: str, reason: str) -> str:
    """Kueue's flavor assignment message for a pod set that does not fit."""
    return f"couldn't assign flavors to pod set {pod_set}: {reason}"


__all__ = ["DelayedTopology", "cannot_assign", "needs_second_pass"]
