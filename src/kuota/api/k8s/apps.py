"""apps/v1 Deployment, ReplicaSet, StatefulSet, ControllerRevision and DaemonSet
(``k8s.io/api/apps/v1``).

Every JSON field of the Go types is declared, so the strict decoder refuses
only fields Kubernetes itself does not know. The API server's defaults
(``pkg/apis/apps/v1/defaults.go``) are the fields' defaults here, so an object
built in Python, read from YAML or copied by the store carries them alike: a
nested strategy is filled in ``__post_init__``, which msgspec also runs after
decoding. ``volumeClaimTemplates`` and a StatefulSet's conditions are carried
untouched: the embedded cluster has no volumes.

Validation follows ``pkg/apis/apps/validation``: on create, and the update
rules (immutable selectors, a StatefulSet's frozen spec fields) through
:func:`validate_update`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any

import msgspec

from kuota.api import names
from kuota.api.base import Object, list_map
from kuota.api.base import preserve_unknown as _pu
from kuota.api.errors import child, forbidden, invalid, not_supported, required
from kuota.api.k8s.corev1 import PodTemplateSpec
from kuota.api.k8s.validation.objectmeta import (
    IS_NEGATIVE,
    Errors,
    as_builtins,
    nonnegative,
    validate_label_selector,
    validate_object_meta,
)
from kuota.api.k8s.validation.podspec import validate_pod_template_spec
from kuota.api.meta import ConditionStatus, LabelSelector, ObjectMeta, selector_matches

# Go's int32: a larger number is refused as kube-apiserver's decoder refuses it.
Int32 = Annotated[int, msgspec.Meta(ge=-(2**31), le=2**31 - 1)]

__all__ = [
    "APPS_KINDS",
    "CONTROLLER_REVISION_HASH",
    "DEPLOYMENT_REVISION",
    "POD_INDEX",
    "POD_TEMPLATE_HASH",
    "STATEFULSET_POD_NAME",
    "ControllerRevision",
    "DaemonSet",
    "DaemonSetSpec",
    "DaemonSetStatus",
    "Deployment",
    "DeploymentCondition",
    "DeploymentSpec",
    "DeploymentStatus",
    "DeploymentStrategy",
    "IntOrString",
    "ReplicaSet",
    "ReplicaSetCondition",
    "ReplicaSetSpec",
    "ReplicaSetStatus",
    "RollingUpdateDeployment",
    "RollingUpdateStatefulSetStrategy",
    "StatefulSet",
    "StatefulSetOrdinals",
    "StatefulSetPersistentVolumeClaimRetentionPolicy",
    "StatefulSetSpec",
    "StatefulSetStatus",
    "StatefulSetUpdateStrategy",
]

AnyList = Annotated[list[Any], _pu()]
AnyObject = Annotated[dict[str, Any], _pu()]
# intstr.IntOrString: 3 or "25%".
IntOrString = int | str

# Labels and annotations the apps controllers write (k8s.io/api/apps/v1).
POD_TEMPLATE_HASH = "pod-template-hash"
DEPLOYMENT_REVISION = "deployment.kubernetes.io/revision"
CONTROLLER_REVISION_HASH = "controller-revision-hash"
STATEFULSET_POD_NAME = "statefulset.kubernetes.io/pod-name"
POD_INDEX = "apps.kubernetes.io/pod-index"


# -------------------------------------------------------------------- ReplicaSet
class ReplicaSetSpec(Object):
    selector: LabelSelector
    replicas: Int32 = 1  # API default
    min_ready_seconds: Int32 = 0
    # Not a pointer in Go: absent is an empty template (which no selector matches).
    template: PodTemplateSpec = msgspec.field(default_factory=PodTemplateSpec)


class ReplicaSetCondition(Object):
    type: str  # ReplicaFailure
    status: ConditionStatus
    last_transition_time: datetime | None = None
    reason: str | None = None
    message: str | None = None


class ReplicaSetStatus(Object):
    replicas: Int32 = 0  # non-pointer int32 in Go: absent means 0
    fully_labeled_replicas: Int32 | None = None
    ready_replicas: Int32 | None = None
    available_replicas: Int32 | None = None
    terminating_replicas: Int32 | None = None
    observed_generation: int | None = None
    conditions: Annotated[list[ReplicaSetCondition], list_map("type")] | None = None


class ReplicaSet(Object):
    api_version: str
    kind: str
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ReplicaSetSpec | None = None
    status: ReplicaSetStatus | None = None


# -------------------------------------------------------------------- Deployment
class RollingUpdateDeployment(Object):
    # API defaults: 25% each (SetDefaults_Deployment).
    max_unavailable: IntOrString = "25%"
    max_surge: IntOrString = "25%"


class DeploymentStrategy(Object):
    type: str = "RollingUpdate"  # or Recreate; checked in code, as in Go
    rolling_update: RollingUpdateDeployment | None = None

    def __post_init__(self) -> None:
        if self.type == "RollingUpdate" and self.rolling_update is None:
            self.rolling_update = RollingUpdateDeployment()


class DeploymentSpec(Object):
    selector: LabelSelector
    template: PodTemplateSpec
    replicas: Int32 = 1  # API defaults from here on
    strategy: DeploymentStrategy = msgspec.field(default_factory=DeploymentStrategy)
    min_ready_seconds: Int32 = 0
    revision_history_limit: Int32 = 10
    paused: bool | None = None
    progress_deadline_seconds: Int32 = 600


class DeploymentCondition(Object):
    type: str  # Available, Progressing, ReplicaFailure
    status: ConditionStatus
    last_update_time: datetime | None = None
    last_transition_time: datetime | None = None
    reason: str | None = None
    message: str | None = None


class DeploymentStatus(Object):
    observed_generation: int | None = None
    replicas: Int32 | None = None
    updated_replicas: Int32 | None = None
    ready_replicas: Int32 | None = None
    available_replicas: Int32 | None = None
    unavailable_replicas: Int32 | None = None
    terminating_replicas: Int32 | None = None
    conditions: Annotated[list[DeploymentCondition], list_map("type")] | None = None
    collision_count: Int32 | None = None


class Deployment(Object):
    api_version: str
    kind: str
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: DeploymentSpec | None = None
    status: DeploymentStatus | None = None


# ------------------------------------------------------------------- StatefulSet
class RollingUpdateStatefulSetStrategy(Object):
    partition: Int32 = 0  # API default
    max_unavailable: IntOrString | None = None


class StatefulSetUpdateStrategy(Object):
    type: str = "RollingUpdate"  # or OnDelete; checked in code, as in Go
    rolling_update: RollingUpdateStatefulSetStrategy | None = None

    def __post_init__(self) -> None:
        if self.type == "RollingUpdate" and self.rolling_update is None:
            self.rolling_update = RollingUpdateStatefulSetStrategy()


class StatefulSetPersistentVolumeClaimRetentionPolicy(Object):
    when_deleted: str = "Retain"  # API defaults; Retain or Delete
    when_scaled: str = "Retain"


class StatefulSetOrdinals(Object):
    start: Int32 = 0


class StatefulSetSpec(Object):
    selector: LabelSelector
    template: PodTemplateSpec
    replicas: Int32 = 1  # API defaults from here on
    service_name: str | None = None
    pod_management_policy: str = "OrderedReady"  # or Parallel; checked in code
    update_strategy: StatefulSetUpdateStrategy = msgspec.field(
        default_factory=StatefulSetUpdateStrategy
    )
    revision_history_limit: Int32 = 10
    min_ready_seconds: Int32 = 0
    volume_claim_templates: AnyList | None = None
    persistent_volume_claim_retention_policy: StatefulSetPersistentVolumeClaimRetentionPolicy = (
        msgspec.field(default_factory=StatefulSetPersistentVolumeClaimRetentionPolicy)
    )
    ordinals: StatefulSetOrdinals | None = None


class StatefulSetStatus(Object):
    replicas: Int32 = 0  # non-pointer int32 in Go: absent means 0
    observed_generation: int | None = None
    ready_replicas: Int32 | None = None
    current_replicas: Int32 | None = None
    updated_replicas: Int32 | None = None
    current_revision: str | None = None
    update_revision: str | None = None
    collision_count: Int32 | None = None
    conditions: AnyList | None = None
    available_replicas: Int32 | None = None


class StatefulSet(Object):
    api_version: str
    kind: str
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: StatefulSetSpec | None = None
    status: StatefulSetStatus | None = None


# ------------------------------------------------------------ ControllerRevision
class ControllerRevision(Object):
    """An immutable snapshot of a controller's state (a StatefulSet's pod
    template): ``data`` is the patch that restores it, ``revision`` its order."""

    api_version: str
    kind: str
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    data: AnyObject | None = None  # runtime.RawExtension
    revision: int = 0


# ---------------------------------------------------------------------- DaemonSet
class DaemonSetSpec(Object):
    selector: LabelSelector
    template: PodTemplateSpec
    update_strategy: AnyObject | None = None  # rolling updates are not modelled
    min_ready_seconds: Int32 | None = None
    revision_history_limit: Int32 | None = None


class DaemonSetStatus(Object):
    # Non-pointer int32 counters in Go: absent means 0.
    current_number_scheduled: Int32 = 0
    number_misscheduled: Int32 = 0
    desired_number_scheduled: Int32 = 0
    number_ready: Int32 = 0
    observed_generation: int | None = None
    updated_number_scheduled: Int32 | None = None
    number_available: Int32 | None = None
    number_unavailable: Int32 | None = None
    collision_count: Int32 | None = None
    conditions: AnyList | None = None


class DaemonSet(Object):
    api_version: str
    kind: str
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: DaemonSetSpec | None = None
    status: DaemonSetStatus | None = None


# The kinds the API server admits with the apps rules below, on create and update
# (a DaemonSet is checked on create only, as a step of a world).
APPS_KINDS: dict[tuple[str, str], type] = {
    ("apps/v1", "ReplicaSet"): ReplicaSet,
    ("apps/v1", "Deployment"): Deployment,
    ("apps/v1", "StatefulSet"): StatefulSet,
    ("apps/v1", "ControllerRevision"): ControllerRevision,
}


# -------------------------------------------------------------------- validation
_PERCENT = re.compile(r"^[0-9]+%$")
_PERCENT_MSG = (
    "a valid percent string must be a numeric string followed by an ending '%' "
    "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
)
_IMMUTABLE = "field is immutable"
# ValidateStatefulSetUpdate: the spec fields an update may change.
STATEFULSET_MUTABLE = (
    "replicas",
    "ordinals",
    "template",
    "update_strategy",
    "revision_history_limit",
    "persistent_volume_claim_retention_policy",
    "min_ready_seconds",
)
_STATEFULSET_FORBIDDEN = (
    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
    "'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and "
    "'minReadySeconds' are forbidden"
)


def _percent(value: IntOrString) -> int | None:
    """The percentage a valid percent string gives, else None."""
    if isinstance(value, str) and _PERCENT.match(value):
        return int(value[:-1])
    return None


def _int_or_percent_value(value: IntOrString) -> int:
    """``getIntOrPercentValue``: a percent string's number, an int itself
    (any other string counts as 0, as ``IntValue`` parses it)."""
    pct = _percent(value)
    if pct is not None:
        return pct
    return value if isinstance(value, int) else 0


def _positive_int_or_percent(value: IntOrString, path: str) -> Errors:
    """``ValidatePositiveIntOrPercent`` and ``IsNotMoreThan100Percent``."""
    if isinstance(value, str):
        pct = _percent(value)
        if pct is None:
            return [invalid(path, value, _PERCENT_MSG)]
        return [invalid(path, value, "must not be greater than 100%")] if pct > 100 else []
    return _nonnegative(value, path)


def _nonnegative(value: int, path: str) -> Errors:
    return [invalid(path, value, IS_NEGATIVE)] if value < 0 else []


def _validate_selector(sel: LabelSelector | None, kind: str, path: str) -> Errors:
    if sel is None:
        return [required(path, "")]
    errs = validate_label_selector(sel, path)
    if not (sel.match_labels or sel.match_expressions):
        msg = f"empty selector is invalid for {kind}"
        errs.append(invalid(path, msgspec.to_builtins(sel), msg))
    return errs


def _validate_template(
    tmpl: PodTemplateSpec, sel: LabelSelector | None, kind: str, path: str
) -> Errors:
    """``ValidatePodTemplateSpecForReplicaSet`` (and for StatefulSet, which
    Kubernetes checks the pod spec of only when its pods are created: kuota
    checks it here, so a bad template is an error of the manifest)."""
    errs: Errors = []
    selective = sel is not None and (sel.match_labels or sel.match_expressions)
    if selective and not selector_matches(sel, tmpl.metadata.labels):
        errs.append(
            invalid(
                child(child(path, "metadata"), "labels"),
                dict(tmpl.metadata.labels or {}),
                "`selector` does not match template `labels`",
            )
        )
    errs += validate_pod_template_spec(tmpl, path)
    pod = tmpl.spec
    rp = pod.restart_policy if pod is not None else None
    if rp not in (None, "Always"):  # absent: defaulted to Always
        errs.append(not_supported(child(path, "spec.restartPolicy"), rp, ["Always"]))
    if pod is not None and pod.active_deadline_seconds is not None:
        errs.append(
            forbidden(
                child(path, "spec.activeDeadlineSeconds"),
                f"activeDeadlineSeconds in {kind} is not Supported",
            )
        )
    return errs


def _validate_replica_set_spec(spec: ReplicaSetSpec) -> Errors:
    errs = _nonnegative(spec.replicas, "spec.replicas")
    errs += _nonnegative(spec.min_ready_seconds, "spec.minReadySeconds")
    # Kubernetes names Deployments in a ReplicaSet's message too.
    errs += _validate_selector(spec.selector, "deployment", "spec.selector")
    errs += _validate_template(spec.template, spec.selector, "ReplicaSet", "spec.template")
    return errs


def validate_replica_set(rs: ReplicaSet) -> Errors:
    """``ValidateReplicaSet`` on create."""
    errs = validate_object_meta(rs.metadata, True, names.is_dns1123_subdomain)
    if rs.spec is None:
        return [*errs, required("spec", "")]
    return errs + _validate_replica_set_spec(rs.spec)


def _validate_strategy(strategy: DeploymentStrategy, path: str) -> Errors:
    """``ValidateDeploymentStrategy``."""
    ru = strategy.rolling_update
    ru_path = child(path, "rollingUpdate")
    if strategy.type == "Recreate":
        if ru is not None:
            return [forbidden(ru_path, "may not be specified when strategy `type` is 'Recreate'")]
        return []
    if strategy.type != "RollingUpdate":
        return [not_supported(child(path, "type"), strategy.type, ["Recreate", "RollingUpdate"])]
    if ru is None:  # defaulted: only a strategy built in code lacks it
        return [required(ru_path, "this should be defaulted and never be nil")]
    errs = _positive_int_or_percent(ru.max_unavailable, child(ru_path, "maxUnavailable"))
    errs += _positive_int_or_percent(ru.max_surge, child(ru_path, "maxSurge"))
    if _int_or_percent_value(ru.max_unavailable) == 0 and _int_or_percent_value(ru.max_surge) == 0:
        errs.append(
            invalid(
                child(ru_path, "maxUnavailable"),
                ru.max_unavailable,
                "may not be 0 when `maxSurge` is 0",
            )
        )
    return errs


def validate_deployment(d: Deployment) -> Errors:
    """``ValidateDeployment`` on create."""
    errs = validate_object_meta(d.metadata, True, names.is_dns1123_subdomain)
    spec = d.spec
    if spec is None:
        return [*errs, required("spec", "")]
    errs += _nonnegative(spec.replicas, "spec.replicas")
    errs += _validate_selector(spec.selector, "deployment", "spec.selector")
    errs += _validate_template(spec.template, spec.selector, "ReplicaSet", "spec.template")
    errs += _validate_strategy(spec.strategy, "spec.strategy")
    errs += _nonnegative(spec.min_ready_seconds, "spec.minReadySeconds")
    errs += _nonnegative(spec.revision_history_limit, "spec.revisionHistoryLimit")
    pds = spec.progress_deadline_seconds
    errs += _nonnegative(pds, "spec.progressDeadlineSeconds")
    if pds <= spec.min_ready_seconds:
        errs.append(
            invalid("spec.progressDeadlineSeconds", pds, "must be greater than minReadySeconds")
        )
    return errs


_POD_MANAGEMENT = ("OrderedReady", "Parallel")
_RETENTION = ("Retain", "Delete")


def _validate_stateful_set_spec(spec: StatefulSetSpec) -> Errors:
    """``ValidateStatefulSetSpec``."""
    errs: Errors = []
    if spec.pod_management_policy not in _POD_MANAGEMENT:
        errs.append(
            invalid(
                "spec.podManagementPolicy",
                spec.pod_management_policy,
                "must be 'OrderedReady' or 'Parallel'",
            )
        )
    us = spec.update_strategy
    ru_path = "spec.updateStrategy.rollingUpdate"
    if us.type == "OnDelete":
        if us.rolling_update is not None:
            errs.append(
                invalid(
                    ru_path,
                    msgspec.to_builtins(us.rolling_update),
                    "only allowed for updateStrategy 'RollingUpdate'",
                )
            )
    elif us.type == "RollingUpdate":
        ru = us.rolling_update
        if ru is not None:
            errs += _nonnegative(ru.partition, child(ru_path, "partition"))
            if ru.max_unavailable is not None:
                mu_path = child(ru_path, "maxUnavailable")
                errs += _positive_int_or_percent(ru.max_unavailable, mu_path)
                if _int_or_percent_value(ru.max_unavailable) == 0:
                    errs.append(invalid(mu_path, ru.max_unavailable, "cannot be 0"))
    else:
        errs.append(
            invalid(
                "spec.updateStrategy",
                msgspec.to_builtins(us),
                "must be 'RollingUpdate' or 'OnDelete'",
            )
        )
    policy = spec.persistent_volume_claim_retention_policy
    for name, value in (("whenDeleted", policy.when_deleted), ("whenScaled", policy.when_scaled)):
        if value not in _RETENTION:
            path = child("spec.persistentVolumeClaimRetentionPolicy", name)
            errs.append(not_supported(path, value, _RETENTION))
    errs += _nonnegative(spec.replicas, "spec.replicas")
    errs += _nonnegative(spec.min_ready_seconds, "spec.minReadySeconds")
    errs += _nonnegative(spec.revision_history_limit, "spec.revisionHistoryLimit")
    if spec.ordinals is not None:
        errs += _nonnegative(spec.ordinals.start, "spec.ordinals.start")
    errs += _validate_selector(spec.selector, "statefulset", "spec.selector")
    errs += _validate_template(spec.template, spec.selector, "StatefulSet", "spec.template")
    return errs


def validate_stateful_set(sts: StatefulSet) -> Errors:
    """``ValidateStatefulSet`` on create: the name becomes each pod's hostname,
    so it must be a DNS-1123 label."""
    errs = validate_object_meta(sts.metadata, True, names.is_dns1123_label)
    if sts.spec is None:
        return [*errs, required("spec", "")]
    return errs + _validate_stateful_set_spec(sts.spec)


def validate_controller_revision(cr: ControllerRevision) -> Errors:
    """``ValidateControllerRevision``."""
    errs = validate_object_meta(cr.metadata, True, names.is_dns1123_subdomain)
    if cr.data is None:
        errs.append(required("data", "data is mandatory"))
    return errs + _nonnegative(cr.revision, "revision")


# ------------------------------------------------------------------- updates
def _immutable_selector(new: Any, old: Any) -> Errors:
    """apps/v1's strategies keep a Deployment's and a ReplicaSet's selector."""
    if new.spec is None or old.spec is None or new.spec.selector == old.spec.selector:
        return []
    return [invalid("spec.selector", msgspec.to_builtins(new.spec.selector), _IMMUTABLE)]


def validate_update(new: Any, old: Any) -> Errors:
    """The update rules of the three kinds (``Validate*Update``): the spec
    validated again, plus what may not change. Metadata is the store's."""
    if isinstance(new, StatefulSet):
        if new.spec is None:
            return [required("spec", "")]
        errs = _validate_stateful_set_spec(new.spec)
        if old.spec is not None:
            kept = {f: getattr(old.spec, f) for f in STATEFULSET_MUTABLE}
            if msgspec.structs.replace(new.spec, **kept) != old.spec:
                errs.append(forbidden("spec", _STATEFULSET_FORBIDDEN))
        return errs
    if isinstance(new, Deployment):
        return [*validate_deployment(new), *_immutable_selector(new, old)]
    if isinstance(new, ReplicaSet):
        return [*validate_replica_set(new), *_immutable_selector(new, old)]
    if isinstance(new, ControllerRevision):
        errs = validate_controller_revision(new)
        if new.data != old.data:
            errs.append(invalid("data", "object", _IMMUTABLE))
        return errs
    return []


VALIDATORS: dict[type, Callable[[Any], Errors]] = {
    ReplicaSet: validate_replica_set,
    Deployment: validate_deployment,
    StatefulSet: validate_stateful_set,
    ControllerRevision: validate_controller_revision,
}


def validate_daemon_set(ds: DaemonSet) -> Errors:
    """``ValidateDaemonSet`` on create (apps/validation); updateStrategy is
    carried, not checked."""
    errs = validate_object_meta(ds.metadata, True, names.is_dns1123_subdomain)
    spec = ds.spec
    if spec is None:
        return [*errs, required("spec", "")]
    sel = spec.selector
    errs += validate_label_selector(sel, "spec.selector")
    if not (sel.match_labels or sel.match_expressions):
        errs.append(
            invalid("spec.selector", as_builtins(sel), "empty selector is invalid for daemonset")
        )
    elif not selector_matches(sel, spec.template.metadata.labels):
        errs.append(
            invalid(
                "spec.template.metadata.labels",
                dict(spec.template.metadata.labels or {}),
                "`selector` does not match template `labels`",
            )
        )
    errs += validate_pod_template_spec(spec.template, "spec.template")
    pod = spec.template.spec
    rp = pod.restart_policy if pod is not None else None
    if rp not in (None, "Always"):
        errs.append(not_supported("spec.template.spec.restartPolicy", rp, ["Always"]))
    if pod is not None and pod.active_deadline_seconds is not None:
        errs.append(
            invalid(
                "spec.template.spec.activeDeadlineSeconds",
                pod.active_deadline_seconds,
                "activeDeadlineSeconds in DaemonSet is not Supported",
            )
        )
    for field_name, value in (
        ("minReadySeconds", spec.min_ready_seconds),
        ("revisionHistoryLimit", spec.revision_history_limit),
    ):
        if value is not None:
            errs += nonnegative(value, child("spec", field_name))
    return errs
