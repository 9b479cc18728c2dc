"""A TAS flavor's topology as the scheduler sees it in one cycle (Kueue's
tas_topology_tree.go and the capacity half of tas_flavor_snapshot.go): the
nodes that match the flavor, grouped level by level into domains, each leaf
with its free capacity (allocatable minus the pods Kueue did not place) and
the usage of the workloads TAS placed there."""

from __future__ import annotations

from typing import Any, Final

from kuota.api.k8s import NodeSelector, Taint, Toleration
from kuota.api.k8s.nodeselection import node_selector_requirement_matches, tolerates
from kuota.api.kueue.topology import is_tas_pod
from kuota.quota.requests import pod_requests, resource_value

HOSTNAME: Final = "kubernetes.io/hostname"
PODS: Final = "pods"


class TASNode:
    """What the core knows of a node: its labels, allocatable (Kueue units),
    taints, and whether it is ready and schedulable."""

    __slots__ = ("allocatable", "labels", "name", "ready", "taints")

    def __init__(
        self,
        name: str,
        labels: dict[str, str],
        allocatable: dict[str, int],
        taints: list[Taint],
        ready: bool,
    ) -> None:
        self.name = name
        self.labels = labels
        self.allocatable = allocatable
        self.taints = taints
        self.ready = ready


class Domain:
    """A topology domain; its counts are the state of one placement search."""

    __slots__ = (
        "children",
        "free",
        "id",
        "leader_count",
        "node",
        "parent",
        "pod_count",
        "pod_count_with_leader",
        "slice_count",
        "slice_count_with_leader",
        "tas_usage",
        "values",
    )

    def __init__(self, did: str, values: list[str], parent: Domain | None) -> None:
        self.id = did
        self.values = values
        self.parent = parent
        self.children: list[Domain] = []
        self.node: TASNode | None = None
        self.free: dict[str, int] = {}
        self.tas_usage: dict[str, int] = {}
        self.pod_count = 0
        self.slice_count = 0
        self.leader_count = 0
        self.pod_count_with_leader = 0
        self.slice_count_with_leader = 0

    def reset(self) -> None:
        self.pod_count = 0
        self.slice_count = 0
        self.leader_count = 0
        self.pod_count_with_leader = 0
        self.slice_count_with_leader = 0

    def copy_state(self) -> Domain:
        """A shallow copy with its own counts (a leader's share of a domain)."""
        d = Domain(self.id, self.values, self.parent)
        d.pod_count = self.pod_count
        d.leader_count = self.leader_count
        return d


def domain_id(values: list[str]) -> str:
    return ",".join(values)


def node_matches_flavor(
    labels: dict[str, str], flavor_labels: dict[str, str], levels: list[str]
) -> bool:
    """utiltas.NodeMatchesFlavor: the flavor's labels and every level's label."""
    for k, v in flavor_labels.items():
        if labels.get(k) != v:
            return False
    return all(lv in labels for lv in levels)


class FlavorTopology:
    """One TAS flavor's snapshot (TASFlavorSnapshot)."""

    def __init__(
        self,
        topology_name: str,
        levels: list[str],
        nodes: list[TASNode],
        tolerations: list[Toleration],
    ) -> None:
        self.topology_name = topology_name
        self.levels = levels
        self.tolerations = tolerations
        self.lowest_is_node = bool(levels) and levels[-1] == HOSTNAME
        self.leaves: dict[str, Domain] = {}
        self.per_level: list[dict[str, Domain]] = [{} for _ in levels]
        self.roots: list[Domain] = []
        self.node_to_leaf: dict[str, str] = {}
        for n in nodes:
            self._add_node(n)
        for leaf in list(self.leaves.values()):
            self.per_level[len(leaf.values) - 1][leaf.id] = leaf
            self._link(leaf)

    def _add_node(self, n: TASNode) -> None:
        values = [n.labels[lv] for lv in self.levels]
        did = n.labels[HOSTNAME] if self.lowest_is_node else domain_id(values)
        leaf = self.leaves.get(did)
        if leaf is None:
            leaf = self.leaves[did] = Domain(did, values, None)
            if self.lowest_is_node:
                leaf.node = n
        for r, q in n.allocatable.items():
            leaf.free[r] = leaf.free.get(r, 0) + q
        self.node_to_leaf[n.name] = did

    def _link(self, d: Domain) -> None:
        if len(d.values) == 1:
            self.roots.append(d)
            return
        pvalues = d.values[:-1]
        pid = domain_id(pvalues)
        level = self.per_level[len(pvalues) - 1]
        parent = level.get(pid)
        if parent is None:
            parent = level[pid] = Domain(pid, pvalues, None)
            self._link(parent)
        d.parent = parent
        parent.children.append(d)

    def add_non_tas_usage(self, node: str, usage: dict[str, int]) -> None:
        did = self.node_to_leaf.get(node)
        if did is None:
            return
        free = self.leaves[did].free
        for r, q in usage.items():
            free[r] = free.get(r, 0) - q

    def add_tas_usage(self, did: str, usage: dict[str, int]) -> None:
        leaf = self.leaves.get(did)
        if leaf is None:
            return
        for r, q in usage.items():
            leaf.tas_usage[r] = leaf.tas_usage.get(r, 0) + q

    def remove_tas_usage(self, did: str, usage: dict[str, int]) -> None:
        leaf = self.leaves.get(did)
        if leaf is None:
            return
        for r, q in usage.items():
            leaf.tas_usage[r] = leaf.tas_usage.get(r, 0) - q

    def level_index(self, key: str) -> int:
        try:
            return self.levels.index(key)
        except ValueError:
            return -1

    def remaining(self, leaf: Domain, simulate_empty: bool) -> dict[str, int]:
        out = dict(leaf.free)
        if not simulate_empty:
            for r, q in leaf.tas_usage.items():
                out[r] = out.get(r, 0) - q
        return out


def count_in(requests: dict[str, int], capacity: dict[str, int]) -> tuple[int, str]:
    """resources.CountInWithLimitingResource: how many times the requests fit,
    and the resource that limits it (ties by name)."""
    best = -1
    limiting = ""
    for r in sorted(requests):
        v = requests[r]
        count = 2**31 - 1 if v == 0 else max(0, min(capacity.get(r, 0) // v, 2**31 - 1))
        if best < 0 or count < best:
            best = count
            limiting = r
    return (best if best >= 0 else 2**31 - 1), limiting


def selector_matches(labels: dict[str, str], selector: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def affinity_matches(labels: dict[str, str], name: str, ns: NodeSelector | None) -> bool:
    """A required node affinity: its terms ORed, each term's requirements ANDed."""
    if ns is None:
        return True
    for term in ns.node_selector_terms or ():
        exprs = term.match_expressions or []
        fields = term.match_fields or []
        if not exprs and not fields:
            continue
        ok = all(node_selector_requirement_matches(e, labels) for e in exprs)
        ok = ok and all(
            node_selector_requirement_matches(f, {"metadata.name": name}) for f in fields
        )
        if ok:
            return True
    return False


def untolerated(taints: list[Taint], tolerations: list[Toleration]) -> Taint | None:
    """The first NoSchedule/NoExecute taint no toleration tolerates."""
    for t in taints:
        if t.effect not in ("NoSchedule", "NoExecute"):
            continue
        if not any(tolerates(tol, t) for tol in tolerations):
            return t
    return None


def tas_node(n: Any) -> TASNode:
    """What TAS reads of a Node (the TAS node cache's stripped copy)."""
    st = n.status
    alloc = {r: resource_value(r, q) for r, q in ((st.allocatable if st else None) or {}).items()}
    conds = (st.conditions if st else None) or ()
    ready = any(c.type == "Ready" and c.status == "True" for c in conds)
    spec = n.spec
    unschedulable = bool(spec is not None and spec.unschedulable)
    taints = list((spec.taints if spec is not None else None) or ())
    labels = dict(n.metadata.labels or {})
    return TASNode(n.metadata.name, labels, alloc, taints, ready and not unschedulable)


def non_tas_pod_usage(pod: Any) -> tuple[str, dict[str, int]] | None:
    """The node and requests of a pod Kueue did not place on a topology
    (utiltas.IsTAS false) that holds its node (bound, not terminated)."""
    node = pod.spec.node_name if pod.spec is not None else None
    if not node:
        return None
    if is_tas_pod(pod):
        return None
    phase = pod.status.phase if pod.status is not None else None
    if phase in ("Succeeded", "Failed"):
        return None
    usage = dict(pod_requests(pod.spec))
    usage[PODS] = usage.get(PODS, 0) + 1
    return node, usage
