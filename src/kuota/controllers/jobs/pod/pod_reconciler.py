"""Kueue's pod integration (framework ``pod``; ``pkg/controller/jobs/pod``): plain
pods and pod groups, each admitted as one Workload, all or nothing.

The webhook (``podwebhook``) gates the pods Kueue manages. This reconciler
is Kueue's generic job reconciler specialised for pods, as Kueue's pod
controller is (a composable job): a single pod gets Workload
``pod-<name>-<hash5>`` with podSet ``main``; the pods of a group (label or
annotation ``kueue.x-k8s.io/pod-group-name``) get one Workload named after the
group, built once ``pod-group-total-count`` runnable pods exist, one podSet per
role hash. On admission every gated pod of the Workload is ungated with its
podSet's flavor placement in the same reconcile; on eviction or when no
admitted Workload matches, its running pods get condition TerminationTarget
and are deleted. Excess pods of a group are deleted; failed pods of a group
are replaced by new ones the user (or a parent controller) creates, the
Workload waiting meanwhile (WaitingForReplacementPods). Finished pods end
the Workload (a serving group never does); the pods' ``kueue.x-k8s.io/managed``
finalizer goes when they end or their Workload does.

Keys: ``<namespace>/<pod>`` for a single pod, ``group/<namespace>/<group>``
for a group (Kueue's own encoding).
"""

from __future__ import annotations

from typing import Any, Final

from kuota.api import k8s as kc
from kuota.api.kueue import types as kt
from kuota.api.kueue.config import KueueConfig
from kuota.controllers.jobframework import (
    FLAVOR,
    JOB_UID,
    LOCAL_QUEUE,
    MULTIKUEUE_CONTROLLER,
    NAMESPACE,
    PC,
    RESOURCE_IN_USE,
    WORKLOAD,
    WPC,
    ManagePolicy,
    extract_priority,
    finish_workload,
    new_workload,
    retry_on_priority_class,
    set_workload_condition,
    sync_pods_ready,
    sync_workload_priority,
    wait_for_start,
    write_workload_status,
)
from kuota.controllers.jobs.pod import podmeta as pm
from kuota.controllers.jobs.pod.podgroup import (
    ComposeError,
    PodJob,
    controller_of,
    keep_active_first,
    pod_ref,
    same_pod,
)
from kuota.controllers.jobs.pod.podwrites import COMPONENT, POD, WORKLOAD_DELETED, PodWriter
from kuota.quota.workload import (
    find_condition,
    has_quota_reservation,
    is_admitted,
    is_evicted,
    is_finished,
)
from kuota.runtime.informer import key_of
from kuota.runtime.manager import Manager
from kuota.store import NotFound, clone
from kuota.store.resources import ADMISSION_CHECK

GROUP_PREFIX: Final = "group/"
_GROUP_INDEX: Final = "pod:group"  # pods by "<namespace>/<group>"
_OWNER_INDEX: Final = "pod:owner"  # workloads by the "<namespace>/<pod>" controlling them

# Stop reasons (jobframework.StopReason), with WORKLOAD_DELETED.
WORKLOAD_EVICTED: Final = "WorkloadEvicted"
NOT_ADMITTED: Final = "NotAdmitted"
NO_MATCHING_WORKLOAD: Final = "NoMatchingWorkload"
PODS_FAILED: Final = "PodsFailed"


class _Halt(Exception):
    """This reconcile ends here (what it did brings the pods back, or only a
    change of them can)."""


class PodReconciler:
    """Kueue's pod reconciler (``v1_pod``) over the store."""

    name = "job:/Pod"

    def __init__(self, config: KueueConfig, policy: ManagePolicy, *, implicit: bool) -> None:
        """``implicit``: the pod integration runs only because an integration
        built on pods (deployment, statefulset, leaderworkerset) is enabled:
        it then manages only pods a parent suspends."""
        self.config = config
        self.policy = policy
        self.implicit = implicit
        self.ids = config.gate("WorkloadIdentifierAnnotations")
        self.wait_for_pods_ready = config.wait_for_pods_ready is not None
        self.reclaim = config.gate("ReclaimablePods")
        self.finish_orphans = config.gate("FinishOrphanedWorkloads")
        self.validate_group_owner = config.gate("PodIntegrationValidateGroupOwner")
        self.label_keys = tuple(config.integrations.label_keys_to_copy)
        self.multikueue = config.gate("MultiKueue")
        self.mgr: Manager | None = None
        self.writer: PodWriter | None = None

    # -------------------------------------------------------------- wiring
    def setup(self, mgr: Manager) -> None:
        self.mgr = mgr
        self.writer = PodWriter(mgr, self.config)
        pods = mgr.informer(POD)
        pods.add_index(_GROUP_INDEX, self._group_of)
        pods.on_change(self._pod_changed)
        wls = mgr.informer(WORKLOAD)
        wls.add_index(_OWNER_INDEX, _pod_owner)
        wls.on_change(self._workload_changed)
        for rt in (NAMESPACE, LOCAL_QUEUE, WPC, PC, FLAVOR, ADMISSION_CHECK):
            mgr.informer(rt)
        retry_on_priority_class(mgr, POD, self.name, self._key)

    def _group_of(self, pod: Any) -> list[str]:
        group = pm.group_name(pod, self.ids)
        return [f"{pod.metadata.namespace}/{group}"] if group else []

    def _key(self, pod: Any) -> str:
        group = pm.group_name(pod, self.ids)
        if group:
            return f"{GROUP_PREFIX}{pod.metadata.namespace}/{group}"
        return key_of(pod)

    def _pod_changed(self, etype: str, pod: Any, old: Any | None) -> None:
        # Only pods the webhook (or a parent's reconciler) marked as Kueue's:
        # the rest (Job pods, DaemonSet pods) cost nothing here.
        labels = pod.metadata.labels or {}
        if labels.get(pm.MANAGED) == pm.MANAGED_VALUE or pm.has_finalizer(pod):
            self._mgr().enqueue(self.name, self._key(pod))

    def _workload_changed(self, etype: str, wl: Any, old: Any | None) -> None:
        m = wl.metadata
        if (m.annotations or {}).get(pm.IS_GROUP_WORKLOAD) == "true":
            self._mgr().enqueue(self.name, f"{GROUP_PREFIX}{m.namespace}/{m.name}")
            return
        for owner in _pod_owner(wl):
            self._mgr().enqueue(self.name, owner)
        if etype == "DELETED" and self.validate_group_owner:
            # A foreign Workload that blocked a group of the same name is gone.
            pods = self._mgr().informer(POD)
            if pods.by_index(_GROUP_INDEX, f"{m.namespace}/{m.name}"):
                self._mgr().enqueue(self.name, f"{GROUP_PREFIX}{m.namespace}/{m.name}")

    # -------------------------------------------------------------- reconcile
    def reconcile(self, key: str) -> None:
        job = self._load(key)
        if job is None:
            return None
        lead = job.lead
        labels = lead.metadata.labels or {}
        if labels.get(pm.MANAGED) != pm.MANAGED_VALUE:
            return None  # not Kueue's (Skip)
        if self.implicit and not pm.annotation(lead, pm.SUSPENDING_PARENT):
            return None
        ns = self._mgr().informer(NAMESPACE).get(job.namespace)
        if not self.policy.namespace_managed(ns, job.namespace):
            return None
        if not self.policy.job_managed(labels):
            return None
        try:
            wl = self._ensure_one_workload(job)
            if wl is not None and job.is_group and self._sync_replacement(job, wl):
                return None
            self._sync(job, wl)
        except ComposeError as err:
            if err.event:
                self._event(lead, "Warning", "ErrWorkloadCompose", err.message)
        except _Halt:
            pass
        return None

    def _sync(self, job: PodJob, wl: kt.Workload | None) -> None:
        """ReconcileGenericJob from its step 1.1, for pods."""
        mgr = self._mgr()
        if wl is not None and is_finished(wl):
            self._finalize_pods(job.pods)
            return
        if wl is not None and wl.metadata.deletion_timestamp is not None:
            self._stop(job, WORKLOAD_DELETED, "Workload is deleted")
            return
        fin = job.finished()
        if fin is not None:
            if wl is not None and not is_finished(wl):
                finish_workload(mgr, wl, "Succeeded" if fin.success else "Failed", fin.message)
                self._event(
                    job.lead,
                    "Normal",
                    "FinishedWorkload",
                    f"Workload '{key_of(wl)}' is declared finished",
                )
            self._finalize_pods(job.pods)
            return
        if wl is None:
            self._create_workload(job)
            return
        if job.is_group and self.reclaim and self._sync_reclaimable(job, wl):
            return
        if self.wait_for_pods_ready:
            if is_admitted(wl):
                written = sync_pods_ready(mgr, wl, job.pods_ready())
            else:
                written = wait_for_start(mgr, wl)
            if written:
                return  # the Workload's change brings the pods back
        if is_evicted(wl):
            ev = find_condition(wl, "Evicted")
            reason = WORKLOAD_EVICTED + (
                "DueTo" + ev.reason if ev is not None and ev.reason else ""
            )
            self._stop(job, reason, ev.message if ev is not None else "")
            return
        if job.is_suspended():
            if is_admitted(wl):
                if self._runs_elsewhere(wl):
                    return  # ShouldSkipLocalExecution: MultiKueue runs it in a worker
                self._w().start(job, wl)
            else:
                self._sync_queue_name(job, wl)
            return
        if not is_admitted(wl):
            self._stop(job, NOT_ADMITTED, "Not admitted by cluster queue")

    def _runs_elsewhere(self, wl: kt.Workload) -> bool:
        """``ShouldSkipLocalExecution``: the Workload has a MultiKueue check
        (its pods stay gated here; their copies run in a worker)."""
        if not self.multikueue:
            return False
        checks = self._mgr().informer(ADMISSION_CHECK)
        for s in (wl.status.admission_checks if wl.status else None) or ():
            ac = checks.get(s.name)
            if ac is not None and ac.spec.controller_name == MULTIKUEUE_CONTROLLER:
                return True
        return False

    # -------------------------------------------------------------- loading
    def _load(self, key: str) -> PodJob | None:
        """The pods of ``key``; a single pod being deleted, or a group with no
        pod left, is finalized instead (None)."""
        pods = self._mgr().informer(POD)
        if key.startswith(GROUP_PREFIX):
            ns, _, name = key[len(GROUP_PREFIX) :].partition("/")
            members = pods.by_index(_GROUP_INDEX, f"{ns}/{name}")
            if not members:
                self._finalize_group_workload(ns, name)
                return None
            return PodJob(ns, name, True, members, self.ids)
        pod = pods.get(key)
        if pod is None:
            return None  # its Workload goes with it (garbage collection)
        if pm.group_name(pod, self.ids):
            return None  # reconciled under its group's key
        ns, _, name = key.partition("/")
        if pod.metadata.deletion_timestamp is not None:
            if (pod.metadata.labels or {}).get(pm.MANAGED) == pm.MANAGED_VALUE:
                self._finalize_single(pod)
            return None
        return PodJob(ns, name, False, [pod], self.ids)

    def _finalize_single(self, pod: kc.Pod) -> None:
        """A deleted pod: its Workload is orphaned (finished: the pod will not
        come back, FinishOrphanedWorkloads), and the pod may go."""
        mgr = self._mgr()
        for wl in mgr.informer(WORKLOAD).by_index(_OWNER_INDEX, key_of(pod)):
            if self.finish_orphans and wl.metadata.deletion_timestamp is None:
                msg = "The workload's owner no longer exists"
                finish_workload(mgr, wl, "OwnerNotFound", msg)
        self._finalize_pods([pod])

    def _finalize_group_workload(self, ns: str, name: str) -> None:
        """No pod of the group is left: the group's Workload loses its
        resource-in-use finalizer (garbage collection deletes it with its
        last owner pod)."""
        wl = self._mgr().informer(WORKLOAD).get(f"{ns}/{name}")
        if wl is None or RESOURCE_IN_USE not in (wl.metadata.finalizers or ()):
            return
        if not self._is_group_workload(wl) and controller_of(wl) is not None:
            return  # someone else's Workload of the same name
        new = clone(wl)
        new.metadata.finalizers = [
            f for f in new.metadata.finalizers or () if f != RESOURCE_IN_USE
        ] or None
        self._update(new)

    # -------------------------------------------------------------- the one workload
    def _ensure_one_workload(self, job: PodJob) -> kt.Workload | None:
        """ensureOneWorkload: the Workload of the pods, None when there is none
        (yet); _Halt when the reconcile ends here."""
        if job.prebuilt():
            return self._prebuilt_workload(job)
        if job.is_group:
            match, to_delete = self._match_group(job)
        else:
            match, to_delete = self._match_single(job)
        to_update = None
        if (
            match is None
            and to_delete
            and job.is_suspended()
            and not has_quota_reservation(to_delete[0])
        ):
            to_update, to_delete = to_delete[0], to_delete[1:]
        if match is None and not job.is_suspended() and job.finished() is None:
            only = to_delete[0] if len(to_delete) == 1 else None
            msg = (
                "No matching Workload; restoring pod templates according to existent Workload"
                if only is not None
                else "Missing Workload; unable to restore pod templates"
            )
            self._stop(job, NO_MATCHING_WORKLOAD, msg)
        deleted = False
        for wl in to_delete:
            if self._delete_workload(wl):
                deleted = True
                msg = f"Deleted not matching Workload: {key_of(wl)}"
                self._event(job.lead, "Normal", "DeletedWorkload", msg)
        if deleted:
            raise _Halt  # the deletion's event brings the pods back
        if to_update is not None:
            return self._update_workload(job, to_update)
        if match is not None:
            # A group's priority class is read off its lead pod, as Kueue
            # reads the first pod of the group's list.
            match = sync_workload_priority(self._mgr(), job.lead, match, COMPONENT)
        return match

    def _prebuilt_workload(self, job: PodJob) -> kt.Workload | None:
        mgr = self._mgr()
        wl = mgr.informer(WORKLOAD).get(f"{job.namespace}/{job.prebuilt()}")
        ref = controller_of(wl) if wl is not None else None
        if wl is None or (ref is not None and ref.uid != job.lead.metadata.uid):
            # Missing, or controlled by another object: nothing may run.
            self._stop(job, NO_MATCHING_WORKLOAD, "missing workload")
            raise _Halt
        wl = self._ensure_owned(job, wl)
        equivalent = job.equivalent(wl, job.pod_sets()) if job.is_group else same_pod(job, wl)
        if not equivalent:
            msg = "The prebuilt workload is out of sync with its user job"
            finish_workload(mgr, wl, "OutOfSync", msg)
            raise _Halt
        return wl

    def _ensure_owned(self, job: PodJob, wl: kt.Workload) -> kt.Workload:
        """EnsureWorkloadOwnedByAllMembers: a group's pods all own its Workload;
        a single pod controls its prebuilt one."""
        refs = list(wl.metadata.owner_references or ())
        labels = dict(wl.metadata.labels or {})
        have = {r.uid for r in refs}
        if job.is_group:
            added = [pod_ref(p) for p in job.pods if p.metadata.uid not in have]
        else:
            p = job.lead
            if any(r.uid == p.metadata.uid and r.controller for r in refs):
                return wl
            added = [pod_ref(p, controller=True)]
            refs = [r for r in refs if r.uid != p.metadata.uid]
            if p.metadata.uid and len(p.metadata.uid) <= 63:
                labels[JOB_UID] = p.metadata.uid
        if not added:
            return wl
        new = clone(wl)
        new.metadata.owner_references = refs + added
        new.metadata.labels = labels or None
        stored = self._update(new)
        if stored is not None and job.is_group:
            self._event(
                stored, "Normal", "OwnerReferencesAdded", f"Added {len(added)} owner reference(s)"
            )
        return stored if stored is not None else wl

    def _match_single(self, job: PodJob) -> tuple[kt.Workload | None, list[kt.Workload]]:
        match = None
        to_delete = []
        for wl in self._mgr().informer(WORKLOAD).by_index(_OWNER_INDEX, key_of(job.lead)):
            if match is None and same_pod(job, wl):
                match = wl
            else:
                to_delete.append(wl)
        return match, to_delete

    def _match_group(self, job: PodJob) -> tuple[kt.Workload | None, list[kt.Workload]]:
        """The group's FindMatchingWorkloads, with its clean-up: excess pods
        deleted, failed pods newer ones replaced let go."""
        wl = self._mgr().informer(WORKLOAD).get(f"{job.namespace}/{job.name}")
        if wl is None:
            return None, []
        if self.validate_group_owner and not self._is_group_workload(wl):
            self._event(
                job.lead,
                "Warning",
                "WorkloadNameConflict",
                f'A Workload named "{job.name}" already exists but is not a pod group workload; '
                "this pod group cannot be admitted",
            )
            self._finalize_pods(job.partition()[1])
            raise _Halt
        if wl.spec.maximum_execution_time_seconds != job.max_exec():
            return None, [wl]
        plan = job.match(wl, self._mgr().clock.now())
        if plan is None:
            return None, [wl]
        job.absent = plan.absent
        job.pods = plan.kept
        wl = self._ensure_owned(job, wl)
        self._w().remove_excess(plan.excess)
        self._finalize_pods(plan.replaced)
        return wl, []

    def _is_group_workload(self, wl: kt.Workload) -> bool:
        return (wl.metadata.annotations or {}).get(pm.IS_GROUP_WORKLOAD) == "true"

    # -------------------------------------------------------------- creating
    def _create_workload(self, job: PodJob) -> None:
        """handleJobWithNoWorkload: wait for a group's running pods to stop,
        then build the Workload (a group's once all its pods exist)."""
        if job.is_active(self._mgr().clock.now()):
            return
        try:
            wl = self._construct(job)
        except ComposeError as err:
            if err.event:
                self._event(job.lead, "Warning", "ErrWorkloadCompose", err.message)
            return
        if wl is None:
            return
        self._mgr().store.create(wl)
        self._event(job.lead, "Normal", "CreatedWorkload", f"Created Workload: {key_of(wl)}")

    def _construct(self, job: PodJob) -> kt.Workload | None:
        mgr = self._mgr()
        labels: dict[str, str]
        annotations: dict[str, str] = {}
        if job.is_group:
            active, inactive = job.partition()
            self._finalize_pods(inactive)
            job.validate_group(active)
            total = job.total_count()
            if len(active) > total:
                active.sort(key=keep_active_first)
                self._w().remove_excess(active[total:])
                active = active[:total]
            job.pods = active
            pod_sets = job.pod_sets()
            if len(pod_sets) > pm.MAX_ROLES:
                raise ComposeError(
                    f"pod group can't include more than {pm.MAX_ROLES} roles", event=True
                )
            labels = job.shared_values(self.label_keys)
            annotations[pm.IS_GROUP_WORKLOAD] = "true"
            refs = [pod_ref(p) for p in job.pods]
        else:
            pod_sets = job.pod_sets()
            m = job.lead.metadata
            labels = {k: v for k, v in (m.labels or {}).items() if k in self.label_keys}
            if m.uid and len(m.uid) <= 63:
                labels[JOB_UID] = m.uid
            refs = [pod_ref(job.lead, controller=True)]
        ref, priority = extract_priority(mgr, job.lead, pod_sets, COMPONENT)
        if ref is False:
            return None
        return new_workload(
            job.workload_name(), job.lead, pod_sets, labels, refs, ref, priority, annotations
        )

    def _update_workload(self, job: PodJob, wl: kt.Workload) -> kt.Workload:
        """updateWorkloadToMatchJob: a Workload that no longer matches pods that
        wait takes their podSets (it holds no quota)."""
        built = self._construct(job)
        if built is None:
            raise _Halt
        new = clone(wl)
        new.spec = built.spec
        stored = self._update(new)
        if stored is None:
            raise _Halt
        self._event(
            job.lead,
            "Normal",
            "UpdatedWorkload",
            f"Updated not matching Workload for suspended job: {key_of(wl)}",
        )
        return stored

    def _delete_workload(self, wl: kt.Workload) -> bool:
        """workload.Delete: let go of its finalizer, then delete it."""
        store = self._mgr().store
        if RESOURCE_IN_USE in (wl.metadata.finalizers or ()):
            new = clone(wl)
            new.metadata.finalizers = [
                f for f in new.metadata.finalizers or () if f != RESOURCE_IN_USE
            ] or None
            if self._update(new) is None:
                return False
        if wl.metadata.deletion_timestamp is not None:
            return False
        try:
            store.delete(WORKLOAD, wl.metadata.namespace, wl.metadata.name)
        except NotFound:
            return False
        return True

    # -------------------------------------------------------------- workload status
    def _sync_replacement(self, job: PodJob, wl: kt.Workload) -> bool:
        """WaitingForReplacementPods: True while pods the Workload counts are
        missing (failed, deleted); returns whether it wrote."""
        cond = find_condition(wl, "WaitingForReplacementPods")
        waiting = job.absent > 0
        if cond is None and not waiting:
            return False
        if waiting:
            ev = find_condition(wl, "Evicted")
            if ev is not None and ev.status == "True":
                reason, message = ev.reason, ev.message
            elif cond is not None and cond.status == "True":
                reason, message = cond.reason, cond.message
            else:
                reason, message = PODS_FAILED, "Some Failed pods need replacement"
            status = "True"
        elif cond is not None and cond.status != "False":
            status, reason, message = "False", "PodsReady", "No pods need replacement"
        else:
            return False
        return set_workload_condition(
            self._mgr(), wl, "WaitingForReplacementPods", status, reason, message
        )

    def _sync_reclaimable(self, job: PodJob, wl: kt.Workload) -> bool:
        counts = {ps.name: ps.count for ps in wl.spec.pod_sets}
        want = {r.name: min(r.count, counts[r.name]) for r in job.reclaimable() if r.name in counts}
        have = {r.name: r.count for r in (wl.status.reclaimable_pods if wl.status else None) or ()}
        if want == have:
            return False
        new = clone(wl)
        new.status = new.status or kt.WorkloadStatus()
        new.status.reclaimable_pods = [
            kt.ReclaimablePod(name=n, count=c) for n, c in sorted(want.items())
        ] or None
        write_workload_status(self._mgr(), new)
        return True

    def _sync_queue_name(self, job: PodJob, wl: kt.Workload) -> None:
        """QueueNameChange: waiting pods moved to another LocalQueue take their
        Workload along (not a serving group's)."""
        if job.serving() or has_quota_reservation(wl):
            return
        queue = job.queue_name() or None
        if wl.spec.queue_name == queue:
            return
        new = clone(wl)
        new.spec.queue_name = queue
        self._update(new)

    # -------------------------------------------------------------- helpers
    def _update(self, obj: Any) -> Any | None:
        return self._w().update(obj)

    def _event(self, obj: Any, etype: Any, reason: str, message: str) -> None:
        self._w().event(obj, etype, reason, message)

    def _stop(self, job: PodJob, reason: str, message: str) -> None:
        self._w().stop(job, reason, message)

    def _finalize_pods(self, pods: list[kc.Pod]) -> None:
        self._w().finalize_pods(pods)

    def _w(self) -> PodWriter:
        assert self.writer is not None, "setup() first"
        return self.writer

    def _mgr(self) -> Manager:
        assert self.mgr is not None, "setup() first"
        return self.mgr


# ------------------------------------------------------------------ module helpers
def _pod_owner(wl: Any) -> list[str]:
    """The "<namespace>/<pod>" of the pod controlling a Workload."""
    return [
        f"{wl.metadata.namespace}/{r.name}"
        for r in wl.metadata.owner_references or ()
        if r.controller and r.kind == "Pod" and r.api_version == "v1"
    ]
