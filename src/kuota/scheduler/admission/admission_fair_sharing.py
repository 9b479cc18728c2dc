"""Admission fair sharing (config ``admissionFairSharing``, ClusterQueue
``admissionScope``). Kueue keeps the LocalQueues' usage in a ledger shared by
the scheduler (entry penalties), the workload controller (settling them on
admission) and the LocalQueue controller (a sampling tick every
usageSamplingInterval). kuota runs those controllers' reactions
synchronously, at the virtual time of the event that triggers them."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from kuota.api.kueue import types as kt
from kuota.quota.afs import Amounts, decimal_of, from_units
from kuota.quota.workload import WorkloadInfo, has_quota_reservation, is_admitted, is_finished
from kuota.scheduler.admission.state import CoreState, key_of
from kuota.scheduler.cache import ClusterQueueState


def _persisted_consumed(lq: kt.LocalQueue) -> Amounts:
    """status.fairSharing.admissionFairSharingStatus.consumedResources: the usage
    a LocalQueue had when the world was stored."""
    fs = lq.status.fair_sharing if lq.status is not None else None
    afs = fs.admission_fair_sharing_status if fs is not None else None
    if afs is None:
        return {}
    return {r: decimal_of(q) for r, q in (afs.consumed_resources or {}).items()}


class AdmissionFairSharing:
    def __init__(self, state: CoreState) -> None:
        self.state = state
        # When each LocalQueue samples next, and their weights.
        self.due: dict[str, datetime] = {}
        self.weights: dict[str, float] = {}

    def usage_based(self, name: str) -> bool:
        """The ClusterQueue orders and charges by LocalQueue usage (ResourceWeights)."""
        cq = self.state.cq_objs.get(name)
        scope = cq.spec.admission_scope if cq is not None else None
        return (
            self.state.afs is not None
            and scope is not None
            and scope.admission_mode == "UsageBasedAdmissionFairSharing"
        )

    def lq_usage(self, lq: str) -> float:
        assert self.state.afs is not None
        return self.state.afs.usage(lq, self.weights.get(lq, 1.0))

    def usage_snapshot(self) -> Callable[[WorkloadInfo], float | None] | None:
        """Each quota holder's LocalQueue usage for preemption ordering, as the
        cycle's snapshot takes it (snapshotClusterQueue): None outside
        usage-based ClusterQueues; as it was when the cycle started."""
        afs = self.state.afs
        if afs is None:
            return None

        def of(info: WorkloadInfo) -> float | None:
            if not self.usage_based(info.cluster_queue or ""):
                return None
            lq = key_of(info.namespace, info.queue_name)
            return afs.snapshot_usage(lq, self.weights.get(lq, 1.0))

        return of

    def lq_admitted_usage(self, lq: str, st: ClusterQueueState) -> Amounts:
        """GetAdmittedUsage: the admitted workloads of the LocalQueue in the
        ClusterQueue, flavors summed per resource."""
        ns, name = lq.split("/", 1)
        acc: dict[str, int] = {}
        for info in st.workloads.values():
            if info.namespace == ns and info.queue_name == name and is_admitted(info.obj):
                for (_, r), v in info.usage().items():
                    acc[r] = acc.get(r, 0) + v
        return {r: from_units(r, v) for r, v in acc.items()}

    def assumed(self, info: WorkloadInfo, cq: ClusterQueueState, wl: kt.Workload) -> None:
        """The scheduler's entry penalty (assumeWorkload): the requests of the
        pending workload, before partial admission, times one sampling alpha."""
        assert self.state.afs is not None
        lq = key_of(info.namespace, info.queue_name)
        if self.usage_based(cq.name):
            total: dict[str, int] = {}
            covered = {r for rg in cq.resource_groups for r in rg.covered}
            for ps in info.podsets:
                for r, v in ps.requests.items():
                    if not self.state.ignore_undeclared or r in covered:
                        total[r] = total.get(r, 0) + v
            penalty = self.state.afs.entry_penalty({r: from_units(r, v) for r, v in total.items()})
            self.state.afs.push_penalty(lq, info.key, penalty, self.state.now)
            if is_admitted(wl):
                self.settle(info.key, wl)
        self.reconcile(lq)

    def settle(self, key: str, wl: kt.Workload) -> None:
        """updateAfsConsumedUsage, on a transition into Admitted."""
        assert self.state.afs is not None
        adm = wl.status.admission if wl.status is not None else None
        if adm is None or not self.usage_based(adm.cluster_queue):
            return
        lq = key_of(wl.metadata.namespace, wl.spec.queue_name or "")
        lq_obj = self.state.lq_objs.get(lq)
        st = self.state.snap.cqs.get(adm.cluster_queue)
        # The cache's LocalQueue is filed under the ClusterQueue its spec names.
        if lq_obj is None or st is None or lq_obj.spec.cluster_queue != adm.cluster_queue:
            return
        self.state.afs.settle(lq, key, self.lq_admitted_usage(lq, st), self.state.now)

    def workload_event(
        self, key: str, wl: kt.Workload, prev: WorkloadInfo | None, was_admitted: bool
    ) -> None:
        """reconcileAfsPenaltiesOnUpdate, then the LocalQueue controller, which
        every workload update notifies."""
        assert self.state.afs is not None
        lq = key_of(wl.metadata.namespace, wl.spec.queue_name or "")
        moved_from = None
        if prev is not None and prev.queue_name != (wl.spec.queue_name or ""):
            moved_from = key_of(wl.metadata.namespace, prev.queue_name)
            self.state.afs.sub_penalty(moved_from, key)
        if is_finished(wl) or (not wl.spec.active and not has_quota_reservation(wl)):
            self.state.afs.sub_penalty(lq, key)
        elif wl.spec.active and is_admitted(wl) and not was_admitted:
            self.settle(key, wl)
        self.reconcile(lq)
        if moved_from is not None:
            self.reconcile(moved_from)

    def reconcile_cq(self, name: str) -> None:
        if self.state.afs is None:
            return
        for lq, obj in list(self.state.lq_objs.items()):
            if obj.spec.cluster_queue == name:
                self.reconcile(lq)

    def reconcile(self, lq: str) -> None:
        """The LocalQueue controller's admission fair sharing part: sample when
        the interval has passed or a penalty waits, else wait for the tick."""
        afs = self.state.afs
        if afs is None:
            return
        obj = self.state.lq_objs.get(lq)
        cq_name = (obj.spec.cluster_queue or "") if obj is not None else ""
        st = self.state.snap.cqs.get(cq_name)
        if obj is None or (obj.spec.stop_policy or "None") != "None" or st is None or not st.active:
            self.due.pop(lq, None)  # Kueue returns before requeueing it
            return
        entry = afs.get(lq)
        if entry is None or not entry.status_accounted:
            had, entry = afs.initialize(lq, _persisted_consumed(obj), self.state.now)
        else:
            had = True
        if (
            had
            and self.state.now - entry.last_update < afs.interval
            and not entry.has_pending_penalty()
        ):
            self.due[lq] = entry.last_update + afs.interval
            return
        afs.sample(lq, self.lq_admitted_usage(lq, st), self.state.now)
        self.due[lq] = self.state.now + afs.interval
