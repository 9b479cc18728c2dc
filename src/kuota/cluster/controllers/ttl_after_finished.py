"""The TTL-after-finished controller (Kubernetes' ``pkg/controller/ttlafterfinished``):
a Job with ``ttlSecondsAfterFinished`` is deleted that many seconds after it
finished (its Complete or Failed condition's transition time); its pods and
its Workload go with it (garbage collection of dependents)."""

from __future__ import annotations

import contextlib
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from kuota.api.core import Job
from kuota.cluster.controllers.controller_base import ClusterController
from kuota.cluster.podutil import JOB, is_deleting
from kuota.runtime.informer import Informer, key_of
from kuota.store.protocol import EventType, NotFound

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager

__all__ = ["TTLAfterFinished", "job_finish_time"]


def job_finish_time(job: Job) -> datetime | None:
    """``jobFinishTime``: when the Complete or Failed condition turned True."""
    for c in (job.status.conditions if job.status is not None else None) or ():
        if c.type in ("Complete", "Failed") and c.status == "True":
            return c.last_transition_time
    return None


class TTLAfterFinished(ClusterController):
    """Reads Jobs; deletes those whose time to live after finishing is over."""

    name = "ttl-after-finished"

    def __init__(self) -> None:
        super().__init__()
        self._jobs: Informer | None = None

    def setup(self, mgr: Manager) -> None:
        super().setup(mgr)
        self._jobs = mgr.informer(JOB)
        self._jobs.on_change(self._on_job)

    def _on_job(self, etype: EventType, job: Any, old: Any | None) -> None:
        if etype == "DELETED" or job.spec is None or job.spec.ttl_seconds_after_finished is None:
            return
        if job_finish_time(job) is not None and not is_deleting(job):
            self.mgr.enqueue(self.name, key_of(job))

    def reconcile(self, key: str) -> timedelta | None:
        assert self._jobs is not None
        mgr = self.mgr
        job: Job | None = self._jobs.get(key)
        if job is None or job.spec is None or is_deleting(job):
            return None
        ttl = job.spec.ttl_seconds_after_finished
        finished = job_finish_time(job)
        if ttl is None or finished is None:
            return None
        expire = finished + timedelta(seconds=ttl)
        if mgr.clock.now() < expire:
            mgr.enqueue_at(self.name, key, expire)
            return None
        with contextlib.suppress(NotFound):
            mgr.store.delete(JOB, job.metadata.namespace, job.metadata.name)
        return None
