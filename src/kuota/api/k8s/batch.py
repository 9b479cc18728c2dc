"""batch/v1 Job and CronJob (``k8s.io/api/batch/v1``), declared as ``corev1``'s
structs are: every JSON field, API defaults only where kuota decides with them."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

import msgspec

from kuota.api.base import LIST_ATOMIC, Object
from kuota.api.k8s.corev1 import AnyObject, PodTemplateSpec
from kuota.api.k8s.event import ObjectReference
from kuota.api.meta import ConditionStatus, LabelSelector, ObjectMeta

__all__ = [
    "CronJob",
    "CronJobSpec",
    "CronJobStatus",
    "Job",
    "JobCondition",
    "JobSpec",
    "JobStatus",
    "JobTemplateSpec",
]


# Go's int32 fields: the API server refuses a number beyond the type's range
# when it decodes the object (a Workload's podSet count is an int32 too).
Int32 = Annotated[int, msgspec.Meta(ge=-(2**31), le=2**31 - 1)]


# ---------------------------------------------------------------------------- Job
class JobSpec(Object):
    template: PodTemplateSpec
    # API defaults (batch/v1 SetDefaults_Job). When neither parallelism nor
    # completions is given Kubernetes also sets completions=1; None here means
    # "not given", which counts the same for a Job with parallelism 1.
    parallelism: Int32 = 1
    completions: Int32 | None = None
    active_deadline_seconds: int | None = None
    pod_failure_policy: AnyObject | None = None
    success_policy: AnyObject | None = None
    # API default 6; Kubernetes defaults it to MaxInt32 instead when
    # backoffLimitPerIndex is set (the per-index limit then governs).
    backoff_limit: Int32 = 6
    backoff_limit_per_index: Int32 | None = None
    max_failed_indexes: Int32 | None = None
    selector: LabelSelector | None = None
    manual_selector: bool | None = None
    ttl_seconds_after_finished: Int32 | None = None
    completion_mode: Literal["NonIndexed", "Indexed"] = "NonIndexed"  # API default
    suspend: bool | None = None
    pod_replacement_policy: Literal["TerminatingOrFailed", "Failed"] | None = None
    managed_by: str | None = None
    scheduling: AnyObject | None = None


class JobCondition(Object):
    type: str  # Complete, Failed, Suspended, FailureTarget, SuccessCriteriaMet
    status: ConditionStatus
    last_probe_time: datetime | None = None
    last_transition_time: datetime | None = None
    reason: str | None = None
    message: str | None = None


class JobStatus(Object):
    conditions: Annotated[list[JobCondition], LIST_ATOMIC] | None = None
    start_time: datetime | None = None
    completion_time: datetime | None = None
    # Non-pointer int32 counters in Go: absent means 0.
    active: int = 0
    succeeded: int = 0
    failed: int = 0
    terminating: int | None = None
    completed_indexes: str | None = None
    failed_indexes: str | None = None
    uncounted_terminated_pods: AnyObject | None = None
    ready: int | None = None


class Job(Object):
    api_version: str
    kind: str
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: JobSpec | None = None
    status: JobStatus | None = None


# ------------------------------------------------------------------------ CronJob
class JobTemplateSpec(Object):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: JobSpec | None = None


class CronJobSpec(Object):
    schedule: str
    job_template: JobTemplateSpec
    time_zone: str | None = None
    starting_deadline_seconds: int | None = None
    # API defaults (batch/v1 SetDefaults_CronJob): the controller decides with them.
    concurrency_policy: str = "Allow"  # checked in code, as in Go
    suspend: bool | None = None
    successful_jobs_history_limit: int = 3
    failed_jobs_history_limit: int = 1


class CronJobStatus(Object):
    active: Annotated[list[ObjectReference], LIST_ATOMIC] | None = None
    last_schedule_time: datetime | None = None
    last_successful_time: datetime | None = None


class CronJob(Object):
    api_version: str
    kind: str
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: CronJobSpec | None = None
    status: CronJobStatus | None = None
