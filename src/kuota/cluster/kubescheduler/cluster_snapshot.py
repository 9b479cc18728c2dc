"""The scheduler's view of the cluster (kube-scheduler's cache and snapshot):
the :class:`~kuota.cluster.kubescheduler.node_table.NodeTable` for what
nodes offer and what is requested on them, plus what the other plugins read — the bound pods
with their labels, ports and affinity terms, the non-zero requests the
scorers count, namespace labels, and the pods nominated to nodes by
preemption.

It also keeps two counters that let placement cache work between pods:
``generation`` moves when any node changes (labels, taints, allocatable:
the static filters' answers), and every change of a node's usage is logged
(``changes_since``) so a cached ranking of nodes re-scores only those.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from kuota.api.k8s import Node, Pod, Taint
from kuota.cluster.kubescheduler.node_table import NodeState, NodeTable
from kuota.cluster.kubescheduler.podinfo import PodInfo, parse_pod
from kuota.cluster.nodeutil import pod_resource_requests
from kuota.cluster.podutil import is_terminal

__all__ = ["ClusterSnapshot"]

_LOG_MIN = 4096  # usage changes kept before the log is halved
_REGISTERED_LABELS = (
    ("kubernetes.io/hostname", ""),  # "": the node's name
    ("kubernetes.io/os", "linux"),
    ("kubernetes.io/arch", "amd64"),
)


class ClusterSnapshot:
    """Nodes, bound pods and nominations, kept current incrementally.

    Reads like a :class:`NodeTable` (``len``, ``get``, ``sorted``), so a
    placement written for a NodeTable works on it unchanged.
    """

    def __init__(self, nodes: NodeTable | None = None) -> None:
        self.nodes = nodes if nodes is not None else NodeTable()
        self.pods: dict[str, PodInfo] = {}  # bound, unfinished pods
        self.on_node: dict[str, dict[str, PodInfo]] = {}
        self._nonzero: dict[str, list[int]] = {}  # node -> [cpu milli, memory bytes]
        self.namespaces: dict[str, Mapping[str, str]] = {}
        self.nominated: dict[str, tuple[str, PodInfo]] = {}  # pod key -> (node, info)
        self.affinity_pods: dict[str, PodInfo] = {}  # bound pods with inter-pod terms
        self.priorities: dict[int, int] = {}  # priority -> bound pods with it
        self.generation = 0
        self.versions: dict[str, int] = {}
        self._log: list[str] = []
        self._log_base = 0

    @property
    def with_affinity(self) -> int:
        """Bound pods with pod (anti-)affinity terms (others' placement may
        depend on them)."""
        return len(self.affinity_pods)

    def bound_pairs(self, everyone: bool) -> Iterator[tuple[PodInfo, NodeState]]:
        """Bound pods with their nodes: every pod, or only those with
        inter-pod terms (all an incoming pod without terms of its own needs)."""
        for info in (self.pods if everyone else self.affinity_pods).values():
            node = self.nodes.get(info.node) if info.node else None
            if node is not None:
                yield info, node

    @classmethod
    def wrap(cls, nodes: NodeTable | ClusterSnapshot) -> ClusterSnapshot:
        """A snapshot over ``nodes`` (itself if it is one already). A bare
        NodeTable brings no pod details: resources are all placement sees."""
        return nodes if isinstance(nodes, ClusterSnapshot) else cls(nodes)

    # ------------------------------------------------------------ NodeTable reading
    def __len__(self) -> int:
        return len(self.nodes)

    def get(self, name: str) -> NodeState | None:
        return self.nodes.get(name)

    def sorted(self) -> list[NodeState]:
        return self.nodes.sorted()

    def pods_on(self, node: str) -> list[PodInfo]:
        return list(self.on_node.get(node, {}).values())

    def nonzero(self, node: NodeState) -> tuple[int, int]:
        """The node's cpu and memory requests as the scorers count them."""
        nz = self._nonzero.get(node.name)
        if nz is not None:
            return nz[0], nz[1]
        if node.pod_count:
            # Pods the snapshot has no details of (a wrapped NodeTable): their
            # real requests are the best there is.
            return node.requested.get("cpu", 0), node.requested.get("memory", 0)
        return 0, 0

    def taints(self, node: NodeState) -> list[Taint]:
        return node.effective_taints()

    # ------------------------------------------------------------ change log
    def _touch(self, node: str | None) -> None:
        if not node:
            return
        self.versions[node] = self.versions.get(node, 0) + 1
        self._log.append(node)
        limit = max(_LOG_MIN, 4 * len(self.nodes))
        if len(self._log) > limit:
            half = len(self._log) // 2
            del self._log[:half]
            self._log_base += half

    @property
    def log_position(self) -> int:
        return self._log_base + len(self._log)

    def changes_since(self, position: int) -> set[str] | None:
        """Nodes whose usage changed since ``position`` (None: too long ago,
        the log was trimmed; start over)."""
        if position < self._log_base:
            return None
        return set(self._log[position - self._log_base :])

    # ------------------------------------------------------------ nodes
    def set_node(
        self, node: Node, dra: Mapping[str, int] | None = None
    ) -> tuple[NodeState | None, NodeState]:
        before, after = self.nodes.set_node(node, dra)
        for key, value in _REGISTERED_LABELS:
            # Labels every kubelet registers its node with (hand-written
            # worlds leave them out): hostname is the usual topology key.
            after.labels.setdefault(key, value or after.name)
        self.generation += 1
        self._touch(after.name)
        return before, after

    def remove_node(self, name: str) -> NodeState | None:
        old = self.nodes.remove_node(name)
        if old is not None:
            self.generation += 1
            self._touch(name)
        return old

    # ------------------------------------------------------------ namespaces
    def set_namespace(self, name: str, labels: Mapping[str, str] | None) -> None:
        self.namespaces[name] = dict(labels or {})

    def remove_namespace(self, name: str) -> None:
        self.namespaces.pop(name, None)

    # ------------------------------------------------------------ pods
    def set_pod(self, key: str, pod: Pod | None, info: PodInfo | None = None) -> bool:
        """Record a pod's latest state (None: gone); ``info``, if given, is the
        pod already parsed. Returns whether some node's usage went down."""
        freed = self.nodes.set_pod(key, pod, info.requests if info is not None else None)
        node = pod.spec.node_name if pod is not None and pod.spec is not None else None
        counted = bool(node) and pod is not None and not is_terminal(pod)
        old = self.pods.get(key)
        if old is not None and counted and old.node == node:
            assert pod is not None
            # Same binding: only what can change on a bound pod.
            old.deleting = pod.metadata.deletion_timestamp is not None
            st = pod.status
            if st is not None and st.start_time is not None:
                old.start = st.start_time
            if (pod.metadata.labels or {}) != old.labels:
                self._drop(old)
                self._add(parse_pod(key, pod, old.requests))
            return freed
        if old is not None:
            self._drop(old)
        if counted:
            assert pod is not None
            if info is None or info.node != node:
                info = parse_pod(key, pod, pod_resource_requests(pod))
            self._add(info)
        if pod is None or counted or is_terminal(pod) or pod.metadata.deletion_timestamp:
            self.clear_nomination(key)
        return freed

    def _add(self, info: PodInfo) -> None:
        assert info.node is not None
        self.pods[info.key] = info
        self.on_node.setdefault(info.node, {})[info.key] = info
        nz = self._nonzero.setdefault(info.node, [0, 0])
        nz[0] += info.nonzero[0]
        nz[1] += info.nonzero[1]
        if info.has_affinity:
            self.affinity_pods[info.key] = info
        self.priorities[info.priority] = self.priorities.get(info.priority, 0) + 1
        self._touch(info.node)

    def _drop(self, info: PodInfo) -> None:
        assert info.node is not None
        del self.pods[info.key]
        on = self.on_node.get(info.node)
        if on is not None:
            on.pop(info.key, None)
            if not on:
                del self.on_node[info.node]
        nz = self._nonzero.get(info.node)
        if nz is not None:
            nz[0] -= info.nonzero[0]
            nz[1] -= info.nonzero[1]
            if info.node not in self.on_node:
                del self._nonzero[info.node]
        self.affinity_pods.pop(info.key, None)
        n = self.priorities[info.priority] - 1
        if n:
            self.priorities[info.priority] = n
        else:
            del self.priorities[info.priority]
        self._touch(info.node)

    def load(self, nodes: list[Node], pods: list[tuple[str, Pod]]) -> None:
        """Fill an empty snapshot (tools and tests that build one directly)."""
        for n in nodes:
            self.set_node(n)
        for key, p in pods:
            self.set_pod(key, p)

    def has_lower_priority(self, priority: int) -> bool:
        """Whether some bound pod has a lower priority (someone preemption could evict)."""
        return any(p < priority for p in self.priorities)

    # ------------------------------------------------------------ nominations
    def nominate(self, key: str, node: str, info: PodInfo) -> None:
        """``status.nominatedNodeName``: preemption made room for the pod on
        ``node``; pods of no higher priority must leave that room to it."""
        self.clear_nomination(key)
        self.nominated[key] = (node, info)
        self._touch(node)

    def clear_nomination(self, key: str) -> None:
        prev = self.nominated.pop(key, None)
        if prev is not None:
            self._touch(prev[0])

    def nominated_on(self, node: str) -> Iterator[PodInfo]:
        for n, info in self.nominated.values():
            if n == node:
                yield info

    def nominated_node(self, key: str) -> str | None:
        prev = self.nominated.get(key)
        return prev[0] if prev is not None else None
