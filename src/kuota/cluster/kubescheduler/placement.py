"""Where a pod goes: the placement interface, kube-scheduler's "why not"
message, and :class:`FirstFit`, the simplest placement (the first node in
name order that passes the filters; kept for tests and comparisons).

The embedded cluster's default placement is
:class:`kuota.cluster.kubescheduler.kube_scheduler.KubeScheduler` (filters,
scoring profiles, preemption). The filters themselves live in ``filters.py`` and are
re-exported here for the callers that know them from this module.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import msgspec

from kuota.api.core import Pod
from kuota.api.nodeselection import node_selector_requirement_matches
from kuota.cluster.kubescheduler.filters import (
    REASON_NODE_AFFINITY,
    REASON_TOO_MANY_PODS,
    REASON_UNSCHEDULABLE,
    NodeAffinitySpec,
    find_untolerated_taint,
    insufficient,
    pod_matches_node,
    resource_checks,
    static_rejection,
    tolerates,
    untolerated_taint_reason,
)
from kuota.cluster.kubescheduler.node_table import NodeState, NodeTable
from kuota.cluster.nodeutil import pod_resource_requests

__all__ = [
    "NO_NODES_AVAILABLE",
    "REASON_NODE_AFFINITY",
    "REASON_TOO_MANY_PODS",
    "REASON_UNSCHEDULABLE",
    "FirstFit",
    "NodeView",
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

NO_NODES_AVAILABLE = "no nodes available to schedule pods"


@dataclass(frozen=True, slots=True)
class PlacementResult:
    """The chosen node, or None and kube-scheduler's FitError message.

    When the pod fits nowhere but preemption found room, ``nominated_node``
    is where, ``victims`` the keys of the pods to evict there, and
    ``unnominated`` the keys of lower-priority pods nominated to that node
    that lose their nomination.
    """

    node: str | None
    message: str = ""
    nominated_node: str | None = None
    victims: tuple[str, ...] = ()
    unnominated: tuple[str, ...] = ()


class NodeView(Protocol):
    """What every placement may read: the nodes (a :class:`NodeTable`, or a
    :class:`~kuota.cluster.kubescheduler.cluster_snapshot.ClusterSnapshot`,
    which also has the pods)."""

    def __len__(self) -> int: ...

    def sorted(self) -> list[NodeState]: ...


class Placement(Protocol):
    def place(self, pod: Pod, nodes: NodeView) -> PlacementResult:
        """Choose a node for ``pod`` (read-only: the caller records the binding)."""
        ...


def fit_error_message(
    num_nodes: int,
    reasons: Iterable[Sequence[str]],
    *,
    prefilter: str = "",
    postfilter: str = "",
) -> str:
    """``FitError.Error()``: ``0/N nodes are available: <count> <reason>, ….``
    with the "<count> <reason>" strings sorted as strings (Go's sort.Strings);
    a PreFilter rejection replaces the per-node reasons; PostFilter's
    (preemption's) message follows, after its own separator."""
    if num_nodes == 0:
        return NO_NODES_AVAILABLE
    msg = f"0/{num_nodes} nodes are available:"
    if prefilter:
        msg += f" {prefilter}."
    else:
        histogram: dict[str, int] = {}
        for node_reasons in reasons:
            for r in node_reasons:
                histogram[r] = histogram.get(r, 0) + 1
        parts = sorted(f"{n} {r}" for r, n in histogram.items())
        if parts:
            msg += f" {', '.join(parts)}."
    if postfilter:
        msg += f" {postfilter}."
    return msg


# ------------------------------------------------------------------ first fit
def insufficient_resources(requests: Mapping[str, int], node: NodeState) -> list[str]:
    """NodeResourcesFit's ``fitsRequest`` reasons for ``node``."""
    r = insufficient(resource_checks(requests), node)
    return list(r.reasons) if r is not None else []


def filter_node(pod: Pod, requests: Mapping[str, int], node: NodeState) -> list[str]:
    """The reasons the first failing filter gives for ``node`` (empty: it
    fits), for the filters that need no other pod."""
    spec = pod.spec
    tolerations = (spec.tolerations or []) if spec is not None else []
    r = static_rejection(node, node.effective_taints(), tolerations, NodeAffinitySpec.of(spec))
    if r is not None:
        return list(r.reasons)
    return insufficient_resources(requests, node)


class FirstFit:
    """The first node, in name order, that passes the filters needing no
    other pod (no scoring, no preemption, no inter-pod rules)."""

    def equivalence_key(self, pod: Pod) -> Hashable | None:
        """What the filters read from a pod: its requests, nodeSelector,
        affinity and tolerations (equal keys, equal answers)."""
        spec = pod.spec
        if spec is None:
            return None
        scheduling = msgspec.json.encode((spec.node_selector, spec.affinity, spec.tolerations))
        return (tuple(sorted(pod_resource_requests(pod).items())), scheduling)

    def place(self, pod: Pod, nodes: NodeView | NodeTable) -> PlacementResult:
        requests = pod_resource_requests(pod)
        failures: list[list[str]] = []
        for node in nodes.sorted():
            reasons = filter_node(pod, requests, node)
            if not reasons:
                return PlacementResult(node.name)
            failures.append(reasons)
        return PlacementResult(None, fit_error_message(len(nodes), failures))
