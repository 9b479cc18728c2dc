"""What a Node offers and what a Pod asks for, as every part of the embedded
cluster reads them (the kubelet, kube-scheduler, the API server's node
registration, the controllers).

Amounts are exact integers as Kubernetes keeps them: milli-units for ``cpu``,
whole units (bytes, devices) for everything else, rounded up. What a node
offers is what its kubelet reports (``kuota.api.nodeconfig``): its
``status.allocatable`` when the Node states it, else its capacity minus the
system- and kube-reserved amounts and hard eviction thresholds of its
kubelet-configuration annotations; the pod capacity from ``maxPods`` and
``podsPerCore``.
"""

from __future__ import annotations

from typing import Any

from kuota.api.core import Node, Pod
from kuota.api.nodeconfig import node_status_resources
from kuota.quota.requests import pod_requests, resource_value

__all__ = [
    "DEFAULT_MAX_PODS",
    "NOT_READY_TAINT",
    "OPENSHIFT_MAX_PODS",
    "UNREACHABLE_TAINT",
    "UNSCHEDULABLE_TAINT",
    "node_allocatable",
    "node_capacity",
    "node_ready",
    "node_resources",
    "pod_resource_requests",
]

# The kubelet's default --max-pods: a node that does not report ``pods``
# (hand-written worlds often omit it) takes what a kubelet would have
# reported: Kubernetes' 110, or OpenShift's 250 (its KubeletConfig default).
DEFAULT_MAX_PODS = 110
OPENSHIFT_MAX_PODS = 250

# What the node lifecycle controller puts on a node whose Ready condition is
# False (TaintNodesByCondition); the scheduler's taint filter then keeps pods
# off it unless they tolerate it, as in a real cluster.
NOT_READY_TAINT = "node.kubernetes.io/not-ready"
# Its siblings for a node whose Ready condition is Unknown, and a cordoned one.
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"


def node_ready(node: Node) -> bool:
    """Ready unless its Ready condition says False (a node without conditions,
    as hand-written worlds have them, is Ready)."""
    st = node.status
    for c in (st.conditions if st is not None else None) or ():
        if c.type == "Ready":
            return c.status != "False"
    return True


def node_resources(node: Node, default_max_pods: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The node's (capacity, allocatable) quantities as its kubelet reports them."""
    st = node.status
    return node_status_resources(
        st.capacity if st is not None else None,
        st.allocatable if st is not None else None,
        node.metadata.annotations,
        default_max_pods,
    )


def node_allocatable(node: Node, default_max_pods: int = DEFAULT_MAX_PODS) -> dict[str, int]:
    """What the node's kubelet reports as allocatable, in integer units:
    ``status.allocatable`` as given, else capacity minus reservations (see
    the module docstring); ``pods`` from maxPods/podsPerCore when absent."""
    alloc = node_resources(node, default_max_pods)[1]
    return {name: resource_value(name, q) for name, q in alloc.items()}


def node_capacity(node: Node, default_max_pods: int = DEFAULT_MAX_PODS) -> dict[str, int]:
    """The node's capacity in integer units (its allocatable where it gives
    only that), with the pod capacity."""
    cap = node_resources(node, default_max_pods)[0]
    return {name: resource_value(name, q) for name, q in cap.items()}


def pod_resource_requests(pod: Pod) -> dict[str, int]:
    """Kubernetes' ``PodRequests``: containers and sidecars, the init-container
    peak, pod-level resources and overhead; zero amounts dropped."""
    if pod.spec is None:
        return {}
    return {k: v for k, v in pod_requests(pod.spec).items() if v}
