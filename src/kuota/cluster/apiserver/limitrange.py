"""What the API server does to a Pod on create, before anything schedules it:
defaults (requests from limits), the LimitRanger admission plugin
(LimitRange defaults, then min / max / maxLimitRequestRatio), and the QoS
class in ``status.qosClass`` — as one store admission hook.

Sources followed: ``pkg/apis/core/v1/defaults.go`` (``SetDefaults_Pod``),
``plugin/pkg/admission/limitranger/admission.go`` and
``pkg/apis/core/helper/qos`` (``ComputePodQOS``), kubernetes/kubernetes.
Messages are the API server's (``pods "x" is forbidden: [maximum cpu usage
per Container is 2, but limit is 4, ...]``); where Go walks a map, kuota
walks resources in name order, so the order of several errors is stable.

Kueue's own reading of LimitRanges for Workload requests lives in
``kuota.quota.requests`` (its defaults are the same ``SetDefaults_LimitRangeItem``
applied here).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import msgspec

from kuota.api.k8s import (
    Container,
    LimitRange,
    LimitRangeItem,
    PodSpec,
    PodStatus,
    ResourceList,
    ResourceRequirements,
)
from kuota.api.k8s.pod_totals import container_totals
from kuota.api.quantity import Quantity
from kuota.quota.requests import _api_defaults as limit_range_item_defaults
from kuota.store import clone
from kuota.store.protocol import StoreError
from kuota.store.resources import LIMIT_RANGE as LIMIT_RANGE
from kuota.store.resources import POD

__all__ = [
    "LIMIT_RANGER_ANNOTATION",
    "Forbidden",
    "PodResourceAdmission",
    "default_requests_from_limits",
    "limit_range_violations",
    "merge_limit_range_defaults",
    "pod_qos_class",
]

LIMIT_RANGER_ANNOTATION = "kubernetes.io/limit-ranger"
_MAX_MILLI = (2**63 - 1) // 1000  # resource.MaxMilliValue
_QOS_RESOURCES = ("cpu", "memory")
_POD_LEVEL = ("cpu", "memory")  # and hugepages-*


class Forbidden(StoreError):
    """An admission plugin refused the request (HTTP 403)."""

    code, reason = 403, "Forbidden"


# -------------------------------------------------------------------- defaults
def _with_requests_from_limits(c: Container) -> Container | None:
    """A copy of ``c`` whose missing requests are its limits, or None if none is missing."""
    res = c.resources
    if res is None or not res.limits:
        return None
    requests = dict(res.requests or {})
    missing = {k: v for k, v in res.limits.items() if k not in requests}
    if not missing:
        return None
    requests.update(missing)
    return msgspec.structs.replace(c, resources=msgspec.structs.replace(res, requests=requests))


def default_requests_from_limits(spec: PodSpec) -> PodSpec | None:
    """``SetDefaults_Pod``: a container (or init container) that sets a limit
    but no request for a resource requests its limit; likewise pod-level
    resources. Returns a new spec, or None when nothing changes."""
    changed = False
    groups: list[list[Container]] = []
    for group in (spec.containers, spec.init_containers or []):
        out = []
        for c in group:
            new = _with_requests_from_limits(c)
            changed |= new is not None
            out.append(new if new is not None else c)
        groups.append(out)
    pod_res = spec.resources
    if pod_res is not None and pod_res.limits:
        requests = dict(pod_res.requests or {})
        add = {
            k: v
            for k, v in pod_res.limits.items()
            if k not in requests and (k in _POD_LEVEL or k.startswith("hugepages-"))
        }
        if add:
            requests.update(add)
            pod_res = msgspec.structs.replace(pod_res, requests=requests)
            changed = True
    if not changed:
        return None
    return msgspec.structs.replace(
        spec,
        containers=groups[0],
        init_containers=groups[1] if spec.init_containers is not None else None,
        resources=pod_res,
    )


def _container_defaults(lr: LimitRange) -> tuple[dict[str, Quantity], dict[str, Quantity]]:
    """``defaultContainerResourceRequirements``: (default limits, default
    requests) of the LimitRange's Container items (a later item wins), after
    the API server's ``SetDefaults_LimitRangeItem``."""
    limits: dict[str, Quantity] = {}
    requests: dict[str, Quantity] = {}
    for item in lr.spec.limits if lr.spec is not None else ():
        if item.type != "Container":
            continue
        default, default_request = limit_range_item_defaults(
            item.type,
            item.max or {},
            item.min or {},
            item.default or {},
            item.default_request or {},
        )
        requests.update(default_request)
        limits.update(default)
    return limits, requests


def merge_limit_range_defaults(spec: PodSpec, lr: LimitRange) -> tuple[PodSpec, list[str]] | None:
    """``PodMutateLimitFunc``: each container's missing limits and requests
    from the LimitRange's defaults. Returns the new spec and the notes for the
    ``kubernetes.io/limit-ranger`` annotation, or None when nothing changes."""
    limits, requests = _container_defaults(lr)
    if not limits and not requests:
        return None
    notes: list[str] = []
    groups: list[list[Container]] = []
    for what, group in (
        ("container", spec.containers),
        ("init container", spec.init_containers or []),
    ):
        out = []
        for c in group:
            res = c.resources
            have_l = dict(res.limits or {}) if res is not None else {}
            have_r = dict(res.requests or {}) if res is not None else {}
            set_l = sorted(k for k in limits if k not in have_l)
            set_r = sorted(k for k in requests if k not in have_r)
            if not set_l and not set_r:
                out.append(c)
                continue
            have_l.update({k: limits[k] for k in set_l})
            have_r.update({k: requests[k] for k in set_r})
            if set_r:
                notes.append(f"{', '.join(set_r)} request for {what} {c.name}")
            if set_l:
                notes.append(f"{', '.join(set_l)} limit for {what} {c.name}")
            new_res = (
                msgspec.structs.replace(res, limits=have_l or None, requests=have_r or None)
                if res is not None
                else ResourceRequirements(limits=have_l or None, requests=have_r or None)
            )
            out.append(msgspec.structs.replace(c, resources=new_res))
        groups.append(out)
    if not notes:
        return None
    new = msgspec.structs.replace(
        spec,
        containers=groups[0],
        init_containers=groups[1] if spec.init_containers is not None else None,
    )
    return new, notes


# ------------------------------------------------------------------ validation
def _enforced_values(
    req: Quantity | None, lim: Quantity | None, enforced: Quantity
) -> tuple[int, int, int]:
    """``requestLimitEnforcedValues``: milli-units when nothing overflows them."""
    zero = Quantity.from_int(0)
    r, li = req or zero, lim or zero
    if r.value() <= _MAX_MILLI and li.value() <= _MAX_MILLI and enforced.value() <= _MAX_MILLI:
        return r.milli_value(), li.milli_value(), enforced.milli_value()
    return r.value(), li.value(), enforced.value()


def _min(
    kind: str,
    name: str,
    enforced: Quantity,
    requests: Mapping[str, Quantity],
    limits: Mapping[str, Quantity],
) -> str | None:
    req, lim = requests.get(name), limits.get(name)
    r, li, e = _enforced_values(req, lim, enforced)
    if req is None:
        return f"minimum {name} usage per {kind} is {enforced}.  No request is specified"
    if r < e:
        return f"minimum {name} usage per {kind} is {enforced}, but request is {req}"
    if lim is not None and li < e:
        return f"minimum {name} usage per {kind} is {enforced}, but limit is {lim}"
    return None


def _max(
    kind: str,
    name: str,
    enforced: Quantity,
    requests: Mapping[str, Quantity],
    limits: Mapping[str, Quantity],
) -> str | None:
    req, lim = requests.get(name), limits.get(name)
    r, li, e = _enforced_values(req, lim, enforced)
    if lim is None:
        return f"maximum {name} usage per {kind} is {enforced}.  No limit is specified"
    if li > e:
        return f"maximum {name} usage per {kind} is {enforced}, but limit is {lim}"
    if req is not None and r > e:
        return f"maximum {name} usage per {kind} is {enforced}, but request is {req}"
    return None


def _ratio(
    kind: str,
    name: str,
    enforced: Quantity,
    requests: Mapping[str, Quantity],
    limits: Mapping[str, Quantity],
) -> str | None:
    req, lim = requests.get(name), limits.get(name)
    r, li, _ = _enforced_values(req, lim, enforced)
    if req is None or r == 0:
        return (
            f"{name} max limit to request ratio per {kind} is {enforced}, "
            "but no request is specified or request is 0"
        )
    if lim is None or li == 0:
        return (
            f"{name} max limit to request ratio per {kind} is {enforced}, "
            "but no limit is specified or limit is 0"
        )
    observed = li / r
    shown = observed
    allowed = float(enforced.value())
    if enforced.value() <= _MAX_MILLI:
        observed *= 1000
        allowed = float(enforced.milli_value())
    if observed > allowed:
        return (
            f"{name} max limit to request ratio per {kind} is {enforced}, "
            f"but provided ratio is {shown:f}"
        )
    return None


def _check(
    item: LimitRangeItem,
    kind: str,
    requests: Mapping[str, Quantity],
    limits: Mapping[str, Quantity],
) -> list[str]:
    out: list[str] = []
    for bounds, fn in ((item.min, _min), (item.max, _max), (item.max_limit_request_ratio, _ratio)):
        for name in sorted(bounds or {}):
            msg = fn(kind, name, (bounds or {})[name], requests, limits)
            if msg is not None:
                out.append(msg)
    return out


def _aggregate(spec: PodSpec, which: str) -> dict[str, Quantity]:
    """The LimitRanger's ``podRequests``/``podLimits``: per resource, the
    larger of (regular containers + sidecars) and the peak of each plain init
    container with the sidecars started before it; then pod-level resources
    for cpu, memory and hugepages; no overhead."""

    total = container_totals(spec, which)
    out = {k: Quantity.from_nanos(v) for k, v in total.items()}
    pod_level = getattr(spec.resources, which) if spec.resources is not None else None
    for k, q in (pod_level or {}).items():
        if k in _POD_LEVEL or k.startswith("hugepages-"):
            out[k] = q
    return out


def limit_range_violations(spec: PodSpec, lr: LimitRange) -> list[str]:
    """``PodValidateLimitFunc``: every container and init container against
    the Container items, the pod's aggregate against the Pod items."""
    out: list[str] = []
    for item in lr.spec.limits if lr.spec is not None else ():
        if item.type == "Container":
            for c in [*spec.containers, *(spec.init_containers or ())]:
                res = c.resources
                requests = (res.requests or {}) if res is not None else {}
                limits = (res.limits or {}) if res is not None else {}
                out += _check(item, "Container", requests, limits)
        elif item.type == "Pod":
            out += _check(item, "Pod", _aggregate(spec, "requests"), _aggregate(spec, "limits"))
    return out


# ------------------------------------------------------------------------- QoS
def _positive(acc: dict[str, int], rl: ResourceList | None) -> set[str]:
    """Add the positive cpu and memory amounts of ``rl`` into ``acc``; their names."""
    found: set[str] = set()
    for k, q in (rl or {}).items():
        if k in _QOS_RESOURCES and q.sign() > 0:
            acc[k] = acc.get(k, 0) + q.nanos
            found.add(k)
    return found


def pod_qos_class(spec: PodSpec | None) -> str:
    """``ComputePodQOS``: BestEffort without any cpu or memory request or
    limit; Guaranteed when every container (or the pod level, when it sets
    resources) limits both cpu and memory and its requests equal its limits;
    Burstable otherwise."""
    if spec is None:
        return "BestEffort"
    requests: dict[str, int] = {}
    limits: dict[str, int] = {}
    guaranteed = True
    pod_level = spec.resources
    if pod_level is not None and (pod_level.requests or pod_level.limits):
        _positive(requests, pod_level.requests)
        if pod_level.limits and not _positive(limits, pod_level.limits) >= set(_QOS_RESOURCES):
            guaranteed = False
    else:
        for c in [*spec.containers, *(spec.init_containers or ())]:
            res = c.resources
            _positive(requests, res.requests if res is not None else None)
            if not _positive(limits, res.limits if res is not None else None) >= set(
                _QOS_RESOURCES
            ):
                guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    equal = all(limits.get(k) == v for k, v in requests.items())
    if guaranteed and equal and len(requests) == len(limits):
        return "Guaranteed"
    return "Burstable"


# ------------------------------------------------------------------- the hook
class PodResourceAdmission:
    """The admission hook for Pod creates: defaults, LimitRanger, QoS class.

    ``limit_ranges(namespace)`` lists the namespace's LimitRanges (the hook
    runs inside the store's write, so it reads through a callback). It copies
    only what it changes: every pod passes here."""

    kinds = frozenset({POD})  # the store calls it for Pods only
    operations = frozenset({"CREATE"})  # and only acts on creates

    def __init__(self, limit_ranges: Callable[[str], Iterable[LimitRange]]) -> None:
        self.limit_ranges = limit_ranges

    def __call__(self, op: str, new: Any, old: Any | None) -> Any:
        if op != "CREATE" or new.kind != "Pod" or new.api_version != "v1" or new.spec is None:
            return new
        spec: PodSpec = new.spec
        defaulted = default_requests_from_limits(spec)
        if defaulted is not None:
            spec = defaulted
        ranges: Sequence[LimitRange] = list(self.limit_ranges(new.metadata.namespace))
        notes: list[str] = []
        for lr in ranges:
            merged = merge_limit_range_defaults(spec, lr)
            if merged is not None:
                spec, more = merged
                notes += more
        errors = [msg for lr in ranges for msg in limit_range_violations(spec, lr)]
        if errors:
            body = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
            raise Forbidden(f'pods "{new.metadata.name}" is forbidden: {body}')
        qos = pod_qos_class(spec)
        status = new.status
        if spec is new.spec and not notes and status is not None and status.qos_class == qos:
            return new
        meta = new.metadata
        if notes:
            meta = clone(meta)
            meta.annotations = {
                **(meta.annotations or {}),
                LIMIT_RANGER_ANNOTATION: "LimitRanger plugin set: " + "; ".join(notes),
            }
        status = (
            msgspec.structs.replace(status, qos_class=qos)
            if status is not None
            else PodStatus(phase="Pending", qos_class=qos)  # type: ignore[arg-type]
        )
        return msgspec.structs.replace(new, metadata=meta, spec=spec, status=status)
