"""resource.k8s.io/v1: Dynamic Resource Allocation's DeviceClass and
ResourceClaimTemplate, as far as Kueue's DRA quota reads
them (the device requests of a claim's spec); selectors, constraints,
configs and statuses are kept as written.

Defaults are kube-apiserver's (pkg/apis/resource/v1/defaults.go): a request's
``allocationMode`` ExactCount and, with it, ``count`` 1.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from kuota.api.base import Object
from kuota.api.base import preserve_unknown as _pu
from kuota.api.meta import ObjectMeta

GROUP = "resource.k8s.io"

__all__ = [
    "GROUP",
    "DeviceClaim",
    "DeviceClass",
    "DeviceClassSpec",
    "DeviceRequest",
    "ExactDeviceRequest",
    "ResourceClaimSpec",
    "ResourceClaimTemplate",
    "ResourceClaimTemplateSpec",
    "default_claim_template",
]

AnyList = Annotated[list[Any], _pu()]
AnyObject = Annotated[dict[str, Any], _pu()]
AllocationMode = Literal["ExactCount", "All"]


class ExactDeviceRequest(Object):
    device_class_name: str
    selectors: AnyList | None = None
    allocation_mode: AllocationMode | None = None
    count: int | None = None
    admin_access: bool | None = None
    tolerations: AnyList | None = None
    capacity: AnyObject | None = None


class DeviceRequest(Object):
    name: str
    exactly: ExactDeviceRequest | None = None
    first_available: AnyList | None = None


class DeviceClaim(Object):
    requests: list[DeviceRequest] | None = None
    constraints: AnyList | None = None
    config: AnyList | None = None


class ResourceClaimSpec(Object):
    devices: DeviceClaim | None = None


class ResourceClaimTemplateSpec(Object):
    metadata: AnyObject | None = None
    spec: ResourceClaimSpec = msgspec.field(default_factory=ResourceClaimSpec)


class ResourceClaimTemplate(Object):
    api_version: str
    kind: str
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ResourceClaimTemplateSpec = msgspec.field(default_factory=ResourceClaimTemplateSpec)


class DeviceClassSpec(Object):
    selectors: AnyList | None = None
    config: AnyList | None = None
    extended_resource_name: str | None = None


class DeviceClass(Object):
    api_version: str
    kind: str
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: DeviceClassSpec = msgspec.field(default_factory=DeviceClassSpec)


def default_claim_template(t: ResourceClaimTemplate, gates: object = None) -> None:
    """kube-apiserver's defaulting of a claim's requests, in place."""
    devices = t.spec.spec.devices
    for req in (devices.requests or ()) if devices is not None else ():
        ex = req.exactly
        if ex is None:
            continue
        if ex.allocation_mode is None:
            ex.allocation_mode = "ExactCount"
        if ex.allocation_mode == "ExactCount" and ex.count is None:
            ex.count = 1
