"""JobSet (``jobset.x-k8s.io/v1alpha2``): types, the CRD's defaults and rules,
the JobSet defaulting webhook and its validating webhook.

Types follow ``api/jobset/v1alpha2/jobset_types.go`` of kubernetes-sigs/jobset;
the webhook rules follow ``pkg/webhooks/jobset_webhook.go``. CRD markers become
struct defaults (a replicated job's ``replicas`` 1 and ``groupName``
``default``, a failure policy's ``restartStrategy`` Recreate); what the
defaulting webhook adds (success policy All, startup policy AnyOrder, Indexed
child Jobs whose pods restart OnFailure, DNS hostnames on, rule names) is
:func:`default_jobset`. A replicated job's Job template is the CRD's copy of
batch/v1's schema, without the API server's Job defaults: those apply when the
JobSet controller creates the child Jobs. Where the webhook returns a plain
error (Go's ``fmt.Errorf``), kuota names the field it is about.

Pure: no I/O.
"""

from __future__ import annotations

import operator
import re
from typing import Annotated, Any, Final, Literal

import msgspec

from kuota.api.base import LIST_ATOMIC, Meta, Object, Rule, cel, list_map
from kuota.api.errors import FieldError, invalid, too_long
from kuota.api.k8s.batch import Int32, JobSpec
from kuota.api.meta import Conditions, ObjectMeta
from kuota.api.names import is_dns1035_label, is_dns1123_subdomain

__all__ = [
    "API_VERSION",
    "GROUP",
    "KIND",
    "FailurePolicy",
    "FailurePolicyRule",
    "JobSet",
    "JobSetSpec",
    "JobSetStatus",
    "ReplicatedJob",
    "ReplicatedJobStatus",
    "default_jobset",
    "job_name",
    "pods_per_job",
    "validate_jobset",
    "validate_jobset_update",
]

GROUP: Final = "jobset.x-k8s.io"
API_VERSION: Final = f"{GROUP}/v1alpha2"
KIND: Final = "JobSet"
CONTROLLER_NAME: Final = "jobset.sigs.k8s.io/jobset-controller"

# Labels and annotations the JobSet controller writes on child Jobs and pods.
_P = "jobset.sigs.k8s.io/"
JOBSET_NAME_KEY: Final = _P + "jobset-name"
JOBSET_UID_KEY: Final = _P + "jobset-uid"
REPLICATED_JOB_REPLICAS_KEY: Final = _P + "replicatedjob-replicas"
GLOBAL_REPLICAS_KEY: Final = _P + "global-replicas"
REPLICATED_JOB_NAME_KEY: Final = _P + "replicatedjob-name"
JOB_INDEX_KEY: Final = _P + "job-index"
JOB_GLOBAL_INDEX_KEY: Final = _P + "job-global-index"
JOB_KEY: Final = _P + "job-key"
RESTARTS_KEY: Final = _P + "restart-attempt"
GROUP_NAME_KEY: Final = _P + "group-name"
GROUP_REPLICAS_KEY: Final = _P + "group-replicas"
JOB_GROUP_INDEX_KEY: Final = _P + "job-group-index"
COORDINATOR_KEY: Final = _P + "coordinator"

MAX_INT32: Final = 2**31 - 1
_MAX_MANAGED_BY: Final = 63
_DNS1035_TOO_LONG: Final = "must be no more than 63 characters"
_GROUP_NAME_TOO_LONG: Final = (
    ".spec.replicatedJob[].groupName is too long, must be less than 63 characters"
)
_JOB_NAME_TOO_LONG: Final = (
    "JobSet name is too long, job names generated for this JobSet will exceed 63 characters"
)
_POD_NAME_TOO_LONG: Final = (
    "JobSet name is too long, pod names generated for this JobSet will exceed 63 characters"
)
_SUBDOMAIN_TOO_LONG: Final = ".spec.network.subdomain is too long, must be less than 63 characters"
_RULE_NAME: Final = re.compile(r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")
# batch/v1's Job failure reasons a failure policy rule may match on.
JOB_FAILURE_REASONS: Final = (
    "BackoffLimitExceeded",
    "DeadlineExceeded",
    "FailedIndexes",
    "MaxFailedIndexesExceeded",
    "PodFailurePolicy",
)

FailurePolicyAction = Literal[
    "FailJobSet",
    "RestartJobSet",
    "RestartJobSetAndIgnoreMaxRestarts",
    "RestartJob",
    "RestartJobAndIgnoreMaxRestarts",
]
_IMMUTABLE = cel(
    Rule("self == oldSelf", "Value is immutable", lambda _: True, transition=operator.eq)
)


class ReplicatedJobSpec(JobSpec):
    """The CRD's copy of batch/v1 JobSpec: no API server defaults (the
    webhook defaults ``completionMode``; the API server defaults the rest
    when the child Jobs are created)."""

    parallelism: Int32 | None = None  # type: ignore[assignment]
    backoff_limit: Int32 | None = None  # type: ignore[assignment]
    completion_mode: Literal["NonIndexed", "Indexed"] | None = None  # type: ignore[assignment]


class ReplicatedJobTemplate(Object, kw_only=True):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ReplicatedJobSpec


class DependsOn(Object):
    name: str
    status: Literal["Ready", "Complete"]


class ReplicatedJob(Object):
    name: str
    template: ReplicatedJobTemplate
    group_name: str = "default"  # CRD default
    replicas: Annotated[int, Meta(ge=0, le=MAX_INT32)] = 1  # CRD default
    depends_on: (
        Annotated[list[DependsOn], Meta(max_length=5), list_map("name"), _IMMUTABLE] | None
    ) = None


class Network(Object):
    enable_dns_hostnames: bool | None = msgspec.field(default=None, name="enableDNSHostnames")
    subdomain: str = ""
    publish_not_ready_addresses: bool | None = None


class SuccessPolicy(Object):
    operator: Literal["All", "Any"]
    target_replicated_jobs: Annotated[list[str], LIST_ATOMIC] | None = None


class FailurePolicyRule(Object, kw_only=True):
    name: str = ""  # the webhook names a nameless rule
    action: FailurePolicyAction
    on_job_failure_reasons: Annotated[list[str], LIST_ATOMIC] | None = None
    on_job_failure_message_patterns: Annotated[list[str], LIST_ATOMIC] | None = None
    target_replicated_jobs: Annotated[list[str], LIST_ATOMIC] | None = None


class FailurePolicy(Object):
    max_restarts: Annotated[int, Meta(ge=0, le=MAX_INT32)] = 0
    restart_strategy: Literal["Recreate", "BlockingRecreate", "InPlaceRestart"] = "Recreate"
    rules: Annotated[list[FailurePolicyRule], LIST_ATOMIC] | None = None


class StartupPolicy(Object):
    startup_policy_order: Literal["AnyOrder", "InOrder"]


class Coordinator(Object):
    replicated_job: str
    job_index: int = 0
    pod_index: int = 0


def _no_startup_and_depends_on(spec: JobSetSpec) -> bool:
    in_order = spec.startup_policy is not None and (
        spec.startup_policy.startup_policy_order == "InOrder"
    )
    return not (in_order and any(r.depends_on is not None for r in spec.replicated_jobs or ()))


_SPEC_RULES = cel(
    Rule(
        "!(has(self.startupPolicy) && self.startupPolicy.startupPolicyOrder == 'InOrder' && "
        "self.replicatedJobs.exists(x, has(x.dependsOn)))",
        "StartupPolicy and DependsOn APIs are mutually exclusive",
        _no_startup_and_depends_on,
    )
)


class JobSetSpec(Object):
    replicated_jobs: Annotated[list[ReplicatedJob], list_map("name")] | None = None
    network: Annotated[Network, _IMMUTABLE] | None = None
    success_policy: Annotated[SuccessPolicy, _IMMUTABLE] | None = None
    failure_policy: Annotated[FailurePolicy, _IMMUTABLE] | None = None
    startup_policy: Annotated[StartupPolicy, _IMMUTABLE] | None = None
    suspend: bool | None = None
    coordinator: Coordinator | None = None
    managed_by: str | None = None
    ttl_seconds_after_finished: Annotated[int, Meta(ge=0, le=MAX_INT32)] | None = None
    # Passed through, not interpreted (kuota models no volumes).
    volume_claim_policies: Annotated[list[dict[str, Any]], LIST_ATOMIC, _IMMUTABLE] | None = None


class ReplicatedJobStatus(Object):
    name: str
    # Non-pointer int32 counters in Go, without omitempty: always shown.
    ready: int = 0
    succeeded: int = 0
    failed: int = 0
    active: int = 0
    suspended: int = 0


class JobSetStatus(Object):
    conditions: Conditions | None = None
    restarts: int = 0
    restarts_count_towards_max: int = 0
    terminal_state: str = ""
    replicated_jobs_status: Annotated[list[ReplicatedJobStatus], list_map("name")] | None = None


class JobSet(Object):
    api_version: str = API_VERSION
    kind: str = KIND
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: Annotated[JobSetSpec, _SPEC_RULES] = msgspec.field(default_factory=JobSetSpec)
    status: JobSetStatus | None = None


# ------------------------------------------------------------------- naming
def job_name(jobset: str, rjob: str, index: int) -> str:
    """``placement.GenJobName``: a child Job's name."""
    return f"{jobset}-{rjob}-{index}"


def pods_per_job(rjob: ReplicatedJob) -> int:
    """``PodsCountPerReplica`` (Kueue): the pods one child Job runs at once,
    min(parallelism, completions), parallelism defaulting to 1."""
    spec = rjob.template.spec
    p = spec.parallelism if spec.parallelism is not None else 1
    return min(p, spec.completions) if spec.completions is not None else p


# ------------------------------------------------------------------- defaulting
def default_jobset(js: JobSet) -> JobSet:
    """The JobSet defaulting webhook (on create), in place; returns ``js``."""
    spec = js.spec
    if spec.success_policy is None:
        spec.success_policy = SuccessPolicy(operator="All")
    if spec.startup_policy is None:
        spec.startup_policy = StartupPolicy(startup_policy_order="AnyOrder")
    for rjob in spec.replicated_jobs or ():
        jspec = rjob.template.spec
        if jspec.completion_mode is None:
            jspec.completion_mode = "Indexed"
        pod = jspec.template.spec
        if pod is not None and not pod.restart_policy:
            pod.restart_policy = "OnFailure"
    if spec.network is None:
        spec.network = Network()
    if spec.network.enable_dns_hostnames is None:
        spec.network.enable_dns_hostnames = True
    if spec.network.publish_not_ready_addresses is None:
        spec.network.publish_not_ready_addresses = True
    if spec.failure_policy is not None:
        for i, rule in enumerate(spec.failure_policy.rules or ()):
            if not rule.name:
                rule.name = f"failurePolicyRule{i}"
    return js


# ------------------------------------------------------------------- validation
def _dns1035(path: str, value: str, too_long_msg: str) -> list[FieldError]:
    return [
        invalid(path, value, too_long_msg if _DNS1035_TOO_LONG in m else m)
        for m in is_dns1035_label(value)
    ]


def _name_for_validation(js: JobSet) -> str:
    """``getJobSetNameForValidation``: the name, or one generated from
    generateName (its longest form: the base cut to 58 and 5 characters)."""
    m = js.metadata
    if m.name:
        return m.name
    return m.generate_name[:58] + "xxxxx" if m.generate_name else ""


def validate_jobset(js: JobSet) -> list[FieldError]:
    """The JobSet validating webhook on create (``ValidateCreate``), on a
    defaulted object, InPlaceRestart and RestartJob gates off (their
    default)."""
    spec = js.spec
    errs: list[FieldError] = []
    name = _name_for_validation(js)
    rjobs = spec.replicated_jobs or []
    fp = spec.failure_policy
    if fp is not None and fp.restart_strategy == "InPlaceRestart":
        errs.append(
            invalid(
                "spec.failurePolicy.restartStrategy",
                fp.restart_strategy,
                "InPlaceRestart restart strategy cannot be set when InPlaceRestart feature gate "
                "is disabled",
            )
        )
    if rjobs and rjobs[0].depends_on is not None:
        errs.append(
            invalid(
                "spec.replicatedJobs[0].dependsOn",
                [d.name for d in rjobs[0].depends_on],
                "DependsOn can't be set for the first ReplicatedJob",
            )
        )
    net = spec.network
    if net is not None and net.subdomain:
        path = "spec.network.subdomain"
        errs += [invalid(path, net.subdomain, m) for m in is_dns1123_subdomain(net.subdomain)]
        errs += _dns1035(path, net.subdomain, _SUBDOMAIN_TOO_LONG)
    if spec.managed_by is not None:
        errs += _managed_by_errors(spec.managed_by)
    names: set[str] = set()
    for i, rjob in enumerate(rjobs):
        path = f"spec.replicatedJobs[{i}]"
        names.add(rjob.name)
        jspec = rjob.template.spec
        parallelism = jspec.parallelism if jspec.parallelism is not None else 1
        if parallelism * rjob.replicas > MAX_INT32:
            errs.append(
                invalid(
                    f"{path}.replicas",
                    rjob.replicas,
                    f"the product of replicas and parallelism must not exceed {MAX_INT32} for "
                    f"replicatedJob '{rjob.name}'",
                )
            )
        errs += _dns1035(f"{path}.groupName", rjob.group_name, _GROUP_NAME_TOO_LONG)
        longest_job = job_name(name, rjob.name, rjob.replicas - 1)
        errs += _dns1035(f"{path}.name", longest_job, _JOB_NAME_TOO_LONG)
        if jspec.completion_mode == "Indexed" and jspec.completions is not None:
            pod = f"{name}-{rjob.name}-{rjob.replicas - 1}-{jspec.completions - 1}-abcde"
            errs += [
                invalid(
                    f"{path}.name", longest_job, _POD_NAME_TOO_LONG if _DNS1035_TOO_LONG in m else m
                )
                for m in is_dns1035_label(pod)
            ]
        for j, dep in enumerate(rjob.depends_on or ()):
            if dep.name not in names:
                errs.append(
                    invalid(
                        f"{path}.dependsOn[{j}].name",
                        dep.name,
                        f"replicatedJob: {rjob.name} cannot depend on replicatedJob: {dep.name}",
                    )
                )
    sp = spec.success_policy
    for j, target in enumerate((sp.target_replicated_jobs if sp else None) or ()):
        if target not in names:
            errs.append(
                invalid(
                    f"spec.successPolicy.targetReplicatedJobs[{j}]",
                    target,
                    f"invalid replicatedJob name '{target}' does not appear in .spec.ReplicatedJobs",
                )
            )
    if fp is not None:
        errs += _failure_policy_errors(fp, names)
    if spec.coordinator is not None:
        errs += _coordinator_errors(spec.coordinator, rjobs)
    return errs


def _managed_by_errors(value: str) -> list[FieldError]:
    path = "spec.managedBy"
    host, sep, rest = value.partition("/")
    if not sep or not host or not rest:
        errs = [invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    else:
        errs = [invalid(path, host, m) for m in is_dns1123_subdomain(host)]
    if len(value) > _MAX_MANAGED_BY:
        errs.append(too_long(path, _MAX_MANAGED_BY))
    return errs


def _failure_policy_errors(fp: FailurePolicy, names: set[str]) -> list[FieldError]:
    errs: list[FieldError] = []
    rules = fp.rules or []
    for i, rule in enumerate(rules):
        path = f"spec.failurePolicy.rules[{i}]"
        if rule.action in ("RestartJob", "RestartJobAndIgnoreMaxRestarts"):
            errs.append(
                invalid(
                    f"{path}.action",
                    rule.action,
                    "RestartJob and RestartJobAndIgnoreMaxRestarts failure policy actions are not "
                    "allowed when RestartJob feature gate is disabled",
                )
            )
            return errs  # (the webhook stops here)
    seen: dict[str, list[int]] = {}
    for i, rule in enumerate(rules):
        path = f"spec.failurePolicy.rules[{i}]"
        n = len(rule.name)
        if n < 1 or n > 128:
            errs.append(
                invalid(
                    f"{path}.name",
                    rule.name,
                    f"invalid failure policy rule name of length {n}, the rule name must be at "
                    "least 1 characters long and at most 128 characters long",
                )
            )
        seen.setdefault(rule.name, []).append(i)
        if not _RULE_NAME.match(rule.name):
            errs.append(
                invalid(
                    f"{path}.name",
                    rule.name,
                    f"invalid failure policy rule name '{rule.name}', a failure policy rule name "
                    "must start with an alphabetic character, optionally followed by a string of "
                    "alphanumeric characters or '_,:', and must end with an alphanumeric "
                    "character or '_'",
                )
            )
        for j, target in enumerate(rule.target_replicated_jobs or ()):
            if target not in names:
                errs.append(
                    invalid(
                        f"{path}.targetReplicatedJobs[{j}]",
                        target,
                        f"invalid replicatedJob name '{target}' in failure policy does not appear "
                        "in .spec.ReplicatedJobs",
                    )
                )
        for j, reason in enumerate(rule.on_job_failure_reasons or ()):
            if reason not in JOB_FAILURE_REASONS:
                errs.append(
                    invalid(
                        f"{path}.onJobFailureReasons[{j}]",
                        reason,
                        f"invalid job failure reason '{reason}' in failure policy is not a "
                        "recognized job failure reason",
                    )
                )
    for rule_name, where in seen.items():
        if len(where) > 1:
            errs.append(
                invalid(
                    f"spec.failurePolicy.rules[{where[1]}].name",
                    rule_name,
                    f"rule names are not unique, rules with indices {where} all have the same "
                    f"name '{rule_name}'",
                )
            )
    return errs


def _coordinator_errors(c: Coordinator, rjobs: list[ReplicatedJob]) -> list[FieldError]:
    """``validateCoordinator``: the coordinator names a pod that exists."""
    path = "spec.coordinator"
    rjob = next((r for r in rjobs if r.name == c.replicated_job), None)
    if rjob is None:
        return [
            invalid(
                f"{path}.replicatedJob",
                c.replicated_job,
                f"coordinator replicatedJob {c.replicated_job} does not exist",
            )
        ]
    if c.job_index < 0 or c.job_index >= rjob.replicas:
        return [
            invalid(
                f"{path}.jobIndex",
                c.job_index,
                f"coordinator job index {c.job_index} is invalid for replicatedJob "
                f"{c.replicated_job}",
            )
        ]
    if c.pod_index < 0 or c.pod_index >= pods_per_job(rjob):
        return [
            invalid(
                f"{path}.podIndex",
                c.pod_index,
                f"coordinator pod index {c.pod_index} is invalid for replicatedJob "
                f"{c.replicated_job} job index {c.job_index}",
            )
        ]
    return []


def validate_jobset_update(new: JobSet, old: JobSet) -> list[FieldError]:
    """``ValidateUpdate``: replicatedJobs and managedBy are immutable, but
    for what Kueue sets in the pod templates of a suspended JobSet (labels,
    annotations, nodeSelector, tolerations, scheduling gates) — or of one
    being suspended."""
    errs: list[FieldError] = []
    suspended = bool(old.spec.suspend) or bool(new.spec.suspend)
    olds = {r.name: r for r in old.spec.replicated_jobs or ()}
    munged = []
    for rjob in new.spec.replicated_jobs or ():
        before = olds.get(rjob.name)
        if suspended and before is not None:
            rjob = msgspec.structs.replace(rjob)
            rjob.template = msgspec.structs.replace(rjob.template)
            rjob.template.spec = msgspec.structs.replace(rjob.template.spec)
            pod, old_pod = rjob.template.spec.template, before.template.spec.template
            pod = msgspec.structs.replace(pod)
            pod.metadata = msgspec.structs.replace(
                pod.metadata,
                labels=old_pod.metadata.labels,
                annotations=old_pod.metadata.annotations,
            )
            if pod.spec is not None and old_pod.spec is not None:
                pod.spec = msgspec.structs.replace(
                    pod.spec,
                    node_selector=old_pod.spec.node_selector,
                    tolerations=old_pod.spec.tolerations,
                    scheduling_gates=old_pod.spec.scheduling_gates,
                )
            rjob.template.spec.template = pod
        munged.append(rjob)
    if munged != list(old.spec.replicated_jobs or ()):
        names = [r.name for r in new.spec.replicated_jobs or ()]
        errs.append(invalid("spec.replicatedJobs", names, "field is immutable"))
    if new.spec.managed_by != old.spec.managed_by:
        errs.append(invalid("spec.managedBy", new.spec.managed_by, "field is immutable"))
    return errs


def is_finished(js: JobSet) -> bool:
    """``jobSetFinished``: Completed or Failed."""
    st = js.status
    return st is not None and any(
        c.type in ("Completed", "Failed") and c.status == "True" for c in st.conditions or ()
    )
