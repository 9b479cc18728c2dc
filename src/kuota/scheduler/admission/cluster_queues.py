"""Kueue's ClusterQueue and LocalQueue controllers and the cache's part of
them: a queue's quota node, resource groups, checks and activity (with every
reason Kueue finds), stop policies and what they do to the workloads."""

from __future__ import annotations

from typing import Final

from kuota.api.conditions import condition_true, find_condition
from kuota.api.kueue import types as kt
from kuota.api.quantity import Quantity
from kuota.quota.afs import quantity_weight
from kuota.quota.requests import resource_value
from kuota.quota.tree import FR, Quota
from kuota.quota.workload import has_quota_reservation
from kuota.scheduler.admission.admission_fair_sharing import AdmissionFairSharing
from kuota.scheduler.admission.state import CoreState, key_of
from kuota.scheduler.admission.unreserved import UnreservedReasons
from kuota.scheduler.admission.wakes import Wakes
from kuota.scheduler.admission.workloads import WorkloadController
from kuota.scheduler.cache import ClusterQueueState, ResourceGroup

_MULTIKUEUE: Final = "kueue.x-k8s.io/multikueue"
_PROVISIONING: Final = "kueue.x-k8s.io/provisioning-request"


def quotas_of(groups: list[kt.ResourceGroup] | None) -> dict[FR, Quota]:
    out: dict[FR, Quota] = {}
    for rg in groups or ():
        for f in rg.flavors:
            for r in f.resources:
                out[(f.name, r.name)] = Quota(
                    resource_value(r.name, r.nominal_quota),
                    resource_value(r.name, r.borrowing_limit)
                    if r.borrowing_limit is not None
                    else None,
                    resource_value(r.name, r.lending_limit)
                    if r.lending_limit is not None
                    else None,
                )
    return out


def weight_of(fs: kt.FairSharing | None) -> float:
    if fs is None or fs.weight is None:
        return 1.0
    w = fs.weight
    assert isinstance(w, Quantity)
    return w.nanos / 1e9


class QueueController:
    def __init__(
        self,
        state: CoreState,
        fair: AdmissionFairSharing,
        reasons: UnreservedReasons,
        wakes: Wakes,
        wlc: WorkloadController,
    ) -> None:
        self.state = state
        self.fair = fair
        self.reasons = reasons
        self.wakes = wakes
        self.wlc = wlc

    def refresh_cqs(self) -> None:
        for name in list(self.state.cq_objs):
            self.refresh_cq(name, self.state.cq_objs[name], structural=False)

    def refresh_cq(self, name: str, old: kt.ClusterQueue | None, structural: bool = True) -> None:
        obj = self.state.cq_objs[name]
        spec = obj.spec
        quotas = quotas_of(spec.resource_groups)
        st = self.state.snap.cqs.get(name)
        created = st is None
        spec_changed = old is None or old.spec != spec or structural is False
        if st is None or (structural and spec_changed):
            self.state.queues.settle_wakes()
            node = self.state.tree.set_cluster_queue(
                name, spec.cohort_name, quotas, weight_of(spec.fair_sharing)
            )
            if st is None:
                st = self.state.snap.cqs[name] = ClusterQueueState(name, node)
            st.generation += 1
        st.resource_groups = tuple(
            ResourceGroup(frozenset(rg.covered_resources), tuple(f.name for f in rg.flavors))
            for rg in spec.resource_groups or ()
        )
        st.preemption = spec.preemption
        st.fungibility = spec.flavor_fungibility
        rules_before = st.admission_checks
        st.admission_checks = self.check_rules(spec)
        was = (st.active, st.inactive_reason)
        st.active, st.inactive_reason, st.inactive_message = self.cq_activity(name, st)
        ev_ts = self.state.eviction_timestamp
        usage = self.fair.lq_usage if self.fair.usage_based(name) else None
        q = self.state.queues.set_cluster_queue(
            name, spec.queueing_strategy, st.active, ev_ts, self.state.now, usage
        )
        q.strategy = spec.queueing_strategy
        stop = spec.stop_policy or "None"
        old_stop = (old.spec.stop_policy or "None") if old is not None else "None"
        if structural and old is not None and stop != old_stop:
            self.on_cq_stop_change(name, old_stop, stop)
        if structural and (
            old is None
            or stop != old_stop
            or old.spec.admission_checks_strategy != spec.admission_checks_strategy
        ):
            self.reasons.restamp(self.reasons.lqs_of(name))  # Kueue's workloadQueueHandler
        if structural or was[0] != st.active:
            self.wakes.retry(self.wakes.root_cqs(name))
        if not created and rules_before != st.admission_checks:
            # Kueue's workload controller sees every workload of the queue
            # again: checks no longer required go, new ones start Pending,
            # and a reservation whose checks are now all Ready is admitted.
            for key in sorted(st.workloads):
                self.wlc.sync(key)
        if created:
            # Kueue's Cache.AddClusterQueue: workloads that already hold quota
            # in this queue are counted in it from the start.
            for wkey in sorted(self.state.infos):
                held = self.state.infos[wkey]
                if held.cluster_queue == name and has_quota_reservation(held.obj):
                    self.wlc.sync(wkey, event=False)
        # The LocalQueue controller watches ClusterQueue creation and conditions.
        if created or was != (st.active, st.inactive_reason):
            self.fair.reconcile_cq(name)

    def check_rules(self, spec: kt.ClusterQueueSpec) -> tuple[tuple[str, frozenset[str]], ...]:
        acs = spec.admission_checks_strategy
        if acs is None:
            return ()
        return tuple((r.name, frozenset(r.on_flavors or ())) for r in acs.admission_checks or ())

    def cq_activity(self, name: str, st: ClusterQueueState) -> tuple[bool, str, str]:
        """Kueue's updateQueueStatus/inactiveReason: every reason found, in its
        order; the first names the condition, the message lists them all."""
        obj = self.state.cq_objs[name]
        if name in self.state.terminating:
            return False, "Terminating", "Can't admit new workloads; clusterQueue is terminating"
        reasons: list[str] = []
        messages: list[str] = []
        if (obj.spec.stop_policy or "None") != "None":
            reasons.append("Stopped")
            messages.append("is stopped")
        missing = [
            f for rg in st.resource_groups for f in rg.flavors if f not in self.state.flavors
        ]
        if missing:
            reasons.append("FlavorNotFound")
            messages.append(f"references missing ResourceFlavor(s): {','.join(missing)}")
        absent = sorted(c for c, _ in st.admission_checks if c not in self.state.checks)
        if absent:
            reasons.append("AdmissionCheckNotFound")
            messages.append(f"references missing AdmissionCheck(s): {','.join(absent)}")
        inactive = sorted(
            c
            for c, _ in st.admission_checks
            if c in self.state.checks and not condition_true(self.state.checks[c], "Active")
        )
        if inactive:
            reasons.append("AdmissionCheckInactive")
            messages.append(f"references inactive AdmissionCheck(s): {','.join(inactive)}")
        # MultiKueue's constraints (Kueue's updateWithAdmissionChecks): one
        # MultiKueue check, on every flavor, and never beside a
        # ProvisioningRequest check.
        by_controller: dict[str, list[str]] = {_MULTIKUEUE: [], _PROVISIONING: []}
        per_flavor: list[str] = []
        all_flavors = frozenset(f for rg in st.resource_groups for f in rg.flavors)
        for c, on in sorted(st.admission_checks):
            ac = self.state.checks.get(c)
            ctrl = ac.spec.controller_name if ac is not None else ""
            if ctrl in by_controller:
                by_controller[ctrl].append(c)
                if ctrl == _MULTIKUEUE and on and on != all_flavors:
                    per_flavor.append(c)
        mk, prov = by_controller[_MULTIKUEUE], by_controller[_PROVISIONING]
        if len(mk) > 1:
            reasons.append("MultipleMultiKueueAdmissionChecks")
            messages.append(
                "Cannot use multiple MultiKueue AdmissionChecks on the same ClusterQueue, "
                f"found: {','.join(mk)}"
            )
        if per_flavor:
            reasons.append("MultiKueueAdmissionCheckAppliedPerFlavor")
            messages.append(
                f"Cannot specify MultiKueue AdmissionCheck per flavor, found: {','.join(per_flavor)}"
            )
        if mk and prov:
            reasons.append("MultiKueueWithProvisioningRequest")
            messages.append(
                "Cannot use both MultiKueue and ProvisioningRequest AdmissionChecks together, "
                f"found: {','.join(mk)}, {','.join(prov)}"
            )
        if not mk and self.state.gate("TopologyAwareScheduling"):
            # A TAS flavor whose Topology is missing (Kueue's isTASViolated).
            for f in sorted(all_flavors):
                rf = self.state.flavors.get(f)
                topo = rf.spec.topology_name if rf is not None else None
                if topo is not None and topo not in self.state.tas.topologies:
                    reasons.append("TopologyNotFound")
                    messages.append(f'there is no Topology "{topo}" for TAS flavor "{f}"')
        if reasons:
            return False, reasons[0], f"Can't admit new workloads: {', '.join(messages)}."
        if self.state.tree.in_cycle(st.node):
            return False, "CohortCycle", "Can't admit new workloads: cohort has a cycle."
        return True, "Ready", "Can admit new workloads"

    def on_cq_stop_change(self, name: str, old: str, new: str) -> None:
        st = self.state.snap.cqs[name]
        if new in ("Hold", "HoldAndDrain"):
            for key in sorted(st.workloads):
                self.wlc.sync(key)  # queue_state_acts decides
        elif new == "None":
            for key, wl in list(self.state.workloads.items()):
                info = self.state.infos.get(key)
                if info is None or info.cluster_queue != name:
                    continue
                c = find_condition(wl, "Evicted")
                if (
                    c is not None
                    and c.status == "True"
                    and c.reason == "ClusterQueueStopped"
                    and not has_quota_reservation(wl)
                ):
                    self.state.cond(
                        wl,
                        "Requeued",
                        "True",
                        "ClusterQueueRestarted",
                        "The ClusterQueue was restarted after being stopped",
                        self.state.now,
                    )
                    self.wlc.sync(key)

    def refresh_lq(self, obj: kt.LocalQueue, old: kt.LocalQueue | None) -> None:
        m = obj.metadata
        key = key_of(m.namespace, m.name)
        fs = obj.spec.fair_sharing
        self.fair.weights[key] = quantity_weight(fs.weight if fs is not None else None)
        stop = obj.spec.stop_policy or "None"
        old_stop = (old.spec.stop_policy or "None") if old is not None else "None"
        self.state.queues.set_local_queue(
            m.namespace, m.name, obj.spec.cluster_queue or "", stop != "None", self.state.now
        )
        if stop != "None" and old_stop != stop:
            self.wlc.refile_reserving(m.namespace, m.name)  # queue_state_acts decides
        if stop == "None" and old_stop != "None":
            for wl in list(self.state.workloads.values()):
                c = find_condition(wl, "Evicted")
                if (
                    wl.metadata.namespace == m.namespace
                    and wl.spec.queue_name == m.name
                    and c is not None
                    and c.status == "True"
                    and c.reason == "LocalQueueStopped"
                    and not has_quota_reservation(wl)
                ):
                    self.state.cond(
                        wl,
                        "Requeued",
                        "True",
                        "LocalQueueRestarted",
                        "The LocalQueue was restarted after being stopped",
                        self.state.now,
                    )
        # (Re)file the workloads that name this queue.
        for wkey, wl in list(self.state.workloads.items()):
            if wl.metadata.namespace == m.namespace and wl.spec.queue_name == m.name:
                self.wlc.sync(wkey, event=False)
        self.fair.reconcile(key)
