"""Kueue's MultiKueue adapter for the batch/v1 Job (``job_multikueue_adapter.go``):
the worker's copy also drops the selector and the Job controller's labels on
its pod template (the worker's Job controller makes its own), and while the
manager's Job is suspended and the remote one runs, the manager's keeps the
Suspended condition Kubernetes requires (``determineStatusUpdate``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from kuota.api.k8s.batch import JobCondition
from kuota.controllers.jobs.batchjob.job_adapter import BatchJobAdapter
from kuota.controllers.multikueue_adapter import MultiKueueAdapter
from kuota.store import clone

__all__ = ["JobMultiKueueAdapter", "job_multikueue_adapter"]

# The Job controller's labels on a Job's pod template (cleanLabels).
_JOB_LABELS: Final = (
    "batch.kubernetes.io/controller-uid",
    "controller-uid",
    "batch.kubernetes.io/job-name",
    "job-name",
)


def _finished(job: Any) -> bool:
    st = job.status
    return st is not None and any(
        c.type in ("Complete", "Failed") and c.status == "True" for c in st.conditions or ()
    )


class JobMultiKueueAdapter(MultiKueueAdapter):
    __slots__ = ()

    def prepare_copy(self, copy: Any) -> Any:
        copy.spec.selector = None
        tmpl = copy.spec.template
        if tmpl.metadata is not None and tmpl.metadata.labels:
            kept = {k: v for k, v in tmpl.metadata.labels.items() if k not in _JOB_LABELS}
            tmpl.metadata.labels = kept or None
        return copy

    def status_update(self, local: Any, remote: Any, now: datetime) -> Any | None:
        want = remote.status
        suspended = bool(local.spec.suspend)
        if suspended and not bool(remote.spec.suspend) and not _finished(remote):
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


def job_multikueue_adapter() -> MultiKueueAdapter:
    a = BatchJobAdapter
    return JobMultiKueueAdapter(a.kind, a.api_version, a.rtype, a.managed_by_field)
