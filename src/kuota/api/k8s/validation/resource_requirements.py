"""Resource names and quantities: requirements, pod-level resources and overhead
(``pkg/apis/core/validation``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from decimal import Decimal

from kuota.api import names
from kuota.api.base import Quantity
from kuota.api.errors import (
    child,
    forbidden,
    invalid,
    key,
    not_supported,
    required,
)
from kuota.api.k8s.corev1 import ResourceRequirements
from kuota.api.k8s.validation.objectmeta import IS_NEGATIVE, NOT_INTEGER, Errors

# ------------------------------------------------------------------ resources
_STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
_STANDARD_RESOURCES = frozenset(
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
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "storage",
        "requests.storage",
        "services.nodeports",
        "services.loadbalancers",
    }
)
_INTEGER_RESOURCES = frozenset(
    {
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    }
)
_POD_LEVEL_RESOURCES = ("cpu", "hugepages-", "memory")  # as Kubernetes lists them
_HUGEPAGES = "hugepages-"


def _is_hugepages(name: str) -> bool:
    return name.startswith(_HUGEPAGES)


def _is_standard_resource(name: str) -> bool:
    return (
        name in _STANDARD_RESOURCES or _is_hugepages(name) or name.startswith("requests.hugepages-")
    )


def _is_native(name: str) -> bool:
    """In the ``kubernetes.io/`` namespace (unprefixed names implicitly are)."""
    return "/" not in name or "kubernetes.io/" in name


def is_extended_resource_name(name: str) -> bool:
    """``IsExtendedResourceName``: a domain-prefixed name outside
    ``kubernetes.io/`` and ``requests.`` that is valid as a quota name."""
    return _is_extended(name)


def _is_extended(name: str) -> bool:
    if _is_native(name) or name.startswith("requests."):
        return False
    return not names.is_qualified_name("requests." + name)


def is_overcommit_allowed(name: str) -> bool:
    # Extended resources (GPUs, ...) and hugepages may not be overcommitted:
    # their request must equal their limit.
    return _is_native(name) and not _is_hugepages(name)


def _is_integer_resource(name: str) -> bool:
    return name in _INTEGER_RESOURCES or _is_extended(name)


def validate_resource_name(name: str, path: str) -> Errors:
    errs = [invalid(path, name, msg) for msg in names.is_qualified_name(name)]
    if errs:
        return errs
    if "/" not in name and not _is_standard_resource(name):
        return [invalid(path, name, "must be a standard resource type or fully qualified")]
    return []


def validate_container_resource_name(name: str, path: str) -> Errors:
    errs = validate_resource_name(name, path)
    if "/" not in name:
        if not (name in _STANDARD_CONTAINER_RESOURCES or _is_hugepages(name)):
            errs.append(invalid(path, name, "must be a standard resource for containers"))
    elif not _is_native(name) and not _is_extended(name):
        errs.append(invalid(path, name, "doesn't follow extended resource name standard"))
    return errs


def validate_pod_resource_name(name: str, path: str) -> Errors:
    errs = validate_resource_name(name, path)
    if errs:
        return errs
    if name not in ("cpu", "memory") and not _is_hugepages(name):
        return [not_supported(path, name, _POD_LEVEL_RESOURCES)]
    return []


def to_decimal(q: Quantity) -> Decimal:
    """The exact value of a quantity (its nano-units are exact; its text may be
    the user's own, non-canonical spelling)."""
    return Decimal(q.nanos).scaleb(-9)


_INT64_MAX = 2**63 - 1
OUT_OF_RANGE = "must be less than 2^63-1: Kueue and the scheduler count resources in int64 (cpu in milli-units)"


def range_errors(name: str, q: Quantity, path: str) -> Errors:
    """A quantity beyond what int64 counts (cpu in milli-units, every other
    resource in units) is refused here rather than saturated silently later.
    The parser caps binary-suffixed input (``9Ei``) at 2^63-1, so that value
    itself counts as out of range."""
    amount = q.milli_value() if name.rpartition(".")[2] == "cpu" else q.value()
    return [invalid(path, str(q), OUT_OF_RANGE)] if abs(amount) >= _INT64_MAX else []


def validate_resource_quantity_value(name: str, q: Quantity, path: str) -> Errors:
    errs: Errors = range_errors(name, q, path)
    if q.sign() < 0:
        errs.append(invalid(path, str(q), IS_NEGATIVE))
    # Kubernetes checks MilliValue() % 1000: the value rounded up to milli
    # units must be whole. Integer arithmetic: exact at any magnitude.
    if _is_integer_resource(name) and -(-q.nanos // 1_000_000) % 1000 != 0:
        errs.append(invalid(path, str(q), NOT_INTEGER))
    return errs


def validate_resource_requirements(
    req: ResourceRequirements | None,
    path: str,
    name_fn: Callable[[str, str], Errors] = validate_container_resource_name,
) -> Errors:
    """Container resource requirements (``name_fn`` checks the resource names)."""
    if req is None:
        return []
    errs: Errors = []
    lim_path, req_path = child(path, "limits"), child(path, "requests")
    limits = req.limits or {}
    qos_compute = hugepages = False
    for name, q in limits.items():
        p = key(lim_path, name)
        errs += name_fn(name, p)
        errs += validate_resource_quantity_value(name, q, p)
        hugepages |= _is_hugepages(name)
        qos_compute |= name in ("cpu", "memory")
    for name, q in (req.requests or {}).items():
        p = key(req_path, name)
        errs += name_fn(name, p)
        errs += validate_resource_quantity_value(name, q, p)
        limit = limits.get(name)
        if limit is not None:
            if q != limit and not is_overcommit_allowed(name):
                errs.append(invalid(req_path, str(q), f"must be equal to {name} limit of {limit}"))
            elif q > limit:
                errs.append(
                    invalid(
                        req_path, str(q), f"must be less than or equal to {name} limit of {limit}"
                    )
                )
        elif not is_overcommit_allowed(name):
            errs.append(required(lim_path, "Limit must be set for non overcommitable resources"))
        hugepages |= _is_hugepages(name)
        qos_compute |= name in ("cpu", "memory")
    if hugepages and not qos_compute:
        errs.append(forbidden(path, "HugePages require cpu or memory"))
    return errs


def validate_overhead(overhead: Mapping[str, Quantity] | None, path: str) -> Errors:
    # Kubernetes reuses the container check on {limits: overhead}, hence the
    # "limits" in the reported paths.
    if overhead is None:
        return []
    return validate_resource_requirements(ResourceRequirements(limits=dict(overhead)), path)
