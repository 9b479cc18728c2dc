"""Kueue's workload controller, level-triggered: whenever a workload is filed
it is brought to what Kueue's Reconcile would make of it, in Reconcile's
order (deactivation, checks, the queues' state), then put where its status
says it belongs: the quota holders, a queue, or nowhere. Evictions and their
completion (the job stopped: quota released, requeued) live here too."""

from __future__ import annotations

from typing import Final

import msgspec

from kuota.api.conditions import condition_true, find_condition
from kuota.api.kueue import types as kt
from kuota.quota.workload import (
    WorkloadInfo,
    evicted_reason,
    has_quota_reservation,
    is_admitted,
    is_finished,
)
from kuota.scheduler.admission.admissibility import Admissibility
from kuota.scheduler.admission.admission_checks import AdmissionChecks, checks_message
from kuota.scheduler.admission.admission_fair_sharing import AdmissionFairSharing
from kuota.scheduler.admission.infos import InfoFactory
from kuota.scheduler.admission.state import CoreState, key_of
from kuota.scheduler.admission.unreserved import UnreservedReasons, gated_by
from kuota.scheduler.admission.wakes import Wakes

# Bound once (Final: a C static when compiled, not a module-dict lookup per call).
_replace: Final = msgspec.structs.replace


def deactivate(wl: kt.Workload) -> None:
    """spec.active = False on a new spec: the core never writes to a spec in
    place, so its workloads share the stored (immutable) spec object, and the
    caches keyed by it (requests, resource checks) outlive status writes."""
    wl.spec = _replace(wl.spec, active=False)


class WorkloadController:
    def __init__(
        self,
        state: CoreState,
        acs: AdmissionChecks,
        adm: Admissibility,
        factory: InfoFactory,
        fair: AdmissionFairSharing,
        reasons: UnreservedReasons,
        wakes: Wakes,
    ) -> None:
        self.state = state
        self.acs = acs
        self.adm = adm
        self.factory = factory
        self.fair = fair
        self.reasons = reasons
        self.wakes = wakes

    def put(self, wl: kt.Workload, old: kt.Workload | None) -> None:
        key = key_of(wl.metadata.namespace, wl.metadata.name)
        self.state.workloads[key] = wl
        if not wl.spec.active:
            # Kueue's workload controller, whenever it sees an inactive
            # workload (one created inactive too): evicted once, and its
            # requeue state (backoff, retry count) dropped.
            if not condition_true(wl, "Evicted"):
                # A DeactivationTarget condition names the cause (Kueue's
                # evict with an underlying cause) and goes with the eviction.
                reason, message = "Deactivated", "The workload is deactivated"
                target = find_condition(wl, "DeactivationTarget")
                if target is not None and wl.status is not None:
                    reason = f"Deactivated{'DueTo' + target.reason if target.reason else ''}"
                    message = f"{message} due to {target.message}"
                    wl.status.conditions = [
                        c for c in wl.status.conditions or () if c.type != "DeactivationTarget"
                    ]
                    self.state.touched.add(key)
                if has_quota_reservation(wl):
                    self.evict(key, reason, message)
                else:
                    self.state.cond(wl, "Evicted", "True", reason, message, self.state.now)
                    self.state.evictions.append((key, reason))
            if wl.status is not None and wl.status.requeue_state is not None:
                wl.status.requeue_state = None
                self.state.touched.add(key)
        if (
            old is not None
            and not old.spec.active
            and wl.spec.active
            and (find_condition(wl, "Requeued") is not None or find_condition(wl, "Evicted"))
        ):
            self.state.cond(
                wl,
                "Requeued",
                "True",
                "Reactivated",
                "The workload was reactivated",
                self.state.now,
            )
        # A workload as read is not to be written back: what this filing
        # changes of its status touches it by itself (conditions, requeue
        # state, checks), so a write is attempted only for those.
        self.sync(key, touch=False)

    def sync(self, key: str, event: bool = True, touch: bool = True) -> None:
        """Put a workload where its status says it belongs: the quota cache, a
        queue, or nowhere. ``event``: the change is an update Kueue's workload
        controller sees, which admission fair sharing follows. ``touch``: the
        caller may have changed the status without touching it (a filing
        after the core's own change); not for a workload as read."""
        wl = self.state.workloads.get(key)
        if wl is None:
            return
        if touch:
            self.state.touched.add(key)
        self.state.timer_dirty.add(key)
        prev = self.state.infos.get(key)
        if self.state.afs is None or not event:
            self.file(key, wl, prev)
            return
        was_admitted = is_admitted(prev.obj if prev is not None else wl)
        self.file(key, wl, prev)
        self.fair.workload_event(key, wl, prev, was_admitted)

    def file(self, key: str, wl: kt.Workload, prev: WorkloadInfo | None) -> None:
        if is_finished(wl):
            self.forget(key)
            return
        self.reasons.admission_gate_acts(wl)
        self.acs.retry_delay(key, wl)
        info = self.factory.build_info(key, wl)
        if prev is not None:
            info.last_assignment = prev.last_assignment
            info.keep_scheduling_hash(prev)
        if has_quota_reservation(wl) and info.cluster_queue is not None:
            # As Kueue's workload reconcile: checks and the Admitted condition
            # first, then a check's verdict, then what the queues' state asks
            # of a reserving workload.
            self.acs.sync_checks(key, wl, info.cluster_queue)
            self.acs.sync_admitted(wl, info.cluster_queue)
            if self.check_based_eviction(key, wl):
                return  # the eviction filed it again
            if self.queue_state_acts(key, wl, info.cluster_queue):
                return  # evicted or its reservation dropped: filed again
            # Evicted while still holding quota: an eviction in progress, also
            # when it was read back from a store (a restarted control plane).
            reason = evicted_reason(wl)
            if reason is not None and key not in self.state.pending_evictions:
                self.state.pending_evictions[key] = reason
            self.state.queues.delete(key)
            snap = self.state.snap
            held = snap.holders.get(key)
            # Filed again in the queue it holds quota in, holding the same
            # (a status write: PodsReady): the tree's usage stays as it is.
            same = False
            if held is not None:
                old = self.state.infos[key]
                same = held is snap.cqs.get(info.cluster_queue) and old.usage() == info.usage()
                snap.remove_workload(old, tree=not same)
            self.state.infos[key] = info
            if info.cluster_queue in snap.cqs:
                snap.add_workload(info, tree=not same)
                # A priority or reclaimable-pods change of a quota holder can
                # open room for parked workloads (preemption, released pods).
                if prev is not None and (
                    prev.priority != info.priority or prev.usage() != info.usage()
                ):
                    self.wakes.retry_tree(info.cluster_queue)
            return
        if key in self.state.snap.holders and prev is not None:
            self.release(prev)
        self.state.infos[key] = info
        if not has_quota_reservation(wl):
            self.reasons.dra_counted(wl)
        if self.admissible(wl):
            self.state.queues.add_or_update(info, self.state.now)
        else:
            self.state.queues.delete(key)
        self.reasons.stamp(wl, info)

    def queue_state_acts(self, key: str, wl: kt.Workload, cq_name: str) -> bool:
        """Kueue's reconcileOnLocalQueueActiveState and
        reconcileOnClusterQueueActiveState, whenever a reserving workload is
        seen: an admitted one is evicted from a queue stopped with
        HoldAndDrain; one that reserved quota but is not admitted yet (checks
        pending) gives the reservation back when its LocalQueue is missing or
        either queue is stopped. Returns whether it acted."""
        ns, lq_name = wl.metadata.namespace, wl.spec.queue_name or ""
        lq = self.state.lq_objs.get(key_of(ns, lq_name))
        lq_stop = (lq.spec.stop_policy or "None") if lq is not None else "None"
        admitted = is_admitted(wl)
        evicted = condition_true(wl, "Evicted")
        if admitted:
            if lq_stop == "HoldAndDrain" and not evicted:
                self.evict(key, "LocalQueueStopped", "The LocalQueue is stopped")
                return True
        elif lq is None and lq_name:
            # (A workload naming no LocalQueue at all, as Kueue's scheduler
            # tests write their quota holders, keeps what it holds.)
            msg = f"LocalQueue {lq_name} is terminating or missing"
            return self.unset_reservation(key, wl, "Misconfigured", msg)
        elif lq_stop != "None":
            msg = f"LocalQueue {lq_name} is stopped"
            return self.unset_reservation(key, wl, "Suspended", msg)
        cq_ref = (lq.spec.cluster_queue or "") if lq is not None else cq_name
        cq = self.state.cq_objs.get(cq_ref)
        cq_stop = (cq.spec.stop_policy or "None") if cq is not None else "None"
        if admitted:
            if cq_stop == "HoldAndDrain" and not evicted:
                self.evict(key, "ClusterQueueStopped", "The ClusterQueue is stopped")
                return True
            return False
        if cq is None or cq_ref in self.state.terminating:
            msg = f"ClusterQueue {cq_ref} is terminating or missing"
            return self.unset_reservation(key, wl, "Misconfigured", msg)
        if cq_stop != "None":
            msg = f"ClusterQueue {cq_ref} is stopped"
            return self.unset_reservation(key, wl, "Suspended", msg)
        return False

    def unset_reservation(self, key: str, wl: kt.Workload, reason: str, message: str) -> bool:
        """Kueue's UnsetQuotaReservationWithCondition: the reservation goes
        (no eviction) and the workload is filed again as pending. ``reason``
        is the granular one; without UnadmittedWorkloadsObservability Kueue
        writes Inadmissible instead."""
        if not self.state.gate("UnadmittedWorkloadsObservability"):
            reason = "Inadmissible"
        assert wl.status is not None
        wl.status.admission = None
        self.state.cond(wl, "QuotaReserved", "False", reason, message, self.state.now)
        self.sync(key)
        return True

    def check_based_eviction(self, key: str, wl: kt.Workload) -> bool:
        """The workload controller's reaction to a check's verdict: Rejected
        deactivates the workload, Retry evicts it to be queued again."""
        if condition_true(wl, "Evicted") or wl.status is None or not wl.spec.active:
            return False
        checks = wl.status.admission_checks or ()
        rejected = [c for c in checks if c.state == "Rejected"]
        if rejected:
            deactivate(wl)
            msg = checks_message(rejected, "Rejected")
            self.evict(
                key, "DeactivatedDueToAdmissionCheck", f"The workload is deactivated due to {msg}"
            )
            return True
        retry = [c for c in checks if c.state == "Retry"]
        if retry:
            self.evict(key, "AdmissionCheck", f"Evicted due to {checks_message(retry, 'Retry')}")
            return True
        return False

    def admissible(self, wl: kt.Workload) -> bool:
        if not wl.spec.active:
            return False
        st = wl.status
        if st is not None and st.conditions:
            # The first condition of each type, as find_condition, in one walk
            # (asked at every requeue): not finished, no quota reserved, not
            # IsOnHold (an integration released the reservation on purpose, a
            # StatefulSet scaled to 0: it waits until it says otherwise), not
            # waiting for replacement pods.
            finished = reserved = replacing = False
            for c in st.conditions:
                t = c.type
                if t == "Finished" and not finished:
                    finished = True
                    if c.status == "True":
                        return False
                elif t == "QuotaReserved" and not reserved:
                    reserved = True
                    if c.status == "True" or (c.status == "False" and c.reason == "OnHold"):
                        return False
                elif t == "WaitingForReplacementPods" and not replacing:
                    replacing = True
                    if c.status == "True":
                        return False
        if gated_by(wl):
            return False
        # Kueue's workload controller queues a DRA workload only once its
        # claims are counted: until then it is in no queue.
        return not self.adm.dra_error(wl)

    def release(self, info: WorkloadInfo) -> None:
        st = self.state.snap.holders.get(info.key)
        if st is None:
            return
        self.state.snap.remove_workload(info)
        st.generation += 1
        self.wakes.retry_tree(st.name)
        if st.name in self.state.terminating and not st.workloads:
            self.remove_cq(st.name)  # its last holder gone: deleted for real

    def forget(self, key: str) -> None:
        self.state.timer_dirty.add(key)  # its timers go with it
        info = self.state.infos.pop(key, None)
        self.state.queues.delete(key)
        self.state.pending_evictions.pop(key, None)
        self.adm._invalid.pop(key, None)
        if info is not None and key in self.state.snap.holders:
            self.release(info)

    def finish(self, key: str) -> None:
        wl = self.state.workloads.get(key)
        if wl is None:
            raise KeyError(f"no workload {key}")
        self.state.cond(
            wl, "Finished", "True", "Succeeded", "Job finished successfully", self.state.now
        )
        self.sync(key)

    def sync_priority_class(self, name: str, value: int) -> None:
        """Kueue's WorkloadPriorityClass controller: a class created or whose
        value changed sets spec.priority of every Workload that refers to it,
        pending or admitted (a lower priority can make it a preemption
        victim, a higher one lets it preempt)."""
        for key, wl in list(self.state.workloads.items()):
            ref = wl.spec.priority_class_ref
            if (
                ref is None
                or ref.kind != "WorkloadPriorityClass"
                or ref.group != kt.GROUP
                or ref.name != name
                or wl.spec.priority == value
            ):
                continue
            wl.spec = _replace(wl.spec, priority=value)  # (see deactivate)
            self.sync(key)

    def resync_namespace(self, namespace: str | None) -> None:
        """LimitRange/RuntimeClass changes resize waiting workloads."""
        for key, wl in list(self.state.workloads.items()):
            if namespace is not None and wl.metadata.namespace != namespace:
                continue
            if not has_quota_reservation(wl):
                self.sync(key, event=False)

    def refile_reserving(self, namespace: str, lq_name: str) -> None:
        for wkey, info in sorted(self.state.infos.items()):
            wl = info.obj
            if (
                wl.metadata.namespace == namespace
                and wl.spec.queue_name == lq_name
                and has_quota_reservation(wl)
            ):
                self.sync(wkey)

    def remove_cq(self, name: str) -> None:
        self.state.cq_objs.pop(name, None)
        self.state.terminating.discard(name)
        st = self.state.snap.cqs.get(name)
        root = self.wakes.root_cqs(name)
        self.state.queues.settle_wakes()
        self.state.tree.delete_cluster_queue(name)
        self.state.snap.cqs.pop(name, None)
        self.state.queues.delete_cluster_queue(name)
        if st is not None:
            for k in list(st.workloads):
                self.state.snap.holders.pop(k, None)
        self.wakes.retry(root)
        self.fair.reconcile_cq(name)

    def evict(self, key: str, reason: str, message: str) -> None:
        wl = self.state.workloads[key]
        self.state.cond(wl, "Evicted", "True", reason, message, self.state.now)
        self.state.evictions.append((key, reason))
        # Kueue's resetChecksOnEviction: checks go back to Pending, saying
        # what they were; a Retry counts as one more retry.
        if wl.status is not None and wl.status.admission_checks:
            for s in wl.status.admission_checks:
                if s.state == "Pending":
                    continue
                retry = (s.retry_count or 0) + 1 if s.state == "Retry" else None
                s.message = f"Reset to Pending after eviction. Previously: {s.state}"
                s.state, s.retry_count = "Pending", retry
                s.last_transition_time, s.pod_set_updates = self.state.now, None
        # Kueue's prepareForEviction: the MultiKueue cluster nomination is
        # reset, the preemption-gate signal is withdrawn and every gate
        # closes again.
        if wl.status is not None:
            wl.status.cluster_name = wl.status.nominated_cluster_names = None
            # (resetUnhealthyNodes: a failed node is the old placement's)
            wl.status.unhealthy_nodes = None
            self.state.unhealthy.discard(key)
        if condition_true(wl, "BlockedOnPreemptionGates"):
            self.state.cond(
                wl, "BlockedOnPreemptionGates", "False", reason, message, self.state.now
            )
        assert wl.status is not None
        for g in wl.status.preemption_gates or ():
            g.position, g.last_transition_time = "Closed", self.state.now
        if reason == "FlavorMigration":
            self.state.pending_evictions[key] = reason  # its job stops as a preempted one's does
            return
        if reason == "Preempted":
            self.state.pending_evictions[key] = reason
            if self.state.afs is not None:
                self.fair.reconcile(key_of(wl.metadata.namespace, wl.spec.queue_name or ""))
        else:
            self.state.fresh_evictions.add(key)
            self.complete_eviction(key, reason)

    def complete_evictions(self) -> None:
        for key, reason in list(self.state.pending_evictions.items()):
            self.complete_eviction(key, reason)

    def complete_eviction(self, key: str, reason: str) -> None:
        """The job stopped: the workload releases its quota and is requeued."""
        self.state.pending_evictions.pop(key, None)
        wl = self.state.workloads.get(key)
        if wl is None:
            return
        c = find_condition(wl, "Evicted")
        msg = c.message if c is not None else ""
        if wl.status is not None:
            wl.status.admission = None
        self.state.cond(wl, "QuotaReserved", "False", "Pending", msg, self.state.now)
        self.acs.no_reservation(wl)
        if reason in ("Preempted", "NodeFailures"):
            self.state.cond(wl, "Requeued", "True", reason, msg, self.state.now)
        else:
            self.state.cond(wl, "Requeued", "False", reason, msg, self.state.now)
            rs = wl.status.requeue_state if wl.status is not None else None
            if reason == "AdmissionCheck" and (rs is None or rs.requeue_at is None):
                # No backoff to wait for: the workload controller requeues it at once.
                self.state.cond(
                    wl,
                    "Requeued",
                    "True",
                    "BackoffFinished",
                    "The workload backoff was finished",
                    self.state.now,
                )
        self.sync(key)

    def replace_slice(self, old_key: str, new: WorkloadInfo) -> None:
        """Kueue's replaceWorkloadSlice: once a new workload slice is admitted,
        the slice it replaces is finished and gives its quota back."""
        wl = self.state.workloads.get(old_key)
        if wl is None or is_finished(wl):
            return
        job_uid = (new.obj.metadata.labels or {}).get("kueue.x-k8s.io/job-uid", "")
        msg = (
            f"Replaced to accommodate a workload (UID: {new.uid}, JobUID: {job_uid}) "
            "due to workload slice aggregation"
        )
        self.state.cond(wl, "Finished", "True", "WorkloadSliceReplaced", msg, self.state.now)
        self.sync(old_key)
