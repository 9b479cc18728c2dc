"""Pure helpers of the Job controller: the pods a Job creates, completion
indexes and their interval form, the pod-failure backoff record and the order
in which surplus pods are deleted — each as Kubernetes' ``pkg/controller/job``
(and ``pkg/controller.ActivePods``) has it."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from kuota.api.conditions import find
from kuota.api.k8s import Job, JobCondition, Pod, PodStatus
from kuota.api.meta import ObjectMeta
from kuota.cluster.podutil import get_pod_condition, is_deleting, owner_reference, pod_phase
from kuota.store import clone

__all__ = [
    "COMPLETION_INDEX",
    "CONTROLLER_UID_LABEL",
    "JOB_NAME_LABEL",
    "JOB_TRACKING_FINALIZER",
    "LEGACY_CONTROLLER_UID_LABEL",
    "LEGACY_JOB_NAME_LABEL",
    "BackoffRecord",
    "completion_index",
    "format_indexes",
    "has_tracking_finalizer",
    "is_job_finished",
    "is_pod_failed",
    "job_condition",
    "new_job_pod",
    "parse_indexes",
    "removal_order",
]

JOB_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
LEGACY_CONTROLLER_UID_LABEL = "controller-uid"
LEGACY_JOB_NAME_LABEL = "job-name"
COMPLETION_INDEX_ENV = "JOB_COMPLETION_INDEX"
_MAX_GENERATED_NAME = 63 - 5  # names.MaxGeneratedNameLength


# ------------------------------------------------------------------ conditions
def job_condition(ctype: str, reason: str, message: str, now: datetime) -> JobCondition:
    """``newCondition`` with status True."""
    return JobCondition(
        type=ctype,
        status="True",
        last_probe_time=now,
        last_transition_time=now,
        reason=reason,
        message=message,
    )


def find_job_condition(
    job_conditions: Sequence[JobCondition] | None, ctype: str
) -> JobCondition | None:
    return find(job_conditions, ctype)


def is_job_finished(job: Job) -> bool:
    """``IsJobFinished``: a Complete or Failed condition that is True."""
    conds = job.status.conditions if job.status is not None else None
    return any(c.type in ("Complete", "Failed") and c.status == "True" for c in conds or ())


def ensure_job_condition(
    conds: list[JobCondition],
    ctype: str,
    status: str,
    reason: str,
    message: str,
    now: datetime,
) -> bool:
    """``ensureJobConditionStatus``: replace the condition when it differs;
    add it only when it is not False (a False condition is never added)."""
    for i, c in enumerate(conds):
        if c.type != ctype:
            continue
        if c.status == status and c.reason == reason and c.message == message:
            return False
        conds[i] = JobCondition(
            type=ctype,
            status=status,  # type: ignore[arg-type]
            last_probe_time=now,
            last_transition_time=now,
            reason=reason,
            message=message,
        )
        return True
    if status == "False":
        return False
    conds.append(job_condition(ctype, reason, message, now))
    return True


# ------------------------------------------------------------------------ pods
def has_tracking_finalizer(pod: Pod) -> bool:
    return JOB_TRACKING_FINALIZER in (pod.metadata.finalizers or ())


def only_replace_failed(job: Job) -> bool:
    """``onlyReplaceFailedPods``: podReplacementPolicy Failed, which is also the
    API default when a podFailurePolicy is set."""
    spec = job.spec
    assert spec is not None
    policy = spec.pod_replacement_policy
    if policy is None:
        return spec.pod_failure_policy is not None
    return policy == "Failed"


def is_pod_failed(pod: Pod, job: Job) -> bool:
    """``isPodFailed``: Failed, or deleted before it succeeded (an orphan may
    never reach a phase) unless only Failed pods are replaced."""
    phase = pod_phase(pod)
    if only_replace_failed(job):
        return phase == "Failed"
    if phase == "Failed":
        return True
    return is_deleting(pod) and phase != "Succeeded"


def completion_index(pod: Pod) -> int | None:
    """``getCompletionIndex``: the annotation as a non-negative int, else None."""
    raw = (pod.metadata.annotations or {}).get(COMPLETION_INDEX)
    if raw is None or not _is_int(raw):
        return None
    return int(raw)


def _generate_name(job_name: str, index: int | None) -> str:
    if index is None:
        return f"{job_name}-"
    # podGenerateNameWithIndex: keep the index when the job name is cut.
    suffix = f"-{index}-"
    prefix = job_name + suffix
    if len(prefix) > _MAX_GENERATED_NAME:
        prefix = prefix[: _MAX_GENERATED_NAME - len(suffix)] + suffix
    return prefix


def _add_index_env(containers: Iterable[Any]) -> None:
    for c in containers:
        env = list(c.env or [])
        if any(isinstance(v, dict) and v.get("name") == COMPLETION_INDEX_ENV for v in env):
            continue
        path = f"metadata.annotations['{COMPLETION_INDEX}']"
        env.append({"name": COMPLETION_INDEX_ENV, "valueFrom": {"fieldRef": {"fieldPath": path}}})
        c.env = env


def new_job_pod(job: Job, index: int | None) -> Pod:
    """A pod from the Job's template (``GetPodFromTemplate``): the template's
    labels (plus the Job's selector labels), annotations and finalizers, the
    tracking finalizer, a controller reference, and for Indexed Jobs the
    completion index as annotation, label, hostname and env var. Named by the
    store from ``generateName`` ``<job>-`` (``<job>-<index>-``)."""
    spec = job.spec
    assert spec is not None
    m = job.metadata
    tmeta = spec.template.metadata
    labels = dict(tmeta.labels or {})
    if not spec.manual_selector:
        # What the API server adds to the template of a Job with a generated selector.
        for k, v in (
            (CONTROLLER_UID_LABEL, m.uid),
            (JOB_NAME_LABEL, m.name),
            (LEGACY_CONTROLLER_UID_LABEL, m.uid),
            (LEGACY_JOB_NAME_LABEL, m.name),
        ):
            labels.setdefault(k, v)
    annotations = dict(tmeta.annotations or {})
    pod_spec = clone(spec.template.spec)
    assert pod_spec is not None
    if index is not None:
        annotations[COMPLETION_INDEX] = str(index)
        labels[COMPLETION_INDEX] = str(index)
        pod_spec.hostname = f"{m.name}-{index}"
        _add_index_env(pod_spec.containers)
        _add_index_env(pod_spec.init_containers or ())
    finalizers = list(tmeta.finalizers or ())
    if JOB_TRACKING_FINALIZER not in finalizers:
        finalizers.append(JOB_TRACKING_FINALIZER)
    return Pod(
        api_version="v1",
        kind="Pod",
        metadata=ObjectMeta(
            generate_name=_generate_name(m.name, index),
            namespace=m.namespace,
            labels=labels,
            annotations=annotations or None,
            finalizers=finalizers,
            owner_references=[owner_reference(job)],
        ),
        spec=pod_spec,
        status=PodStatus(phase="Pending"),
    )


# ---------------------------------------------------------------------- indexes
def parse_indexes(text: str | None, completions: int) -> set[int]:
    """``parseIndexesFromString``: ``"1,3-5"``; entries at or beyond
    ``completions`` (and malformed ones) are dropped."""
    out: set[int] = set()
    for part in (text or "").split(","):
        lo_s, dash, hi_s = part.partition("-")
        if not _is_int(lo_s) or (dash and not _is_int(hi_s)):
            continue
        lo = int(lo_s)
        hi = int(hi_s) if hi_s else lo
        out.update(range(lo, min(hi, completions - 1) + 1))
    return out


def _is_int(s: str) -> bool:
    return s.isascii() and s.isdigit()


def format_indexes(indexes: Iterable[int]) -> str:
    """``orderedIntervals.String``: ``"1,3-5,7"``; two consecutive indexes are
    written ``"1,2"``."""
    parts: list[str] = []
    run: list[int] = []
    for ix in sorted(set(indexes)):
        if run and ix == run[-1] + 1:
            run.append(ix)
            continue
        if run:
            parts.append(_interval(run[0], run[-1]))
        run = [ix]
    if run:
        parts.append(_interval(run[0], run[-1]))
    return ",".join(parts)


def _interval(first: int, last: int) -> str:
    if last == first:
        return str(first)
    return f"{first},{last}" if last == first + 1 else f"{first}-{last}"


# ---------------------------------------------------------------------- backoff
def finish_time(pod: Pod, now: datetime) -> datetime:
    """``getFinishedTime``: when Ready turned False, else the deletion time."""
    c = get_pod_condition(pod, "Ready")
    if c is not None and c.status == "False" and c.last_transition_time is not None:
        return c.last_transition_time
    if pod.metadata.deletion_timestamp is not None:
        return pod.metadata.deletion_timestamp
    return now


@dataclass(frozen=True, slots=True)
class BackoffRecord:
    """Failures since the last success and when the last one happened: how
    long the controller waits before replacing a failed pod
    (``backoffRecord``; kept in memory, as Kubernetes keeps it)."""

    failures: int = 0
    last_failure: datetime | None = None

    def update(
        self, succeeded: Sequence[Pod], failed: Sequence[Pod], now: datetime
    ) -> BackoffRecord:
        """``newBackoffRecord`` with the pods newly counted in this sync."""
        failed_times = sorted(finish_time(p, now) for p in failed)
        if not succeeded:
            if not failed_times:
                return self
            return BackoffRecord(self.failures + len(failed_times), failed_times[-1])
        last_success = max(finish_time(p, now) for p in succeeded)
        failures, last = 0, None
        for t in reversed(failed_times):
            if t <= last_success:
                break
            last = last or t
            failures += 1
        return BackoffRecord(failures, last)

    def remaining(self, now: datetime, base: timedelta, cap: timedelta) -> timedelta:
        """``getRemainingTimeForFailuresCount``: base doubled per failure after
        the first, capped, counted from the last failure."""
        if self.failures == 0 or self.last_failure is None:
            return timedelta(0)
        delay = base
        for _ in range(1, self.failures):
            delay *= 2
            if delay >= cap:
                delay = cap
                break
        elapsed = now - self.last_failure
        return timedelta(0) if delay < elapsed else delay - elapsed


# ---------------------------------------------------------------------- removal
_PHASE_RANK = {"Pending": 0, "Unknown": 1, "Running": 2}


def _newest_first(t: datetime | None) -> float:
    """Later times sort first; a missing time before all of them."""
    return -math.inf if t is None else -t.timestamp()


def removal_order(pod: Pod) -> tuple[Any, ...]:
    """``controller.ActivePods`` as a sort key: pods to delete first sort
    first — unassigned, then pending, then not ready, then ready the shortest
    time, then the newest."""
    ready = get_pod_condition(pod, "Ready")
    is_ready = ready is not None and ready.status == "True"
    ready_since = _newest_first(ready.last_transition_time) if is_ready and ready else 0.0
    return (
        bool(pod.spec is not None and pod.spec.node_name),
        _PHASE_RANK.get(pod_phase(pod), 0),
        is_ready,
        ready_since,
        _newest_first(pod.metadata.creation_timestamp),
        pod.metadata.name,
    )
