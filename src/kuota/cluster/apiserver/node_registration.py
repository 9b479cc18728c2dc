"""The API server's part of a kubelet registering its node: a new Node gets
the capacity and allocatable its kubelet would report, so ``kuota get nodes
-o yaml`` shows them (see :mod:`kuota.cluster.nodeutil`)."""

from __future__ import annotations

from typing import Any

from kuota.api.core import NodeStatus
from kuota.cluster.nodeutil import DEFAULT_MAX_PODS, node_resources
from kuota.store import clone

__all__ = ["NodeRegistration", "register_node_status"]


class NodeRegistration:
    """An admission hook: a Node created without its kubelet-reported
    resources gets ``status.capacity`` and ``status.allocatable`` filled in
    (with ``pods``), as its kubelet writes them when it registers."""

    kinds = frozenset({("", "Node")})  # the store calls it for Nodes only
    operations = frozenset({"CREATE"})

    def __init__(self, default_max_pods: int = DEFAULT_MAX_PODS) -> None:
        self.default_max_pods = default_max_pods

    def __call__(self, op: str, new: Any, old: Any | None) -> Any:
        if op != "CREATE" or new.kind != "Node" or new.api_version != "v1":
            return new
        st = new.status
        if st is not None and st.capacity and st.allocatable and "pods" in st.allocatable:
            return new
        cap, alloc = node_resources(new, self.default_max_pods)
        new = clone(new)
        status = new.status if new.status is not None else NodeStatus()
        status.capacity, status.allocatable = cap, alloc
        new.status = status
        return new


def register_node_status(default_max_pods: int = DEFAULT_MAX_PODS) -> NodeRegistration:
    """The node-registration admission hook (see :class:`NodeRegistration`)."""
    return NodeRegistration(default_max_pods)
