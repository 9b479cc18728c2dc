"""The one place a cycle's decisions are applied (``scheduler.decisions``):
admission (quota reserved, checks, the Admitted condition), preemption,
migration and requeueing, in the order the cycle made them."""

from __future__ import annotations

from typing import Final

from kuota.api.conditions import condition_true, find_condition
from kuota.api.kueue import types as kt
from kuota.quota.requests import resource_quantity, saturate_int64
from kuota.quota.workload import PodSetResources, WorkloadInfo, held_part
from kuota.scheduler.admission.admission_checks import AdmissionChecks
from kuota.scheduler.admission.admission_fair_sharing import AdmissionFairSharing
from kuota.scheduler.admission.infos import InfoFactory
from kuota.scheduler.admission.state import CoreState, key_of
from kuota.scheduler.admission.workloads import WorkloadController
from kuota.scheduler.cache import ClusterQueueState
from kuota.scheduler.decisions import Admit, Decision, Migrate, Preempt, Requeue
from kuota.scheduler.flavorassigner.assignment import Assignment
from kuota.scheduler.preemption.targets import Target, preemption_message
from kuota.scheduler.views import CycleResult, Preemption

_REQUESTS_KEPT: Final = 10_000  # podSets lists whose resourceRequests are kept


class DecisionApplier:
    def __init__(
        self,
        state: CoreState,
        acs: AdmissionChecks,
        factory: InfoFactory,
        fair: AdmissionFairSharing,
        wlc: WorkloadController,
    ) -> None:
        self.state = state
        self.acs = acs
        self.factory = factory
        self.fair = fair
        self.wlc = wlc
        # id(podSets list) -> it and its resourceRequests (it kept alive: the id stays its own).
        self._requests: dict[int, tuple[list[PodSetResources], list[kt.PodSetRequest]]] = {}

    def apply(self, d: Decision, result: CycleResult) -> None:
        """Apply one decision of the cycle whose result is ``result``."""
        if isinstance(d, Requeue):
            self.requeue(
                d.info,
                d.reason,
                d.qr_reason,
                d.message,
                d.skip_status,
                blocked_on_gates=d.blocked_on_gates,
            )
        elif isinstance(d, Admit):
            self.admit(d.info, d.cq, d.assignment)
            if d.replaced is not None:
                self.wlc.replace_slice(d.replaced.key, d.info)
        elif isinstance(d, Preempt):
            self.preempt(d.preemptor, d.cq, d.targets, result)
        elif isinstance(d, Migrate):
            self.migrate(d.victim, d.to)
        else:
            raise TypeError(f"not a decision: {d!r}")

    def admit(self, info: WorkloadInfo, cq: ClusterQueueState, a: Assignment) -> None:
        wl = info.obj
        self.state.touched.add(info.key)
        if wl.status is None:
            wl.status = kt.WorkloadStatus()
        psas = []
        # What the workload now holds: podsets_from_admission of the status
        # written here, without parsing back the quantities just made.
        held = []
        rec = self.factory.reclaimable(wl)
        spec_counts = {ps.name: ps.count for ps in wl.spec.pod_sets}
        for ps in a.podsets:
            names = sorted(ps.flavors)
            flavors = {r: ps.flavors[r].name for r in names}
            values = {r: saturate_int64(ps.requests.get(r, 0)) for r in names}
            binary = self.state.binary_resources
            usage = {r: resource_quantity(r, v, binary=binary) for r, v in values.items()}
            psas.append(
                kt.PodSetAssignment(
                    name=ps.name,
                    flavors=flavors,
                    resource_usage=usage,
                    count=ps.count,
                    topology_assignment=ps.topology,
                    delayed_topology_request=ps.delayed,  # type: ignore[arg-type]
                )
            )
            res = PodSetResources(ps.name, ps.count, values, dict(flavors))
            held.append(held_part(res, spec_counts.get(ps.name, 0), rec.get(ps.name, 0)))
        wl.status.admission = kt.Admission(cluster_queue=cq.name, pod_set_assignments=psas)
        if any(ps.delayed is not None for ps in a.podsets):
            self.state.delayed_topology.add(info.key)  # (its second pass, once checks are Ready)
        wl.status.resource_requests = None  # the admission's resourceUsage supersedes it
        if wl.status.unhealthy_nodes and self.state.gate("TopologyAwareScheduling"):
            wl.status.unhealthy_nodes = None  # (Kueue's admit: a failed node is behind it)
            self.state.unhealthy.discard(info.key)
        self.state.cond(
            wl,
            "QuotaReserved",
            "True",
            "QuotaReserved",
            f"Quota reserved in ClusterQueue {cq.name}",
            self.state.now,
        )
        for ctype in ("Evicted", "Preempted", "BlockedOnPreemptionGates"):
            c = find_condition(wl, ctype)
            if c is not None and c.status == "True":
                self.state.cond(
                    wl, ctype, "False", "QuotaReserved", "Previously: " + c.message, self.state.now
                )
        used = {f.name for ps in a.podsets for f in ps.flavors.values()}
        checks = cq.checks_for(used)
        states = {s.name: s for s in (wl.status.admission_checks or ())}
        for name in checks:
            if name not in states:
                states[name] = kt.AdmissionCheckState(
                    name=name, state="Pending", last_transition_time=self.state.now
                )
        wl.status.admission_checks = [states[n] for n in sorted(states)] or None
        self.acs.checks_decided(wl, all(states[n].state == "Ready" for n in checks))
        info.last_assignment = None
        self.state.queues.delete(info.key)
        # The cycle held the assignment's usage in the tree for the rest of the
        # cycle; the workload now holds it for real.
        prev = self.state.infos.get(info.key)
        new = self.factory.admitted_info(
            info.key, wl, held, prev.spec_cache if prev is not None else None
        )
        self.state.infos[info.key] = new
        self.state.snap.add_workload(new)
        if self.state.afs is not None:
            self.fair.assumed(info, cq, wl)

    def preempt(
        self,
        preemptor: WorkloadInfo,
        cq: ClusterQueueState,
        targets: list[Target],
        result: CycleResult,
    ) -> None:
        for t in targets:
            wl = t.info.obj
            if condition_true(wl, "Evicted"):
                continue
            msg = preemption_message(preemptor, t.reason, cq, t.cq)
            self.state.cond(wl, "Preempted", "True", t.reason, msg, self.state.now)
            self.wlc.evict(t.info.key, "Preempted", msg)
            p = Preemption(t.info.key, t.reason, preemptor.key, msg)
            self.state.preemptions.append(p)
            result.preempted.append(p)

    def _pending_requests(self, podsets: list[PodSetResources]) -> list[kt.PodSetRequest]:
        """The status's resourceRequests for these podSets: one list per
        podSets list (a spec's is shared by the workloads of one job shape
        and never changed), shared by the statuses that hold it (never
        changed in place either: a new one replaces it)."""
        known = self._requests.get(id(podsets))
        if known is not None and known[0] is podsets:
            return known[1]
        requests = [
            kt.PodSetRequest(
                name=ps.name,
                resources={
                    r: resource_quantity(r, v, binary=self.state.binary_resources)
                    for r, v in ps.requests.items()
                }
                or None,
            )
            for ps in podsets
        ]
        if len(self._requests) >= _REQUESTS_KEPT:
            self._requests.clear()
        self._requests[id(podsets)] = (podsets, requests)
        return requests

    def migrate(self, key: str, to: WorkloadInfo) -> None:
        """Kueue's issueMigration: a ConcurrentAdmission variant on a less
        preferred flavor is evicted for its sibling ``to``."""
        self.wlc.evict(
            key,
            "FlavorMigration",
            f"Evicted to accommodate a workload (UID: {to.obj.metadata.uid}) due to migration "
            "to more favorable resource flavor",
        )

    def requeue(
        self,
        info: WorkloadInfo,
        reason: str,
        qr_reason: str,
        message: str,
        skip_status: bool,
        *,
        blocked_on_gates: bool = False,
    ) -> None:
        """Kueue's requeueAndUpdate; ``blocked_on_gates``: the workload needed a
        preemption a closed preemption gate held back."""
        key = info.key
        wl = self.state.workloads.get(key)
        if wl is None or not self.wlc.admissible(wl):
            q = self.state.queues.cluster_queue_of(key)
            if q is not None:
                q.inflight.pop(key, None)
            return
        la = info.last_assignment
        pending = isinstance(la, Assignment) and la.pending_flavors()
        self.state.queues.requeue(info, reason, self.state.now, pending, qr_reason)
        if skip_status:
            return
        # PropagateResourceRequests: what the pending workload asked for, per
        # pod set, for those who read the Workload (admission clears it).
        requests = self._pending_requests(info.podsets)
        if wl.status is None:
            wl.status = kt.WorkloadStatus()
        old = wl.status.resource_requests
        if old is not requests and old != requests:
            wl.status.resource_requests = requests
            self.state.touched.add(key)
        # Touched only when a condition changed, as Kueue patches the status
        # only then: a head left waiting with the same reason, cycle after
        # cycle, is not written again.
        if (
            self.state.cond(
                wl,
                "QuotaReserved",
                "False",
                qr_reason or "Pending",
                message,
                self.state.now,
                if_changed=True,
            )
            and self.state.afs is not None
        ):
            self.fair.reconcile(key_of(info.namespace, info.queue_name))
        if self.state.gate("UnadmittedWorkloadsObservability"):
            # UnsetQuotaReservationWithCondition's SyncAdmittedCondition: with
            # the gate, once QuotaReserved is there, Admitted says why not.
            self.state.no_reservation(wl, if_changed=True)
        if blocked_on_gates:
            self.state.cond(
                wl,
                "BlockedOnPreemptionGates",
                "True",
                "PreemptionGated",
                message,
                self.state.now,
                if_changed=True,
            )
