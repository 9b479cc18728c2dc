"""The CronJob controller, after Kubernetes' ``pkg/controller/cronjob``
(``cronjob_controllerv2.go``, ``utils.go``), in virtual time: each sync
requeues the CronJob at its next scheduled time (the manager's timers).

One sync: forget finished and vanished Jobs from ``status.active`` (and keep
``lastSuccessfulTime``); unless suspended, find the most recent scheduled
time not yet run (never one older than ``startingDeadlineSeconds``); skip it
if it was run, or if a Job is active and ``concurrencyPolicy`` is Forbid
(it starts when that Job ends, while within the deadline); with Replace,
delete the active Jobs first; create the Job ``<name>-<minutes since the
epoch>`` from ``jobTemplate``; finally delete the oldest finished Jobs beyond
``successfulJobsHistoryLimit`` (3) and ``failedJobsHistoryLimit`` (1).

Kubernetes requeues 100 ms after the scheduled time; here the sync runs at
the scheduled time itself. ``status.lastScheduleTime`` is the same either way.
"""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import msgspec

from kuota.api.core import CronJob, CronJobStatus, Job
from kuota.api.cron import CronError, Schedule, parse_schedule
from kuota.api.event import ObjectReference
from kuota.api.meta import ObjectMeta
from kuota.cluster.controllers.controller_base import ClusterController
from kuota.cluster.controllers.jobutil import is_job_finished
from kuota.cluster.podutil import JOB, controller_key, controller_ref, owner_reference
from kuota.runtime.informer import Informer, key_of
from kuota.store import clone
from kuota.store.protocol import AlreadyExists, EventType, NotFound, ResourceType

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager

__all__ = ["CRONJOB", "SCHEDULED_TIMESTAMP", "CronJobController", "most_recent_schedule"]

CRONJOB: ResourceType = ("batch", "CronJob")
SCHEDULED_TIMESTAMP = "batch.kubernetes.io/cronjob-scheduled-timestamp"
COMPONENT = "cronjob-controller"
_MANY_MISSED = 100


def _rfc3339(t: datetime) -> str:
    s = t.isoformat(timespec="seconds")
    return s.removesuffix("+00:00") + "Z" if s.endswith("+00:00") else s


def most_recent_schedule(
    schedule: Schedule,
    earliest: datetime,
    now: datetime,
    tz: tzinfo | None,
    deadline_seconds: int | None,
) -> tuple[datetime | None, int]:
    """``mostRecentScheduleTime``: the latest activation in (earliest, now]
    (``earliest`` raised to ``now - startingDeadlineSeconds`` when given) and
    about how many activations were missed. Raises CronError for a schedule
    that never fires."""
    if deadline_seconds is not None:
        earliest = max(earliest, now - timedelta(seconds=deadline_seconds))
    never = CronError("time difference between two schedules is less than 1 second")
    t1 = schedule.next(earliest, tz)
    if t1 is None:
        raise never
    if now < t1:
        return None, 0
    t2 = schedule.next(t1, tz)
    if t2 is None:
        raise never
    if now < t2:
        return t1, 1
    if (t2 - t1).total_seconds() < 1:
        raise never
    # As Kubernetes: estimate the count from the first interval, then walk
    # only the last stretch (a long-stopped clock must not cost a walk per minute).
    step = round((t2 - t1).total_seconds())
    missed = int((now - t1).total_seconds()) // step + 1
    start = t1 + timedelta(seconds=(missed - 2) * step)
    recent: datetime | None = None
    t = schedule.next(start, tz)
    while t is not None and t <= now:
        recent = t
        t = schedule.next(t, tz)
    return recent, missed


class CronJobController(ClusterController):
    """Reads CronJobs and Jobs; creates and deletes Jobs, writes CronJob status."""

    name = "cronjob-controller"
    component = COMPONENT
    _BY_OWNER = "cronjob-controller:owner"

    def __init__(self) -> None:
        super().__init__()
        self._cronjobs: Informer | None = None
        self._jobs: Informer | None = None
        self._zones: dict[str, tzinfo] = {}

    def setup(self, mgr: Manager) -> None:
        super().setup(mgr)
        self._cronjobs = mgr.informer(CRONJOB)
        self._jobs = mgr.informer(JOB)
        self._jobs.add_index(self._BY_OWNER, _cronjob_owner_uid)
        self._cronjobs.on_change(self._on_cronjob)
        self._jobs.on_change(self._on_job)

    def _on_cronjob(self, etype: EventType, cj: Any, old: Any | None) -> None:
        if etype != "DELETED":
            self.mgr.enqueue(self.name, key_of(cj))

    def _on_job(self, etype: EventType, job: Any, old: Any | None) -> None:
        key = controller_key(job, "CronJob", "batch/v1")
        if key is not None:
            self.mgr.enqueue(self.name, key)

    def _zone(self, name: str | None) -> tzinfo | None:
        """The schedule's time zone (None: UTC, the controller's own)."""
        if name is None:
            return UTC
        zone = self._zones.get(name)
        if zone is None:
            zone = self._zones[name] = ZoneInfo(name)
        return zone

    # ------------------------------------------------------------ reconcile
    def reconcile(self, key: str) -> timedelta | None:
        assert self._cronjobs is not None and self._jobs is not None
        cj: CronJob | None = self._cronjobs.get(key)
        if cj is None or cj.spec is None:
            return None
        status = clone(cj.status) if cj.status is not None else CronJobStatus()
        jobs: list[Job] = self._jobs.by_index(self._BY_OWNER, cj.metadata.uid)
        self._track(cj, status, jobs)
        if cj.metadata.deletion_timestamp is None:
            self._schedule(key, cj, status)
            self._cleanup(cj, status, jobs)
        if status != (cj.status if cj.status is not None else CronJobStatus()):
            with contextlib.suppress(NotFound):
                self.mgr.store.update_status(msgspec.structs.replace(cj, status=status))
        return None

    def _track(self, cj: CronJob, status: CronJobStatus, jobs: list[Job]) -> None:
        active = list(status.active or ())
        uids = {j.metadata.uid for j in jobs}
        for j in jobs:
            listed = any(r.uid == j.metadata.uid for r in active)
            finished = is_job_finished(j)
            if not listed and not finished:
                self.event(
                    cj,
                    "Warning",
                    "UnexpectedJob",
                    f"Saw a job that the controller did not create or forgot: {j.metadata.name}",
                )
            elif listed and finished:
                active = [r for r in active if r.uid != j.metadata.uid]
                cond = _finished_condition(j)
                self.event(
                    cj,
                    "Normal",
                    "SawCompletedJob",
                    f"Saw completed job: {j.metadata.name}, condition: {cond}",
                )
            if finished and _finished_condition(j) == "Complete":
                done = j.status.completion_time if j.status is not None else None
                last = status.last_successful_time
                if done is not None and (last is None or done > last):
                    status.last_successful_time = done
        for r in list(active):
            if r.uid not in uids:
                # The Job went missing: forget it, or the CronJob stays active for ever.
                self.event(cj, "Normal", "MissingJob", f"Active job went missing: {r.name}")
                active = [a for a in active if a.uid != r.uid]
        status.active = active or None

    def _schedule(self, key: str, cj: CronJob, status: CronJobStatus) -> None:
        spec = cj.spec
        assert spec is not None
        now = self.mgr.clock.now()
        try:
            tz = self._zone(spec.time_zone)
        except (ZoneInfoNotFoundError, ValueError) as err:
            self.event(
                cj, "Warning", "UnknownTimeZone", f'invalid timeZone: "{spec.time_zone}": {err}'
            )
            return
        if spec.suspend:
            return
        try:
            sched = parse_schedule(spec.schedule)
            if sched.tz_name is not None and spec.time_zone is None:
                tz = self._zone(sched.tz_name)
        except (CronError, ZoneInfoNotFoundError, ValueError) as err:
            self.event(
                cj,
                "Warning",
                "UnparseableSchedule",
                f'unparseable schedule: "{spec.schedule}" : {err}',
            )
            return
        earliest = status.last_schedule_time or cj.metadata.creation_timestamp or now
        try:
            scheduled, missed = most_recent_schedule(
                sched, earliest, now, tz, spec.starting_deadline_seconds
            )
        except CronError as err:
            self.event(
                cj, "Warning", "InvalidSchedule", f"invalid schedule: {spec.schedule} : {err}"
            )
            return
        if missed > _MANY_MISSED:
            self.event(
                cj,
                "Warning",
                "TooManyMissedTimes",
                "too many missed start times. Set or decrease .spec.startingDeadlineSeconds "
                "or check clock skew",
            )
        if scheduled is not None:
            self._run(cj, status, scheduled, now, tz)
        # The next activation after the last one run (or missed).
        nxt = sched.next(scheduled or max(earliest, now), tz)
        if nxt is not None:
            self.mgr.enqueue_at(self.name, key, nxt)

    def _run(
        self,
        cj: CronJob,
        status: CronJobStatus,
        scheduled: datetime,
        now: datetime,
        tz: tzinfo | None,
    ) -> None:
        spec = cj.spec
        assert spec is not None
        deadline = spec.starting_deadline_seconds
        if deadline is not None and scheduled + timedelta(seconds=deadline) < now:
            stamp = scheduled.astimezone(UTC).strftime("%a, %d %b %Y %H:%M:%S +0000")
            self.event(
                cj, "Warning", "MissSchedule", f"Missed scheduled time to start a job: {stamp}"
            )
            return
        name = f"{cj.metadata.name}-{int(scheduled.timestamp()) // 60}"
        active = list(status.active or ())
        if any(r.name == name for r in active) or status.last_schedule_time == scheduled:
            return  # this time was run already
        if spec.concurrency_policy == "Forbid" and active:
            self.event(
                cj,
                "Normal",
                "JobAlreadyActive",
                "Not starting job because prior execution is running and concurrency policy is Forbid",
            )
            return
        if spec.concurrency_policy == "Replace":
            for r in active:
                self._delete_job(cj, r.name or "")
            active = []
        try:
            job = self.mgr.store.create(self._job_for(cj, name, scheduled, tz))
            self.event(cj, "Normal", "SuccessfulCreate", f"Created job {name}")
        except AlreadyExists:
            job = self.mgr.store.get(JOB, cj.metadata.namespace, name)
            ref = controller_ref(job)
            if (
                ref is None
                or ref.uid != cj.metadata.uid
                or any(r.uid == job.metadata.uid for r in active)
            ):
                status.active = active or None
                return
        active.append(
            ObjectReference(
                kind="Job",
                namespace=job.metadata.namespace,
                name=job.metadata.name,
                uid=job.metadata.uid,
                api_version="batch/v1",
                resource_version=job.metadata.resource_version,
            )
        )
        status.active = active
        status.last_schedule_time = scheduled

    def _job_for(self, cj: CronJob, name: str, scheduled: datetime, tz: tzinfo | None) -> Job:
        """``getJobFromTemplate2``."""
        spec = cj.spec
        assert spec is not None
        tmpl = spec.job_template
        assert tmpl.spec is not None  # validated on create
        annotations = dict(tmpl.metadata.annotations or {})
        annotations[SCHEDULED_TIMESTAMP] = _rfc3339(scheduled.astimezone(tz) if tz else scheduled)
        return Job(
            api_version="batch/v1",
            kind="Job",
            metadata=ObjectMeta(
                name=name,
                namespace=cj.metadata.namespace,
                labels=dict(tmpl.metadata.labels or {}) or None,
                annotations=annotations,
                owner_references=[owner_reference(cj)],
            ),
            spec=clone(tmpl.spec),
        )

    def _delete_job(self, cj: CronJob, name: str) -> None:
        try:
            self.mgr.store.delete(JOB, cj.metadata.namespace, name)
        except NotFound:
            return
        self.event(cj, "Normal", "SuccessfulDelete", f"Deleted job {name}")

    def _cleanup(self, cj: CronJob, status: CronJobStatus, jobs: list[Job]) -> None:
        """``cleanupFinishedJobs``: the oldest finished Jobs (by start time)
        beyond the history limits are deleted."""
        spec = cj.spec
        assert spec is not None
        done = {"Complete": [], "Failed": []}  # type: dict[str, list[Job]]
        for j in jobs:
            cond = _finished_condition(j)
            if cond in done and j.metadata.deletion_timestamp is None:
                done[cond].append(j)
        for cond, limit in (
            ("Complete", spec.successful_jobs_history_limit),
            ("Failed", spec.failed_jobs_history_limit),
        ):
            old = sorted(done[cond], key=_start_order)
            for j in old[: max(0, len(old) - limit)]:
                self._delete_job(cj, j.metadata.name)
                status.active = [r for r in status.active or () if r.uid != j.metadata.uid] or None


def _finished_condition(job: Job) -> str | None:
    for c in (job.status.conditions if job.status is not None else None) or ():
        if c.type in ("Complete", "Failed") and c.status == "True":
            return c.type
    return None


_LATE = datetime.max.replace(tzinfo=UTC)


def _start_order(job: Job) -> tuple[datetime, str]:
    """``byJobStartTime``: earliest start first, Jobs never started last, then by name."""
    start = job.status.start_time if job.status is not None else None
    return (start or _LATE, job.metadata.name)


def _cronjob_owner_uid(job: Any) -> list[str]:
    ref = controller_ref(job)
    if ref is None or ref.kind != "CronJob" or ref.api_version != "batch/v1":
        return []
    return [ref.uid]
