"""What a podSet's Dynamic Resource Allocation claims count in quota, as
Kueue computes it (kueue ``ff69552e``: ``pkg/dra/claims.go``
``GetResourceRequestsForResourceClaimTemplates``, ``counters.go``
``GetCounterResourcesForWorkload``, ``capacity.go``
``DetermineCapacityResourcesForWorkload``;
``pkg/controller/core/workload_controller.go`` ``handleDRA``;
``pkg/workload/workload.go`` ``totalRequestsFromPodSets``).

Per pod, every ``resourceClaims[]`` entry naming a ResourceClaimTemplate of
the workload's namespace is charged in three passes, each over the whole
workload, the first error the workload's (Kueue returns at the first):

1. device counts: each request (``exactly``, allocation mode ExactCount)
   adds its ``count`` devices of its DeviceClass under the resource name the
   Configuration's ``resources.deviceClassMappings`` maps that class to;
   a request with CEL selectors must find that many devices in the cluster's
   ResourceSlices; a class whose mapping has counter (gate
   KueueDRAIntegrationPartitionableDevices) or capacity (gate
   KueueDRAIntegrationConsumableCapacity) ``sources`` is left to pass 2 or 3;
2. counters: per counter source, the largest value a matching device of the
   driver's complete pools consumes of the counter, times the count;
3. capacity: per capacity source, the largest charge of a matching device
   (the request's ``capacity.requests``, else the device's default, else its
   whole capacity, rounded to its request policy), times the count.

Refused, with Kueue's messages: an unmapped DeviceClass, a request Kueue
does not support (``firstAvailable``, ``adminAccess``, allocation mode
All), a selector that does not compile, a missing template or DeviceClass,
too few matching devices, a claim named directly (``resourceClaimName``),
or DRA used with the KueueDRAIntegration gate off
(KueueDRARejectWorkloadsWhenDRADisabled).

Pure: no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from kuota.api.cel import CelError, Compiled
from kuota.api.k8s.resource import ExactDeviceRequest, ResourceClaimSpec, ResourceClaimTemplate
from kuota.api.kueue.config import DeviceClassMapping, DeviceSource
from kuota.api.kueue.types import PodSet
from kuota.quota.dra_extended import NONE, ExtendedCharge, extended_charge, extended_error
from kuota.quota.dra_slices import (
    INT64_MAX,
    FieldErr,
    Slices,
    aggregate,
    capacity_charge,
    compile_selectors,
    count_matching,
    counter_charge,
    explicit_capacity,
    internal,
    invalid,
    match_devices,
)

__all__ = [
    "CLAIMS_NOT_SUPPORTED",
    "DRA_GATE_OFF",
    "DraContext",
    "Slices",
    "claim_requests",
    "device_class_capacities",
    "device_class_counters",
    "device_class_resources",
    "dra_binary_resources",
    "extended_requests",
    "workload_error",
]

# Kueue's QuotaReserved=False messages (workload_controller.go).
CLAIMS_NOT_SUPPORTED: Final = "KueueDRAIntegration feature does not support use of resource claims"
DRA_GATE_OFF: Final = (
    "Workload uses DRA resources but the KueueDRAIntegration feature gate is not enabled"
)
_NO_CONFIGS: Final[tuple[Any, ...]] = ()


@dataclass(frozen=True)
class DraContext:
    """What DRA quota reads besides the workload: the namespace's
    ResourceClaimTemplates by name, the DeviceClass -> resource name map of
    ``deviceClassMappings`` and its counter / capacity sources per class,
    the cluster's ResourceSlices and DeviceClasses, and the gates."""

    templates: Mapping[str, ResourceClaimTemplate] = field(default_factory=dict)
    class_resources: Mapping[str, str] = field(default_factory=dict)
    enabled: bool = True  # KueueDRAIntegration
    reject_when_disabled: bool = True  # KueueDRARejectWorkloadsWhenDRADisabled
    # DeviceClass -> (quota resource, counter source), in the mappings' order.
    counters: Mapping[str, tuple[tuple[str, DeviceSource], ...]] = field(default_factory=dict)
    # DeviceClass -> capacity sources (charged under the class's resource name).
    capacities: Mapping[str, tuple[DeviceSource, ...]] = field(default_factory=dict)
    partitionable: bool = True  # KueueDRAIntegrationPartitionableDevices
    consumable: bool = False  # KueueDRAIntegrationConsumableCapacity
    slices: Slices = field(default_factory=Slices)
    extended: bool = False  # KueueDRAIntegrationExtendedResource


def device_class_resources(mappings: Iterable[DeviceClassMapping]) -> dict[str, str]:
    """``deviceClassMappings`` (name, deviceClassNames) as DeviceClass -> name
    (Kueue's ResourceMapper; the Configuration's validation refuses a class
    mapped twice but for different counters: the first mapping names it)."""
    out: dict[str, str] = {}
    for m in mappings:
        for dc in m.device_class_names:
            out.setdefault(dc, m.name)
    return out


def device_class_counters(
    mappings: Iterable[DeviceClassMapping],
) -> dict[str, tuple[tuple[str, DeviceSource], ...]]:
    """DeviceClass -> its counter sources with the resource each charges
    (ResourceMapper.deviceClassCounters: every mapping naming the class)."""
    out: dict[str, tuple[tuple[str, DeviceSource], ...]] = {}
    for m in mappings:
        for dc in m.device_class_names:
            for src in m.sources:
                if src.kind == "counter":
                    out[dc] = (*out.get(dc, ()), (m.name, src))
    return out


def device_class_capacities(
    mappings: Iterable[DeviceClassMapping],
) -> dict[str, tuple[DeviceSource, ...]]:
    """DeviceClass -> its capacity sources (ResourceMapper.deviceClassCapacity)."""
    out: dict[str, tuple[DeviceSource, ...]] = {}
    for m in mappings:
        for dc in m.device_class_names:
            for src in m.sources:
                if src.kind == "capacity":
                    out[dc] = (*out.get(dc, ()), src)
    return out


def dra_binary_resources(
    mappings: Iterable[DeviceClassMapping], class_resources: Mapping[str, str]
) -> frozenset[str]:
    """CounterBasedResourceNames and CapacityBasedResourceNames: the quota
    resources Kueue formats as bytes (BinarySI). A capacity source's
    resource is its class's resource name (the first mapping of the class)."""
    out: set[str] = set()
    for m in mappings:
        for src in m.sources:
            if src.kind == "counter":
                out.add(m.name)
            else:
                out.update(class_resources[dc] for dc in m.device_class_names)
    return frozenset(out)


def _go_value(v: Any) -> str:
    """A field error's bad value as apimachinery prints it (nil as "null")."""
    if v is None:
        return '"null"'
    return json.dumps(v) if isinstance(v, str) else str(v)


def _count_devices(spec: ResourceClaimSpec) -> tuple[dict[str, int], tuple[str, Any, str] | None]:
    """countDevicesPerClass: devices per DeviceClass, or the first request
    Kueue refuses as (path below the claim, bad value, detail)."""
    out: dict[str, int] = {}
    reqs = spec.devices.requests if spec.devices is not None else None
    for i, req in enumerate(reqs or ()):
        path = f"devices.requests[{i}]"
        if req.first_available:
            return {}, (path, None, "FirstAvailable device selection is not supported")
        ex = req.exactly
        if ex is None:
            return {}, (path, None, "Exactly must be set if FirstAvailable is nil")
        sel_path = f"{path}.exactly.selectors"
        _, bad = compile_selectors(ex.selectors, sel_path, "CEL compilation failed")
        if bad:
            return {}, (sel_path, None, aggregate(bad))
        if ex.admin_access:
            return {}, (f"{path}.exactly.adminAccess", None, "AdminAccess is not supported")
        mode = ex.allocation_mode or "ExactCount"
        if mode == "All":
            return {}, (
                f"{path}.exactly.allocationMode",
                mode,
                "AllocationMode 'All' is not supported",
            )
        if mode != "ExactCount":
            return {}, (
                f"{path}.exactly.allocationMode",
                mode,
                f"unsupported allocation mode: {mode}",
            )
        dc = ex.device_class_name
        if not dc:
            continue
        count = ex.count if ex.count is not None else 1
        out[dc] = min(out.get(dc, 0) + count, INT64_MAX)  # Kueue's saturating add
    return out, None


def _claim_ref(prc: Any, key: str) -> str | None:
    v = prc.get(key) if isinstance(prc, dict) else None
    return v if isinstance(v, str) else None


def _claims(pod_set: PodSet) -> list[Any]:
    spec = pod_set.template.spec
    return (spec.resource_claims or []) if spec is not None else []


def _preamble(pod_set: PodSet, ctx: DraContext) -> tuple[bool, str]:
    """(whether the podSet's claims are charged at all, or the message that
    refuses them): the gates, and a claim named directly."""
    claims = _claims(pod_set)
    if not claims:
        return False, ""
    with_template = any(_claim_ref(c, "resourceClaimTemplateName") for c in claims)
    with_claim = any(_claim_ref(c, "resourceClaimName") for c in claims)
    if not ctx.enabled:
        if ctx.reject_when_disabled and (with_template or with_claim):
            return False, DRA_GATE_OFF
        return False, ""
    if with_claim:
        return False, CLAIMS_NOT_SUPPORTED
    return True, ""


_Pass = Callable[[PodSet, int, DraContext], tuple[dict[str, int], str]]


def _passes(ctx: DraContext) -> list[_Pass]:
    out: list[_Pass] = [_device_counts]
    if ctx.partitionable:
        out.append(_counter_charges)
    if ctx.consumable:
        out.append(_capacity_charges)
    return out


def claim_requests(pod_set: PodSet, index: int, ctx: DraContext) -> tuple[dict[str, int], str]:
    """One pod's DRA requests (resource name -> amount) and "" — or {} and
    Kueue's message for the workload's QuotaReserved=False Misconfigured
    condition. ``index``: the podSet's position (its paths name it)."""
    charged, bad = _preamble(pod_set, ctx)
    if not charged:
        return {}, bad
    out: dict[str, int] = {}
    for p in _passes(ctx):
        got, bad = p(pod_set, index, ctx)
        if bad:
            return {}, bad
        for name, n in got.items():
            out[name] = min(out.get(name, 0) + n, INT64_MAX)
    return out, ""


def workload_error(pod_sets: Iterable[tuple[int, PodSet]], ctx: DraContext) -> str:
    """Why Kueue's workload controller cannot charge the workload's claims
    ("" when it can, or there are none), of its (index, podSet)s: each pass
    over every podSet before the next, as handleDRA runs them."""
    charged = []
    pod_sets_seen = list(pod_sets)
    for i, ps in pod_sets_seen:
        ok, bad = _preamble(ps, ctx)
        if bad:
            return bad
        if ok:
            charged.append((i, ps))
    for p in _passes(ctx):
        for i, ps in charged:
            _, bad = p(ps, i, ctx)
            if bad:
                return bad
    if ctx.enabled and ctx.extended:
        return extended_error(
            list(pod_sets_seen), ctx.slices.classes, ctx.class_resources, _with_sources(ctx)
        )
    return ""


def _with_sources(ctx: DraContext) -> dict[str, str]:
    """DeviceClass -> what Kueue charges it by instead of a device count
    (its mapping's counter or capacity sources, those gates on)."""
    out: dict[str, str] = {}
    if ctx.consumable:
        out.update((dc, "capacity sources") for dc in ctx.capacities)
    if ctx.partitionable:
        out.update((dc, "counters") for dc in ctx.counters)  # checked first in Kueue
    return out


def extended_requests(pod_set: PodSet, index: int, ctx: DraContext) -> ExtendedCharge:
    """One pod's DRA-backed extended resources (none when the gates are off
    or they do not resolve: :func:`workload_error` refuses the workload)."""
    if not (ctx.enabled and ctx.extended):
        return NONE
    got, errs = extended_charge(
        pod_set, index, ctx.slices.classes, ctx.class_resources, _with_sources(ctx)
    )
    return NONE if errs else got


def _base(index: int, j: int) -> str:
    return f"spec.podSets[{index}].template.spec.resourceClaims[{j}]"


def _templates(pod_set: PodSet, index: int, ctx: DraContext) -> Iterable[tuple[int, str, Any]]:
    """(claim index, template name, template or None) of the claims naming one."""
    for j, prc in enumerate(_claims(pod_set)):
        name = _claim_ref(prc, "resourceClaimTemplateName")
        if name is not None:
            yield j, name, ctx.templates.get(name)


def _not_found(name: str) -> str:
    return f'resourceclaimtemplates.resource.k8s.io "{name}" not found'


def _requests(tmpl: ResourceClaimTemplate) -> list[tuple[int, ExactDeviceRequest]]:
    devices = tmpl.spec.spec.devices
    reqs = devices.requests if devices is not None else None
    return [(k, r.exactly) for k, r in enumerate(reqs or ()) if r.exactly is not None]


def _device_counts(pod_set: PodSet, index: int, ctx: DraContext) -> tuple[dict[str, int], str]:
    """GetResourceRequestsForResourceClaimTemplates for one podSet."""
    out: dict[str, int] = {}
    for j, name, tmpl in _templates(pod_set, index, ctx):
        base = _base(index, j)
        if tmpl is None:
            return {}, str(
                internal(
                    base,
                    f"failed to get claim spec for ResourceClaimTemplate {name} in podset"
                    f" {pod_set.name}: {_not_found(name)}",
                )
            )
        counts, bad = _count_devices(tmpl.spec.spec)
        if bad is not None:
            rel, value, detail = bad
            return {}, (
                f"{base}.{rel}: Invalid value: {_go_value(value)}:"
                f" ResourceClaimTemplate {name}: {detail}"
            )
        cel_errs = _cel_against_devices(tmpl, base, ctx)
        if cel_errs:
            return {}, aggregate(
                [e.prefixed(e.path, f"ResourceClaimTemplate {name}: {e.detail}") for e in cel_errs]
            )
        for dc, n in counts.items():
            logical = ctx.class_resources.get(dc)
            if logical is None:
                detail = (
                    f"DeviceClass {dc} is not mapped in DRA configuration for podset {pod_set.name}"
                )
                return {}, f"{base}.resourceClaimTemplateName: Not found: {json.dumps(detail)}"
            if ctx.partitionable and dc in ctx.counters:
                continue  # charged by its counters (pass 2)
            if ctx.consumable and dc in ctx.capacities:
                continue  # charged by its capacity (pass 3)
            out[logical] = min(out.get(logical, 0) + n, INT64_MAX)
    return out, ""


def _class_selectors(
    dc: str, ctx: DraContext, req_path: str
) -> tuple[list[Compiled], FieldErr | None]:
    """resolveAndCompileDeviceClass: the DeviceClass's compiled selectors."""
    if not dc:
        return [], None
    obj = ctx.slices.classes.get(dc)
    if obj is None:
        return [], internal(
            req_path,
            f'failed to get DeviceClass {dc}: deviceclasses.resource.k8s.io "{dc}" not found',
        )
    compiled, errs = compile_selectors(
        obj.spec.selectors, req_path, f"DeviceClass {dc} has invalid CEL selector"
    )
    return compiled, (errs[0] if errs else None)


def _cel_against_devices(tmpl: ResourceClaimTemplate, base: str, ctx: DraContext) -> list[FieldErr]:
    """validateCELSelectorsAgainstDevices: each request with CEL selectors
    needs as many devices of the cluster (of its sources' drivers when every
    such class has sources) as it asks, no device counted twice in a claim."""
    cel_reqs = [
        (k, ex)
        for k, ex in _requests(tmpl)
        if any(isinstance(s, dict) and s.get("cel") is not None for s in ex.selectors or ())
    ]
    if not cel_reqs:
        return []
    all_slices = ctx.slices.slices
    if any(
        ex.device_class_name not in ctx.counters and ex.device_class_name not in ctx.capacities
        for _, ex in cel_reqs
    ):
        chosen = list(all_slices)
    else:
        drivers: list[str] = []
        for _, ex in cel_reqs:
            dc = ex.device_class_name
            for _, cs in ctx.counters.get(dc, _NO_CONFIGS):
                drivers.append(cs.driver)
            for cap in ctx.capacities.get(dc, _NO_CONFIGS):
                drivers.append(cap.driver)
        chosen = [s for d in dict.fromkeys(drivers) for s in all_slices if s.spec.driver == d]
    devices = [(s.spec.driver, dev) for s in chosen for dev in s.spec.devices or ()]
    taken: set[int] = set()
    errs: list[FieldErr] = []
    for k, ex in cel_reqs:
        req_path = f"{base}.devices.requests[{k}]"
        sel_path = f"{req_path}.exactly.selectors"
        cls, bad = _class_selectors(ex.device_class_name, ctx, req_path)
        if bad is not None:
            errs.append(bad)
            continue
        compiled, cerrs = compile_selectors(ex.selectors, sel_path, "CEL compilation failed")
        if cerrs:
            errs.extend(cerrs)
            continue
        if not compiled:
            continue
        count = ex.count if ex.count is not None else 1
        try:
            n = count_matching(devices, cls, compiled, taken, count)
        except CelError as err:
            errs.append(
                invalid(
                    sel_path,
                    None,
                    f"CEL evaluation failed for DeviceClass {ex.device_class_name}: {err}",
                )
            )
            continue
        if n < count:
            errs.append(
                internal(
                    sel_path,
                    "insufficient matching devices for CEL selector in DeviceClass"
                    f" {ex.device_class_name}: {n} device(s) match in the cluster but"
                    f" {count} requested",
                )
            )
    return errs


def _sourced(
    pod_set: PodSet,
    index: int,
    ctx: DraContext,
    charge: Callable[
        [ExactDeviceRequest, str, list[Compiled], list[Compiled]],
        tuple[dict[str, int], list[FieldErr]],
    ],
    has_sources: Callable[[str], bool],
) -> tuple[dict[str, int], str]:
    """The walk counters.go and capacity.go share: every exact, non-admin
    request of a class with sources, its selectors prepared, then charged."""
    out: dict[str, int] = {}
    for j, name, tmpl in _templates(pod_set, index, ctx):
        base = _base(index, j)
        if tmpl is None:
            return {}, str(
                internal(
                    base,
                    f"failed to get claim spec for ResourceClaimTemplate {name}: {_not_found(name)}",
                )
            )
        for k, ex in _requests(tmpl):
            if ex.admin_access or not has_sources(ex.device_class_name):
                continue
            req_path = f"{base}.devices.requests[{k}]"
            cls, bad = _class_selectors(ex.device_class_name, ctx, req_path)
            if bad is not None:
                return {}, str(bad)
            req_sels, errs = compile_selectors(
                ex.selectors, f"{req_path}.exactly.selectors", "CEL compilation failed"
            )
            if errs:
                return {}, aggregate(errs)
            got, errs = charge(ex, req_path, cls, req_sels)
            if errs:
                return {}, aggregate(errs)
            for res, n in got.items():
                out[res] = min(out.get(res, 0) + n, INT64_MAX)
    return out, ""


def _source_devices(
    src: DeviceSource, cls: list[Compiled], req_sels: list[Compiled], req_path: str, ctx: DraContext
) -> tuple[list[Any], list[FieldErr]]:
    """matchDevicesForSource: the source's deviceSelector compiled, then the
    devices of its driver's complete pools all selectors accept."""
    source_sels, errs = compile_selectors(
        [{"cel": {"expression": src.selector}}] if src.selector else [],
        req_path,
        "deviceSelector CEL compilation failed",
    )
    if errs:
        return [], errs
    matched, bad = match_devices(
        ctx.slices.slices, src.driver, source_sels, cls, req_sels, req_path
    )
    return matched, ([bad] if bad is not None else [])


def _counter_charges(pod_set: PodSet, index: int, ctx: DraContext) -> tuple[dict[str, int], str]:
    """GetCounterResourcesForWorkload for one podSet."""

    def charge(
        ex: ExactDeviceRequest, req_path: str, cls: list[Compiled], req_sels: list[Compiled]
    ) -> tuple[dict[str, int], list[FieldErr]]:
        out: dict[str, int] = {}
        count = ex.count if ex.count is not None else 1
        for resource, src in ctx.counters.get(ex.device_class_name, ()):
            matched, errs = _source_devices(src, cls, req_sels, req_path, ctx)
            if errs:
                return {}, errs
            if len(matched) < count:
                return {}, [
                    internal(
                        req_path,
                        "insufficient matching devices for counter driver:"
                        f" {len(matched)} device(s) match but {count} requested",
                    )
                ]
            n = counter_charge(matched, src.name, count)
            if n is None:
                return {}, [
                    internal(
                        req_path,
                        f"matched devices have no consumesCounters entry for counter"
                        f" {json.dumps(src.name)}",
                    )
                ]
            out[resource] = min(out.get(resource, 0) + n, INT64_MAX)
        return out, []

    return _sourced(pod_set, index, ctx, charge, lambda dc: dc in ctx.counters)


def _capacity_charges(pod_set: PodSet, index: int, ctx: DraContext) -> tuple[dict[str, int], str]:
    """DetermineCapacityResourcesForWorkload for one podSet."""

    def charge(
        ex: ExactDeviceRequest, req_path: str, cls: list[Compiled], req_sels: list[Compiled]
    ) -> tuple[dict[str, int], list[FieldErr]]:
        resource = ctx.class_resources.get(ex.device_class_name)
        if resource is None:
            return {}, []
        total = 0
        count = ex.count if ex.count is not None else 1
        for src in ctx.capacities.get(ex.device_class_name, ()):
            matched, errs = _source_devices(src, cls, req_sels, req_path, ctx)
            if errs:
                return {}, errs
            if len(matched) < count:
                return {}, [
                    internal(
                        req_path,
                        "insufficient matching devices for capacity driver:"
                        f" {len(matched)} device(s) match but {count} requested",
                    )
                ]
            explicit = explicit_capacity(ex.capacity, src.name)
            n, bad = capacity_charge(matched, src.name, count, explicit, req_path)
            if bad is not None:
                return {}, [bad]
            total = min(total + n, INT64_MAX)
        return {resource: total}, []

    return _sourced(pod_set, index, ctx, charge, lambda dc: dc in ctx.capacities)
