"""Where a pod goes: the placement interface and a first-fit implementation
with kube-scheduler's filters and its exact "why not" message.

The filters follow kube-scheduler's default plugins, in their order, and a
node reports only the first filter it fails (``RunFilterPlugins`` stops
there): NodeUnschedulable, TaintToleration, NodeAffinity (nodeSelector and
required node affinity), NodeResourcesFit. Scoring, preemption and the
topology plugins belong to a fuller placement that can replace
:class:`FirstFit` behind :class:`Placement`.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import msgspec

from kuota.api.core import Pod, PodSpec, Taint, Toleration
from kuota.api.nodeselection import node_selector_requirement_matches
from kuota.cluster.nodes import NodeState, NodeTable, pod_resource_requests

__all__ = [
    "NO_NODES_AVAILABLE",
    "REASON_NODE_AFFINITY",
    "REASON_TOO_MANY_PODS",
    "REASON_UNSCHEDULABLE",
    "FirstFit",
    "Placement",
    "PlacementResult",
    "filter_node",
    "find_untolerated_taint",
    "fit_error_message",
    "insufficient_resources",
    "node_selector_requirement_matches",
    "pod_matches_node",
    "tolerates",
    "untolerated_taint_reason",
]

# kube-scheduler's texts (pkg/scheduler/framework/plugins/*, schedule_one.go).
REASON_UNSCHEDULABLE = "node(s) were unschedulable"
REASON_NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
REASON_TOO_MANY_PODS = "Too many pods"
NO_NODES_AVAILABLE = "no nodes available to schedule pods"
_UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")
_FILTERED_EFFECTS = ("NoSchedule", "NoExecute")


@dataclass(frozen=True, slots=True)
class PlacementResult:
    """The chosen node, or None and kube-scheduler's FitError message."""

    node: str | None
    message: str = ""


class Placement(Protocol):
    def place(self, pod: Pod, nodes: NodeTable) -> PlacementResult:
        """Choose a node for ``pod`` (read-only: the caller records the binding)."""
        ...


# ------------------------------------------------------------------ tolerations
def tolerates(t: Toleration, taint: Taint) -> bool:
    """``Toleration.ToleratesTaint``: an empty effect matches every effect, an
    empty key (with Exists) every key; an empty operator means Equal.
    Lt/Gt sit behind an alpha gate (off by default) and match nothing."""
    if t.effect and t.effect != taint.effect:
        return False
    if t.key and t.key != taint.key:
        return False
    op = t.operator or "Equal"
    if op == "Exists":
        return True
    if op == "Equal":
        return (t.value or "") == (taint.value or "")
    return False


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


# ---------------------------------------------------------------- node affinity
def pod_matches_node(spec: PodSpec | None, node_name: str, labels: Mapping[str, str]) -> bool:
    """The NodeAffinity filter: every nodeSelector label, and at least one term
    of the required node affinity (a term with no requirement matches nothing)."""
    if spec is None:
        return True
    for k, v in (spec.node_selector or {}).items():
        if labels.get(k) != v:
            return False
    aff = spec.affinity
    na = aff.node_affinity if aff is not None else None
    req = na.required_during_scheduling_ignored_during_execution if na is not None else None
    if req is None:
        return True
    fields = {"metadata.name": node_name}
    for term in req.node_selector_terms or ():
        exprs = term.match_expressions or []
        by_field = term.match_fields or []
        if not exprs and not by_field:
            continue
        if all(node_selector_requirement_matches(e, labels) for e in exprs) and all(
            node_selector_requirement_matches(f, fields) for f in by_field
        ):
            return True
    return False


# -------------------------------------------------------------------- resources
_FIXED = ("cpu", "memory", "ephemeral-storage")


def _is_scalar(name: str) -> bool:
    """``IsScalarResourceName``: extended (domain-prefixed), hugepages-* and
    attachable-volumes-* resources; other unprefixed names are not checked."""
    if name.startswith(("hugepages-", "attachable-volumes-")):
        return True
    return "/" in name and not name.startswith("requests.")


def insufficient_resources(requests: Mapping[str, int], node: NodeState) -> list[str]:
    """NodeResourcesFit's ``fitsRequest``: the pod count first, then cpu,
    memory, ephemeral-storage, then scalar resources (sorted: Go walks a map)."""
    out: list[str] = []
    if node.pod_count + 1 > node.allocatable.get("pods", 0):
        out.append(REASON_TOO_MANY_PODS)
    if not requests:
        return out
    for name in _FIXED:
        want = requests.get(name, 0)
        if want > 0 and want > node.free(name):
            out.append(f"Insufficient {name}")
    for name in sorted(requests):
        if name in _FIXED or not _is_scalar(name):
            continue
        want = requests[name]
        if want > 0 and want > node.free(name):
            out.append(f"Insufficient {name}")
    return out


# ---------------------------------------------------------------------- filters
def filter_node(pod: Pod, requests: Mapping[str, int], node: NodeState) -> list[str]:
    """The reasons the first failing filter gives for ``node`` (empty: it fits)."""
    spec = pod.spec
    tolerations = (spec.tolerations or []) if spec is not None else []
    if node.unschedulable and not any(tolerates(t, _UNSCHEDULABLE_TAINT) for t in tolerations):
        return [REASON_UNSCHEDULABLE]
    taint = find_untolerated_taint(node.effective_taints(), tolerations)
    if taint is not None:
        return [untolerated_taint_reason(taint)]
    if not pod_matches_node(spec, node.name, node.labels):
        return [REASON_NODE_AFFINITY]
    return insufficient_resources(requests, node)


def fit_error_message(num_nodes: int, reasons: Iterable[Sequence[str]]) -> str:
    """``FitError.Error()``: ``0/N nodes are available: <count> <reason>, ….``
    with the "<count> <reason>" strings sorted as strings (Go's sort.Strings)."""
    if num_nodes == 0:
        return NO_NODES_AVAILABLE
    histogram: dict[str, int] = {}
    for node_reasons in reasons:
        for r in node_reasons:
            histogram[r] = histogram.get(r, 0) + 1
    parts = sorted(f"{n} {r}" for r, n in histogram.items())
    return f"0/{num_nodes} nodes are available: {', '.join(parts)}."


class FirstFit:
    """The first node, in name order, that passes every filter."""

    def equivalence_key(self, pod: Pod) -> Hashable | None:
        """What the filters read from a pod: its requests, nodeSelector,
        affinity and tolerations (equal keys, equal answers)."""
        spec = pod.spec
        if spec is None:
            return None
        scheduling = msgspec.json.encode((spec.node_selector, spec.affinity, spec.tolerations))
        return (tuple(sorted(pod_resource_requests(pod).items())), scheduling)

    def place(self, pod: Pod, nodes: NodeTable) -> PlacementResult:
        requests = pod_resource_requests(pod)
        failures: list[list[str]] = []
        for node in nodes.sorted():
            reasons = filter_node(pod, requests, node)
            if not reasons:
                return PlacementResult(node.name)
            failures.append(reasons)
        return PlacementResult(None, fit_error_message(len(nodes), failures))
