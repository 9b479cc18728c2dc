"""core/v1 ResourceQuota (``k8s.io/api/core/v1``): every JSON field, kube-apiserver's
validation of it (``pkg/apis/core/validation``, ``ValidateResourceQuota``), and
what a quota counts (``pkg/quota/v1/evaluator/core``: a pod's usage, the object
counts ``count/<resource>.<group>``, the scopes). Pure: the admission plugin and
the controller that read this live in ``kuota.cluster``."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any, Final

import msgspec

from kuota.api import names
from kuota.api.base import LIST_ATOMIC, Object, Quantity
from kuota.api.errors import FieldError, child, index, invalid, key, not_supported, required
from kuota.api.k8s.pod_totals import container_totals
from kuota.api.meta import ObjectMeta

__all__ = [
    "ResourceQuota",
    "ResourceQuotaSpec",
    "ResourceQuotaStatus",
    "pod_usage",
    "validate_resource_quota",
]

ResourceList = dict[str, Quantity]


class ScopedResourceSelectorRequirement(Object):
    scope_name: str
    operator: str
    values: Annotated[list[str], LIST_ATOMIC] | None = None


class ScopeSelector(Object):
    match_expressions: Annotated[list[ScopedResourceSelectorRequirement], LIST_ATOMIC] | None = None


class ResourceQuotaSpec(Object):
    hard: ResourceList | None = None
    scopes: Annotated[list[str], LIST_ATOMIC] | None = None
    scope_selector: ScopeSelector | None = None


class ResourceQuotaStatus(Object):
    hard: ResourceList | None = None
    used: ResourceList | None = None


class ResourceQuota(Object):
    api_version: str
    kind: str
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ResourceQuotaSpec = msgspec.field(default_factory=ResourceQuotaSpec)
    status: ResourceQuotaStatus | None = None


# ------------------------------------------------------------------ names (core/helper)
_COMPUTE: Final = frozenset(
    {
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
    }
)
# The object counts by their legacy names: resource -> what they count.
LEGACY_COUNTS: Final = {
    "services": "services",
    "replicationcontrollers": "replicationcontrollers",
    "resourcequotas": "resourcequotas",
    "secrets": "secrets",
    "configmaps": "configmaps",
    "persistentvolumeclaims": "persistentvolumeclaims",
}
_STANDARD_QUOTA: Final = (
    _COMPUTE
    | {"pods", "requests.storage", "services.nodeports", "services.loadbalancers"}
    | set(LEGACY_COUNTS)
)
_STANDARD: Final = _STANDARD_QUOTA | {"storage"}
_INTEGER: Final = frozenset(
    {"pods", "services.nodeports", "services.loadbalancers", *LEGACY_COUNTS}
)
SCOPES: Final = (
    "Terminating",
    "NotTerminating",
    "BestEffort",
    "NotBestEffort",
    "PriorityClass",
    "CrossNamespacePodAffinity",
)
_POD_COUNT: Final = frozenset({"pods", "count/pods"})
_POD_COMPUTE: Final = frozenset(
    {"cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu", "requests.memory"}
)
_OPERATORS: Final = ("DoesNotExist", "Exists", "In", "NotIn")


def _is_hugepages(name: str) -> bool:
    return name.startswith(("hugepages-", "requests.hugepages-"))


def _scope_fits(scope: str, resource: str) -> bool:
    """``IsResourceQuotaScopeValidForResource``."""
    if scope == "BestEffort":
        return resource in _POD_COUNT
    if scope in SCOPES:
        return resource in _POD_COUNT or resource in _POD_COMPUTE
    return True


# ------------------------------------------------------------------ validation
Errors = list[FieldError]


def _resource_name_errors(name: str, path: str) -> Errors:
    """``ValidateResourceQuotaResourceName``."""
    errs = [invalid(path, name, m) for m in names.is_qualified_name(name)]
    if errs:
        return errs
    if "/" not in name:
        if name not in _STANDARD and not _is_hugepages(name):
            return [invalid(path, name, "must be a standard resource type or fully qualified")]
        if name not in _STANDARD_QUOTA and not _is_hugepages(name):
            return [invalid(path, name, "must be a standard resource for quota")]
    return []


def _value_errors(name: str, q: Quantity, path: str) -> Errors:
    """``ValidateResourceQuantityValue``."""
    errs: Errors = []
    if q.sign() < 0:
        errs.append(invalid(path, str(q), "must be greater than or equal to 0"))
    if name in _INTEGER and q.milli_value() % 1000 != 0:
        errs.append(invalid(path, str(q), "must be an integer"))
    return errs


def _resource_list_errors(rl: Mapping[str, Quantity] | None, path: str) -> Errors:
    errs: Errors = []
    for name in sorted(rl or {}):
        p = key(path, name)
        errs += _resource_name_errors(name, p)
        errs += _value_errors(name, (rl or {})[name], p)
    return errs


def validate_resource_quota(rq: ResourceQuota) -> Errors:
    """``ValidateResourceQuota`` (the metadata is checked on decoding)."""
    spec = rq.spec
    errs = _resource_list_errors(spec.hard, "spec.hard")
    errs += _scopes_errors(spec)
    errs += _scope_selector_errors(spec)
    if rq.status is not None:
        errs += _resource_list_errors(rq.status.hard, "status.hard")
        errs += _resource_list_errors(rq.status.used, "status.used")
    return errs


def _scopes_errors(spec: ResourceQuotaSpec) -> Errors:
    scopes = spec.scopes or []
    if not scopes:
        return []
    path, errs = "spec.scopes", []
    hard = sorted(spec.hard or {})
    for scope in scopes:
        if scope not in SCOPES:
            errs.append(invalid(path, scopes, "unsupported scope"))
        for resource in hard:
            if resource in _STANDARD_QUOTA and not _scope_fits(scope, resource):
                errs.append(invalid(path, scopes, "unsupported scope applied to resource"))
    have = set(scopes)
    for pair in (("BestEffort", "NotBestEffort"), ("Terminating", "NotTerminating")):
        if have.issuperset(pair):
            errs.append(invalid(path, scopes, "conflicting scopes"))
    return errs


def _scope_selector_errors(spec: ResourceQuotaSpec) -> Errors:
    sel = spec.scope_selector
    if sel is None:
        return []
    errs: Errors = []
    path = "spec.scopeSelector.matchExpressions"
    hard = sorted(spec.hard or {})
    seen: set[str] = set()
    for i, req in enumerate(sel.match_expressions or ()):
        p = index(path, i)
        if req.scope_name not in SCOPES:
            errs.append(invalid(child(p, "scopeName"), req.scope_name, "unsupported scope"))
        for resource in hard:
            if resource in _STANDARD_QUOTA and not _scope_fits(req.scope_name, resource):
                errs.append(
                    invalid(
                        child(p, "scopeName"),
                        req.scope_name,
                        "unsupported scope applied to resource",
                    )
                )
        if req.operator in ("In", "NotIn"):
            if not req.values:
                errs.append(
                    required(
                        child(p, "values"),
                        "must be at least one value when `operator` is 'In' or 'NotIn' "
                        "for scope selector",
                    )
                )
        elif req.operator in ("Exists", "DoesNotExist"):
            if req.values:
                errs.append(
                    invalid(
                        child(p, "values"),
                        req.values,
                        "must be no value when `operator` is 'Exist' or 'DoesNotExist' "
                        "for scope selector",
                    )
                )
        else:
            errs.append(not_supported(child(p, "operator"), req.operator, _OPERATORS))
        seen.add(req.scope_name)
    for pair in (("BestEffort", "NotBestEffort"), ("Terminating", "NotTerminating")):
        if seen.issuperset(pair):
            errs.append(
                invalid("spec.scopeSelector", _selector_builtins(sel), "conflicting scopes")
            )
    return errs


def _selector_builtins(sel: ScopeSelector) -> Any:
    return msgspec.to_builtins(sel)


# ------------------------------------------------------------------ what a pod uses
def _sum_max(pod_spec: Any, attr: str) -> dict[str, int]:
    """``PodRequests``/``PodLimits`` in nanos: the containers' sum (sidecars
    included), at least each plain init container's with the sidecars before
    it, plus the overhead."""
    total = container_totals(pod_spec, attr)
    pod_level = getattr(pod_spec.resources, attr, None) if pod_spec.resources else None
    for k, q in (pod_level or {}).items():
        if k in ("cpu", "memory") or k.startswith("hugepages-"):
            total[k] = q.nanos
    for k, q in (pod_spec.overhead or {}).items():
        total[k] = total.get(k, 0) + q.nanos
    return total


def _quantity(nanos: int, resource: str) -> Quantity:
    fmt = "BinarySI" if resource in ("memory", "ephemeral-storage") else "DecimalSI"
    return Quantity.from_nanos(nanos, fmt)


def is_pod_counted(pod: Any, now: datetime) -> bool:
    """``QuotaV1Pod``: a pod is charged until it ends (Succeeded or Failed) or
    its deletion's grace period is over."""
    phase = pod.status.phase if pod.status is not None else None
    if phase in ("Succeeded", "Failed"):
        return False
    meta = pod.metadata
    if meta.deletion_timestamp is not None and meta.deletion_grace_period_seconds is not None:
        return (now - meta.deletion_timestamp).total_seconds() <= meta.deletion_grace_period_seconds
    return True


def pod_usage(pod: Any, now: datetime) -> ResourceList:
    """``PodUsageFunc``: count/pods always; pods and the compute resources
    (requests.*, limits.*, their bare names for requests, extended resources as
    requests.<name>) while the pod is charged."""
    out: ResourceList = {"count/pods": Quantity.from_int(1)}
    if not is_pod_counted(pod, now) or pod.spec is None:
        return out
    out["pods"] = Quantity.from_int(1)
    requests = _sum_max(pod.spec, "requests")
    limits = _sum_max(pod.spec, "limits")
    for r in ("cpu", "memory", "ephemeral-storage"):
        if r in requests:
            q = _quantity(requests[r], r)
            out[r] = q
            out[f"requests.{r}"] = q
        if r in limits:
            out[f"limits.{r}"] = _quantity(limits[r], r)
    for r, nanos in requests.items():
        if r.startswith("hugepages-"):
            out[r] = out[f"requests.{r}"] = _quantity(nanos, "memory")
        elif "/" in r and not r.startswith("kubernetes.io/") and not r.startswith("requests."):
            out[f"requests.{r}"] = _quantity(nanos, r)
    return out


def _qos_best_effort(pod: Any) -> bool:
    containers = [*(pod.spec.containers or ()), *(pod.spec.init_containers or ())]
    for c in containers:
        res = c.resources
        if res is not None and (res.requests or res.limits):
            return False
    return True


def pod_matches_scope(pod: Any, scope: str, operator: str = "Exists", values: Any = ()) -> bool:
    """``podMatchesScopeFunc``: whether a scope (or a scope selector's
    requirement) selects the pod."""
    spec = pod.spec
    if scope == "Terminating":
        return spec is not None and spec.active_deadline_seconds is not None
    if scope == "NotTerminating":
        return spec is None or spec.active_deadline_seconds is None
    if scope == "BestEffort":
        return spec is not None and _qos_best_effort(pod)
    if scope == "NotBestEffort":
        return spec is not None and not _qos_best_effort(pod)
    if scope == "PriorityClass":
        name = (spec.priority_class_name if spec is not None else None) or ""
        if operator == "Exists":
            return bool(name)
        if operator == "DoesNotExist":
            return not name
        if operator == "In":
            return name in (values or ())
        if operator == "NotIn":
            return name not in (values or ())
        return False
    if scope == "CrossNamespacePodAffinity":
        return False  # (kuota's pods name no namespaces in their affinity terms)
    return False


def quota_selects_pod(rq: ResourceQuota, pod: Any) -> bool:
    for scope in rq.spec.scopes or ():
        if not pod_matches_scope(pod, scope):
            return False
    sel = rq.spec.scope_selector
    for req in (sel.match_expressions if sel is not None else None) or ():
        if not pod_matches_scope(pod, req.scope_name, req.operator, req.values):
            return False
    return True


def has_scopes(rq: ResourceQuota) -> bool:
    sel = rq.spec.scope_selector
    return bool(rq.spec.scopes) or bool(sel is not None and sel.match_expressions)
