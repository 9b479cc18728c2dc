"""JobSet as Kueue's jobframework sees it (``pkg/controller/jobs/jobset``):
one podSet per replicated job (``replicas`` x pods per child Job), started by
merging the admission's node selectors, tolerations and labels into each
replicated job's pod template, suspended as a whole, finished by its
Completed or Failed condition. The JobSet operator propagates the templates
to the child Jobs when it resumes them."""

from __future__ import annotations

from kuota.api import errors as e
from kuota.api.jobset import v1alpha2 as js
from kuota.api.kueue import types as kt
from kuota.controllers.jobframework import Finished, PodSetInfo, suspended_copy
from kuota.controllers.multikueue_adapter import ManagedBy
from kuota.controllers.podset_templates import merge_into, restored_template
from kuota.controllers.tas_requests import topology_request, validate_pod_sets
from kuota.store import clone
from kuota.store.protocol import ResourceType
from kuota.store.resources import JOB_SET

COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"


def podset_name(rjob: js.ReplicatedJob) -> str:
    """``kueue.NewPodSetReference``: the replicated job's name, lowercased."""
    return rjob.name.lower()


def _topology_request(rjob: js.ReplicatedJob) -> kt.PodSetTopologyRequest | None:
    """Kueue's PodSets: NewPodSetTopologyRequest(template meta) with the
    completion index as pod index and the job index as sub-group, always
    built (index labels alone make it non-empty), as in Kueue's TestPodSets."""
    # (annotations that do not parse give None here; the webhook refused those)
    tr = topology_request(rjob.template.spec.template.metadata.annotations)
    if tr is None:
        tr = kt.PodSetTopologyRequest()
    tr.pod_index_label = COMPLETION_INDEX
    tr.sub_group_index_label = js.JOB_INDEX_KEY
    tr.sub_group_count = rjob.replicas
    return tr


class JobSetAdapter:
    rtype: ResourceType = JOB_SET
    kind = js.KIND
    api_version = js.API_VERSION
    managed_by_field = ManagedBy(("spec", "managed_by"), js.CONTROLLER_NAME)

    def pod_sets(self, job: js.JobSet, partial_admission: bool) -> list[kt.PodSet]:
        return [
            kt.PodSet(
                name=podset_name(r),
                template=clone(r.template.spec.template),
                count=r.replicas * js.pods_per_job(r),
                topology_request=_topology_request(r),
            )
            for r in job.spec.replicated_jobs or ()
        ]

    def is_suspended(self, job: js.JobSet) -> bool:
        return bool(job.spec.suspend)

    def is_active(self, job: js.JobSet) -> bool:
        st = job.status
        return st is not None and any(s.active > 0 for s in st.replicated_jobs_status or ())

    def finished(self, job: js.JobSet) -> Finished | None:
        for c in (job.status.conditions if job.status else None) or ():
            if c.status == "True" and c.type in ("Completed", "Failed"):
                return Finished(c.type == "Completed", c.message or "")
        return None

    def pods_ready(self, job: js.JobSet, wl: kt.Workload) -> bool:
        """Every child Job ready or succeeded (counted per replicated job)."""
        replicas = sum(r.replicas for r in job.spec.replicated_jobs or ())
        st = job.status
        ready = sum(
            s.ready + s.succeeded for s in (st.replicated_jobs_status if st else None) or ()
        )
        return replicas == ready

    def reclaimable_pods(self, job: js.JobSet) -> list[kt.ReclaimablePod] | None:
        st = job.status
        if st is None or not st.replicated_jobs_status:
            return None
        statuses = {s.name: s for s in st.replicated_jobs_status}
        out = []
        for r in job.spec.replicated_jobs or ():
            s = statuses.get(r.name)
            if s is not None and 0 < s.succeeded <= r.replicas:
                out.append(
                    kt.ReclaimablePod(name=podset_name(r), count=s.succeeded * js.pods_per_job(r))
                )
        return out

    def suspend_on_create(self, job: js.JobSet) -> js.JobSet:
        return suspended_copy(job, lambda j: j.spec)

    def run(self, job: js.JobSet, infos: list[PodSetInfo]) -> js.JobSet:
        job = clone(job)
        job.spec.suspend = False
        by_name = {i.name: i for i in infos}
        for r in job.spec.replicated_jobs or ():
            info = by_name.get(podset_name(r))
            if info is not None:
                merge_into(r.template.spec.template, info)
        return job

    def validate(self, job: js.JobSet, old: js.JobSet | None, elastic: bool) -> list[e.FieldError]:
        return []  # Kueue's JobSet webhook adds only the TAS rules to jobframework's

    def topology_errors(
        self, job: js.JobSet, elastic: bool = False, multi_layer: bool = True
    ) -> list[e.FieldError]:
        """validateTopologyRequest: each replicated job's pod template, and
        the pod-set groups."""
        paths = [
            f"spec.replicatedJobs[{i}].template.spec.template.metadata"
            for i in range(len(job.spec.replicated_jobs or ()))
        ]
        pod_sets = self.pod_sets(job, False)
        groups = {ps.name: f"{p}.annotations" for p, ps in zip(paths, pod_sets, strict=True)}
        return validate_pod_sets(list(zip(paths, pod_sets, strict=True)), groups, multi_layer)

    def update_errors(self, new: js.JobSet, old: js.JobSet) -> list[e.FieldError]:
        return []

    def stop(self, job: js.JobSet) -> js.JobSet | None:
        if self.is_suspended(job):
            return None
        job = clone(job)
        job.spec.suspend = True
        return job

    def restore(self, job: js.JobSet, original: list[kt.PodSet]) -> js.JobSet | None:
        """RestorePodSetsInfo: each replicated job's template back to the
        Workload's copy (labels, annotations, node selector, tolerations,
        scheduling gates)."""
        by_name = {p.name: p for p in original}
        new = clone(job)
        changed = False
        for r in new.spec.replicated_jobs or ():
            ps = by_name.get(podset_name(r))
            if ps is None:
                continue
            current = r.template.spec.template
            restored = restored_template(current, ps.template)
            if restored != current:
                r.template.spec.template = restored
                changed = True
        return new if changed else None
