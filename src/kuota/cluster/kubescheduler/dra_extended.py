"""The DRA extended-resource scheduler plugin's view of a node (Kubernetes
``DRAExtendedResource``): a DeviceClass that declares
``spec.extendedResourceName`` lets a pod ask for its devices with an
ordinary request (``example.com/gpu: 1``), and a node without that resource
in its allocatable (no device plugin) offers as many of it as its
ResourceSlices publish devices the class's selectors accept.

Simplifications: only slices naming the node (``nodeName``) count, every
device is whole (no counters or shared allocation), and the devices a pod
takes are accounted as its request of the resource, which is what the
placement's resource fit already sums per node.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kuota.api.cel import CelError
from kuota.api.k8s.resource import Device, DeviceClass, ResourceSlice
from kuota.quota.dra_extended import selected_class
from kuota.quota.dra_slices import compile_selectors, count_matching

__all__ = ["merged", "node_extended_devices"]

_ALL = 2**62  # count_matching counts up to a bound: count every device


def node_extended_devices(
    classes: Iterable[DeviceClass], slices: Iterable[ResourceSlice]
) -> dict[str, dict[str, int]]:
    """Node -> {extended resource name: devices of its class on the node},
    the class being the one Kubernetes picks for a name several declare."""
    classes = list(classes)
    names = sorted({er for dc in classes if (er := dc.spec.extended_resource_name)})
    if not names:
        return {}
    by_node: dict[str, list[tuple[str, Device]]] = {}
    for s in slices:
        node = s.spec.node_name
        if node:
            by_node.setdefault(node, []).extend((s.spec.driver, d) for d in s.spec.devices or ())
    out: dict[str, dict[str, int]] = {}
    for name in names:
        dc = selected_class(classes, name)
        assert dc is not None
        cls, errs = compile_selectors(dc.spec.selectors, "spec.selectors", "")
        if errs:
            continue  # a class whose selectors do not compile matches nothing
        for node, devices in by_node.items():
            try:
                n = count_matching(devices, cls, (), set(), _ALL)
            except CelError:
                n = 0
            if n:
                out.setdefault(node, {})[name] = n
    return out


def merged(alloc: Mapping[str, int], extra: Mapping[str, int] | None) -> dict[str, int]:
    """A node's allocatable with its DRA extended resources: a name the node
    already offers (a device plugin) is kept as the node reports it."""
    out = dict(alloc)
    for k, v in (extra or {}).items():
        out.setdefault(k, v)
    return out
