"""resource.k8s.io: the create rules of DeviceClass and ResourceClaimTemplate,
as far as a claim's device requests go (``pkg/apis/resource/validation``: request names, one of ``exactly`` or
``firstAvailable``, the device class, the count per allocation mode), and of
ResourceSlice as far as what Kueue reads goes (the driver, the pool, the node
choice, device names, one value per attribute)."""

from __future__ import annotations

from kuota.api import names
from kuota.api.errors import child, duplicate, index, invalid, required
from kuota.api.k8s.resource import (
    DeviceClass,
    ResourceClaimSpec,
    ResourceClaimTemplate,
    ResourceSlice,
)
from kuota.api.k8s.validation.objectmeta import Errors, name_errors, validate_object_meta

__all__ = [
    "validate_claim_spec",
    "validate_device_class",
    "validate_resource_claim_template",
    "validate_resource_slice",
]


def validate_claim_spec(spec: ResourceClaimSpec, path: str) -> Errors:
    errs: Errors = []
    if spec.devices is None:
        return errs
    reqs_path = child(child(path, "devices"), "requests")
    seen: set[str] = set()
    for i, req in enumerate(spec.devices.requests or ()):
        rp = index(reqs_path, i)
        if not req.name:
            errs.append(required(child(rp, "name")))
        else:
            errs += name_errors(names.is_dns1123_label, req.name, child(rp, "name"))
            if req.name in seen:
                errs.append(duplicate(child(rp, "name"), req.name))
            seen.add(req.name)
        exactly, first = req.exactly is not None, bool(req.first_available)
        if exactly and first:
            errs.append(
                invalid(
                    rp,
                    None,
                    "exactly one of `exactly` or `firstAvailable` is required,"
                    " but multiple fields are set",
                )
            )
        elif not exactly and not first:
            errs.append(required(rp, "exactly one of `exactly` or `firstAvailable` is required"))
        ex = req.exactly
        if ex is None:
            continue
        ep = child(rp, "exactly")
        if not ex.device_class_name:
            errs.append(required(child(ep, "deviceClassName")))
        else:
            errs += name_errors(
                names.is_dns1123_subdomain, ex.device_class_name, child(ep, "deviceClassName")
            )
        count = ex.count or 0
        if ex.allocation_mode == "All" and count != 0:
            errs.append(
                invalid(
                    child(ep, "count"), count, "must not be specified when allocationMode is 'All'"
                )
            )
        elif ex.allocation_mode == "ExactCount" and count <= 0:
            errs.append(invalid(child(ep, "count"), count, "must be greater than zero"))
    return errs


def validate_resource_claim_template(t: ResourceClaimTemplate) -> Errors:
    errs = validate_object_meta(t.metadata, True, names.is_dns1123_subdomain)
    return errs + validate_claim_spec(t.spec.spec, "spec.spec")


def validate_device_class(dc: DeviceClass) -> Errors:
    return validate_object_meta(dc.metadata, False, names.is_dns1123_subdomain)


def validate_resource_slice(rs: ResourceSlice) -> Errors:
    errs = validate_object_meta(rs.metadata, False, names.is_dns1123_subdomain)
    spec = rs.spec
    sp = "spec"
    if not spec.driver:
        errs.append(required(child(sp, "driver")))
    else:
        errs += name_errors(names.is_dns1123_subdomain, spec.driver, child(sp, "driver"))
    pp = child(sp, "pool")
    if not spec.pool.name:
        errs.append(required(child(pp, "name")))
    if spec.pool.generation < 0:
        errs.append(
            invalid(
                child(pp, "generation"), spec.pool.generation, "must be greater than or equal to 0"
            )
        )
    if spec.pool.resource_slice_count <= 0:
        errs.append(
            invalid(
                child(pp, "resourceSliceCount"),
                spec.pool.resource_slice_count,
                "must be greater than zero",
            )
        )
    chosen = [
        f
        for f, on in (
            ("`nodeName`", bool(spec.node_name)),
            ("`nodeSelector`", spec.node_selector is not None),
            ("`allNodes`", bool(spec.all_nodes)),
            ("`perDeviceNodeSelection`", bool(spec.per_device_node_selection)),
        )
        if on
    ]
    if not chosen:
        errs.append(
            required(
                sp,
                "exactly one of `nodeName`, `nodeSelector`, `allNodes`,"
                " `perDeviceNodeSelection` is required",
            )
        )
    elif len(chosen) > 1:
        errs.append(
            invalid(
                sp,
                "{" + ", ".join(chosen) + "}",
                "exactly one of `nodeName`, `nodeSelector`, `allNodes`,"
                " `perDeviceNodeSelection` is required, but multiple fields are set",
            )
        )
    seen: set[str] = set()
    dp = child(sp, "devices")
    for i, dev in enumerate(spec.devices or ()):
        p = index(dp, i)
        if not dev.name:
            errs.append(required(child(p, "name")))
        else:
            errs += name_errors(names.is_dns1123_label, dev.name, child(p, "name"))
            if dev.name in seen:
                errs.append(duplicate(child(p, "name"), dev.name))
            seen.add(dev.name)
        for key, attr in (dev.attributes or {}).items():
            n = sum(v is not None for v in (attr.int_, attr.bool_, attr.string, attr.version))
            if n != 1:
                errs.append(
                    invalid(
                        f"{child(p, 'attributes')}[{key}]",
                        None,
                        "exactly one value must be specified",
                    )
                )
    return errs
