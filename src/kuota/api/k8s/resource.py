"""resource.k8s.io/v1: Dynamic Resource Allocation's DeviceClass,
ResourceClaimTemplate and ResourceSlice, as far as Kueue's DRA quota reads
them (the device requests of a claim's spec and their CEL selectors; the
devices a driver publishes, with their attributes, capacities and counter
consumption); constraints, configs, taints and statuses are kept as written.

Defaults are kube-apiserver's (pkg/apis/resource/v1/defaults.go): a request's
``allocationMode`` ExactCount and, with it, ``count`` 1.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from kuota.api.base import Object, Quantity
from kuota.api.base import preserve_unknown as _pu
from kuota.api.meta import ObjectMeta

GROUP = "resource.k8s.io"

__all__ = [
    "GROUP",
    "CapacityRequestPolicy",
    "CapacityRequestPolicyRange",
    "Counter",
    "CounterSet",
    "Device",
    "DeviceAttribute",
    "DeviceCapacity",
    "DeviceClaim",
    "DeviceClass",
    "DeviceClassSpec",
    "DeviceCounterConsumption",
    "DeviceRequest",
    "ExactDeviceRequest",
    "ResourceClaimSpec",
    "ResourceClaimTemplate",
    "ResourceClaimTemplateSpec",
    "ResourcePool",
    "ResourceSlice",
    "ResourceSliceSpec",
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


class CapacityRequestPolicyRange(Object):
    min: Quantity | None = None
    max: Quantity | None = None
    step: Quantity | None = None


class CapacityRequestPolicy(Object):
    default: Quantity | None = None
    valid_values: list[Quantity] | None = None
    valid_range: CapacityRequestPolicyRange | None = None


class DeviceCapacity(Object):
    value: Quantity
    request_policy: CapacityRequestPolicy | None = None


class DeviceAttribute(Object):
    # Exactly one is set (kube-apiserver's validation); "version" is semver text.
    int_: int | None = msgspec.field(default=None, name="int")
    bool_: bool | None = msgspec.field(default=None, name="bool")
    string: str | None = None
    version: str | None = None


class Counter(Object):
    value: Quantity


class DeviceCounterConsumption(Object):
    counter_set: str
    counters: dict[str, Counter]


class CounterSet(Object):
    name: str
    counters: dict[str, Counter]


class Device(Object):
    name: str
    attributes: dict[str, DeviceAttribute] | None = None
    capacity: dict[str, DeviceCapacity] | None = None
    consumes_counters: list[DeviceCounterConsumption] | None = None
    node_name: str | None = None
    node_selector: AnyObject | None = None
    all_nodes: bool | None = None
    taints: AnyList | None = None
    binds_to_node: bool | None = None
    binding_conditions: list[str] | None = None
    binding_failure_conditions: list[str] | None = None
    allow_multiple_allocations: bool | None = None


class ResourcePool(Object):
    name: str
    generation: int
    resource_slice_count: int


class ResourceSliceSpec(Object):
    driver: str
    pool: ResourcePool
    node_name: str | None = None
    node_selector: AnyObject | None = None
    all_nodes: bool | None = None
    per_device_node_selection: bool | None = None
    devices: list[Device] | None = None
    shared_counters: list[CounterSet] | None = None


class ResourceSlice(Object):
    """A driver's published devices (cluster-scoped): what Kueue's counter-
    and capacity-based DRA quota charges from."""

    api_version: str
    kind: str
    spec: ResourceSliceSpec
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)


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
