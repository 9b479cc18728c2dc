"""Kueue's MultiKueue adapters for the batch/v1 Job (``job_multikueue_adapter.go``)
and the JobSet (``jobset_multikueue_adapter.go``): the copy of a manager's
job made in the worker (its metadata cloned for creation, ``managedBy``
dropped so that the worker's own controller runs it, the prebuilt-workload
and origin labels set) and the status written back to the manager's job."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from kuota.api.k8s.batch import JobCondition
from kuota.api.kueue.multikueue_types import CONTROLLER_NAME, ORIGIN_LABEL
from kuota.api.meta import ObjectMeta
from kuota.controllers.jobframework import PREBUILT_WORKLOAD
from kuota.store import clone
from kuota.store.protocol import ResourceType
from kuota.store.resources import JOB, JOB_SET

__all__ = ["ADAPTERS", "MultiKueueAdapter", "adapter_for"]

# The Job controller's labels on a Job's pod template (cleanLabels).
_JOB_LABELS: Final = (
    "batch.kubernetes.io/controller-uid",
    "controller-uid",
    "batch.kubernetes.io/job-name",
    "job-name",
)


def _clone_meta(meta: ObjectMeta, wl_name: str, origin: str) -> ObjectMeta:
    """``CloneObjectMetaForCreation`` + ``SetMultiKueueMeta``."""
    labels = dict(meta.labels or {})
    labels[PREBUILT_WORKLOAD] = wl_name
    labels[ORIGIN_LABEL] = origin
    return ObjectMeta(
        name=meta.name,
        namespace=meta.namespace,
        labels=labels,
        annotations=dict(meta.annotations) if meta.annotations else None,
    )


def _finished_job(job: Any) -> bool:
    st = job.status
    return st is not None and any(
        c.type in ("Complete", "Failed") and c.status == "True" for c in st.conditions or ()
    )


@dataclass(frozen=True, slots=True)
class MultiKueueAdapter:
    kind: str
    api_version: str
    rtype: ResourceType

    def managed_by(self, job: Any) -> str:
        return (job.spec.managed_by if job.spec is not None else None) or ""

    def unmanaged_reason(self, job: Any) -> str | None:
        """``IsJobManagedByKueue``."""
        by = self.managed_by(job)
        if by == CONTROLLER_NAME:
            return None
        return f'Expecting spec.managedBy to be "{CONTROLLER_NAME}" not "{by}"'

    def remote_copy(self, local: Any, wl_name: str, origin: str) -> Any:
        out = clone(local)
        out.metadata = _clone_meta(local.metadata, wl_name, origin)
        out.status = None
        out.spec.managed_by = None
        if self.rtype == JOB:
            out.spec.selector = None
            tmpl = out.spec.template
            if tmpl.metadata is not None and tmpl.metadata.labels:
                kept = {k: v for k, v in tmpl.metadata.labels.items() if k not in _JOB_LABELS}
                tmpl.metadata.labels = kept or None
        return out

    def status_update(self, local: Any, remote: Any, now: datetime) -> Any | None:
        """The manager job's new status, or None when it stays. A JobSet
        takes the remote's status as it is; a Job too, except while the
        manager's Job is suspended and the remote runs (``determineStatusUpdate``:
        the Suspended condition Kubernetes requires is kept)."""
        if self.rtype == JOB_SET:
            return remote.status if remote.status != local.status else None
        want = remote.status
        suspended = bool(local.spec.suspend)
        if suspended and not bool(remote.spec.suspend) and not _finished_job(remote):
            st = clone(local.status) if local.status is not None else type(remote.status)()
            conds = list(st.conditions or ())
            if any(c.type == "Suspended" and c.status == "True" for c in conds):
                return None
            conds = [c for c in conds if c.type != "Suspended"]
            conds.append(
                JobCondition(
                    type="Suspended",
                    status="True",
                    reason="MultiKueueAdapter",
                    message="Set by MultiKueue adapter",
                    last_transition_time=now,
                    last_probe_time=now,
                )
            )
            st.conditions = conds
            want = st
        return want if want != local.status else None


ADAPTERS: Final = {
    ("batch/v1", "Job"): MultiKueueAdapter("Job", "batch/v1", JOB),
    ("jobset.x-k8s.io/v1alpha2", "JobSet"): MultiKueueAdapter(
        "JobSet", "jobset.x-k8s.io/v1alpha2", JOB_SET
    ),
}


def adapter_for(wl: Any) -> tuple[MultiKueueAdapter | None, Any | None]:
    """The adapter of the Workload's owner (its controller, else its first
    owner), and that owner reference."""
    refs = wl.metadata.owner_references or []
    ref = next((r for r in refs if r.controller), refs[0] if refs else None)
    if ref is None:
        return None, None
    return ADAPTERS.get((ref.api_version, ref.kind)), ref
