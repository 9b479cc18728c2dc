"""batch/v1 Job (Kueue's ``pkg/controller/jobs/job``)."""

from __future__ import annotations

from kuota.api import errors as e
from kuota.api import k8s as kc
from kuota.api.kueue import types as kt
from kuota.api.kueue.topology import PREFERRED, REQUIRED
from kuota.controllers.jobframework import Finished, PodSetInfo, go_atoi, go_parse_bool
from kuota.controllers.multikueue_adapter import ManagedBy
from kuota.controllers.podset_templates import merge_into, restored_template
from kuota.controllers.tas_requests import (
    topology_request,
    validate_annotations,
    validate_slice_size_bound,
)
from kuota.controllers.workloadslicing import gate_template, has_gate
from kuota.store import clone
from kuota.store.protocol import ResourceType
from kuota.store.resources import JOB

MIN_PARALLELISM = "kueue.x-k8s.io/job-min-parallelism"
COMPLETIONS_EQUAL_PARALLELISM = "kueue.x-k8s.io/job-completions-equal-parallelism"
STOPPING = "kueue.x-k8s.io/stopping"
_MIN_PATH = e.key("metadata.annotations", MIN_PARALLELISM)
_SYNC_PATH = e.key("metadata.annotations", COMPLETIONS_EQUAL_PARALLELISM)
# Labels the Job controller adds to its own template: not part of the podSet.
_JOB_CONTROLLER_LABELS = ("controller-uid", "batch.kubernetes.io/controller-uid")
_TEMPLATE_META = "spec.template.metadata"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"


def _count(job: kc.Job) -> int:
    spec = job.spec
    assert spec is not None
    p = spec.parallelism
    return min(p, spec.completions) if spec.completions is not None else p


def _sync_completions(job: kc.Job) -> bool:
    """syncCompletionWithParallelism: the annotation parses as true."""
    try:
        return go_parse_bool(
            (job.metadata.annotations or {}).get(COMPLETIONS_EQUAL_PARALLELISM, "")
        )
    except ValueError:
        return False


def _partial(job: kc.Job) -> bool:
    """minPodsCount is set (the annotation parses): the job's parallelism is
    Kueue's to set at admission and to restore at a stop. (Not _min_count:
    once admitted at its minimum, the minimum is no longer below the count.)"""
    try:
        go_atoi((job.metadata.annotations or {}).get(MIN_PARALLELISM, ""))
    except ValueError:
        return False
    return True


def _min_count(job: kc.Job) -> int | None:
    raw = (job.metadata.annotations or {}).get(MIN_PARALLELISM)
    if raw is None:
        return None
    try:
        v = int(raw)
    except ValueError:
        return None
    return v if 0 < v < _count(job) else None


class BatchJobAdapter:
    rtype: ResourceType = JOB
    kind = "Job"
    api_version = "batch/v1"
    managed_by_field = ManagedBy(("spec", "managed_by"), "kubernetes.io/job-controller")

    def pod_sets(self, job: kc.Job, partial_admission: bool) -> list[kt.PodSet]:
        assert job.spec is not None
        template = clone(job.spec.template)
        labels = {
            k: v
            for k, v in (template.metadata.labels or {}).items()
            if k not in _JOB_CONTROLLER_LABELS
        }
        template.metadata.labels = labels or None
        tr = topology_request(template.metadata.annotations)
        if tr is not None:
            tr.pod_index_label = COMPLETION_INDEX
        return [
            kt.PodSet(
                name="main",
                template=template,
                count=_count(job),
                min_count=_min_count(job) if partial_admission else None,
                topology_request=tr,
            )
        ]

    def is_suspended(self, job: kc.Job) -> bool:
        stopping = (job.metadata.annotations or {}).get(STOPPING) == "true"
        return bool(job.spec and job.spec.suspend) and not stopping

    def is_active(self, job: kc.Job) -> bool:
        return job.status is not None and job.status.active > 0

    def finished(self, job: kc.Job) -> Finished | None:
        for c in (job.status.conditions if job.status else None) or ():
            if c.status == "True" and c.type in ("Complete", "Failed"):
                return Finished(c.type == "Complete", c.message or "")
        return None

    def pods_ready(self, job: kc.Job, wl: kt.Workload) -> bool:
        st = job.status
        if st is None:
            return False
        return (st.ready or 0) + st.succeeded >= _count(job)

    def reclaimable_pods(self, job: kc.Job) -> list[kt.ReclaimablePod] | None:
        spec, st = job.spec, job.status
        if spec is None or st is None or spec.parallelism <= 1 or st.succeeded <= 0:
            return None
        completions = spec.completions if spec.completions is not None else spec.parallelism
        remaining = max(completions - st.succeeded, 0)
        if remaining >= spec.parallelism:
            return None
        return [kt.ReclaimablePod(name="main", count=spec.parallelism - remaining)]

    def gate_elastic(self, job: kc.Job) -> kc.Job:
        """applyWorkloadSliceSchedulingGate: the template's pods are gated."""
        if job.spec is None or has_gate(job.spec.template.spec):
            return job
        job = clone(job)
        assert job.spec is not None and job.spec.template.spec is not None
        gate_template(job.spec.template.spec)
        return job

    def suspend_on_create(self, job: kc.Job) -> kc.Job:
        if job.spec is None or job.spec.suspend:
            return job
        job = clone(job)
        assert job.spec is not None
        job.spec.suspend = True
        return job

    def run(self, job: kc.Job, infos: list[PodSetInfo]) -> kc.Job:
        job = clone(job)
        spec = job.spec
        assert spec is not None
        spec.suspend = False
        info = next((i for i in infos if i.name == "main"), None)
        if info is None:
            return job
        merge_into(spec.template, info)
        if _partial(job) and info.count != spec.parallelism:
            spec.parallelism = info.count
            if _sync_completions(job):
                spec.completions = info.count
        return job

    def validate(self, job: kc.Job, old: kc.Job | None, elastic: bool) -> list[e.FieldError]:
        """Kueue's job webhook: validatePartialAdmissionCreate (on create, and
        on update when the annotation changed) and validateSyncCompletionCreate."""
        errs: list[e.FieldError] = []
        ann = job.metadata.annotations or {}
        raw = ann.get(MIN_PARALLELISM)
        before = (old.metadata.annotations or {}).get(MIN_PARALLELISM) if old else None
        if raw is not None and (old is None or raw != before):
            try:
                v = go_atoi(raw)
            except ValueError as err:
                errs.append(e.invalid(_MIN_PATH, raw, str(err)))
            else:
                count = _count(job)
                if v >= count or v <= 0:
                    errs.append(e.invalid(_MIN_PATH, v, f"should be between 0 and {count - 1}"))
            if elastic:
                detail = "partial admission and elastic job cannot be used together"
                errs.append(e.invalid(_MIN_PATH, raw, detail))
        raw = ann.get(COMPLETIONS_EQUAL_PARALLELISM)
        if raw is not None:
            try:
                enabled = go_parse_bool(raw)
            except ValueError as err:
                errs.append(e.invalid(_SYNC_PATH, raw, str(err)))
                enabled = False
            spec = job.spec
            if enabled and spec is not None:
                if spec.completion_mode != "Indexed":
                    errs.append(
                        e.invalid(_SYNC_PATH, raw, "should not be enabled for NonIndexed jobs")
                    )
                completions = spec.completions if spec.completions is not None else 1
                if spec.parallelism != completions:
                    errs.append(
                        e.invalid(
                            "spec.completions",
                            spec.completions,
                            "should be equal to parallelism when "
                            f"{COMPLETIONS_EQUAL_PARALLELISM} annotation is true",
                        )
                    )
        return errs

    def topology_errors(
        self, job: kc.Job, elastic: bool = False, multi_layer: bool = True
    ) -> list[e.FieldError]:
        """The job webhook's validateTopologyRequest: the template's TAS
        annotations; an elastic job only unconstrained (Kueue places no
        required or preferred topology for slices yet); then a slice no
        larger than the pod set."""
        assert job.spec is not None
        ann = job.spec.template.metadata.annotations or {}
        errs = validate_annotations(_TEMPLATE_META, ann, multi_layer)
        if errs:
            return errs
        if elastic:
            for key, what in ((REQUIRED, "required"), (PREFERRED, "preferred")):
                if key in ann:
                    # field.Path.Child, not Key: Kueue names the annotation as a field
                    path = f"{_TEMPLATE_META}.annotations.{key}"
                    return [
                        e.forbidden(path, f"{what} topology is not supported with elastic jobs")
                    ]
        return validate_slice_size_bound(_TEMPLATE_META, ann, _count(job))

    def update_errors(self, new: kc.Job, old: kc.Job) -> list[e.FieldError]:
        """validatePartialAdmissionUpdate: a running job with a minimum
        parallelism keeps its parallelism (Kueue sets it at admission), and
        the completions-equal-parallelism switch stays while it runs."""
        errs: list[e.FieldError] = []
        if MIN_PARALLELISM in (old.metadata.annotations or {}):
            running = not (old.spec is not None and old.spec.suspend)
            p_old = old.spec.parallelism if old.spec is not None else 1
            p_new = new.spec.parallelism if new.spec is not None else 1
            if running and p_old != p_new:
                detail = (
                    "cannot change when partial admission is enabled and the job is not suspended"
                )
                errs.append(e.forbidden("spec.parallelism", detail))
        suspended = self.is_suspended(new)
        if (
            suspended == self.is_suspended(old)
            and not suspended
            and _sync_completions(old) != _sync_completions(new)
        ):
            errs.append(
                e.forbidden(_SYNC_PATH, "field is immutable while the job is not suspended")
            )
        return errs

    def stop(self, job: kc.Job) -> kc.Job | None:
        """Job.Stop's first write: suspended, annotated as being stopped (it
        does not count as suspended until the restore is written too)."""
        if self.is_suspended(job):
            return None
        job = clone(job)
        assert job.spec is not None
        job.spec.suspend = True
        job.metadata.annotations = {**(job.metadata.annotations or {}), STOPPING: "true"}
        return job

    def restore(self, job: kc.Job, original: list[kt.PodSet]) -> kc.Job | None:
        """RestorePodSetsInfo (the template, and the parallelism a partial
        admission set) and the stopping annotation removed."""
        assert job.spec is not None
        ps = next((p for p in original if p.name == "main"), None)
        restored = (
            restored_template(job.spec.template, ps.template, _JOB_CONTROLLER_LABELS)
            if ps
            else None
        )
        partial = ps is not None and _partial(job) and job.spec.parallelism != ps.count
        stopping = STOPPING in (job.metadata.annotations or {})
        if not stopping and not partial and (restored is None or restored == job.spec.template):
            return None
        job = clone(job)
        spec = job.spec
        assert spec is not None
        if restored is not None:
            spec.template = restored
        if partial:
            assert ps is not None
            spec.parallelism = ps.count
            if _sync_completions(job):
                spec.completions = ps.count
        if stopping:
            rest = {k: v for k, v in (job.metadata.annotations or {}).items() if k != STOPPING}
            job.metadata.annotations = rest or None
        return job
