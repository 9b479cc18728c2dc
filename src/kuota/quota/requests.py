"""What a Workload podSet requests, as Kueue computes it (semantics §10).

Kueue sources followed (at ff69552e): ``pkg/workload/resources.go``
(``AdjustResources``, ``ValidateResources``, ``ValidateLimitRange``),
``pkg/workload/workload.go`` (``totalRequestsFromPodSets``,
``dropExcludedResources``, ``applyResourceTransformations``),
``pkg/util/limitrange`` (``Summarize``, ``ValidatePodSpec``), ``pkg/resources``
(``ResourceValue``, ``ResourceFormatter.ResourceQuantity``) and Kubernetes'
``component-helpers/resource.PodRequests``.

Arithmetic is exact until the end, as in Kueue: requests are summed as
quantities (here integer nano-units), transformations multiply exactly, and
only the final per-resource amount is rounded up to Kueue's integer units
(milli-CPU, whole units for everything else) and saturated to int64.

Everything here is pure: inputs are never mutated, and nothing outside the
arguments (clock, I/O, globals) is read.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Final

from kuota.api.k8s import (
    Container,
    LimitRange,
    PodSpec,
    PodTemplateSpec,
    ResourceList,
    ResourceRequirements,
    RuntimeClass,
)
from kuota.api.kueue.config import Resources, ResourceTransformation
from kuota.api.kueue.types import PodSet, Workload
from kuota.api.quantity import BINARY_SI, DECIMAL_SI, Quantity
from kuota.quota.dra import DraContext, claim_requests, extended_requests, workload_error

__all__ = [
    "ERR_INVALID_WL_RESOURCES",
    "ERR_LIMIT_RANGE_CONSTRAINTS",
    "LimitRangeSummary",
    "RequestContext",
    "ResourceVector",
    "ResourceViolation",
    "adjust_template",
    "limit_range_violations",
    "pod_requests",
    "podset_requests",
    "podset_total_requests",
    "requests_over_limits",
    "resource_quantity",
    "resource_value",
    "scale_requests",
    "summarize_limit_ranges",
    "validate_podset_resources",
    "validate_workload_resources",
]

ResourceVector = dict[str, int]
"""Resource name -> amount in Kueue units (milli for ``cpu``, whole units otherwise)."""

CPU: Final = "cpu"
MEMORY: Final = "memory"
EPHEMERAL_STORAGE: Final = "ephemeral-storage"
HUGEPAGES_PREFIX: Final = "hugepages-"

LIMIT_TYPE_CONTAINER: Final = "Container"
LIMIT_TYPE_POD: Final = "Pod"

# pkg/workload/resources.go and pkg/util/limitrange: Kueue's message texts.
ERR_INVALID_WL_RESOURCES: Final = "resources validation failed"
ERR_LIMIT_RANGE_CONSTRAINTS: Final = "resources didn't satisfy LimitRange constraints"
REQUESTS_EXCEED_LIMITS: Final = "requests must not exceed its limits"
ABOVE_LIMIT_RANGE_MAX: Final = "requests must not be above the limitRange max"
BELOW_LIMIT_RANGE_MIN: Final = "requests must not be below the limitRange min"

_NANO: Final = 10**9
_NANO_PER_MILLI: Final = 10**6
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1

# Amounts before rounding: nano-units, exact. Transformations can produce values
# finer than a nano-unit (1n x 1n), which Kueue keeps exactly (inf.Dec), hence Fraction.
_Amount = int | Fraction
_Amounts = dict[str, _Amount]


# ------------------------------------------------------------------------ units


def saturate_int64(v: int) -> int:
    """What a value reads as once written as a quantity and read back (ResourceValue)."""
    return min(max(v, _INT64_MIN), _INT64_MAX)


def _units(name: str, nanos: _Amount) -> int:
    """ResourceValue of an exact amount: rounded away from zero, saturated to int64."""
    div = _NANO_PER_MILLI if name == CPU else _NANO
    if isinstance(nanos, int):
        v = -(-nanos // div) if nanos >= 0 else nanos // div
    else:
        x = nanos / div
        v = -((-x.numerator) // x.denominator) if x >= 0 else x.numerator // x.denominator
    return saturate_int64(v)


def resource_value(name: str, q: Quantity) -> int:
    """Kueue's ``resources.ResourceValue``: milli-units for ``cpu``, whole units
    otherwise, rounded up (away from zero) and clamped to int64 like Kueue's
    ``SafeMilliValue``/``SafeValue``."""
    cpu = name == CPU
    # Quantities are immutable, and the admissions' are shared (resource_quantity):
    # each one's value is worked out once, kept by the object (it held alive
    # with it, so its id stays its own).
    known = _VALUES.get((id(q), cpu))
    if known is not None and known[0] is q:
        return known[1]
    v = q.int64_milli_value() if cpu else q.int64_value()
    if len(_VALUES) > 4096:
        _VALUES.clear()
    _VALUES[(id(q), cpu)] = (q, v)
    return v


_VALUES: Final[dict[tuple[int, bool], tuple[Quantity, int]]] = {}


def resource_quantity(name: str, v: int, *, binary: Collection[str] = ()) -> Quantity:
    """Kueue's ``ResourceFormatter.ResourceQuantity``, the inverse of :func:`resource_value`.

    ``cpu`` is ``v`` milli-units in DecimalSI; ``memory``, ``ephemeral-storage``,
    ``hugepages-*`` and the names in ``binary`` (the DRA resources Kueue's
    formatter registers as byte-valued) are BinarySI made canonical by printing
    and re-parsing, so 1500 stays "1500" while 2048 becomes "2Ki"; anything else
    is ``v`` units in DecimalSI.
    """
    # Quantities are immutable: one per value is shared by every admission
    # (the same few sizes, admitted over and over).
    if name in (MEMORY, EPHEMERAL_STORAGE) or name.startswith(HUGEPAGES_PREFIX) or name in binary:
        q = _BINARY.get(v)
        if q is None:
            if len(_BINARY) > 4096:
                _BINARY.clear()
            # newCanonicalQuantity: the format is whatever the printed text parses as.
            q = _BINARY[v] = Quantity.parse(str(Quantity.from_int(v, BINARY_SI)))
        return q
    key = (name == CPU, v)
    q = _DECIMAL.get(key)
    if q is None:
        if len(_DECIMAL) > 4096:
            _DECIMAL.clear()
        q = _DECIMAL[key] = (
            Quantity.from_milli(v, DECIMAL_SI) if key[0] else Quantity.from_int(v, DECIMAL_SI)
        )
    return q


_DECIMAL: Final[dict[tuple[bool, int], Quantity]] = {}
_BINARY: Final[dict[int, Quantity]] = {}


def _to_vector(amounts: Mapping[str, _Amount]) -> ResourceVector:
    return {name: _units(name, amounts[name]) for name in sorted(amounts)}


def _vector_of(rl: Mapping[str, Quantity] | None) -> ResourceVector:
    """``resources.NewRequestsFromResourceList``."""
    return {name: resource_value(name, q) for name, q in (rl or {}).items()}


def scale_requests(vec: Mapping[str, int], count: int) -> ResourceVector:
    """Per-pod requests times ``count``, saturating at int64 like Kueue's ``Mul``."""
    return {name: saturate_int64(v * count) for name, v in vec.items()}


# ------------------------------------------------------------------- LimitRange


@dataclass(frozen=True, slots=True)
class LimitRangeSummary:
    """``limitrange.Summarize`` for one limit type, over all of a namespace's LimitRanges:
    the lowest ``max`` and ``maxLimitRequestRatio``, the highest ``min``, and the
    first ``default``/``defaultRequest`` met for each resource."""

    max: Mapping[str, Quantity]
    min: Mapping[str, Quantity]
    default: Mapping[str, Quantity]
    default_request: Mapping[str, Quantity]
    max_limit_request_ratio: Mapping[str, Quantity]


def _api_defaults(
    type_: str,
    max_: Mapping[str, Quantity],
    min_: Mapping[str, Quantity],
    default: Mapping[str, Quantity],
    default_request: Mapping[str, Quantity],
) -> tuple[dict[str, Quantity], dict[str, Quantity]]:
    """The API server's ``SetDefaults_LimitRangeItem``, which Kueue always sees applied:
    for type Container, ``default`` falls back to ``max``, then ``defaultRequest``
    to ``default``, then to ``min``. Idempotent, so already defaulted objects pass."""
    out_default = dict(default)
    out_request = dict(default_request)
    if type_ == LIMIT_TYPE_CONTAINER:
        for src, dst in ((max_, out_default), (out_default, out_request), (min_, out_request)):
            for k, v in src.items():
                dst.setdefault(k, v)
    return out_default, out_request


def summarize_limit_ranges(ranges: Iterable[LimitRange]) -> dict[str, LimitRangeSummary]:
    """``limitrange.Summarize``: one summary per limit type.

    "First" ``default`` follows the order of ``ranges``. Kueue lists them from
    its informer cache, whose order is unspecified, so callers should pass a
    stable order (by name) and scenarios should not rely on which of two
    LimitRanges defaulting the same resource wins.
    """
    acc: dict[str, tuple[dict[str, Quantity], ...]] = {}
    for lr in ranges:
        for item in lr.spec.limits if lr.spec is not None else ():
            mx, mn, df, dr, ratio = acc.setdefault(item.type, ({}, {}, {}, {}, {}))
            item_default, item_request = _api_defaults(
                item.type,
                item.max or {},
                item.min or {},
                item.default or {},
                item.default_request or {},
            )
            for k, v in (item.max or {}).items():
                mx[k] = min(mx.get(k, v), v)
            for k, v in (item.min or {}).items():
                mn[k] = max(mn.get(k, v), v)
            for k, v in (item.max_limit_request_ratio or {}).items():
                ratio[k] = min(ratio.get(k, v), v)
            for k, v in item_default.items():
                df.setdefault(k, v)
            for k, v in item_request.items():
                dr.setdefault(k, v)
    return {t: LimitRangeSummary(*maps) for t, maps in acc.items()}


# --------------------------------------------------------------------- context


@dataclass(frozen=True)
class RequestContext:
    """Everything outside the Workload that changes what it requests.

    Treat the collections as immutable once the context is built: derived
    views (the LimitRange summary, the transformation table) are cached.
    """

    limit_ranges: Sequence[LimitRange] = ()
    """The LimitRanges of the workload's namespace, in a stable order (see
    :func:`summarize_limit_ranges`)."""
    runtime_classes: Mapping[str, RuntimeClass] = field(default_factory=dict)
    """RuntimeClasses by name."""
    excluded_prefixes: Sequence[str] = ()
    """Configuration ``resources.excludeResourcePrefixes``."""
    transformations: Sequence[ResourceTransformation] = ()
    """Configuration ``resources.transformations`` (internal, defaulted model)."""
    dra: DraContext | None = None
    """Dynamic Resource Allocation's inputs (the namespace's
    ResourceClaimTemplates, ``deviceClassMappings``, gates); None: claims are
    not looked at."""

    @classmethod
    def from_config(
        cls,
        resources: Resources,
        *,
        limit_ranges: Sequence[LimitRange] = (),
        runtime_classes: Mapping[str, RuntimeClass] | None = None,
        dra: DraContext | None = None,
    ) -> RequestContext:
        """A context from the Kueue configuration's ``resources`` section."""
        return cls(
            limit_ranges=limit_ranges,
            runtime_classes=runtime_classes or {},
            excluded_prefixes=resources.exclude_resource_prefixes,
            transformations=resources.transformations,
            dra=dra,
        )

    @cached_property
    def limit_summary(self) -> dict[str, LimitRangeSummary]:
        return summarize_limit_ranges(self.limit_ranges)

    @cached_property
    def transformation_by_input(self) -> dict[str, ResourceTransformation]:
        # utilslices.ToRefMap: a later entry for the same input wins (validation
        # refuses duplicates anyway).
        return {t.input: t for t in self.transformations}


# ------------------------------------------------------------ AdjustResources


def _keep_first(
    dst: ResourceList | None, src: Mapping[str, Quantity] | None
) -> ResourceList | None:
    """``MergeResourceListKeepFirst`` into a new map: ``dst`` plus what only ``src`` has."""
    if not src:
        return None if dst is None else dict(dst)
    out = dict(dst) if dst is not None else {}
    for k, v in src.items():
        out.setdefault(k, v)
    return out


def _adjust_requirements(
    res: ResourceRequirements | None,
    default: Mapping[str, Quantity] | None,
    default_request: Mapping[str, Quantity] | None,
) -> ResourceRequirements | None:
    limits = _keep_first(res.limits if res is not None else None, default)
    requests = _keep_first(res.requests if res is not None else None, default_request)
    # UseLimitsAsMissingRequestsInPod: after the LimitRange defaults, so a
    # defaulted limit also becomes the request when no defaultRequest covers it.
    requests = _keep_first(requests, limits)
    if res is None:
        if not limits and not requests:
            return None
        return ResourceRequirements(limits=limits, requests=requests)
    out = copy.copy(res)
    out.limits = limits
    out.requests = requests
    return out


def _adjust_containers(
    containers: list[Container] | None, summary: LimitRangeSummary | None
) -> list[Container] | None:
    if containers is None:
        return None
    default = summary.default if summary is not None else None
    default_request = summary.default_request if summary is not None else None
    out = []
    for c in containers:
        c2 = copy.copy(c)
        c2.resources = _adjust_requirements(c.resources, default, default_request)
        out.append(c2)
    return out


def adjust_template(template: PodTemplateSpec, ctx: RequestContext) -> PodTemplateSpec:
    """Kueue's ``AdjustResources`` for one pod template, on a copy.

    1. RuntimeClass overhead: when ``runtimeClassName`` is set and ``overhead`` is
       empty, overhead = the class's ``overhead.podFixed`` (an unknown class is
       skipped, as Kueue logs the lookup error and goes on).
    2. LimitRange type Container: missing container and init container ``limits``
       from ``default``, missing ``requests`` from ``defaultRequest``; type Pod:
       the same for pod-level ``resources``, only when the pod sets them.
    3. Requests default to limits where only limits are set (containers, init
       containers, pod-level).

    The steps are idempotent, so adjusting twice changes nothing. The result is
    a new template along the path to every resource map; other sub-objects
    (metadata, volumes, ...) are shared with the input, so treat both as read-only.
    """
    out = copy.copy(template)
    spec = template.spec
    if spec is None:
        return out
    new_spec = copy.copy(spec)
    out.spec = new_spec

    new_spec.overhead = dict(spec.overhead) if spec.overhead is not None else None
    if spec.runtime_class_name is not None and not spec.overhead:
        rc = ctx.runtime_classes.get(spec.runtime_class_name)
        if rc is not None and rc.overhead is not None:
            pod_fixed = rc.overhead.pod_fixed
            new_spec.overhead = dict(pod_fixed) if pod_fixed is not None else None

    summary = ctx.limit_summary
    container_range = summary.get(LIMIT_TYPE_CONTAINER)
    new_spec.init_containers = _adjust_containers(spec.init_containers, container_range)
    new_spec.containers = _adjust_containers(spec.containers, container_range) or []

    if spec.resources is not None:
        pod_range = summary.get(LIMIT_TYPE_POD)
        new_spec.resources = _adjust_requirements(
            spec.resources,
            pod_range.default if pod_range is not None else None,
            pod_range.default_request if pod_range is not None else None,
        )
    return out


# ---------------------------------------------------------------- PodRequests


def _add_into(acc: dict[str, int], rl: Mapping[str, Quantity] | Mapping[str, int] | None) -> None:
    for k, v in (rl or {}).items():
        n = v.nanos if isinstance(v, Quantity) else v
        acc[k] = acc.get(k, 0) + n


def _container_requests(c: Container) -> ResourceList | None:
    return c.resources.requests if c.resources is not None else None


def _is_pod_level_resource(name: str) -> bool:
    return name in (CPU, MEMORY) or name.startswith(HUGEPAGES_PREFIX)


def _pod_request_nanos(spec: PodSpec) -> dict[str, int]:
    """``PodRequests`` with Kueue's options (none set), in exact nano-units."""
    total: dict[str, int] = {}
    for c in spec.containers:
        _add_into(total, _container_requests(c))

    # Sidecars (restartable init containers) run alongside everything started
    # after them, so they count in the steady state and under each later init
    # container; a plain init container runs alone with the sidecars before it.
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for c in spec.init_containers or ():
        reqs = _container_requests(c)
        if c.restart_policy == "Always":
            _add_into(total, reqs)
            _add_into(sidecars, reqs)
            during = sidecars
        else:
            during = dict(sidecars)
            _add_into(during, reqs)
        for k, v in during.items():
            if k not in init_peak or v > init_peak[k]:
                init_peak[k] = v
    for k, v in init_peak.items():
        if k not in total or v > total[k]:
            total[k] = v

    # Pod-level requests (KEP-2837) replace the container sum for the resources
    # they may name. Kueue passes no options to PodRequests, so this applies
    # whenever the pod sets them: no feature gate is consulted.
    pod_level = spec.resources.requests if spec.resources is not None else None
    for k, q in (pod_level or {}).items():
        if _is_pod_level_resource(k):
            total[k] = q.nanos

    _add_into(total, spec.overhead)
    return total


def pod_requests(spec: PodSpec) -> ResourceVector:
    """Kubernetes' ``PodRequests`` as Kueue calls it, in Kueue units.

    Per resource: max(sum of regular containers and sidecars, max over plain
    init containers of its request plus the sidecars started before it); then
    pod-level ``resources.requests`` (cpu, memory, hugepages-*) replace that
    when set; then ``overhead`` is added. Summed exactly, rounded once at the end.
    """
    return _to_vector(_pod_request_nanos(spec))


# ------------------------------------------------- exclusion, transformations


def _drop_excluded(amounts: _Amounts, prefixes: Sequence[str]) -> _Amounts:
    if not prefixes:
        return amounts
    starts = tuple(prefixes)
    return {k: v for k, v in amounts.items() if not k.startswith(starts)}


def _apply_transformations(
    amounts: _Amounts, transforms: Mapping[str, ResourceTransformation]
) -> _Amounts:
    """``applyResourceTransformations``.

    What transformations generate is kept apart from what the pod asked for:
    negative generated totals (a negative factor is an allowance) are floored at
    zero before being added to same-named requests, so an allowance never
    reduces an ordinary request.
    """
    if not any(name in transforms for name in amounts):
        return amounts
    retained: _Amounts = {}
    generated: _Amounts = {}
    for name, amount in amounts.items():
        t = transforms.get(name)
        if t is None:
            retained[name] = amount
            continue
        base: _Amount = amount
        # multiplyBy scales only what the outputs are computed from; a missing
        # (or excluded) multiplier resource leaves the input unscaled.
        if t.multiply_by and t.multiply_by in amounts:
            base = Fraction(amount) * amounts[t.multiply_by] / _NANO
        for out_name, factor in t.outputs.items():
            product = Fraction(base) * factor.nanos / _NANO
            generated[out_name] = generated.get(out_name, 0) + product
        if (t.strategy or "Retain") == "Retain":
            retained[name] = amount
    result = dict(retained)
    for out_name, amount in generated.items():
        result[out_name] = result.get(out_name, 0) + max(amount, 0)
    return result


def _effective_amounts(pod_set: PodSet, ctx: RequestContext) -> _Amounts:
    template = adjust_template(pod_set.template, ctx)
    spec = template.spec
    amounts: _Amounts = dict(_pod_request_nanos(spec)) if spec is not None else {}
    ext = extended_requests(pod_set, 0, ctx.dra) if ctx.dra is not None else None
    if ext is not None and ext.replaced:
        # DRA-backed extended resources leave the containers' requests (a pod
        # overhead written to the same name stays) and are charged below.
        for name, nanos in ext.replaced.items():
            left = amounts.get(name, 0) - nanos
            if left > 0:
                amounts[name] = left
            else:
                amounts.pop(name, None)
    amounts = _drop_excluded(amounts, ctx.excluded_prefixes)
    amounts = _apply_transformations(amounts, ctx.transformation_by_input)
    if ctx.dra is not None:
        # Kueue adds the DRA devices after transformations (totalRequestsFromPodSets).
        devices, _ = claim_requests(pod_set, 0, ctx.dra)
        for name, n in devices.items():
            amounts[name] = amounts.get(name, 0) + n * _NANO
        for name, n in ext.charged.items() if ext is not None else ():
            amounts[name] = amounts.get(name, 0) + n * _NANO
    return amounts


def podset_requests(pod_set: PodSet, ctx: RequestContext) -> ResourceVector:
    """What one pod of ``pod_set`` requests, as Kueue's ``totalRequestsFromPodSets``
    computes it before multiplying by the count: :func:`adjust_template`, then
    ``PodRequests``, then drop ``excluded_prefixes``, then apply
    ``transformations``, then round to Kueue units and floor negatives at zero.
    Keys are sorted."""
    vec = _to_vector(_effective_amounts(pod_set, ctx))
    return {k: max(v, 0) for k, v in vec.items()}


def podset_total_requests(
    pod_set: PodSet, ctx: RequestContext, count: int | None = None
) -> ResourceVector:
    """:func:`podset_requests` times ``count`` (default ``pod_set.count``; pass
    ``count - reclaimable`` for reclaimable pods), saturating like Kueue."""
    return scale_requests(podset_requests(pod_set, ctx), pod_set.count if count is None else count)


# ------------------------------------------------------------------ validation


@dataclass(frozen=True, slots=True)
class ResourceViolation:
    """One failed check, as a Kubernetes ``field.Invalid`` error.

    ``str()`` is the exact text Kueue puts in its message; ``amounts`` carries
    the numbers behind it: (resource, value, bound) in Kueue units.
    """

    path: str
    resources: tuple[str, ...]
    detail: str
    amounts: tuple[tuple[str, int, int], ...] = ()

    def __str__(self) -> str:
        # field.Error: a []ResourceName bad value is rendered with json.Marshal.
        value = json.dumps(list(self.resources), separators=(",", ":"), ensure_ascii=False)
        return f"{self.path}: Invalid value: {value}: {self.detail}"


def _greater(values: Mapping[str, int], bounds: Mapping[str, int]) -> list[tuple[str, int, int]]:
    """``Requests.GreaterKeys``: resources in both maps whose value exceeds the
    bound, sorted by name."""
    if not values or not bounds:
        return []
    return [
        (name, values[name], bounds[name])
        for name in sorted(values)
        if name in bounds and values[name] > bounds[name]
    ]


def _violation(path: str, hits: list[tuple[str, int, int]], detail: str) -> list[ResourceViolation]:
    if not hits:
        return []
    return [ResourceViolation(path, tuple(h[0] for h in hits), detail, tuple(hits))]


def _requirements(c: Container) -> tuple[ResourceList, ResourceList]:
    res = c.resources
    if res is None:
        return {}, {}
    return res.requests or {}, res.limits or {}


def requests_over_limits(spec: PodSpec, path: str) -> list[ResourceViolation]:
    """``ValidateResources`` for one pod spec (at ``path``): requests above limits
    in init containers, containers and pod-level resources, in that order."""
    out: list[ResourceViolation] = []
    for group, containers in (
        ("initContainers", spec.init_containers or ()),
        ("containers", spec.containers),
    ):
        for i, c in enumerate(containers):
            requests, limits = _requirements(c)
            hits = _greater(_vector_of(requests), _vector_of(limits))
            out += _violation(f"{path}.{group}[{i}]", hits, REQUESTS_EXCEED_LIMITS)
    if spec.resources is not None:
        hits = _greater(_vector_of(spec.resources.requests), _vector_of(spec.resources.limits))
        out += _violation(f"{path}.resources", hits, REQUESTS_EXCEED_LIMITS)
    return out


def limit_range_violations(
    spec: PodSpec, summary: Mapping[str, LimitRangeSummary], path: str
) -> list[ResourceViolation]:
    """``Summary.ValidatePodSpec``: each container's larger of request and limit
    against type Container ``max``, its smaller against ``min``; the pod's total
    requests (``PodRequests``, overhead included) against type Pod ``max``/``min``.

    Kueue does not check ``maxLimitRequestRatio`` (it only summarizes it).
    """
    out: list[ResourceViolation] = []
    container_range = summary.get(LIMIT_TYPE_CONTAINER)
    if container_range is not None:
        c_max_bound = _vector_of(container_range.max)
        c_min_bound = _vector_of(container_range.min)
        for group, containers in (
            ("initContainers", spec.init_containers or ()),
            ("containers", spec.containers),
        ):
            for i, c in enumerate(containers):
                requests, limits = _requirements(c)
                c_max = {k: max(v, limits[k]) if k in limits else v for k, v in requests.items()}
                c_min = {k: min(v, limits[k]) if k in limits else v for k, v in requests.items()}
                for k, v in limits.items():
                    c_max.setdefault(k, v)
                    c_min.setdefault(k, v)
                cpath = f"{path}.{group}[{i}]"
                out += _violation(
                    cpath, _greater(_vector_of(c_max), c_max_bound), ABOVE_LIMIT_RANGE_MAX
                )
                # Reported as (resource, container value, min) though Kueue
                # compares min > value.
                below = _greater(c_min_bound, _vector_of(c_min))
                out += _violation(cpath, [(k, b, m) for k, m, b in below], BELOW_LIMIT_RANGE_MIN)
    pod_range = summary.get(LIMIT_TYPE_POD)
    if pod_range is not None:
        total = pod_requests(spec)
        out += _violation(path, _greater(total, _vector_of(pod_range.max)), ABOVE_LIMIT_RANGE_MAX)
        below = _greater(_vector_of(pod_range.min), total)
        out += _violation(path, [(k, b, m) for k, m, b in below], BELOW_LIMIT_RANGE_MIN)
    return out


def _aggregate(prefix: str, errors: Sequence[ResourceViolation]) -> str:
    """``fmt.Errorf("%s: %w", prefix, errs.ToAggregate())``: duplicates dropped,
    one error bare, several as ``[a, b]``."""
    msgs = list(dict.fromkeys(str(e) for e in errors))
    body = msgs[0] if len(msgs) == 1 else "[" + ", ".join(msgs) + "]"
    return f"{prefix}: {body}"


def _validate(indexed: Iterable[tuple[int, PodSet]], ctx: RequestContext) -> str | None:
    specs = []
    indexed = list(indexed)
    if ctx.dra is not None:
        # Kueue's workload controller refuses to queue a workload whose DRA
        # claims it cannot count, before any other resource check.
        # (each pass over every podSet before the next, as handleDRA)
        bad = workload_error(indexed, ctx.dra)
        if bad:
            return bad
    for i, ps in indexed:
        spec = adjust_template(ps.template, ctx).spec
        if spec is not None:
            specs.append((f"spec.podSets[{i}].template.spec", spec))
    # Kueue reports requests above limits first; LimitRanges only when those pass.
    errors = [e for path, spec in specs for e in requests_over_limits(spec, path)]
    if errors:
        return _aggregate(ERR_INVALID_WL_RESOURCES, errors)
    if not ctx.limit_ranges:
        return None
    summary = ctx.limit_summary
    errors = [e for path, spec in specs for e in limit_range_violations(spec, summary, path)]
    if errors:
        return _aggregate(ERR_LIMIT_RANGE_CONSTRAINTS, errors)
    return None


def validate_workload_resources(workload: Workload, ctx: RequestContext) -> str | None:
    """The resource part of Kueue's ``ValidateAdmissibility`` (run at nomination,
    failing with reason ``Misconfigured``) on the adjusted workload: ``None`` when
    it passes, else Kueue's message, e.g. ``resources validation failed:
    spec.podSets[0].template.spec.containers[0]: Invalid value: ["cpu"]: requests
    must not exceed its limits``. Kueue's text names containers and resources but
    no amounts; :func:`requests_over_limits` and :func:`limit_range_violations`
    give those."""
    return _validate(enumerate(workload.spec.pod_sets), ctx)


def validate_podset_resources(
    pod_set: PodSet, ctx: RequestContext, *, index: int = 0
) -> str | None:
    """:func:`validate_workload_resources` for one podSet, at position ``index``
    of its workload (which only shows in the message paths)."""
    return _validate([(index, pod_set)], ctx)
