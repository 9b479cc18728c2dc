"""KubeRay's RayJob controller (``ray-operator/controllers/ray/
rayjob_controller.go``) in the embedded cluster: its ``jobDeploymentStatus``
machine. New -> Initializing (a job id and the RayCluster's name
``<job>-<5 chars>`` chosen, ``startTime`` set); the RayCluster made from
``rayClusterSpec`` (owned by the job); once it is ready the Ray job is
submitted: in ``K8sJobMode`` by a submitter batch Job named after the RayJob
(its ``submitterPodTemplate`` or KubeRay's default), in ``HTTPMode`` and
``SidecarMode`` directly -> Running. The Ray job (the entrypoint) runs for
the RayJob's ``kuota.dev/duration`` (none: until stopped) and then SUCCEEDED
(FAILED with ``kuota.dev/fail: "true"``); with a submitter the RayJob is
terminal once the submitter Job has finished too -> Complete or Failed
(``AppFailed``; ``SubmissionFailed`` when the submitter Job failed,
``DeadlineExceeded`` past ``activeDeadlineSeconds``). With
``shutdownAfterJobFinishes`` the RayCluster is deleted
``ttlSecondsAfterFinished`` after the end. Suspended (``spec.suspend``, as
Kueue suspends it): Suspending deletes the RayCluster and the submitter Job,
then Suspended with the cluster's and the Ray job's status reset; resumed,
it starts again from New.

A spec KubeRay's checks refuse: ``ValidationFailed`` with KubeRay's message.
Not modelled: InteractiveMode's waiting for a user's submission, retries
(``backoffLimit``), deletion rules, ``clusterSelector`` (an existing cluster)."""

from __future__ import annotations

import contextlib
import hashlib
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

import msgspec

from kuota.api import k8s as kc
from kuota.api.kueue.config import parse_duration
from kuota.api.meta import ObjectMeta
from kuota.api.ray import kuberay_rules as rules
from kuota.api.ray import ray_types as r
from kuota.api.ray.ray_submitter import submitter_template
from kuota.cluster.controllers.appsutil import safe_encode
from kuota.cluster.controllers.controller_base import ClusterController
from kuota.cluster.controllers.run_keys import DURATION_ANNOTATION, FAIL_ANNOTATION
from kuota.cluster.podutil import JOB, controller_ref, is_deleting, owner_reference
from kuota.runtime.informer import Informer, key_of
from kuota.store import AlreadyExists, Conflict, NotFound, clone
from kuota.store.protocol import EventType
from kuota.store.resources import RAY_CLUSTER, RAY_JOB

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager

__all__ = ["RayJobController"]

COMPONENT: Final = "rayjob-controller"
_SUBMITTER_BACKOFF: Final = 2  # KubeRay's default submitter Job backoffLimit


def _suffix(uid: str, what: str) -> str:
    """``rand.String(5)``, made deterministic: five safe characters of the
    job's uid (a resumed job names its new cluster alike)."""
    return safe_encode(hashlib.sha256(f"{uid}/{what}".encode()).hexdigest()[:5])


def _finished(job: kc.Job | None) -> str:
    for c in (job.status.conditions if job is not None and job.status else None) or ():
        if c.type in ("Complete", "Failed") and c.status == "True":
            return c.type
    return ""


class RayJobController(ClusterController):
    """Reads RayJobs, RayClusters and Jobs; writes RayClusters, submitter
    Jobs and RayJob status."""

    name = "kuberay-rayjob"
    component = COMPONENT

    def __init__(self) -> None:
        super().__init__()
        self._jobs: Informer | None = None
        self._clusters: Informer | None = None
        self._submitters: Informer | None = None

    def setup(self, mgr: Manager) -> None:
        super().setup(mgr)
        self._jobs = mgr.informer(RAY_JOB)
        self._jobs.on_change(self._on_job)
        self._clusters = mgr.informer(RAY_CLUSTER)
        self._clusters.on_change(self._on_owned)
        self._submitters = mgr.informer(JOB)
        self._submitters.on_change(self._on_owned)

    def _on_job(self, etype: EventType, job: Any, old: Any | None) -> None:
        if etype != "DELETED":
            self.mgr.enqueue(self.name, key_of(job))

    def _on_owned(self, etype: EventType, obj: Any, old: Any | None) -> None:
        ref = controller_ref(obj)
        if ref is not None and ref.kind == "RayJob":
            self.mgr.enqueue(self.name, f"{obj.metadata.namespace}/{ref.name}")

    def _owned(self, informer: Informer | None, job: r.RayJob, name: str) -> Any | None:
        assert informer is not None
        obj = informer.get(f"{job.metadata.namespace}/{name}") if name else None
        if obj is None or is_deleting(obj):
            return None
        ref = controller_ref(obj)
        return obj if ref is not None and ref.uid == job.metadata.uid else None

    # ------------------------------------------------------------ reconcile
    def reconcile(self, key: str) -> timedelta | None:
        assert self._jobs is not None
        job: r.RayJob | None = self._jobs.get(key)
        if job is None or is_deleting(job):
            return None
        if job.spec.managed_by not in (None, r.OPERATOR):
            return None  # another controller's (MultiKueue)
        now = self.mgr.clock.now()
        st = clone(job.status) if job.status is not None else r.RayJobStatus()
        dep = st.job_deployment_status or ""
        if dep in ("Complete", "Failed", "ValidationFailed"):
            return self._finished(job, st, now) if dep != "ValidationFailed" else None
        err = rules.rayjob_error(job)
        if err:
            self.event(job, "Warning", "InvalidRayJobSpec", f"{key}: {err}")
            st.job_deployment_status, st.reason, st.message = (
                "ValidationFailed",
                "ValidationFailed",
                err,
            )
            self._write(job, st)
            return None
        again: timedelta | None = None
        if dep == "":
            self._init(job, st, now)
        elif dep == "Initializing":
            if not self._suspending(job, st) and not self._deadline(job, st, now):
                again = self._initializing(job, st, now)
        elif dep == "Running":
            if not self._suspending(job, st) and not self._deadline(job, st, now):
                again = self._running(job, st, now)
        elif dep == "Suspending":
            self._suspend(job, st)
        elif dep == "Suspended" and not job.spec.suspend:
            st.job_status, st.job_deployment_status = "", ""
        if (st.job_deployment_status or "") in ("Complete", "Failed") and st.end_time is None:
            st.end_time = now
        self._write(job, st)
        if (st.job_deployment_status or "") in ("Complete", "Failed"):
            return self._finished(job, st, now)
        return again

    def _init(self, job: r.RayJob, st: r.RayJobStatus, now: datetime) -> None:
        """initRayJobStatusIfNeed."""
        uid = job.metadata.uid
        if job.spec.submission_mode != "InteractiveMode" and not st.job_id:
            st.job_id = job.spec.job_id or f"{job.metadata.name}-{_suffix(uid, 'job')}"
        if not st.ray_cluster_name:
            st.ray_cluster_name = f"{job.metadata.name}-{_suffix(uid, 'cluster')}"
        st.job_status = st.job_status or ""
        st.job_deployment_status = "Initializing"
        st.start_time = now

    def _suspending(self, job: r.RayJob, st: r.RayJobStatus) -> bool:
        """updateStatusToSuspendingIfNeeded."""
        if not job.spec.suspend:
            return False
        st.job_deployment_status = "Suspending"
        return True

    def _deadline(self, job: r.RayJob, st: r.RayJobStatus, now: datetime) -> bool:
        """checkActiveDeadlineAndUpdateStatusIfNeeded."""
        limit = job.spec.active_deadline_seconds
        if limit is None or st.start_time is None or now < st.start_time + timedelta(seconds=limit):
            return False
        st.job_deployment_status, st.reason = "Failed", "DeadlineExceeded"
        st.message = (
            f"The RayJob has passed the activeDeadlineSeconds. StartTime: {_go_time(st.start_time)}. "
            f"ActiveDeadlineSeconds: {limit}"
        )
        return True

    def _deadline_in(self, job: r.RayJob, st: r.RayJobStatus, now: datetime) -> timedelta | None:
        limit = job.spec.active_deadline_seconds
        if limit is None or st.start_time is None:
            return None
        return st.start_time + timedelta(seconds=limit) - now

    def _initializing(self, job: r.RayJob, st: r.RayJobStatus, now: datetime) -> timedelta | None:
        rc = self._owned(self._clusters, job, st.ray_cluster_name or "")
        if rc is None:
            self._create_cluster(job, st.ray_cluster_name or "")
            return self._deadline_in(job, st, now)
        st.ray_cluster_status = clone(rc.status) if rc.status is not None else None
        if rc.status is None or rc.status.state != "ready":
            return self._deadline_in(job, st, now)
        st.dashboard_url = (
            f"{rc.metadata.name}-head-svc.{rc.metadata.namespace}.svc.cluster.local:8265"
        )
        mode = job.spec.submission_mode or "K8sJobMode"
        if mode == "InteractiveMode":
            st.job_deployment_status = "Waiting"
            return None
        if mode == "K8sJobMode":
            self._create_submitter(job)
        st.job_deployment_status = "Running"
        st.job_status = "PENDING"
        st.ray_job_info = r.RayJobStatusInfo(start_time=now)
        st.job_status = "RUNNING"
        return self._running(job, st, now)

    def _running(self, job: r.RayJob, st: r.RayJobStatus, now: datetime) -> timedelta | None:
        rc = self._owned(self._clusters, job, st.ray_cluster_name or "")
        if rc is not None:
            st.ray_cluster_status = clone(rc.status) if rc.status is not None else None
        ann = job.metadata.annotations or {}
        raw = ann.get(DURATION_ANNOTATION)
        started = st.ray_job_info.start_time if st.ray_job_info else None
        started = started or now
        end: datetime | None = None
        if raw is not None:
            try:
                end = started + parse_duration(raw)
            except ValueError as err:
                st.job_deployment_status, st.reason = "Failed", "AppFailed"
                st.job_status = "FAILED"
                st.message = f"annotation {DURATION_ANNOTATION}={raw!r}: {err}"
                return None
        if end is not None and now >= end:
            failed = ann.get(FAIL_ANNOTATION) == "true"
            st.job_status = "FAILED" if failed else "SUCCEEDED"
            st.message = (
                "Job entrypoint command failed with exit code 1"
                if failed
                else "Job finished successfully."
            )
            st.ray_job_info = r.RayJobStatusInfo(start_time=started, end_time=end)
        submitter = None
        if (job.spec.submission_mode or "K8sJobMode") == "K8sJobMode":
            submitter = self._owned(self._submitters, job, job.metadata.name)
            if submitter is not None and _finished(submitter) == "Failed":
                cond = next(c for c in submitter.status.conditions or () if c.type == "Failed")
                st.job_deployment_status, st.reason = "Failed", "SubmissionFailed"
                st.message = (
                    f"Job submission has failed. Reason: {cond.reason}. Message: {cond.message}"
                )
                return None
        terminal = st.job_status in ("SUCCEEDED", "FAILED", "STOPPED")
        if (job.spec.submission_mode or "K8sJobMode") == "K8sJobMode":
            # The Ray job is over once its submitter (which follows it) is too.
            terminal = terminal and _finished(submitter) == "Complete"
        if terminal:
            if st.job_status == "FAILED":
                st.job_deployment_status, st.reason = "Failed", "AppFailed"
            else:
                st.job_deployment_status, st.reason = "Complete", ""
            return None
        # (only waits still ahead: once the entrypoint's end has passed, the
        # submitter's end brings the job back through its watch; requeueing
        # at once would spin before the submitter's pod timer could fire)
        waits = [
            d
            for d in (end - now if end else None, self._deadline_in(job, st, now))
            if d is not None and d > timedelta(0)
        ]
        return min(waits) if waits else None

    def _suspend(self, job: r.RayJob, st: r.RayJobStatus) -> None:
        """Suspending: the cluster and the submitter deleted, then Suspended."""
        rc = self._owned(self._clusters, job, st.ray_cluster_name or "")
        sub = self._owned(self._submitters, job, job.metadata.name)
        for rtype, obj in ((RAY_CLUSTER, rc), (JOB, sub)):
            if obj is not None:
                with contextlib.suppress(NotFound):
                    self.mgr.store.delete(rtype, obj.metadata.namespace, obj.metadata.name)
        if rc is not None or sub is not None:
            return  # their deletion brings us back
        st.ray_cluster_status = None
        st.ray_cluster_name = st.dashboard_url = st.job_id = st.message = st.reason = None
        st.ray_job_info = None
        st.job_status_check_failure_start_time = None
        st.job_status = ""
        st.job_deployment_status = "Suspended"

    def _finished(self, job: r.RayJob, st: r.RayJobStatus, now: datetime) -> timedelta | None:
        """handleShutdownAfterJobFinishes: the cluster goes ``ttl`` after the end."""
        if not job.spec.shutdown_after_job_finishes or st.end_time is None:
            return None
        at = st.end_time + timedelta(seconds=job.spec.ttl_seconds_after_finished or 0)
        if now < at:
            return at - now
        rc = self._owned(self._clusters, job, st.ray_cluster_name or "")
        if rc is not None:
            with contextlib.suppress(NotFound):
                self.mgr.store.delete(RAY_CLUSTER, rc.metadata.namespace, rc.metadata.name)
                self.event(job, "Normal", "DeletedRayCluster", f"Deleted RayCluster {key_of(rc)}")
        return None

    # ------------------------------------------------------------ writes
    def _create_cluster(self, job: r.RayJob, name: str) -> None:
        """constructRayClusterForRayJob: the job's labels and annotations and
        the originated-from labels, its cluster spec, owned by the job."""
        spec = clone(job.spec.ray_cluster_spec) or r.RayClusterSpec()
        labels = {
            **(job.metadata.labels or {}),
            r.ORIGINATED_FROM_NAME_LABEL: job.metadata.name,
            r.ORIGINATED_FROM_CR_LABEL: "RayJob",
        }
        rc = r.RayCluster(
            metadata=ObjectMeta(
                name=name,
                namespace=job.metadata.namespace,
                labels=labels,
                annotations=dict(job.metadata.annotations) if job.metadata.annotations else None,
                owner_references=[owner_reference(job)],
            ),
            spec=spec,
        )
        try:
            self.mgr.store.create(rc)
            self.event(
                job,
                "Normal",
                "CreatedRayCluster",
                f"Created RayCluster {job.metadata.namespace}/{name}",
            )
        except AlreadyExists:
            return
        except Exception as err:  # refused by an admission rule
            self.event(
                job, "Warning", "FailedToCreateRayCluster", f"Failed to create RayCluster: {err}"
            )

    def _create_submitter(self, job: r.RayJob) -> None:
        """createK8sJobIfNeed: the submitter Job, named after the RayJob; its
        pod runs as long as the Ray job does (it follows the job's logs)."""
        template = clone(submitter_template(job))
        ann = dict(template.metadata.annotations or {})
        raw = (job.metadata.annotations or {}).get(DURATION_ANNOTATION)
        if raw is not None:
            ann[DURATION_ANNOTATION] = raw
        template.metadata.annotations = ann or None
        if template.spec is not None and template.spec.restart_policy is None:
            template.spec.restart_policy = "Never"
        backoff = (
            job.spec.submitter_config.backoff_limit
            if job.spec.submitter_config is not None
            and job.spec.submitter_config.backoff_limit is not None
            else _SUBMITTER_BACKOFF
        )
        sub = kc.Job(
            api_version="batch/v1",
            kind="Job",
            metadata=ObjectMeta(
                name=job.metadata.name,
                namespace=job.metadata.namespace,
                labels={
                    r.ORIGINATED_FROM_NAME_LABEL: job.metadata.name,
                    r.ORIGINATED_FROM_CR_LABEL: "RayJob",
                    "app.kubernetes.io/created-by": "kuberay-operator",
                },
                owner_references=[owner_reference(job)],
            ),
            spec=kc.JobSpec(template=template, backoff_limit=backoff),
        )
        try:
            self.mgr.store.create(sub)
            self.event(
                job, "Normal", "CreatedRayJobSubmitter", f"Created Kubernetes Job {key_of(sub)}"
            )
        except AlreadyExists:
            return
        except Exception as err:  # refused by an admission rule
            self.event(
                job,
                "Warning",
                "FailedToCreateRayJobSubmitter",
                f"Failed to create submitter: {err}",
            )

    def _write(self, job: r.RayJob, st: r.RayJobStatus) -> None:
        st.observed_generation = job.metadata.generation or None
        if st == (job.status or r.RayJobStatus()):
            return
        with contextlib.suppress(NotFound, Conflict):
            self.mgr.store.update_status(msgspec.structs.replace(job, status=st))


def _go_time(t: datetime) -> str:
    """How Go prints a metav1.Time in a message (``2006-01-02 15:04:05 +0000 UTC``)."""
    return t.strftime("%Y-%m-%d %H:%M:%S +0000 UTC")
