"""Kubeflow's training operator (kubeflow/training-operator v1, the common
``pkg/controller.v1/common`` reconciler with each framework's status rule),
for PyTorchJob, TFJob, PaddleJob, XGBoostJob and JAXJob, and mpi-operator
v2's MPIJob (whose launcher, a Job there, is one pod here): per job, one pod
``<job>-<type>-<index>`` per replica (labelled as the operator labels them,
the replica's restart policy on the pod), the replica statuses, and the
conditions Created, Running, Succeeded, Failed and Suspended. A suspended
job has no pods (Kueue suspends what it has not admitted or has evicted);
resumed, its pods are made again from the templates, which then carry
Kueue's node selectors. A job succeeds when its leading replica (Master,
Chief) succeeds, or, without one, when every worker has (a TFJob's default
success policy: worker 0); it fails when a replica's pod fails. Finished,
its pods are cleaned as ``runPolicy.cleanPodPolicy`` says, and the job is
deleted after ``ttlSecondsAfterFinished``; ``activeDeadlineSeconds`` fails a
job that runs too long.

Not modelled: Services, the environment the operator injects, elastic
PyTorch and the ExitCode policy's exit-code ranges (a failed pod fails the
job unless the kubelet restarts it)."""

from __future__ import annotations

import contextlib
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Final

import msgspec

from kuota.api.kubeflow import v1
from kuota.cluster.controllers.appsutil import pod_from_template
from kuota.cluster.controllers.controller_base import ClusterController
from kuota.cluster.podutil import POD, controller_ref, is_deleting, pod_phase
from kuota.runtime.informer import Informer, key_of
from kuota.store import AlreadyExists, Conflict, NotFound, clone
from kuota.store.kinds import resource_for
from kuota.store.protocol import EventType

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager

__all__ = ["TrainingOperator"]

_BY_JOB: Final = "kubeflow:owner"
RTYPES: Final = {k: resource_for(fw.api_version, k) for k, fw in v1.FRAMEWORKS.items()}


def _owner_uid(pod: Any) -> list[str]:
    ref = controller_ref(pod)
    return [ref.uid] if ref is not None and ref.kind in v1.FRAMEWORKS else []


class _Status:
    """The status being written, with the operator's condition rules
    (``UpdateJobConditions``): a condition changes only when its status or
    reason does; Running, once Succeeded or Failed, turns False."""

    def __init__(self, job: Any, now: Any) -> None:
        self.st: v1.JobStatus = clone(job.status) if job.status is not None else v1.JobStatus()
        self.now = now
        self.kind = job.kind

    def get(self, ctype: str) -> v1.JobCondition | None:
        return next((c for c in self.st.conditions or () if c.type == ctype), None)

    def true(self, ctype: str) -> bool:
        c = self.get(ctype)
        return c is not None and c.status == "True"

    def set(self, ctype: str, status: str, reason: str, message: str) -> None:
        conds = list(self.st.conditions or ())
        old = self.get(ctype)
        if old is not None and old.status == status and old.reason == reason:
            return
        new = v1.JobCondition(
            type=ctype,
            status=status,  # type: ignore[arg-type]
            reason=reason,
            message=message,
            last_update_time=self.now,
            last_transition_time=(
                self.now if old is None or old.status != status else old.last_transition_time
            ),
        )
        conds = [c for c in conds if c.type != ctype] + [new]
        if status == "True" and ctype in ("Succeeded", "Failed", "Restarting"):
            conds = [
                msgspec.structs.replace(c, status="False", last_transition_time=self.now)
                if c.type == "Running" and c.status == "True"
                else c
                for c in conds
            ]
        self.st.conditions = conds

    def reason(self, what: str) -> str:
        return f"{self.kind}{what}"


class TrainingOperator(ClusterController):
    """Reads the training jobs and Pods; writes pods and job status."""

    name = "training-operator"
    component = "training-operator"

    def __init__(self) -> None:
        super().__init__()
        self._jobs: dict[str, Informer] = {}
        self._pods: Informer | None = None

    def setup(self, mgr: Manager) -> None:
        super().setup(mgr)
        for kind, rtype in RTYPES.items():
            inf = self._jobs[kind] = mgr.informer(rtype)
            inf.on_change(self._on_job)
        self._pods = mgr.informer(POD)
        self._pods.add_index(_BY_JOB, _owner_uid)
        self._pods.on_change(self._on_pod)

    def _on_job(self, etype: EventType, job: Any, old: Any | None) -> None:
        if etype != "DELETED":
            self.mgr.enqueue(self.name, f"{job.kind}:{key_of(job)}")

    def _on_pod(self, etype: EventType, pod: Any, old: Any | None) -> None:
        ref = controller_ref(pod)
        if ref is not None and ref.kind in v1.FRAMEWORKS:
            self.mgr.enqueue(self.name, f"{ref.kind}:{pod.metadata.namespace}/{ref.name}")

    # ------------------------------------------------------------ reconcile
    def reconcile(self, key: str) -> timedelta | None:
        kind, _, nsname = key.partition(":")
        job = self._jobs[kind].get(nsname)
        if job is None or is_deleting(job):
            return None
        rp = job.spec.run_policy
        if rp.managed_by not in (None, v1.OPERATOR):
            return None  # another controller's (MultiKueue)
        assert self._pods is not None
        pods = [p for p in self._pods.by_index(_BY_JOB, job.metadata.uid) if not is_deleting(p)]
        status = _Status(job, self.mgr.clock.now())
        name = job.metadata.name
        if status.get("Created") is None:
            status.set("Created", "True", status.reason("Created"), f"{kind} {name} is created.")
        again: timedelta | None = None
        if status.true("Succeeded") or status.true("Failed"):
            self._clean(job, pods)
            again = self._ttl(job, status)
        elif rp.suspend:
            self._delete(pods)
            status.st.replica_statuses = {t: v1.ReplicaStatus() for t in v1.ordered_types(job)}
            status.st.start_time = None
            status.set(
                "Suspended", "True", status.reason("Suspended"), f"{kind} {name} is suspended."
            )
            if status.true("Running"):
                status.set(
                    "Running", "False", status.reason("Suspended"), f"{kind} {name} is suspended."
                )
        else:
            if status.true("Suspended"):
                status.set(
                    "Suspended", "False", status.reason("Resumed"), f"{kind} {name} is resumed."
                )
            if status.st.start_time is None:
                status.st.start_time = status.now
            again = self._run(job, pods, status)
        self._write(job, status)
        return again

    def _run(self, job: Any, pods: list[Any], status: _Status) -> timedelta | None:
        fw = v1.framework_of(job)
        kind, name = job.kind, job.metadata.name
        deadline = job.spec.run_policy.active_deadline_seconds
        if deadline is not None and status.st.start_time is not None:
            end = status.st.start_time + timedelta(seconds=deadline)
            if status.now >= end:
                self._delete(pods)
                status.set(
                    "Failed",
                    "True",
                    status.reason("Failed"),
                    f"{kind} {name} has failed because it was active longer than specified deadline",
                )
                status.st.completion_time = status.now
                return self._ttl(job, status)
        by_slot = {
            (p.metadata.labels or {}).get(v1.REPLICA_TYPE_LABEL, "")
            + "/"
            + (p.metadata.labels or {}).get(v1.REPLICA_INDEX_LABEL, ""): p
            for p in pods
        }
        specs = v1.replica_specs(job)
        counts: dict[str, v1.ReplicaStatus] = {}
        leader_present = any(t in specs for t in fw.leaders)
        for t in v1.ordered_types(job):
            spec = specs[t]
            st = counts[t] = v1.ReplicaStatus()
            for i in range(spec.replicas if spec.replicas is not None else 1):
                pod = by_slot.get(f"{t.lower()}/{i}")
                if pod is None:
                    self._create(job, t, i, spec, leader_present)
                    continue
                phase = pod_phase(pod)
                if phase == "Running":
                    st.active += 1
                elif phase == "Succeeded":
                    st.succeeded += 1
                elif phase == "Failed":
                    st.failed += 1
        status.st.replica_statuses = counts
        self._judge(job, fw, specs, counts, status, leader_present)
        if status.true("Succeeded") or status.true("Failed"):
            status.st.completion_time = status.st.completion_time or status.now
            self._clean(job, [p for p in pods if not is_deleting(p)])
            return self._ttl(job, status)
        if deadline is not None and status.st.start_time is not None:
            return status.st.start_time + timedelta(seconds=deadline) - status.now
        return None

    def _judge(
        self,
        job: Any,
        fw: v1.Framework,
        specs: v1.ReplicaSpecs,
        counts: dict[str, v1.ReplicaStatus],
        status: _Status,
        leader_present: bool,
    ) -> None:
        """The framework's ``UpdateJobStatus``."""
        kind, ref = job.kind, f"{job.metadata.namespace}/{job.metadata.name}"
        for t, st in counts.items():
            if st.failed > 0:
                status.set(
                    "Failed",
                    "True",
                    status.reason("Failed"),
                    f"{kind} {ref} has failed because {st.failed} {t} replica(s) failed.",
                )
                return
        if leader_present:
            lead = next(t for t in fw.leaders if t in specs)
            running = counts[lead].active > 0
            done = counts[lead].succeeded >= (specs[lead].replicas or 1)
        else:
            workers = counts.get("Worker", v1.ReplicaStatus())
            wanted = specs["Worker"].replicas if "Worker" in specs else 0
            running = any(s.active > 0 for s in counts.values())
            if fw.kind == "TFJob" and job.spec.success_policy != "AllWorkers":
                done = self._worker0_succeeded(job)
            else:
                done = wanted is not None and workers.succeeded >= wanted
        if done:
            status.set(
                "Succeeded",
                "True",
                status.reason("Succeeded"),
                f"{kind} {ref} successfully completed.",
            )
        elif running:
            status.set("Running", "True", status.reason("Running"), f"{kind} {ref} is running.")

    def _worker0_succeeded(self, job: Any) -> bool:
        assert self._pods is not None
        for p in self._pods.by_index(_BY_JOB, job.metadata.uid):
            labels = p.metadata.labels or {}
            if (
                labels.get(v1.REPLICA_TYPE_LABEL) == "worker"
                and labels.get(v1.REPLICA_INDEX_LABEL) == "0"
                and pod_phase(p) == "Succeeded"
            ):
                return True
        return False

    # ------------------------------------------------------------ writes
    def _create(self, job: Any, rtype: str, index: int, spec: v1.ReplicaSpec, leader: bool) -> None:
        fw = v1.framework_of(job)
        labels = {
            v1.OPERATOR_NAME_LABEL: fw.operator or f"{job.kind.lower()}-controller",
            v1.JOB_NAME_LABEL: job.metadata.name,
            v1.REPLICA_TYPE_LABEL: rtype.lower(),
            v1.REPLICA_INDEX_LABEL: str(index),
        }
        name = f"{job.metadata.name}-{rtype.lower()}-{index}"
        if fw.kind == "MPIJob":
            # mpi-operator: the launcher (a Job there, one pod here) and the
            # workers say their role.
            labels[v1.JOB_ROLE_LABEL] = rtype.lower()
            if rtype == "Launcher":
                name = f"{job.metadata.name}-launcher"
        elif rtype in fw.leaders or (not leader and rtype == "Worker" and index == 0):
            labels[v1.JOB_ROLE_LABEL] = "master"
        pod = pod_from_template(spec.template, job, name=name, labels=labels)
        assert pod.spec is not None
        policy = spec.restart_policy or fw.restart
        pod.spec.restart_policy = "Never" if policy == "ExitCode" else policy  # type: ignore[assignment]
        try:
            self.mgr.store.create(pod)
        except AlreadyExists:
            return
        except Exception as err:  # refused by an admission rule: said as the operator says it
            self.event(job, "Warning", "FailedCreatePod", f"Error creating: {err}")

    def _delete(self, pods: list[Any]) -> None:
        for p in pods:
            if not is_deleting(p):
                with contextlib.suppress(NotFound, Conflict):
                    self.mgr.store.delete(POD, p.metadata.namespace, p.metadata.name)

    def _clean(self, job: Any, pods: list[Any]) -> None:
        policy = job.spec.run_policy.clean_pod_policy or v1.framework_of(job).clean
        if policy == "All":
            self._delete(pods)
        elif policy == "Running":
            self._delete([p for p in pods if pod_phase(p) in ("Running", "Pending")])

    def _ttl(self, job: Any, status: _Status) -> timedelta | None:
        ttl = job.spec.run_policy.ttl_seconds_after_finished
        done = status.st.completion_time
        if ttl is None or done is None:
            return None
        end = done + timedelta(seconds=ttl)
        if status.now < end:
            return end - status.now
        with contextlib.suppress(NotFound):
            self.mgr.store.delete(RTYPES[job.kind], job.metadata.namespace, job.metadata.name)
        return None

    def _write(self, job: Any, status: _Status) -> None:
        if status.st == (job.status or v1.JobStatus()):
            return
        with contextlib.suppress(NotFound, Conflict):
            self.mgr.store.update_status(msgspec.structs.replace(job, status=status.st))
