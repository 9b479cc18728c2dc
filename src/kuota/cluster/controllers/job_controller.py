"""The batch/v1 Job controller, after Kubernetes' ``pkg/controller/job``.

Each sync reads the Job and its pods (an informer index on the controller
owner reference's uid) and:

* counts finished pods the way Kubernetes does since tracking with
  finalizers: every pod carries ``batch.kubernetes.io/job-tracking``; a
  finished pod's uid first goes to ``status.uncountedTerminatedPods``, then
  its finalizer is removed, then it moves into ``succeeded``/``failed`` (for
  Indexed Jobs into ``completedIndexes``), so no pod is counted twice or lost
  across a restart;
* fails the Job (``FailureTarget``, then ``Failed`` once no pod is
  terminating) past ``backoffLimit`` or ``activeDeadlineSeconds``, deleting
  its active pods;
* completes it (``SuccessCriteriaMet``, then ``Complete`` and
  ``completionTime``) once enough pods succeeded and none is active;
* otherwise deletes every active pod of a suspended Job, or creates pods up
  to ``min(parallelism, completions - succeeded)`` (one per missing index for
  Indexed Jobs), waiting out the pod-failure backoff (10 s, 20 s, 40 s …
  capped at 6 min after consecutive failures, as Kubernetes and OpenShift
  document it) before replacing failed pods.

A pod the API server refuses (a LimitRange's max, say) is reported as a
``FailedCreate`` event on the Job and tried again when the namespace's
LimitRanges change (Kubernetes retries with backoff for ever; in virtual time
that would keep a run from ever ending).

Not modelled: podFailurePolicy, successPolicy, backoffLimitPerIndex, pods
restarted in place (restartPolicy OnFailure counts restarts), adoption of
orphan pods by selector, and the one-second batching of pod events. The
controller's own status write does not sync the Job again (Kubernetes'
updateJob queues that sync batched, a second later, and it finds nothing to
do: the sync that wrote it saw the same Job and pods); a refused pod's
``FailedCreate`` event is therefore counted once, not once more for the echo.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import msgspec

from kuota.api.k8s import Job, JobCondition, JobStatus, Pod
from kuota.cluster.apiserver.limitrange import Forbidden
from kuota.cluster.apiserver.resourcequota import RESOURCE_QUOTA
from kuota.cluster.controllers.controller_base import ClusterController
from kuota.cluster.controllers.jobutil import (
    JOB_TRACKING_FINALIZER,
    BackoffRecord,
    completion_index,
    ensure_job_condition,
    find_job_condition,
    format_indexes,
    has_tracking_finalizer,
    is_job_finished,
    is_pod_failed,
    job_condition,
    new_job_pod,
    only_replace_failed,
    parse_indexes,
    removal_order,
)
from kuota.cluster.podutil import (
    JOB,
    POD,
    controller_ref,
    is_deleting,
    is_pod_ready,
    is_terminal,
    pod_phase,
)
from kuota.runtime.informer import Informer, key_of
from kuota.store import clone
from kuota.store.protocol import EventType, Invalid, NotFound
from kuota.store.resources import LIMIT_RANGE

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager

__all__ = ["JOB_CONTROLLER_NAME", "JobController"]

JOB_CONTROLLER_NAME = "kubernetes.io/job-controller"  # spec.managedBy of Jobs it syncs

# Kubernetes' reasons and messages (batch/v1 and job_controller.go).
REASON_BACKOFF_LIMIT = "BackoffLimitExceeded"
MSG_BACKOFF_LIMIT = "Job has reached the specified backoff limit"
REASON_DEADLINE = "DeadlineExceeded"
MSG_DEADLINE = "Job was active longer than specified deadline"
REASON_COMPLETIONS = "CompletionsReached"
MSG_COMPLETIONS = "Reached expected number of succeeded pods"

DEFAULT_POD_FAILURE_BACKOFF = timedelta(seconds=10)
# The documented cap (Kubernetes' and OpenShift's Job docs: "capped at six
# minutes"); the controller's source has used 10 minutes since 1.28.
MAX_POD_FAILURE_BACKOFF = timedelta(minutes=6)
# job_controller.go MaxPodCreateDeletePerSync: the most pods one sync creates.
MAX_POD_CREATE_PER_SYNC = 500
REASON_FAILED_CREATE = "FailedCreate"  # the event of a refused pod
_MIN_REQUEUE = timedelta(seconds=1)  # syncJobBatchPeriod: the shortest requeue delay
_ORPHAN = "orphan:"  # work keys of pods whose tracking finalizer may be left behind


@dataclass
class _Sync:
    """One sync's view of a Job: the counts are updated as the sync acts."""

    job: Job  # the latest stored Job (replaced after each status write)
    status: JobStatus  # the status being built (private)
    pods: list[Pod]
    active: list[Pod]
    ready: int
    terminating: int
    succeeded: int
    failed: int
    uncounted_succeeded: list[str]
    uncounted_failed: list[str]
    prev_indexes: set[int] = field(default_factory=set)
    succeeded_indexes: set[int] = field(default_factory=set)
    finished: JobCondition | None = None


class JobController(ClusterController):
    """Reads Jobs and Pods; creates and deletes pods, removes their tracking
    finalizer, and writes Job status (only when it changed)."""

    name = "job-controller"
    component = "job-controller"
    _BY_OWNER = "job-controller:controller-uid"

    def __init__(
        self,
        *,
        pod_failure_backoff: timedelta = DEFAULT_POD_FAILURE_BACKOFF,
        max_pod_failure_backoff: timedelta = MAX_POD_FAILURE_BACKOFF,
    ) -> None:
        super().__init__()
        self.pod_failure_backoff = pod_failure_backoff
        self.max_pod_failure_backoff = max_pod_failure_backoff
        self._jobs: Informer | None = None
        self._pods: Informer | None = None
        self._backoff: dict[str, BackoffRecord] = {}
        # Jobs whose last pod create was refused, by namespace: synced again
        # when a LimitRange or a ResourceQuota there changes.
        self._refused: dict[str, set[str]] = {}
        # The resourceVersions of this controller's own status writes not yet
        # seen back from the informer, by Job key: such a write's event is
        # no reason to sync again (the sync that wrote it saw everything its
        # successor would, and left a status a sync leaves as it is).
        self._echo: dict[str, set[str]] = {}

    # ------------------------------------------------------------ wiring
    def setup(self, mgr: Manager) -> None:
        super().setup(mgr)
        self._jobs = mgr.informer(JOB)
        self._pods = mgr.informer(POD)
        self._pods.add_index(self._BY_OWNER, _job_owner_uid)
        self._jobs.on_change(self._on_job)
        self._pods.on_change(self._on_pod)
        mgr.informer(LIMIT_RANGE).on_change(self._on_limit_range)
        # A quota's usage going down (its controller's status write) may let
        # a refused create through: kube-controller-manager's job controller
        # retries with backoff; kuota on the event that can change the answer.
        mgr.informer(RESOURCE_QUOTA).on_change(self._on_limit_range)

    def _on_limit_range(self, etype: EventType, lr: Any, old: Any | None) -> None:
        for key in sorted(self._refused.pop(lr.metadata.namespace, ())):
            self.mgr.enqueue(self.name, key)

    def _on_job(self, etype: EventType, job: Any, old: Any | None) -> None:
        key = key_of(job)
        if not self._own_write(etype, job, key):
            self.mgr.enqueue(self.name, key)
        if etype == "DELETED" or is_job_finished(job):
            # cleanupPodFinalizers: nothing will count these pods any more.
            assert self._pods is not None
            for pod in self._pods.by_index(self._BY_OWNER, job.metadata.uid):
                if has_tracking_finalizer(pod):
                    self.mgr.enqueue(self.name, _ORPHAN + key_of(pod))

    def _own_write(self, etype: EventType, job: Any, key: str) -> bool:
        """Whether the event is this controller's own status write coming
        back (then the sync that wrote it already decided all there is)."""
        echo = self._echo.get(key)
        if echo is None:
            return False
        rv = job.metadata.resource_version
        own = etype == "MODIFIED" and rv in echo
        echo.discard(rv)
        if not echo or etype == "DELETED":
            del self._echo[key]
        return own

    def _on_pod(self, etype: EventType, pod: Any, old: Any | None) -> None:
        job = self._owner(pod)
        if job is not None and not is_job_finished(job):
            self.mgr.enqueue_coalesced(self.name, key_of(job))
        elif etype != "DELETED" and has_tracking_finalizer(pod):
            self.mgr.enqueue(self.name, _ORPHAN + key_of(pod))

    def _owner(self, pod: Pod) -> Job | None:
        """``resolveControllerRef``: the Job the pod's controller reference names."""
        ref = controller_ref(pod)
        if ref is None or ref.kind != "Job" or ref.api_version != "batch/v1":
            return None
        assert self._jobs is not None
        job: Job | None = self._jobs.get(f"{pod.metadata.namespace}/{ref.name}")
        return job if job is not None and job.metadata.uid == ref.uid else None

    # ------------------------------------------------------------ reconcile
    def reconcile(self, key: str) -> timedelta | None:
        if key.startswith(_ORPHAN):
            self._sync_orphan(key.removeprefix(_ORPHAN))
            return None
        assert self._jobs is not None
        job: Job | None = self._jobs.get(key)
        if job is None or is_job_finished(job):
            self._backoff.pop(key, None)
            return None
        assert job.spec is not None
        if (job.spec.managed_by or JOB_CONTROLLER_NAME) != JOB_CONTROLLER_NAME:
            return None
        self._sync(key, job)
        return None

    def _sync_orphan(self, key: str) -> None:
        """``syncOrphanPod``: drop the tracking finalizer of a pod whose Job is
        gone or finished (a pod controlled by something else is left alone)."""
        assert self._pods is not None
        pod: Pod | None = self._pods.get(key)
        if pod is None or not has_tracking_finalizer(pod):
            return
        ref = controller_ref(pod)
        if ref is not None:
            if ref.kind != "Job" or ref.api_version != "batch/v1":
                return
            job = self._owner(pod)
            if job is not None and not is_job_finished(job):
                return
        self._remove_finalizer(pod)

    def _sync(self, key: str, job: Job) -> None:
        spec = job.spec
        assert spec is not None and self._pods is not None
        now = self.mgr.clock.now()
        status = clone(job.status) if job.status is not None else JobStatus()
        uncounted = dict(status.uncounted_terminated_pods or {})
        status.uncounted_terminated_pods = uncounted
        pods = self._pods.by_index(self._BY_OWNER, job.metadata.uid)
        active = [p for p in pods if not is_terminal(p) and not is_deleting(p)]
        s = _Sync(
            job=job,
            status=status,
            pods=pods,
            active=active,
            ready=sum(1 for p in active if is_pod_ready(p)),
            terminating=sum(1 for p in pods if is_deleting(p) and not is_terminal(p)),
            succeeded=0,
            failed=0,
            uncounted_succeeded=list(uncounted.get("succeeded") or ()),
            uncounted_failed=list(uncounted.get("failed") or ()),
        )
        new_succeeded = self._new_finished(s, s.uncounted_succeeded, _succeeded)
        new_failed = self._new_finished(s, s.uncounted_failed, lambda p: is_pod_failed(p, job))
        s.succeeded = status.succeeded + len(new_succeeded) + len(s.uncounted_succeeded)
        s.failed = status.failed + len(new_failed) + len(s.uncounted_failed)
        suspended = bool(spec.suspend)
        if status.start_time is None and not suspended:
            status.start_time = now
        backoff = self._backoff.get(key, BackoffRecord()).update(new_succeeded, new_failed, now)

        s.finished = self._finish_condition(s, now)
        if spec.completion_mode == "Indexed":
            completions = spec.completions or 0
            s.prev_indexes = parse_indexes(status.completed_indexes, completions)
            s.succeeded_indexes = s.prev_indexes | {
                ix
                for p in pods
                if pod_phase(p) == "Succeeded"
                and has_tracking_finalizer(p)
                and (ix := completion_index(p)) is not None
                and ix < completions
            }
            s.succeeded = len(s.succeeded_indexes)

        if s.finished is not None:
            # The Job failed (or already met its success criteria): no pod
            # may keep running. Finalizers stay so the pods are counted.
            self._delete_pods(s, s.active, keep_finalizer=True)
        else:
            manage_called = False
            if not is_deleting(job):
                self._manage(key, s, backoff, now)
                manage_called = True
            active_n = len(s.active)
            if spec.completions is None:
                # Work-queue semantics: done once a pod succeeded and none runs.
                complete = s.succeeded > 0 and active_n == 0
            else:
                complete = s.succeeded >= spec.completions and active_n == 0
            if complete:
                s.finished = job_condition(
                    "SuccessCriteriaMet", REASON_COMPLETIONS, MSG_COMPLETIONS, now
                )
            elif manage_called:
                self._suspend_condition(s, suspended, now)

        status.active = len(s.active)
        status.ready = s.ready
        status.terminating = s.terminating
        self._track(s, now)
        self._backoff[key] = backoff
        self._requeue_for_deadline(key, s, suspended)

    # ------------------------------------------------------------ decisions
    def _new_finished(self, s: _Sync, uncounted: list[str], pred: Any) -> list[Pod]:
        """``getValidPodsWithFilter``: finished pods not counted yet (they still
        carry the finalizer and are not in the uncounted list)."""
        spec = s.job.spec
        assert spec is not None
        indexed = spec.completion_mode == "Indexed"
        seen = set(uncounted)
        out = []
        for p in s.pods:
            if not has_tracking_finalizer(p) or p.metadata.uid in seen:
                continue
            if indexed and not _valid_index(p, spec.completions):
                continue
            if pred(p):
                out.append(p)
        return out

    def _finish_condition(self, s: _Sync, now: datetime) -> JobCondition | None:
        spec, status = s.job.spec, s.status
        assert spec is not None
        met = find_job_condition(status.conditions, "SuccessCriteriaMet")
        if met is not None and met.status == "True":
            return met
        target = find_job_condition(status.conditions, "FailureTarget")
        if target is not None and target.status == "True":
            return job_condition("Failed", target.reason or "", target.message or "", now)
        if s.failed > spec.backoff_limit:
            return job_condition("FailureTarget", REASON_BACKOFF_LIMIT, MSG_BACKOFF_LIMIT, now)
        if self._past_deadline(s.job, status, now):
            return job_condition("FailureTarget", REASON_DEADLINE, MSG_DEADLINE, now)
        return None

    @staticmethod
    def _deadline(job: Job, status: JobStatus) -> datetime | None:
        spec = job.spec
        assert spec is not None
        ads = spec.active_deadline_seconds
        if ads is None or status.start_time is None or spec.suspend:
            return None
        resuming = find_job_condition(status.conditions, "Suspended")
        if resuming is not None and resuming.status == "True":
            return None  # this sync resumes it and restarts the clock
        return status.start_time + timedelta(seconds=ads)

    def _past_deadline(self, job: Job, status: JobStatus, now: datetime) -> bool:
        deadline = self._deadline(job, status)
        return deadline is not None and now >= deadline

    def _requeue_for_deadline(self, key: str, s: _Sync, suspended: bool) -> None:
        if s.finished is not None or suspended:
            return
        deadline = self._deadline(s.job, s.status)
        if deadline is not None:
            self.mgr.enqueue_at(self.name, key, deadline)

    def _suspend_condition(self, s: _Sync, suspended: bool, now: datetime) -> None:
        conds = list(s.status.conditions or ())
        if suspended:
            ensure_job_condition(conds, "Suspended", "True", "JobSuspended", "Job suspended", now)
        elif ensure_job_condition(conds, "Suspended", "False", "JobResumed", "Job resumed", now):
            # A resumed Job's activeDeadlineSeconds counts from the resume.
            s.status.start_time = now
        s.status.conditions = conds or None

    def _manage(self, key: str, s: _Sync, backoff: BackoffRecord, now: datetime) -> None:
        """``manageJob``: delete what is too many, create what is missing."""
        spec = s.job.spec
        assert spec is not None
        if spec.suspend:
            self._delete_pods(s, sorted(s.active, key=removal_order), keep_finalizer=False)
            return
        active = len(s.active)
        if spec.completions is None:
            want = active if s.succeeded > 0 else spec.parallelism
        else:
            want = max(0, min(spec.completions - s.succeeded, spec.parallelism))
        surplus = self._surplus(s, max(0, active - want))
        if surplus:
            # Deleting takes precedence: create in a later sync.
            self._delete_pods(s, surplus, keep_finalizer=False)
            return
        waiting = s.terminating if only_replace_failed(s.job) else 0
        diff = want - waiting - active
        if diff <= 0:
            return
        delay = backoff.remaining(now, self.pod_failure_backoff, self.max_pod_failure_backoff)
        if delay > timedelta(0):
            self.mgr.enqueue_after(self.name, key, max(delay, _MIN_REQUEUE))
            return
        if diff > MAX_POD_CREATE_PER_SYNC:
            diff = MAX_POD_CREATE_PER_SYNC
            self.mgr.enqueue(self.name, key)  # the rest in the next sync
        indexes: list[int | None]
        if spec.completion_mode == "Indexed":
            indexes = list(self._pending_indexes(s, diff, spec.completions or 0))
        else:
            indexes = [None] * diff
        for ix in indexes:
            try:
                s.active.append(self.mgr.store.create(new_job_pod(s.job, ix)))
            except (Forbidden, Invalid) as err:
                # Admission refused it (what the job controller's FailedCreate
                # reports); the rest would be refused alike.
                self._refused.setdefault(s.job.metadata.namespace, set()).add(key)
                self.event(s.job, "Warning", REASON_FAILED_CREATE, f"Error creating: {err}")
                break

    def _surplus(self, s: _Sync, at_least: int) -> list[Pod]:
        """``activePodsForRemoval``: duplicated or invalid indexes first, then
        the pods ``controller.ActivePods`` would delete first."""
        spec = s.job.spec
        assert spec is not None
        rm: list[Pod] = []
        left = s.active
        if spec.completion_mode == "Indexed":
            by_index: dict[int, list[Pod]] = {}
            left = []
            for p in s.active:
                if not _valid_index(p, spec.completions):
                    rm.append(p)
                else:
                    by_index.setdefault(completion_index(p) or 0, []).append(p)
            for group in by_index.values():
                group.sort(key=removal_order)
                rm.extend(group[:-1])  # keep the most advanced pod of each index
                left.append(group[-1])
        if len(rm) < at_least:
            rm.extend(sorted(left, key=removal_order)[: at_least - len(rm)])
        return rm

    def _pending_indexes(self, s: _Sync, count: int, completions: int) -> list[int]:
        """``firstPendingIndexes``: the lowest indexes neither succeeded nor running."""
        busy = {completion_index(p) for p in s.active} | s.succeeded_indexes
        out: list[int] = []
        for ix in range(completions):
            if len(out) == count:
                break
            if ix not in busy:
                out.append(ix)
        return out

    # ------------------------------------------------------------ writes
    def _delete_pods(self, s: _Sync, pods: list[Pod], *, keep_finalizer: bool) -> None:
        """Delete ``pods`` and take them out of the active count. Pods deleted
        to suspend or scale down lose their tracking finalizer first, so they
        are not counted as failed (``deleteJobPods``); those of a failed Job
        keep it to be counted (``deleteActivePods``)."""
        store = self.mgr.store
        gone = {p.metadata.uid for p in pods}
        for p in pods:
            if not keep_finalizer and has_tracking_finalizer(p):
                self._remove_finalizer(p)
            try:
                left = store.delete(POD, p.metadata.namespace, p.metadata.name)
            except NotFound:
                left = None
            if is_pod_ready(p):
                s.ready -= 1
            if left is not None:
                s.terminating += 1  # still there: another finalizer holds it
        s.active = [p for p in s.active if p.metadata.uid not in gone]

    def _remove_finalizer(self, pod: Pod) -> None:
        rest = [f for f in pod.metadata.finalizers or () if f != JOB_TRACKING_FINALIZER]
        with contextlib.suppress(NotFound):  # already gone: nothing to release
            self.mgr.store.patch(
                POD,
                pod.metadata.namespace,
                pod.metadata.name,
                {"metadata": {"finalizers": rest or None}},
            )

    def _flush(self, s: _Sync) -> None:
        """Write the status when it differs from the stored one."""
        if s.status == s.job.status:
            return
        # The store copies the status it is given; the template is not copied.
        s.job = self.mgr.store.update_status(msgspec.structs.replace(s.job, status=s.status))
        self._echo.setdefault(key_of(s.job), set()).add(s.job.metadata.resource_version)

    def _track(self, s: _Sync, now: datetime) -> None:
        """``trackJobStatusAndRemoveFinalizers``: record finished pods as
        uncounted, remove their finalizers, count them, then finish the Job."""
        spec, status = s.job.spec, s.status
        assert spec is not None
        indexed = spec.completion_mode == "Indexed"
        with_finalizer = {p.metadata.uid for p in s.pods if has_tracking_finalizer(p)}
        self._count_uncounted(s, with_finalizer)
        pods = sorted(s.pods, key=_index_order) if indexed else s.pods
        to_remove: list[Pod] = []
        new_indexes: set[int] = set()
        failing = s.finished is not None and s.finished.type != "SuccessCriteriaMet"
        for p in pods:
            if not has_tracking_finalizer(p):
                continue
            failed = is_pod_failed(p, s.job)
            # canRemoveFinalizer
            if not (is_deleting(s.job) or s.finished is not None or failed or _succeeded(p)):
                continue
            to_remove.append(p)
            uid = p.metadata.uid
            if _succeeded(p) and uid not in s.uncounted_failed:
                if indexed:
                    ix = completion_index(p)
                    if _valid_index(p, spec.completions) and ix not in s.prev_indexes:
                        new_indexes.add(ix or 0)
                elif uid not in s.uncounted_succeeded:
                    s.uncounted_succeeded.append(uid)
            elif (
                (failed or failing)
                and uid not in s.uncounted_failed
                and (not indexed or _valid_index(p, spec.completions))
            ):
                s.uncounted_failed.append(uid)
        if indexed:
            s.succeeded_indexes |= new_indexes
            status.succeeded = len(s.succeeded_indexes)
            status.completed_indexes = format_indexes(s.succeeded_indexes) or None
        if s.finished is not None and s.finished.type == "FailureTarget":
            status.conditions = [*(status.conditions or ()), s.finished]
            s.finished = job_condition(
                "Failed", s.finished.reason or "", s.finished.message or "", now
            )
        elif s.finished is not None and s.finished.type == "SuccessCriteriaMet":
            if find_job_condition(status.conditions, "SuccessCriteriaMet") is None:
                status.conditions = [*(status.conditions or ()), s.finished]
            s.finished = job_condition(
                "Complete", s.finished.reason or "", s.finished.message or "", now
            )
        self._set_uncounted(s)
        self._flush(s)  # the uncounted uids are safe before any finalizer goes
        for p in to_remove:
            self._remove_finalizer(p)
        with_finalizer -= {p.metadata.uid for p in to_remove}
        self._count_uncounted(s, with_finalizer)
        self._enact_finished(s, now)
        self._flush(s)

    def _count_uncounted(self, s: _Sync, with_finalizer: set[str]) -> None:
        """``cleanUncountedPodsWithoutFinalizers``: uids whose finalizer is gone
        move from the uncounted lists into the counters."""
        status = s.status
        kept = [u for u in s.uncounted_succeeded if u in with_finalizer]
        status.succeeded += len(s.uncounted_succeeded) - len(kept)
        s.uncounted_succeeded = kept
        kept = [u for u in s.uncounted_failed if u in with_finalizer]
        status.failed += len(s.uncounted_failed) - len(kept)
        s.uncounted_failed = kept
        self._set_uncounted(s)

    @staticmethod
    def _set_uncounted(s: _Sync) -> None:
        unc: dict[str, Any] = {}
        if s.uncounted_succeeded:
            unc["succeeded"] = list(s.uncounted_succeeded)
        if s.uncounted_failed:
            unc["failed"] = list(s.uncounted_failed)
        s.status.uncounted_terminated_pods = unc

    def _enact_finished(self, s: _Sync, now: datetime) -> None:
        """``enactJobFinished``: the final condition, once every pod is counted
        and none is still terminating."""
        cond = s.finished
        if cond is None or s.uncounted_succeeded or s.uncounted_failed or s.terminating > 0:
            return
        conds = list(s.status.conditions or ())
        ensure_job_condition(conds, cond.type, "True", cond.reason or "", cond.message or "", now)
        s.status.conditions = conds
        if cond.type == "Complete":
            s.status.completion_time = now


def _job_owner_uid(pod: Any) -> list[str]:
    ref = controller_ref(pod)
    if ref is None or ref.kind != "Job" or ref.api_version != "batch/v1":
        return []
    return [ref.uid]


def _succeeded(pod: Pod) -> bool:
    return pod_phase(pod) == "Succeeded"


def _valid_index(pod: Pod, completions: int | None) -> bool:
    ix = completion_index(pod)
    return ix is not None and ix < (completions or 0)


def _index_order(pod: Pod) -> tuple[int, str]:
    ix = completion_index(pod)
    return (ix if ix is not None else -1, pod.metadata.name)
