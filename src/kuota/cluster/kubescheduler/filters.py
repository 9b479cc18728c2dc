"""kube-scheduler's node filters that need no other pod: NodeUnschedulable,
NodeName, TaintToleration, NodeAffinity (the *static* ones: their answer for
a pod and a node changes only when the node does), NodePorts and
NodeResourcesFit, with their exact reasons and status codes
(``pkg/scheduler/framework/plugins/*``).

A node reports the reasons of the first filter it fails, in the default
profile's order (``RunFilterPlugins`` stops there): NodeUnschedulable,
NodeName, TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit, then
PodTopologySpread and InterPodAffinity (``spread.py``, ``interpod.py``).

A rejection is *unresolvable* (``UnschedulableAndUnresolvable``) when
removing pods from the node cannot help; preemption skips those nodes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from kuota.api.k8s import NodeSelectorTerm, PodSpec, Taint, Toleration
from kuota.api.k8s.nodeselection import node_selector_requirement_matches, tolerates
from kuota.cluster.kubescheduler.node_table import NodeState

__all__ = [
    "FIXED_RESOURCES",
    "REASON_CONFLICT",
    "REASON_NODE_AFFINITY",
    "REASON_NODE_NAME",
    "REASON_NODE_PORTS",
    "REASON_TOO_MANY_PODS",
    "REASON_UNSCHEDULABLE",
    "NodeAffinitySpec",
    "Rejection",
    "find_untolerated_taint",
    "fits",
    "insufficient",
    "intolerable_prefer_no_schedule",
    "is_scalar_resource",
    "pod_matches_node",
    "resource_checks",
    "static_rejection",
    "term_matches",
    "tolerates",
    "untolerated_taint_reason",
]

# kube-scheduler's texts.
REASON_UNSCHEDULABLE = "node(s) were unschedulable"
REASON_NODE_NAME = "node(s) didn't match the requested node name"
REASON_NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
REASON_NODE_PORTS = "node(s) didn't have free ports for the requested pod ports"
REASON_TOO_MANY_PODS = "Too many pods"
REASON_CONFLICT = "pod affinity terms conflict"  # NodeAffinity PreFilter: no name left
UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")
_FILTERED_EFFECTS = ("NoSchedule", "NoExecute")
FIXED_RESOURCES = ("cpu", "memory", "ephemeral-storage")


@dataclass(frozen=True, slots=True)
class Rejection:
    """Why a filter rejected a node: its reasons, and whether preemption
    could help (``unresolvable``: it could not)."""

    reasons: tuple[str, ...]
    unresolvable: bool = False


# ------------------------------------------------------------------ tolerations
def find_untolerated_taint(
    taints: Iterable[Taint],
    tolerations: Sequence[Toleration],
    effects: Sequence[str] = _FILTERED_EFFECTS,
) -> Taint | None:
    """``FindMatchingUntoleratedTaint``: the first taint (in the node's order)
    with one of ``effects`` that no toleration tolerates."""
    for taint in taints:
        if taint.effect in effects and not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None


def untolerated_taint_reason(taint: Taint) -> str:
    return f"node(s) had untolerated taint {{{taint.key}: {taint.value or ''}}}"


def intolerable_prefer_no_schedule(
    taints: Iterable[Taint], tolerations: Sequence[Toleration]
) -> int:
    """TaintToleration's score before normalizing: the PreferNoSchedule taints
    none of the pod's PreferNoSchedule (or any-effect) tolerations tolerates."""
    prefer = [t for t in tolerations if not t.effect or t.effect == "PreferNoSchedule"]
    return sum(
        1
        for taint in taints
        if taint.effect == "PreferNoSchedule" and not any(tolerates(t, taint) for t in prefer)
    )


# ---------------------------------------------------------------- node affinity
def term_matches(term: NodeSelectorTerm, name: str, labels: Mapping[str, str]) -> bool:
    """One node selector term: all its expressions and fields (only
    ``metadata.name`` exists); a term with no requirement matches nothing."""
    exprs = term.match_expressions or []
    by_field = term.match_fields or []
    if not exprs and not by_field:
        return False
    if not all(node_selector_requirement_matches(e, labels) for e in exprs):
        return False
    if by_field:
        fields = {"metadata.name": name}
        return all(node_selector_requirement_matches(f, fields) for f in by_field)
    return True


@dataclass(frozen=True, slots=True)
class NodeAffinitySpec:
    """A pod's nodeSelector, required and preferred node affinity, parsed."""

    selector: tuple[tuple[str, str], ...]
    required: tuple[NodeSelectorTerm, ...] | None  # None: no required affinity
    preferred: tuple[tuple[int, NodeSelectorTerm], ...]

    @classmethod
    def of(cls, spec: PodSpec | None) -> NodeAffinitySpec:
        if spec is None:
            return cls((), None, ())
        aff = spec.affinity
        na = aff.node_affinity if aff is not None else None
        req = na.required_during_scheduling_ignored_during_execution if na is not None else None
        pref = na.preferred_during_scheduling_ignored_during_execution if na is not None else None
        return cls(
            tuple(sorted((spec.node_selector or {}).items())),
            tuple(req.node_selector_terms or ()) if req is not None else None,
            tuple((p.weight, p.preference) for p in pref or ()),
        )

    def matches(self, name: str, labels: Mapping[str, str]) -> bool:
        """The NodeAffinity filter: every nodeSelector label, and at least one
        term of the required node affinity."""
        for k, v in self.selector:
            if labels.get(k) != v:
                return False
        if self.required is None:
            return True
        return any(term_matches(t, name, labels) for t in self.required)

    def preferred_weight(self, name: str, labels: Mapping[str, str]) -> int:
        """NodeAffinity's score before normalizing: the summed weights of the
        preferred terms the node matches."""
        return sum(w for w, t in self.preferred if term_matches(t, name, labels))

    def node_names(self) -> frozenset[str] | None:
        """NodeAffinity's PreFilter: when every required term pins
        ``metadata.name In (...)``, only those nodes can fit (None: any node)."""
        if not self.required:
            return None
        names: set[str] = set()
        for term in self.required:
            pinned: set[str] | None = None
            for f in term.match_fields or ():
                if f.key == "metadata.name" and f.operator == "In":
                    vals = set(f.values or ())
                    pinned = vals if pinned is None else pinned & vals
            if pinned is None:
                return None  # this term admits any name: terms are ORed
            names |= pinned
        return frozenset(names)


def pod_matches_node(spec: PodSpec | None, node_name: str, labels: Mapping[str, str]) -> bool:
    """The NodeAffinity filter for one pod spec (nodeSelector and required affinity)."""
    return NodeAffinitySpec.of(spec).matches(node_name, labels)


# ---------------------------------------------------------------- static filters
def static_rejection(
    node: NodeState,
    taints: Sequence[Taint],
    tolerations: Sequence[Toleration],
    affinity: NodeAffinitySpec,
    node_name: str | None = None,
) -> Rejection | None:
    """NodeUnschedulable, NodeName, TaintToleration and NodeAffinity, in that
    order: all UnschedulableAndUnresolvable, and all about the node alone."""
    if node.unschedulable and not any(tolerates(t, UNSCHEDULABLE_TAINT) for t in tolerations):
        return Rejection((REASON_UNSCHEDULABLE,), True)
    if node_name and node_name != node.name:
        return Rejection((REASON_NODE_NAME,), True)
    taint = find_untolerated_taint(taints, tolerations)
    if taint is not None:
        return Rejection((untolerated_taint_reason(taint),), True)
    if not affinity.matches(node.name, node.labels):
        return Rejection((REASON_NODE_AFFINITY,), True)
    return None


# -------------------------------------------------------------------- resources
def is_scalar_resource(name: str) -> bool:
    """``IsScalarResourceName``: extended and prefixed-native (domain-prefixed),
    hugepages-* and attachable-volumes-* resources; other unprefixed names
    are not checked."""
    if name.startswith(("hugepages-", "attachable-volumes-")):
        return True
    return "/" in name and not name.startswith("requests.")


def resource_checks(requests: Mapping[str, int]) -> tuple[tuple[str, int], ...]:
    """The (resource, amount) pairs NodeResourcesFit checks, in its order:
    cpu, memory, ephemeral-storage, then scalar resources (sorted: Go walks a
    map). Empty when the pod requests nothing it checks."""
    out = [(n, requests[n]) for n in FIXED_RESOURCES if requests.get(n, 0) > 0]
    out += [
        (n, requests[n])
        for n in sorted(requests)
        if n not in FIXED_RESOURCES and is_scalar_resource(n) and requests[n] > 0
    ]
    return tuple(out)


def fits(checks: Sequence[tuple[str, int]], node: NodeState) -> bool:
    """``insufficient(checks, node) is None``, without building the reasons
    (the fast path asks this for every node whose usage changed)."""
    alloc, used = node.allocatable, node.requested
    if node.pod_count + 1 > alloc.get("pods", 0):
        return False
    for name, want in checks:  # noqa: SIM110 - all() over a generator costs twice as much
        if want > alloc.get(name, 0) - used.get(name, 0):
            return False
    return True


def insufficient(
    checks: Sequence[tuple[str, int]],
    node: NodeState,
    extra: Mapping[str, int] | None = None,
    extra_pods: int = 0,
) -> Rejection | None:
    """NodeResourcesFit's ``fitsRequest``: the pod count first, then each
    resource; ``extra`` and ``extra_pods`` count on top of the node's usage
    (pods nominated to it). Unresolvable when the pod asks for more than the
    node has at all."""
    reasons: list[str] = []
    unresolvable = False
    if node.pod_count + extra_pods + 1 > node.allocatable.get("pods", 0):
        reasons.append(REASON_TOO_MANY_PODS)
    alloc, used = node.allocatable, node.requested
    for name, want in checks:
        have = alloc.get(name, 0)
        if want > have - used.get(name, 0) - (extra.get(name, 0) if extra else 0):
            reasons.append(f"Insufficient {name}")
            unresolvable = unresolvable or want > have
    if not reasons:
        return None
    return Rejection(tuple(reasons), unresolvable)
