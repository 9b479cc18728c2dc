"""resource.k8s.io: the create rules of DeviceClass and ResourceClaimTemplate,
as far as a claim's device requests go (``pkg/apis/resource/validation``: request names, one of ``exactly`` or
``firstAvailable``, the device class, the count per allocation mode)."""

from __future__ import annotations

from kuota.api import names
from kuota.api.errors import child, duplicate, index, invalid, required
from kuota.api.k8s.resource import (
    DeviceClass,
    ResourceClaimSpec,
    ResourceClaimTemplate,
)
from kuota.api.k8s.validation.objectmeta import Errors, name_errors, validate_object_meta

__all__ = [
    "validate_claim_spec",
    "validate_device_class",
    "validate_resource_claim_template",
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
