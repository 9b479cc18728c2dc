"""Per-node accounting for placement: what each node offers and what the pods
bound to it request, kept current incrementally from pod and node events (the
role of kube-scheduler's cache and its ``NodeInfo``). What a node offers and a
pod requests is read as :mod:`kuota.cluster.nodeutil` says.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kuota.api.k8s import Node, Pod, Taint
from kuota.cluster.kubescheduler.dra_extended import merged
from kuota.cluster.nodeutil import (
    DEFAULT_MAX_PODS,
    NOT_READY_TAINT,
    node_ready,
    node_resources,
    pod_resource_requests,
)
from kuota.cluster.podutil import is_terminal
from kuota.quota.requests import resource_value

__all__ = ["NodeState", "NodeTable"]


@dataclass(slots=True)
class NodeState:
    """One node as placement sees it. ``requested`` and ``pod_count`` cover the
    bound pods that have not finished."""

    name: str
    allocatable: dict[str, int]
    labels: dict[str, str]
    taints: list[Taint]
    unschedulable: bool
    ready: bool
    requested: dict[str, int] = field(default_factory=dict)
    pod_count: int = 0
    # What the node has before reservations (allocatable's superset); pod
    # capacity included. Placement decides with ``allocatable``.
    capacity: dict[str, int] = field(default_factory=dict)

    def free(self, resource: str) -> int:
        return self.allocatable.get(resource, 0) - self.requested.get(resource, 0)

    def effective_taints(self) -> list[Taint]:
        """The node's taints plus the not-ready taint the node lifecycle
        controller would add when it is not Ready."""
        if self.ready or any(t.key == NOT_READY_TAINT for t in self.taints):
            return self.taints
        return [*self.taints, Taint(key=NOT_READY_TAINT, effect="NoSchedule")]

    def signature(self) -> tuple[object, ...]:
        """What placement decides with, apart from usage: equal signatures mean
        a node change cannot have made room for anyone."""
        return (
            sorted(self.allocatable.items()),
            sorted(self.labels.items()),
            [(t.key, t.value, t.effect) for t in self.taints],
            self.unschedulable,
            self.ready,
        )


def _state_of(
    node: Node, default_max_pods: int = DEFAULT_MAX_PODS, dra: Mapping[str, int] | None = None
) -> NodeState:
    spec = node.spec
    cap, alloc = node_resources(node, default_max_pods)
    return NodeState(
        name=node.metadata.name,
        allocatable=merged({name: resource_value(name, q) for name, q in alloc.items()}, dra),
        labels=dict(node.metadata.labels or {}),
        taints=list(spec.taints or ()) if spec is not None else [],
        unschedulable=bool(spec.unschedulable) if spec is not None else False,
        ready=node_ready(node),
        capacity=merged({name: resource_value(name, q) for name, q in cap.items()}, dra),
    )


@dataclass(frozen=True, slots=True)
class _Bound:
    node: str
    requests: Mapping[str, int]


def _add(acc: dict[str, int], vec: Mapping[str, int], sign: int) -> None:
    for k, v in vec.items():
        n = acc.get(k, 0) + sign * v
        if n:
            acc[k] = n
        else:
            acc.pop(k, None)


class NodeTable:
    """Nodes by name and the pods bound to them.

    Pods are tracked by key even while their node is unknown (bound before the
    node appeared, or the node was deleted): a node that (re)appears starts
    with their usage. Feeding the same pod twice is harmless, so a binder can
    record a binding at once and the informer event confirm it later.
    """

    def __init__(self, default_max_pods: int = DEFAULT_MAX_PODS) -> None:
        # The pod capacity of a node that reports none (see NodeRegistration).
        self.default_max_pods = default_max_pods
        self._nodes: dict[str, NodeState] = {}
        self._sorted: list[NodeState] | None = None
        self._pods: dict[str, _Bound] = {}
        self._by_node: dict[str, dict[str, None]] = {}  # node -> pod keys (ordered set)

    # ------------------------------------------------------------ reading
    def __len__(self) -> int:
        return len(self._nodes)

    def get(self, name: str) -> NodeState | None:
        return self._nodes.get(name)

    def sorted(self) -> list[NodeState]:
        """The nodes in name order (cached until a node changes)."""
        if self._sorted is None:
            self._sorted = [self._nodes[n] for n in sorted(self._nodes)]
        return self._sorted

    def pods_on(self, node: str) -> list[str]:
        """Keys of the unfinished pods bound to ``node``, in binding order."""
        return list(self._by_node.get(node, ()))

    # ------------------------------------------------------------ nodes
    def set_node(
        self, node: Node, dra: Mapping[str, int] | None = None
    ) -> tuple[NodeState | None, NodeState]:
        """Add or replace a node; returns (previous state, new state).
        ``dra``: the DRA extended resources its ResourceSlices offer."""
        new = _state_of(node, self.default_max_pods, dra)
        for key in self._by_node.get(new.name, ()):
            _add(new.requested, self._pods[key].requests, 1)
        new.pod_count = len(self._by_node.get(new.name, ()))
        old = self._nodes.get(new.name)
        self._nodes[new.name] = new
        self._sorted = None
        return old, new

    def remove_node(self, name: str) -> NodeState | None:
        old = self._nodes.pop(name, None)
        if old is not None:
            self._sorted = None
        return old

    # ------------------------------------------------------------ pods
    def set_pod(self, key: str, pod: Pod | None, requests: Mapping[str, int] | None = None) -> bool:
        """Record a pod's latest state (None: it is gone); ``requests``, if
        given, are the pod's :func:`pod_resource_requests` computed already.
        Returns whether the usage of some node went down (capacity may have
        appeared)."""
        node = pod.spec.node_name if pod is not None and pod.spec is not None else None
        counted = node is not None and pod is not None and not is_terminal(pod)
        old = self._pods.get(key)
        if old is not None and counted and old.node == node:
            return False  # requests of a bound pod do not change (resize is not modelled)
        freed = False
        if old is not None:
            self._unbind(key, old)
            freed = True
        if counted:
            assert node is not None and pod is not None
            if requests is None:
                requests = pod_resource_requests(pod)
            self._bind(key, _Bound(node, requests))
        return freed

    def _bind(self, key: str, b: _Bound) -> None:
        self._pods[key] = b
        self._by_node.setdefault(b.node, {})[key] = None
        st = self._nodes.get(b.node)
        if st is not None:
            _add(st.requested, b.requests, 1)
            st.pod_count += 1

    def _unbind(self, key: str, b: _Bound) -> None:
        del self._pods[key]
        keys = self._by_node.get(b.node)
        if keys is not None:
            keys.pop(key, None)
            if not keys:
                del self._by_node[b.node]
        st = self._nodes.get(b.node)
        if st is not None:
            _add(st.requested, b.requests, -1)
            st.pod_count -= 1

    def load(self, nodes: Iterable[Node], pods: Iterable[tuple[str, Pod]]) -> None:
        """Fill an empty table (tests and tools that build one directly)."""
        for n in nodes:
            self.set_node(n)
        for key, p in pods:
            self.set_pod(key, p)
