"""Kubeflow Trainer v2's TrainJob controller (kubeflow/trainer
``pkg/controller/trainjob_controller.go`` with the JobSet plugin,
``pkg/runtime/framework/plugins/jobset``) in the embedded cluster: per
TrainJob one JobSet of its name, built from its runtime
(``kuota.api.trainer.build_jobset``) and owned by it; the JobSet follows the
TrainJob's ``suspend``, and its pod templates take the job's runtime patches
(Kueue's admission) while suspended or as it resumes; the JobSet operator
runs it. The TrainJob's status mirrors the JobSet's: ``jobsStatus`` from its
replicated jobs, Complete and Failed from its Completed and Failed
conditions, Suspended (reasons Suspended / Resumed).

Not modelled: initializers' own logic (their Jobs run as the runtime says),
ML-policy environment (torchrun's variables), pod group policies,
``activeDeadlineSeconds``."""

from __future__ import annotations

import contextlib
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

import msgspec

from kuota.api.jobset import v1alpha2 as js
from kuota.api.meta import Condition
from kuota.api.trainer import trainer_types as t
from kuota.cluster.controllers.controller_base import ClusterController
from kuota.cluster.podutil import controller_ref, is_deleting, owner_reference
from kuota.runtime.informer import Informer, key_of
from kuota.store import AlreadyExists, Conflict, NotFound, clone
from kuota.store.protocol import EventType
from kuota.store.resources import CLUSTER_TRAINING_RUNTIME, JOB_SET, TRAIN_JOB, TRAINING_RUNTIME

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager

__all__ = ["TrainJobController"]

COMPONENT: Final = "trainjob-controller"


class TrainJobController(ClusterController):
    """Reads TrainJobs, runtimes and JobSets; writes JobSets and TrainJob status."""

    name = "trainer-trainjob"
    component = COMPONENT

    def __init__(self) -> None:
        super().__init__()
        self._jobs: Informer | None = None
        self._sets: Informer | None = None
        self._runtimes: dict[str, Informer] = {}

    def setup(self, mgr: Manager) -> None:
        super().setup(mgr)
        self._jobs = mgr.informer(TRAIN_JOB)
        self._jobs.on_change(self._on_job)
        self._sets = mgr.informer(JOB_SET)
        self._sets.on_change(self._on_set)
        self._runtimes = {
            "TrainingRuntime": mgr.informer(TRAINING_RUNTIME),
            "ClusterTrainingRuntime": mgr.informer(CLUSTER_TRAINING_RUNTIME),
        }
        for inf in self._runtimes.values():
            inf.on_change(self._on_runtime)

    def _on_job(self, etype: EventType, job: Any, old: Any | None) -> None:
        if etype != "DELETED":
            self.mgr.enqueue(self.name, key_of(job))

    def _on_set(self, etype: EventType, obj: Any, old: Any | None) -> None:
        ref = controller_ref(obj)
        if ref is not None and ref.kind == "TrainJob":
            self.mgr.enqueue(self.name, f"{obj.metadata.namespace}/{ref.name}")

    def _on_runtime(self, etype: EventType, rt: Any, old: Any | None) -> None:
        assert self._jobs is not None
        for key in list(self._jobs.objects):
            self.mgr.enqueue(self.name, key)

    def reconcile(self, key: str) -> timedelta | None:
        assert self._jobs is not None and self._sets is not None
        job: t.TrainJob | None = self._jobs.get(key)
        if job is None or is_deleting(job):
            return None
        if job.spec.managed_by not in (None, t.CONTROLLER):
            return None  # another controller's (MultiKueue)
        kind, rkey = t.runtime_key(job)
        runtime = self._runtimes[kind].get(rkey)
        if runtime is None:
            self.event(
                job,
                "Warning",
                "TrainingRuntimeNotFound",
                f"{kind} {rkey} not found",
            )
            return None
        st = clone(job.status) if job.status is not None else t.TrainJobStatus()
        now = self.mgr.clock.now()
        current: js.JobSet | None = self._sets.get(key)
        if current is not None and (controller_ref(current) or _NONE).uid != job.metadata.uid:
            current = None
        finished = any(
            c.type in ("Complete", "Failed") and c.status == "True" for c in st.conditions or ()
        )
        if current is None:
            if not finished:
                self._create(job, runtime.spec)
        elif not finished:
            self._sync(job, runtime.spec, current)
        if current is not None:
            self._mirror(current, st, now)
        if job.spec.suspend:
            _set(st, "Suspended", "True", "Suspended", "TrainJob is suspended", now)
        elif any(c.type == "Suspended" for c in st.conditions or ()):
            _set(st, "Suspended", "False", "Resumed", "TrainJob is resumed", now)
        if st != (job.status or t.TrainJobStatus()):
            with contextlib.suppress(NotFound, Conflict):
                self.mgr.store.update_status(msgspec.structs.replace(job, status=st))
        return None

    def _create(self, job: t.TrainJob, runtime: t.TrainingRuntimeSpec) -> None:
        jobset = t.build_jobset(job, runtime)
        jobset.metadata.owner_references = [owner_reference(job)]
        try:
            self.mgr.store.create(jobset)
        except AlreadyExists:
            return
        except Exception as err:  # refused by an admission rule
            self.event(job, "Warning", "FailedCreateJobSet", f"Error creating JobSet: {err}")

    def _sync(self, job: t.TrainJob, runtime: t.TrainingRuntimeSpec, current: js.JobSet) -> None:
        """The JobSet brought to the TrainJob's suspend and, while it is (or
        was) suspended, to its pod templates (Kueue's patch)."""
        want = t.build_jobset(job, runtime)
        suspended = bool(current.spec.suspend) or bool(want.spec.suspend)
        new = clone(current)
        new.spec.suspend = want.spec.suspend
        if suspended:
            by_name = {r.name: r for r in want.spec.replicated_jobs or ()}
            for rjob in new.spec.replicated_jobs or ():
                w = by_name.get(rjob.name)
                if w is not None:
                    rjob.template.spec.template = clone(w.template.spec.template)
        if new.spec != current.spec:
            with contextlib.suppress(NotFound, Conflict):
                self.mgr.store.update(new)

    @staticmethod
    def _mirror(jobset: js.JobSet, st: t.TrainJobStatus, now: datetime) -> None:
        jst = jobset.status
        st.jobs_status = [
            t.JobStatus(
                name=r.name,
                ready=r.ready,
                succeeded=r.succeeded,
                failed=r.failed,
                active=r.active,
                suspended=r.suspended,
            )
            for r in (jst.replicated_jobs_status if jst else None) or ()
        ] or None
        for c in (jst.conditions if jst else None) or ():
            if c.status == "True" and c.type in ("Completed", "Failed"):
                ctype = "Complete" if c.type == "Completed" else "Failed"
                _set(st, ctype, "True", c.reason or ctype, c.message or "", now)


class _NoRef:
    uid = ""


_NONE: Final = _NoRef()


def _set(
    st: t.TrainJobStatus, ctype: str, status: str, reason: str, message: str, now: datetime
) -> None:
    conds = list(st.conditions or ())
    old = next((c for c in conds if c.type == ctype), None)
    if old is not None and (old.status, old.reason) == (status, reason):
        return
    new = Condition(
        type=ctype,
        status=status,  # type: ignore[arg-type]
        reason=reason,
        message=message,
        last_transition_time=now
        if old is None or old.status != status
        else old.last_transition_time,
    )
    st.conditions = [c for c in conds if c.type != ctype] + [new]
