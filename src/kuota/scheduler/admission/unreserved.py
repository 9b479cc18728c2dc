"""Kueue's syncQuotaReservedFalseCondition: why a workload that holds no
quota waits (the QuotaReserved=False reason the workload controller
stamps), and the admission-gated-by annotation's first sight."""

from __future__ import annotations

from kuota.api.conditions import find_condition
from kuota.api.kueue import types as kt
from kuota.api.kueue.webhooks import ADMISSION_GATED_BY
from kuota.api.meta import Condition
from kuota.quota.dra import CLAIMS_NOT_SUPPORTED
from kuota.quota.workload import WorkloadInfo, has_quota_reservation, is_admitted, is_finished
from kuota.scheduler import unadmitted as ur
from kuota.scheduler.admission.admissibility import Admissibility
from kuota.scheduler.admission.admission_checks import AdmissionChecks
from kuota.scheduler.admission.state import CoreState, key_of


def gated_by(wl: kt.Workload) -> str:
    """Who gates the workload's admission (the admission-gated-by annotation), or ""."""
    return (wl.metadata.annotations or {}).get(ADMISSION_GATED_BY, "")


class UnreservedReasons:
    def __init__(self, state: CoreState, acs: AdmissionChecks, adm: Admissibility) -> None:
        self.state = state
        self.acs = acs
        self.adm = adm

    def stamp(self, wl: kt.Workload, info: WorkloadInfo | None) -> None:
        """Kueue's syncQuotaReservedFalseCondition: the workload controller's
        reason for a workload that holds no quota, stamped whenever it sees
        the workload (and each workload of a LocalQueue or ClusterQueue that
        is created, deleted or stopped): what blocks its queue, its
        deactivation, a misconfiguration, an admission gate; a reason the
        scheduler set is kept until the next attempt; any other reason (one
        whose cause went away, or an eviction's Pending) becomes
        PendingEvaluation. A workload with no condition yet gets none
        (UnadmittedWorkloadsExplicitStatus off)."""
        if has_quota_reservation(wl) or is_finished(wl):
            return
        self.stamp_reason(wl, info)
        # SyncAdmittedCondition: once QuotaReserved is there, Admitted says why not.
        if self.state.gate("UnadmittedWorkloadsObservability") and (
            find_condition(wl, "QuotaReserved") is not None
            or find_condition(wl, "Admitted") is not None
        ):
            self.state.no_reservation(wl, if_changed=True)

    def stamp_reason(self, wl: kt.Workload, info: WorkloadInfo | None) -> None:
        blocker = self.queue_blocker(wl)
        cond = find_condition(wl, "QuotaReserved")
        if self.dra_refused(wl, cond):
            return
        if not self.state.gate("UnadmittedWorkloadsObservability"):
            if blocker is not None:
                self.qr_false(wl, "Inadmissible", blocker[1])
            return
        if not wl.spec.active:
            self.qr_false(wl, "Deactivated", ur.DEACTIVATED)
            return
        if cond is not None and cond.status == "False" and cond.reason == "OnHold":
            return
        if blocker is not None:
            self.qr_false(wl, *blocker)
            return
        if info is not None and info.cluster_queue is not None:
            bad = self.adm.admissibility_error(info, info.cluster_queue, keep=False)
            if bad is not None:
                self.qr_false(wl, "Misconfigured", bad[0])
                return
        by = gated_by(wl)
        if by:
            self.qr_false(wl, "AdmissionGated", ur.gated(by))
            return
        explicit = self.state.gate("UnadmittedWorkloadsExplicitStatus")
        if self.state.gate("SchedulingEquivalenceHashing") and (
            explicit if cond is None else cond.reason in ur.RECHECKED_REASONS
        ):
            key = key_of(wl.metadata.namespace, wl.metadata.name)
            no_fit = self.state.queues.no_fit_reason(key)
            if no_fit is not None:
                self.qr_false(wl, no_fit, ur.BYPASSED)
                return
        if cond is None:
            if explicit:
                self.qr_false(wl, "PendingEvaluation", ur.PENDING_EVALUATION)
            return
        if cond.reason in ur.SCHEDULER_REASONS:
            return  # the scheduler's feedback stays until its next attempt
        self.qr_false(wl, "PendingEvaluation", ur.PENDING_EVALUATION)

    def dra_refused(self, wl: kt.Workload, cond: Condition | None) -> bool:
        """Kueue's workload controller on a pending workload with DRA claims
        it cannot count (handleDRA, markDRAInadmissible): QuotaReserved=False
        Misconfigured (Inadmissible without UnadmittedWorkloadsObservability)
        and Requeued=False Inadmissible, with the error."""
        if cond is not None and cond.status == "False" and cond.reason == "OnHold":
            return False
        bad = self.adm.dra_error(wl)
        if not bad:
            return False
        observable = self.state.gate("UnadmittedWorkloadsObservability")
        self.qr_false(wl, "Misconfigured" if observable else "Inadmissible", bad)
        requeue_msg = "DRA resource claims not supported" if bad == CLAIMS_NOT_SUPPORTED else bad
        self.state.cond(
            wl, "Requeued", "False", "Inadmissible", requeue_msg, self.state.now, if_changed=True
        )
        return True

    def dra_counted(self, wl: kt.Workload) -> None:
        """Kueue's workload controller once a pending workload's DRA claims
        count: the Requeued=False its refusal left is cleared before the
        workload is queued (else it would wait for a backoff never set)."""
        requeued = find_condition(wl, "Requeued")
        if (
            requeued is None
            or requeued.status != "False"
            or requeued.reason != "Inadmissible"
            or wl.status is None
            or not any(
                ps.template.spec and ps.template.spec.resource_claims for ps in wl.spec.pod_sets
            )
            or self.adm.dra_error(wl)
        ):
            return
        wl.status.conditions = [c for c in wl.status.conditions or () if c is not requeued]
        key = key_of(wl.metadata.namespace, wl.metadata.name)
        self.state.touched.add(key)
        self.state.timer_dirty.add(key)

    def qr_false(self, wl: kt.Workload, reason: str, message: str) -> None:
        self.state.cond(
            wl, "QuotaReserved", "False", reason, message, self.state.now, if_changed=True
        )

    def queue_blocker(self, wl: kt.Workload) -> tuple[str, str] | None:
        """Kueue's getQueueBlocker: (reason, message) when the workload's
        LocalQueue or ClusterQueue is missing or inactive."""
        lq_name = wl.spec.queue_name or ""
        lq = self.state.lq_objs.get(key_of(wl.metadata.namespace, lq_name))
        if lq is None:
            return "Misconfigured", ur.lq_missing(lq_name)
        if (lq.spec.stop_policy or "None") != "None":
            return "Suspended", ur.lq_inactive(lq_name)
        cq_name = lq.spec.cluster_queue or ""
        st = self.state.snap.cqs.get(cq_name)
        if cq_name not in self.state.cq_objs or st is None:
            return "Misconfigured", ur.cq_missing(cq_name)
        if not st.status_active():
            return "Suspended", ur.cq_inactive(cq_name)
        return None

    def restamp(self, lqs: set[tuple[str, str]]) -> None:
        """Kueue's workloadQueueHandler: LocalQueues (namespace, name) created,
        deleted or stopped, or those of such a ClusterQueue: their workloads
        are seen again."""
        for key in sorted(self.state.workloads):
            wl = self.state.workloads[key]
            if (wl.metadata.namespace, wl.spec.queue_name or "") in lqs:
                self.stamp(wl, self.state.infos.get(key))

    def lqs_of(self, cq_name: str) -> set[tuple[str, str]]:
        return {
            (lq.metadata.namespace, lq.metadata.name)
            for lq in self.state.lq_objs.values()
            if lq.spec.cluster_queue == cq_name
        }

    def admission_gate_acts(self, wl: kt.Workload) -> None:
        """Kueue's mayUpdateConditionForAdmissionGatedBy, first sight of an
        admission-gated-by annotation: a reservation the workload holds is
        given back (QuotaReserved=False AdmissionGated), admitted or not."""
        if not self.state.gate("AdmissionGatedBy"):
            return
        by = gated_by(wl)
        if not by:
            return
        qr = find_condition(wl, "QuotaReserved")
        if qr is not None and qr.reason == "AdmissionGated":
            return
        if wl.status is not None:
            wl.status.admission = None
        self.qr_false(wl, "AdmissionGated", ur.gated(by))
        if is_admitted(wl):
            self.acs.no_reservation(wl)
