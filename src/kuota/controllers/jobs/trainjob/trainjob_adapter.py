"""A TrainJob as Kueue's jobframework sees it (``pkg/controller/jobs/
trainjob/trainjob_controller.go``): the podSets of the JobSet the trainer
builds from the job's runtime (one per replicated job: replicas x pods per
Job); started by writing the admission into Kueue's runtime patch
(``runtimePatches[manager=kueue.x-k8s.io/manager]``: each replicated job's
pod template labels, node selector, tolerations) and unsuspending, stopped
by suspending and clearing the patch; finished by its Complete or Failed
condition; active while a child Job is. A job whose runtime does not exist
gets no Workload until it does (Kueue's PodSets fails for it)."""

from __future__ import annotations

from typing import Any

import msgspec

from kuota.api import errors as e
from kuota.api.jobset import v1alpha2 as js
from kuota.api.kueue import types as kt
from kuota.api.trainer import trainer_types as t
from kuota.controllers.jobframework import Finished, PodSetInfo, suspended_copy
from kuota.controllers.multikueue_adapter import ManagedBy
from kuota.controllers.tas_requests import validate_pod_sets
from kuota.runtime.informer import Informer
from kuota.runtime.manager import Manager
from kuota.store import clone
from kuota.store.protocol import ResourceType
from kuota.store.resources import CLUSTER_TRAINING_RUNTIME, TRAIN_JOB, TRAINING_RUNTIME

__all__ = ["TrainJobAdapter", "kueue_patch"]


def kueue_patch(job: t.TrainJob) -> t.RuntimePatch | None:
    """getKueueRuntimePatch."""
    return next(
        (p for p in job.spec.runtime_patches or () if p.manager == t.KUEUE_PATCH_MANAGER), None
    )


def empty_patch() -> t.RuntimePatch:
    return t.RuntimePatch(
        manager=t.KUEUE_PATCH_MANAGER, training_runtime_spec={"template": {"spec": {}}}
    )


_TAS_HINT = (
    '. Adjust either the "TrainJob.spec.runtimePatches" or the '
    '"TrainingRuntime.Template" annotations for the corresponding Job'
)


class TrainJobAdapter:
    rtype: ResourceType = TRAIN_JOB
    kind = "TrainJob"
    api_version = t.API_VERSION
    managed_by_field = ManagedBy(("spec", "managed_by"), t.CONTROLLER)

    def __init__(self) -> None:
        self._runtimes: dict[str, Informer] = {}

    def bind(self, mgr: Manager) -> None:
        self._runtimes = {
            "TrainingRuntime": mgr.informer(TRAINING_RUNTIME),
            "ClusterTrainingRuntime": mgr.informer(CLUSTER_TRAINING_RUNTIME),
        }

    def _jobset(self, job: t.TrainJob) -> js.JobSet | None:
        kind, key = t.runtime_key(job)
        informer = self._runtimes.get(kind)
        runtime = informer.get(key) if informer is not None else None
        return t.build_jobset(job, runtime.spec) if runtime is not None else None

    def skip(self, job: t.TrainJob) -> bool:
        """No runtime, no podSets: nothing to admit yet."""
        return bool(self._runtimes) and self._jobset(job) is None

    def pod_sets(self, job: t.TrainJob, partial_admission: bool) -> list[kt.PodSet]:
        jobset = self._jobset(job)
        return [
            kt.PodSet(
                name=r.name.lower(),
                template=clone(r.template.spec.template),
                count=r.replicas * js.pods_per_job(r),
            )
            for r in (jobset.spec.replicated_jobs if jobset else None) or ()
        ]

    def is_suspended(self, job: t.TrainJob) -> bool:
        return bool(job.spec.suspend)

    def is_active(self, job: t.TrainJob) -> bool:
        st = job.status
        return st is not None and any((j.active or 0) > 0 for j in st.jobs_status or ())

    def finished(self, job: t.TrainJob) -> Finished | None:
        for c in (job.status.conditions if job.status else None) or ():
            if c.type in ("Complete", "Failed") and c.status == "True":
                return Finished(c.type == "Complete", c.message or "")
        return None

    def pods_ready(self, job: t.TrainJob, wl: kt.Workload) -> bool:
        """All the child Jobs ready or succeeded (the JobSet's PodsReady)."""
        jobset = self._jobset(job)
        want = sum(r.replicas for r in (jobset.spec.replicated_jobs if jobset else None) or ())
        st = job.status
        have = sum(
            (j.ready or 0) + (j.succeeded or 0) for j in (st.jobs_status if st else None) or ()
        )
        return want > 0 and have >= want

    def reclaimable_pods(self, job: t.TrainJob) -> list[kt.ReclaimablePod] | None:
        return None

    def suspend_on_create(self, job: t.TrainJob) -> t.TrainJob:
        return suspended_copy(job, lambda j: j.spec)

    def run(self, job: t.TrainJob, infos: list[PodSetInfo]) -> t.TrainJob:
        job = clone(job)
        patch = kueue_patch(job)
        if patch is None:
            patch = empty_patch()
            job.spec.runtime_patches = [*(job.spec.runtime_patches or []), patch]
        rjobs: list[dict[str, Any]] = []
        for info in infos:
            pod: dict[str, Any] = {}
            if info.labels:
                pod["metadata"] = {"labels": dict(info.labels)}
            spec: dict[str, Any] = {}
            if info.node_selector:
                spec["nodeSelector"] = dict(info.node_selector)
            if info.tolerations:
                spec["tolerations"] = [msgspec.to_builtins(x) for x in info.tolerations]
            if spec:
                pod["spec"] = spec
            rjobs.append({"name": info.name, "template": {"spec": {"template": pod}}})
        patch.training_runtime_spec = {"template": {"spec": {"replicatedJobs": rjobs}}}
        job.spec.suspend = False
        return job

    def validate(
        self, job: t.TrainJob, old: t.TrainJob | None, elastic: bool
    ) -> list[e.FieldError]:
        return []  # Kueue's TrainJob webhook adds only the TAS rules to jobframework's

    def topology_errors(
        self, job: t.TrainJob, elastic: bool = False, multi_layer: bool = True
    ) -> list[e.FieldError]:
        """validateTopologyRequest on the pod sets its runtime makes
        (``job[<pod set>]``), each error pointing the user at where those
        annotations come from."""
        entries = [(f"job[{ps.name}]", ps) for ps in self.pod_sets(job, False)]
        return [
            e.FieldError(err.path, err.type, err.detail + _TAS_HINT, err.value)
            for err in validate_pod_sets(entries, None, multi_layer)
        ]

    def update_errors(self, new: t.TrainJob, old: t.TrainJob) -> list[e.FieldError]:
        return []

    def stop(self, job: t.TrainJob) -> t.TrainJob | None:
        if job.spec.suspend:
            return None
        job = clone(job)
        job.spec.suspend = True
        return job

    def restore(self, job: t.TrainJob, original: list[kt.PodSet]) -> t.TrainJob | None:
        """RestorePodSetsInfo: Kueue's patch emptied."""
        patch = kueue_patch(job)
        if patch is None or patch.training_runtime_spec == {"template": {"spec": {}}}:
            return None
        job = clone(job)
        patch = kueue_patch(job)
        assert patch is not None
        patch.training_runtime_spec = {"template": {"spec": {}}}
        return job
