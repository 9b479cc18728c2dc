"""The JobSet operator's controller, after kubernetes-sigs/jobset
``pkg/controllers`` (``jobset_controller.go``, ``success_policy.go``,
``failure_policy.go``, ``startup_policy.go``, ``depends_on.go``,
``ttl_after_finished.go``): per JobSet, its child Jobs ``<jobset>-<rjob>-<i>``
(labelled and annotated as JobSet does, suspended with the JobSet, their pod
templates brought up to date with the JobSet's when it resumes, as Kueue's
admission needs), the replicated jobs' status, the success policy (All or
Any of the targeted jobs), the failure policy (fail, or recreate every Job up
to ``maxRestarts``; rules by failure reason, message and replicated job), the
in-order startup and ``dependsOn`` gates, and the TTL after it finished.

Not modelled: the headless Service (kuota has no DNS), volume claim
policies, exclusive placement, in-place restarts and the RestartJob actions
(their feature gates are off by default and the webhook refuses them)."""

from __future__ import annotations

import contextlib
import hashlib
import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

import msgspec

from kuota.api import k8s as kc
from kuota.api.jobset import v1alpha2 as v
from kuota.api.jobset.v1alpha2 import JobSet, ReplicatedJob, ReplicatedJobStatus
from kuota.api.meta import Condition, ObjectMeta
from kuota.cluster.controllers.controller_base import ClusterController
from kuota.cluster.podutil import JOB, controller_ref, is_deleting, owner_reference
from kuota.runtime.informer import Informer, key_of
from kuota.store import AlreadyExists, Conflict, NotFound, clone
from kuota.store.codec import from_wire, to_wire
from kuota.store.protocol import EventType
from kuota.store.resources import JOB_SET

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager

__all__ = ["JobSetController"]

COMPONENT: Final = "jobset"
_BY_JOBSET: Final = "jobset:owner"
_EXCLUSIVE: Final = frozenset({"StartupPolicyInProgress", "StartupPolicyCompleted"})


def _owner_uid(job: Any) -> list[str]:
    ref = controller_ref(job)
    return [ref.uid] if ref is not None and ref.kind == v.KIND else []


def _finished_type(job: kc.Job) -> str:
    for c in (job.status.conditions if job.status else None) or ():
        if c.type in ("Complete", "Failed") and c.status == "True":
            return c.type
    return ""


def _failure(job: kc.Job) -> kc.JobCondition | None:
    for c in (job.status.conditions if job.status else None) or ():
        if c.type == "Failed" and c.status == "True":
            return c
    return None


def _failed_at(job: kc.Job) -> datetime:
    c = _failure(job)
    t = c.last_transition_time if c is not None else None
    return t if t is not None else datetime.max.replace(tzinfo=UTC)


def _rjob_of(job: Any) -> str:
    return (job.metadata.labels or {}).get(v.REPLICATED_JOB_NAME_KEY, "")


class _Children:
    """``childJobs``: the JobSet's Jobs by bucket."""

    def __init__(self) -> None:
        self.active: list[kc.Job] = []
        self.successful: list[kc.Job] = []
        self.failed: list[kc.Job] = []
        self.previous: list[kc.Job] = []  # from an earlier restart: deleted


class _Status:
    """The status being written, with ``setCondition``'s rules."""

    def __init__(self, js: JobSet, now: datetime) -> None:
        self.st = clone(js.status) if js.status is not None else v.JobSetStatus()
        self.now = now
        self.events: list[tuple[str, str, str]] = []  # (type, reason, message)

    def condition(self, ctype: str, status: str, reason: str, message: str, event: str) -> None:
        """``updateCondition``: a type present changes in place (its
        transition time moves with its status); an absent one is added only
        when True; the two startup-policy conditions exclude each other."""
        conds = self.st.conditions if self.st.conditions is not None else []
        found = changed = False
        for i, c in enumerate(conds):
            if c.type == ctype:
                found = True
                if c.status != status or c.reason != reason or c.message != message:
                    at = self.now if c.status != status else c.last_transition_time
                    conds[i] = Condition(
                        type=ctype,
                        status=status,  # type: ignore[arg-type]
                        reason=reason,
                        message=message,
                        last_transition_time=at,
                    )
                    changed = True
            elif {c.type, ctype} == _EXCLUSIVE and c.status == "True" and status == "True":
                conds[i] = msgspec.structs.replace(c, status="False")
                changed = True
        if not found and status == "True":
            conds.append(
                Condition(
                    type=ctype,
                    status=status,  # type: ignore[arg-type]
                    reason=reason,
                    message=message,
                    last_transition_time=self.now,
                )
            )
            changed = True
        self.st.conditions = conds or None
        if changed:
            self.events.append((event, reason, message))

    def restarting_false(self, reason: str, message: str) -> None:
        self.condition("RestartingJobSet", "False", reason, message, "Normal")

    def completed(self) -> None:
        self.condition(
            "Completed", "True", "AllJobsCompleted", "jobset completed successfully", "Normal"
        )
        self.restarting_false("JobSetCompleted", "jobset completed successfully")
        self.st.terminal_state = "Completed"

    def failed(self, reason: str, message: str) -> None:
        self.condition("Failed", "True", reason, message, "Warning")
        self.restarting_false("JobSetFailed", "jobset failed")
        self.st.terminal_state = "Failed"


class JobSetController(ClusterController):
    """Reads JobSets and Jobs; writes child Jobs and JobSet status."""

    name = "jobset-controller"
    component = COMPONENT

    def __init__(self) -> None:
        super().__init__()
        self._sets: Informer | None = None
        self._jobs: Informer | None = None

    def setup(self, mgr: Manager) -> None:
        super().setup(mgr)
        self._sets = mgr.informer(JOB_SET)
        self._jobs = mgr.informer(JOB)
        self._jobs.add_index(_BY_JOBSET, _owner_uid)
        self._sets.on_change(self._on_set)
        self._jobs.on_change(self._on_job)

    def _on_set(self, etype: EventType, obj: Any, old: Any | None) -> None:
        if etype != "DELETED":
            self.mgr.enqueue(self.name, key_of(obj))

    def _on_job(self, etype: EventType, job: Any, old: Any | None) -> None:
        ref = controller_ref(job)
        if ref is not None and ref.kind == v.KIND:
            self.mgr.enqueue(self.name, f"{job.metadata.namespace}/{ref.name}")

    # ------------------------------------------------------------ reconcile
    def reconcile(self, key: str) -> timedelta | None:
        assert self._sets is not None
        js: JobSet | None = self._sets.get(key)
        if js is None or is_deleting(js):
            return None
        if js.spec.managed_by not in (None, v.CONTROLLER_NAME):
            return None  # another controller's (MultiKueue)
        children = self._children(js)
        status = _Status(js, self.mgr.clock.now())
        statuses = _replicated_statuses(js, children)
        if (status.st.replicated_jobs_status or []) != statuses:
            status.st.replicated_jobs_status = statuses
        if v.is_finished(js):
            self._delete(children.active)
            self._write(js, status)
            return self._ttl(js)
        self._delete(children.previous)
        suspended = bool(js.spec.suspend)
        if not suspended and _all_ready(js, statuses):
            status.restarting_false("JobsReady", "all jobs are ready")
        if children.failed:
            self._failure_policy(js, children, status)
            self._write(js, status)
            return None
        if children.successful and _succeeded(js, children.successful):
            status.completed()
            self._write(js, status)
            return None
        self._create_jobs(js, children, statuses, status)
        if suspended:
            self._suspend(children.active)
            status.condition("Suspended", "True", "SuspendedJobs", "jobset is suspended", "Normal")
            status.restarting_false("JobSetSuspended", "jobset is suspended")
        else:
            self._resume(js, children.active, statuses, status)
        self._write(js, status)
        return None

    def _children(self, js: JobSet) -> _Children:
        assert self._jobs is not None
        out = _Children()
        restarts = js.status.restarts if js.status is not None else 0
        for job in self._jobs.by_index(_BY_JOBSET, js.metadata.uid):
            attempt = (job.metadata.labels or {}).get(v.RESTARTS_KEY, "")
            if not attempt.isdigit() or int(attempt) < restarts:
                out.previous.append(job)
                continue
            kind = _finished_type(job)
            bucket = {"": out.active, "Failed": out.failed, "Complete": out.successful}[kind]
            bucket.append(job)
        return out

    # ------------------------------------------------------------ jobs
    def _create_jobs(
        self,
        js: JobSet,
        children: _Children,
        statuses: list[ReplicatedJobStatus],
        status: _Status,
    ) -> None:
        """``reconcileReplicatedJobs``: each replicated job's missing Jobs,
        in order, waiting where dependsOn or the InOrder startup policy say."""
        fp = js.spec.failure_policy
        blocking = fp is not None and fp.restart_strategy == "BlockingRecreate"
        existing = {
            j.metadata.name
            for j in (*children.active, *children.successful, *children.failed, *children.previous)
        }
        in_order = _in_order(js)
        suspended = bool(js.spec.suspend)
        replicas: dict[str, int] = {}
        for rjob in js.spec.replicated_jobs or ():
            replicas[rjob.name] = rjob.replicas
            if not _dependencies_reached(rjob, replicas, statuses):
                continue
            st = _find(statuses, rjob.name)
            if not suspended and in_order and st is not None and _all_started(rjob, st):
                continue
            if not (blocking and children.previous):
                for i in range(rjob.replicas):
                    name = v.job_name(js.metadata.name, rjob.name, i)
                    if name not in existing:
                        self._create(js, rjob, i)
            if not suspended and in_order:
                status.condition(
                    "StartupPolicyInProgress",
                    "True",
                    "InOrderStartupPolicyInProgress",
                    "in order startup policy is in progress",
                    "Normal",
                )
                return
        if not suspended and in_order:
            status.condition(
                "StartupPolicyCompleted",
                "True",
                "InOrderStartupPolicyCompleted",
                "in order startup policy has completed",
                "Normal",
            )

    def _create(self, js: JobSet, rjob: ReplicatedJob, index: int) -> None:
        job = construct_job(js, rjob, index)
        try:
            self.mgr.store.create(job)
        except AlreadyExists:
            return
        except Exception as err:  # refused (an admission rule): said as JobSet says it
            self.event(
                js,
                "Warning",
                "JobCreationFailed",
                f'job "{job.metadata.name}" creation failed with error: {err}',
            )

    def _delete(self, jobs: list[kc.Job]) -> None:
        for job in jobs:
            if job.metadata.deletion_timestamp is None:
                with contextlib.suppress(NotFound, Conflict):
                    self.mgr.store.delete(JOB, job.metadata.namespace, job.metadata.name)

    def _suspend(self, active: list[kc.Job]) -> None:
        for job in active:
            if not (job.spec is not None and job.spec.suspend):
                new = clone(job)
                assert new.spec is not None
                new.spec.suspend = True
                with contextlib.suppress(NotFound, Conflict):
                    self.mgr.store.update(new)

    def _resume(
        self,
        js: JobSet,
        active: list[kc.Job],
        statuses: list[ReplicatedJobStatus],
        status: _Status,
    ) -> None:
        """``resumeJobsIfNecessary``: suspended child Jobs take the JobSet's
        pod template labels, annotations, node selector, tolerations and
        scheduling gates (Kueue's admission wrote them there), then run."""
        by_rjob: dict[str, list[kc.Job]] = {}
        for job in active:
            by_rjob.setdefault(_rjob_of(job), []).append(job)
        replicas: dict[str, int] = {}
        in_order = _in_order(js)
        for rjob in js.spec.replicated_jobs or ():
            replicas[rjob.name] = rjob.replicas
            if not _dependencies_reached(rjob, replicas, statuses):
                continue
            st = _find(statuses, rjob.name)
            if in_order and st is not None and _all_started(rjob, st):
                continue
            for job in by_rjob.get(rjob.name, ()):
                if job.spec is not None and job.spec.suspend:
                    self._resume_job(job, rjob)
            if in_order:
                status.condition(
                    "StartupPolicyInProgress",
                    "True",
                    "InOrderStartupPolicyInProgress",
                    "in order startup policy is in progress",
                    "Normal",
                )
                return
        status.condition("Suspended", "False", "ResumeJobs", "jobset is resumed", "Normal")

    def _resume_job(self, job: kc.Job, rjob: ReplicatedJob) -> None:
        new = clone(job)
        assert new.spec is not None
        if new.status is not None and new.status.start_time is not None:
            # A started Job's template is immutable: startTime goes first.
            new.status.start_time = None
            try:
                new = clone(self.mgr.store.update_status(new))
            except (NotFound, Conflict):
                return
            assert new.spec is not None
        want = rjob.template.spec.template
        tmpl = new.spec.template
        tmpl.metadata.labels = {
            **(tmpl.metadata.labels or {}),
            **(want.metadata.labels or {}),
        } or None
        tmpl.metadata.annotations = {
            **(tmpl.metadata.annotations or {}),
            **(want.metadata.annotations or {}),
        } or None
        if tmpl.spec is not None and want.spec is not None:
            tmpl.spec.node_selector = {
                **(tmpl.spec.node_selector or {}),
                **(want.spec.node_selector or {}),
            } or None
            tols = list(tmpl.spec.tolerations or ())
            tols += [t for t in want.spec.tolerations or () if t not in tols]
            tmpl.spec.tolerations = tols or None
            gates = list(tmpl.spec.scheduling_gates or ())
            gates += [g for g in want.spec.scheduling_gates or () if g not in gates]
            tmpl.spec.scheduling_gates = gates or None
        new.spec.suspend = False
        with contextlib.suppress(NotFound, Conflict):
            self.mgr.store.update(new)

    # ------------------------------------------------------------ policies
    def _failure_policy(self, js: JobSet, children: _Children, status: _Status) -> None:
        fp = js.spec.failure_policy
        first = min(children.failed, key=_failed_at)
        if fp is None:
            status.failed(
                "FailedJobs",
                f"jobset failed due to one or more job failures (first failed job: "
                f"{first.metadata.name})",
            )
            return
        rule, job = _matching_rule(fp.rules or [], children.failed)
        action = rule.action if rule is not None else "RestartJobSet"
        job = job if job is not None else first
        name = job.metadata.name
        if action == "FailJobSet":
            status.failed(
                "FailJobSetFailurePolicyAction",
                f"applying FailJobSet failure policy action (first failed job: {name})",
            )
            return
        counted = action == "RestartJobSet"
        if counted and status.st.restarts_count_towards_max >= fp.max_restarts:
            status.failed(
                "ReachedMaxRestarts",
                f"jobset failed due to reaching max number of restarts (first failed job: {name})",
            )
            return
        reason = (
            "RestartJobSetFailurePolicyAction"
            if counted
            else "RestartJobSetAndIgnoreMaxRestartsFailurePolicyAction"
        )
        what = "RestartJobSet" if counted else "RestartJobSetAndIgnoreMaxRestarts"
        message = f"applying {what} failure policy action (first failed job: {name})"
        status.st.restarts += 1
        if counted:
            status.st.restarts_count_towards_max += 1
        why = f"FailurePolicy_{rule.name}" if rule is not None else "DefaultFailurePolicy"
        status.condition("RestartingJobSet", "True", why, message, "Warning")
        self.event(js, "Warning", reason, message)

    def _ttl(self, js: JobSet) -> timedelta | None:
        ttl = js.spec.ttl_seconds_after_finished
        if ttl is None:
            return None
        done = max(
            (
                c.last_transition_time
                for c in (js.status.conditions if js.status else None) or ()
                if c.type in ("Completed", "Failed")
                and c.status == "True"
                and c.last_transition_time
            ),
            default=None,
        )
        if done is None:
            return None
        expire = done + timedelta(seconds=ttl)
        now = self.mgr.clock.now()
        if now < expire:
            return expire - now
        with contextlib.suppress(NotFound):
            self.mgr.store.delete(JOB_SET, js.metadata.namespace, js.metadata.name)
        return None

    # ------------------------------------------------------------ status
    def _write(self, js: JobSet, status: _Status) -> None:
        if status.st == (js.status or v.JobSetStatus()):
            return
        try:
            self.mgr.store.update_status(msgspec.structs.replace(js, status=status.st))
        except (NotFound, Conflict):
            return  # a newer JobSet is on its way: reconciled again
        for etype, reason, message in status.events:
            self.event(js, etype, reason, message)


# ---------------------------------------------------------------- pure helpers
def _find(statuses: list[ReplicatedJobStatus], name: str) -> ReplicatedJobStatus | None:
    return next((s for s in statuses if s.name == name), None)


def _in_order(js: JobSet) -> bool:
    sp = js.spec.startup_policy
    return sp is not None and sp.startup_policy_order == "InOrder"


def _all_started(rjob: ReplicatedJob, st: ReplicatedJobStatus) -> bool:
    return rjob.replicas == st.failed + st.ready + st.succeeded


def _all_ready(js: JobSet, statuses: list[ReplicatedJobStatus]) -> bool:
    total = sum(r.replicas for r in js.spec.replicated_jobs or ())
    return total == sum(s.ready + s.succeeded for s in statuses)


def _dependencies_reached(
    rjob: ReplicatedJob, replicas: dict[str, int], statuses: list[ReplicatedJobStatus]
) -> bool:
    for dep in rjob.depends_on or ():
        st = _find(statuses, dep.name)
        if st is None:
            return False
        if dep.status == "Complete" and replicas.get(dep.name) != st.succeeded:
            return False
        if dep.status == "Ready" and replicas.get(dep.name) != st.failed + st.ready + st.succeeded:
            return False
    return True


def _succeeded(js: JobSet, successful: list[kc.Job]) -> bool:
    """``executeSuccessPolicy``: enough targeted Jobs completed."""
    sp = js.spec.success_policy
    targets = set(sp.target_replicated_jobs or ()) if sp is not None else set()

    def targeted(name: str) -> bool:
        return not targets or name in targets

    done = sum(1 for j in successful if targeted(_rjob_of(j)))
    if sp is not None and sp.operator == "Any":
        return done >= 1
    return done >= sum(r.replicas for r in js.spec.replicated_jobs or () if targeted(r.name))


def _matching_rule(
    rules: list[v.FailurePolicyRule], failed: list[kc.Job]
) -> tuple[v.FailurePolicyRule | None, kc.Job | None]:
    """``findFirstFailedPolicyRuleAndJob``: the first rule some failed Job
    matches (its earliest such Job)."""
    for rule in rules:
        match: kc.Job | None = None
        for job in failed:
            c = _failure(job)
            if c is None:
                continue
            if rule.on_job_failure_reasons and c.reason not in rule.on_job_failure_reasons:
                continue
            pats = rule.on_job_failure_message_patterns
            if pats and not any(_search(p, c.message or "") for p in pats):
                continue
            if rule.target_replicated_jobs and _rjob_of(job) not in rule.target_replicated_jobs:
                continue
            if match is None or _failed_at(job) < _failed_at(match):
                match = job
        if match is not None:
            return rule, match
    return None, None


def _search(pattern: str, text: str) -> bool:
    try:
        return re.search(pattern, text) is not None
    except re.error:
        return False  # (JobSet logs an invalid pattern and moves on)


def _replicated_statuses(js: JobSet, children: _Children) -> list[ReplicatedJobStatus]:
    """``calculateReplicatedJobStatuses``, in the spec's order."""
    counts = {r.name: [0, 0, 0, 0, 0] for r in js.spec.replicated_jobs or ()}
    for job in children.active:
        c = counts.get(_rjob_of(job))
        if c is None or job.spec is None:
            continue
        pods = job.spec.parallelism
        if job.spec.completions is not None:
            pods = min(pods, job.spec.completions)
        st = job.status
        if st is not None and st.succeeded + (st.ready or 0) >= pods:
            c[0] += 1
        if st is not None and st.active > 0:
            c[3] += 1
        if job.spec.suspend:
            c[4] += 1
    for job in children.successful:
        if (c := counts.get(_rjob_of(job))) is not None:
            c[1] += 1
    for job in children.failed:
        if (c := counts.get(_rjob_of(job))) is not None:
            c[2] += 1
    return [
        ReplicatedJobStatus(
            name=n, ready=c[0], succeeded=c[1], failed=c[2], active=c[3], suspended=c[4]
        )
        for n, c in counts.items()
    ]


def _index_among(js: JobSet, rjob_name: str, index: int, group: str | None = None) -> int:
    """A child Job's index counted over the replicated jobs before its own
    (``globalJobIndex``), or over those of its group only (``groupJobIndex``)."""
    before = 0
    for r in js.spec.replicated_jobs or ():
        if group is not None and r.group_name != group:
            continue
        if r.name == rjob_name:
            break
        before += r.replicas
    return before + index


def _marks(js: JobSet, rjob: ReplicatedJob, index: int) -> dict[str, str]:
    """``labelAndAnnotateObject``: what JobSet puts on a child Job and its pods,
    as labels and as annotations alike."""
    m = js.metadata
    name = v.job_name(m.name, rjob.name, index)
    rjobs = js.spec.replicated_jobs or []
    out = {
        v.JOBSET_NAME_KEY: m.name,
        v.JOBSET_UID_KEY: m.uid,
        v.REPLICATED_JOB_NAME_KEY: rjob.name,
        v.RESTARTS_KEY: str(js.status.restarts if js.status is not None else 0),
        v.REPLICATED_JOB_REPLICAS_KEY: str(rjob.replicas),
        v.GLOBAL_REPLICAS_KEY: str(sum(r.replicas for r in rjobs)),
        v.JOB_INDEX_KEY: str(index),
        v.JOB_KEY: hashlib.sha1(f"{m.namespace}/{name}".encode()).hexdigest(),
        v.JOB_GLOBAL_INDEX_KEY: str(_index_among(js, rjob.name, index)),
        v.GROUP_NAME_KEY: rjob.group_name,
        v.GROUP_REPLICAS_KEY: str(
            sum(r.replicas for r in rjobs if r.group_name == rjob.group_name)
        ),
        v.JOB_GROUP_INDEX_KEY: str(_index_among(js, rjob.name, index, rjob.group_name)),
    }
    c = js.spec.coordinator
    if c is not None:
        sub = _subdomain(js)
        out[v.COORDINATOR_KEY] = f"{m.name}-{c.replicated_job}-{c.job_index}-{c.pod_index}.{sub}"
    return out


def _subdomain(js: JobSet) -> str:
    net = js.spec.network
    return net.subdomain if net is not None and net.subdomain else js.metadata.name


def construct_job(js: JobSet, rjob: ReplicatedJob, index: int) -> kc.Job:
    """``constructJob``: a child Job of the replicated job's template, with
    the API server's Job defaults (those the CRD's copy of the schema left
    unset), suspended with the JobSet."""
    tmpl = rjob.template
    spec: kc.JobSpec = from_wire(to_wire(tmpl.spec), kc.JobSpec)
    marks = _marks(js, rjob, index)
    meta = ObjectMeta(
        name=v.job_name(js.metadata.name, rjob.name, index),
        namespace=js.metadata.namespace,
        labels={**(tmpl.metadata.labels or {}), **marks},
        annotations={**(tmpl.metadata.annotations or {}), **marks},
        owner_references=[owner_reference(js)],
    )
    pod = spec.template
    pod.metadata.labels = {**(pod.metadata.labels or {}), **marks}
    pod.metadata.annotations = {**(pod.metadata.annotations or {}), **marks}
    net = js.spec.network
    if net is not None and net.enable_dns_hostnames and pod.spec is not None:
        pod.spec.subdomain = _subdomain(js)
    spec.suspend = bool(js.spec.suspend)
    return kc.Job(api_version="batch/v1", kind="Job", metadata=meta, spec=spec)
