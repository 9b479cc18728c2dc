"""What a podSet's Dynamic Resource Allocation claims count in quota, as
Kueue v0.19 computes it (``pkg/dra/claims.go``
``GetResourceRequestsForResourceClaimTemplates`` and ``countDevicesPerClass``,
``pkg/controller/core/workload_controller.go``'s DRA branch,
``pkg/workload/workload.go`` ``totalRequestsFromPodSets``).

Per pod, every ``resourceClaims[]`` entry naming a ResourceClaimTemplate of
the workload's namespace adds, for each device request of the template
(``exactly``, allocation mode ExactCount), its ``count`` devices of its
DeviceClass, charged under the resource name the Configuration's
``resources.deviceClassMappings`` maps that class to. The first problem
found is the workload's (Kueue returns at the first): an unmapped
DeviceClass, a request Kueue does not support (``firstAvailable``,
``adminAccess``, allocation mode All), a missing template, a claim named
directly (``resourceClaimName``), or DRA used with the KueueDRAIntegration
gate off (KueueDRARejectWorkloadsWhenDRADisabled). Not done here: CEL
selectors checked against ResourceSlices, and counter- and capacity-based
quota (a mapping with ``sources``), which Kueue charges from the devices its
ResourceSlices publish: kuota stores no ResourceSlices, so a request of such
a class gets the error Kueue gives when no ResourceSlice device matches
(``pkg/dra/counters.go`` / ``capacity.go``: "insufficient matching devices
for counter driver: 0 device(s) match but N requested") and the workload
waits, rather than being charged device counts it would not be.

Pure: no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from kuota.api.k8s.resource import ResourceClaimSpec, ResourceClaimTemplate
from kuota.api.kueue.config import DeviceClassMapping
from kuota.api.kueue.types import PodSet

__all__ = [
    "CLAIMS_NOT_SUPPORTED",
    "DRA_GATE_OFF",
    "DraContext",
    "claim_requests",
    "device_class_resources",
    "device_class_sources",
]

# Kueue's QuotaReserved=False messages (workload_controller.go).
CLAIMS_NOT_SUPPORTED: Final = "KueueDRAIntegration feature does not support use of resource claims"
DRA_GATE_OFF: Final = (
    "Workload uses DRA resources but the KueueDRAIntegration feature gate is not enabled"
)
_INT64_MAX: Final = 2**63 - 1


@dataclass(frozen=True)
class DraContext:
    """What DRA quota reads besides the workload: the namespace's
    ResourceClaimTemplates by name, the DeviceClass -> resource name map of
    ``deviceClassMappings``, and the gates."""

    templates: Mapping[str, ResourceClaimTemplate] = field(default_factory=dict)
    class_resources: Mapping[str, str] = field(default_factory=dict)
    enabled: bool = True  # KueueDRAIntegration
    reject_when_disabled: bool = True  # KueueDRARejectWorkloadsWhenDRADisabled
    # DeviceClass -> "counter" / "capacity": mapped with sources (device_class_sources).
    class_sources: Mapping[str, str] = field(default_factory=dict)


def device_class_resources(mappings: Iterable[DeviceClassMapping]) -> dict[str, str]:
    """``deviceClassMappings`` (name, deviceClassNames) as DeviceClass -> name
    (Kueue's ResourceMapper; the Configuration's validation refuses a class
    mapped twice)."""
    out: dict[str, str] = {}
    for m in mappings:
        for dc in m.device_class_names:
            out.setdefault(dc, m.name)
    return out


def device_class_sources(mappings: Iterable[DeviceClassMapping]) -> dict[str, str]:
    """DeviceClass -> the kind of its mapping's ``sources`` ("counter",
    "capacity"), for the classes Kueue charges from ResourceSlices."""
    out: dict[str, str] = {}
    for m in mappings:
        for dc in m.device_class_names:
            if m.source:
                out.setdefault(dc, m.source)
    return out


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
        out[dc] = min(out.get(dc, 0) + count, _INT64_MAX)  # Kueue's saturating add
    return out, None


def _claim_ref(prc: Any, key: str) -> str | None:
    v = prc.get(key) if isinstance(prc, dict) else None
    return v if isinstance(v, str) else None


def claim_requests(pod_set: PodSet, index: int, ctx: DraContext) -> tuple[dict[str, int], str]:
    """One pod's DRA requests (resource name -> devices) and "" — or {} and
    Kueue's message for the workload's QuotaReserved=False Misconfigured
    condition. ``index``: the podSet's position (its paths name it)."""
    spec = pod_set.template.spec
    claims = (spec.resource_claims or []) if spec is not None else []
    if not claims:
        return {}, ""
    with_template = any(_claim_ref(c, "resourceClaimTemplateName") for c in claims)
    with_claim = any(_claim_ref(c, "resourceClaimName") for c in claims)
    if not ctx.enabled:
        if ctx.reject_when_disabled and (with_template or with_claim):
            return {}, DRA_GATE_OFF
        return {}, ""
    if with_claim:
        return {}, CLAIMS_NOT_SUPPORTED
    out: dict[str, int] = {}
    sourced = ""  # the first request Kueue would charge from ResourceSlices
    for j, prc in enumerate(claims):
        name = _claim_ref(prc, "resourceClaimTemplateName")
        if name is None:
            continue
        base = f"spec.podSets[{index}].template.spec.resourceClaims[{j}]"
        tmpl = ctx.templates.get(name)
        if tmpl is None:
            return {}, (
                f"{base}: Internal error: failed to get claim spec for ResourceClaimTemplate"
                f" {name} in podset {pod_set.name}:"
                f' resourceclaimtemplates.resource.k8s.io "{name}" not found'
            )
        counts, bad = _count_devices(tmpl.spec.spec)
        if bad is not None:
            rel, value, detail = bad
            return {}, (
                f"{base}.{rel}: Invalid value: {_go_value(value)}:"
                f" ResourceClaimTemplate {name}: {detail}"
            )
        for dc, n in counts.items():
            logical = ctx.class_resources.get(dc)
            if logical is None:
                detail = (
                    f"DeviceClass {dc} is not mapped in DRA configuration for podset {pod_set.name}"
                )
                return {}, f"{base}.resourceClaimTemplateName: Not found: {json.dumps(detail)}"
            kind = ctx.class_sources.get(dc)
            if kind is not None:
                # Not a device count (Kueue skips it here), a counter or capacity
                # charge: from ResourceSlices, of which kuota has none.
                sourced = sourced or _no_slices(tmpl.spec.spec, dc, kind, base)
                continue
            out[logical] = min(out.get(logical, 0) + n, _INT64_MAX)
    if sourced:
        return {}, sourced
    return out, ""


def _no_slices(spec: ResourceClaimSpec, dc: str, kind: str, base: str) -> str:
    """Kueue's error for a counter / capacity request no ResourceSlice device
    matches (processCounterCharge / processCapacityCharge), at the request."""
    reqs = spec.devices.requests if spec.devices is not None else None
    for k, req in enumerate(reqs or ()):
        ex = req.exactly
        if ex is not None and ex.device_class_name == dc:
            count = ex.count if ex.count is not None else 1
            return (
                f"{base}.devices.requests[{k}]: Internal error: insufficient matching devices"
                f" for {kind} driver: 0 device(s) match but {count} requested"
            )
    return ""
