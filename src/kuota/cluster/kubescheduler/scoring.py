"""Scoring as kube-scheduler's default profile does it, and the three
profiles OpenShift offers (``Scheduler`` ``spec.profile``, from
openshift/cluster-kube-scheduler-operator's configs):

* ``LowNodeUtilization`` (the default): kube-scheduler's defaults — NodeResourcesFit
  with the ``LeastAllocated`` strategy (weight 1), NodeResourcesBalancedAllocation
  (1), TaintToleration (3), NodeAffinity (2), PodTopologySpread (2),
  InterPodAffinity (2): pods spread over nodes.
* ``HighNodeUtilization``: NodeResourcesFit with ``MostAllocated`` at weight 5,
  BalancedAllocation off: pods pack onto the fullest nodes, leaving whole
  nodes free (what a GPU cluster wants against fragmentation).
* ``NoScoring``: no score plugin at all: the first feasible node.

ImageLocality and VolumeBinding, also default score plugins, give every node
the same score without images or volumes in the model, so they are left out.

Scores are integers 0..100 per plugin as in Go (integer division, Go's
float-to-int truncation), summed with the plugins' weights. Among nodes
with the best total kube-scheduler picks one at random; kuota picks the
first in name order, so runs are reproducible.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from kuota.cluster.kubescheduler.filters import is_scalar_resource
from kuota.cluster.kubescheduler.node_table import NodeState

__all__ = [
    "BALANCED",
    "FIT",
    "HIGH_NODE_UTILIZATION",
    "INTER_POD_AFFINITY",
    "LOW_NODE_UTILIZATION",
    "MAX_NODE_SCORE",
    "NODE_AFFINITY",
    "NO_SCORING",
    "PROFILES",
    "SPREAD",
    "TAINT_TOLERATION",
    "Profile",
    "balanced_score",
    "default_normalize",
    "fit_score",
    "profile_named",
    "requests_nothing",
    "resource_scorer",
]

MAX_NODE_SCORE = 100
TAINT_TOLERATION = "TaintToleration"
NODE_AFFINITY = "NodeAffinity"
FIT = "NodeResourcesFit"
SPREAD = "PodTopologySpread"
INTER_POD_AFFINITY = "InterPodAffinity"
BALANCED = "NodeResourcesBalancedAllocation"

# NodeResourcesFitArgs' and BalancedAllocationArgs' default resources.
DEFAULT_RESOURCES: tuple[tuple[str, int], ...] = (("cpu", 1), ("memory", 1))


@dataclass(frozen=True, slots=True)
class Profile:
    """A scheduling profile: the fit scoring strategy and the score plugins'
    weights (0: disabled). ``resources`` are the (resource, weight) pairs the
    resource scorers look at (kube-scheduler's default: cpu and memory)."""

    name: str
    strategy: str  # "LeastAllocated" | "MostAllocated"
    weights: Mapping[str, int] = field(default_factory=dict)
    resources: tuple[tuple[str, int], ...] = DEFAULT_RESOURCES

    @property
    def scores(self) -> bool:
        return any(self.weights.values())

    def weight(self, plugin: str) -> int:
        return self.weights.get(plugin, 0)


_DEFAULT_WEIGHTS = {
    TAINT_TOLERATION: 3,
    NODE_AFFINITY: 2,
    FIT: 1,
    SPREAD: 2,
    INTER_POD_AFFINITY: 2,
    BALANCED: 1,
}
LOW_NODE_UTILIZATION = Profile("LowNodeUtilization", "LeastAllocated", dict(_DEFAULT_WEIGHTS))
HIGH_NODE_UTILIZATION = Profile(
    "HighNodeUtilization", "MostAllocated", {**_DEFAULT_WEIGHTS, FIT: 5, BALANCED: 0}
)
NO_SCORING = Profile("NoScoring", "LeastAllocated", {})
PROFILES = {p.name: p for p in (LOW_NODE_UTILIZATION, HIGH_NODE_UTILIZATION, NO_SCORING)}


def profile_named(name: str) -> Profile:
    """The profile OpenShift calls ``name``; ValueError names the valid ones."""
    p = PROFILES.get(name)
    if p is None:
        raise ValueError(
            f'unknown scheduler profile "{name}": must be one of {", ".join(PROFILES)}'
        )
    return p


# ------------------------------------------------------------ resource scorers
def _allocatable_and_requested(
    node: NodeState,
    node_nonzero: tuple[int, int] | None,
    resource: str,
    pod_request: int,
) -> tuple[int, int]:
    """``calculateResourceAllocatableRequest``: what the node has and what it
    would have requested with the pod; (0, 0) skips the resource (a scalar
    resource the pod does not ask for, or the node does not offer).
    ``node_nonzero`` given: cpu and memory count the scorers' defaults."""
    if pod_request == 0 and is_scalar_resource(resource):
        return 0, 0
    if resource == "cpu":
        used = node_nonzero[0] if node_nonzero is not None else node.requested.get("cpu", 0)
        return node.allocatable.get("cpu", 0), used + pod_request
    if resource == "memory":
        used = node_nonzero[1] if node_nonzero is not None else node.requested.get("memory", 0)
        return node.allocatable.get("memory", 0), used + pod_request
    if resource == "ephemeral-storage" or (
        is_scalar_resource(resource) and resource in node.allocatable
    ):
        return node.allocatable.get(resource, 0), node.requested.get(resource, 0) + pod_request
    return 0, 0


def fit_score(
    strategy: str,
    resources: Sequence[tuple[str, int]],
    pod_nonzero: tuple[int, int],
    pod_requests: Mapping[str, int],
    node: NodeState,
    node_nonzero: tuple[int, int],
) -> int:
    """NodeResourcesFit's score: LeastAllocated ``(alloc - req) * 100 / alloc``
    (0 when over) or MostAllocated ``min(req, alloc) * 100 / alloc``, per
    resource, weighted average; requests count the non-zero defaults."""
    total = weights = 0
    least = strategy == "LeastAllocated"
    for res, w in resources:
        if res == "cpu":
            want = pod_nonzero[0]
        elif res == "memory":
            want = pod_nonzero[1]
        else:
            want = pod_requests.get(res, 0)
        alloc, req = _allocatable_and_requested(node, node_nonzero, res, want)
        if alloc == 0:
            continue
        if least:
            s = 0 if req > alloc else (alloc - req) * MAX_NODE_SCORE // alloc
        else:
            s = min(req, alloc) * MAX_NODE_SCORE // alloc
        total += s * w
        weights += w
    return total // weights if weights else 0


def requests_nothing(resources: Sequence[tuple[str, int]], pod_requests: Mapping[str, int]) -> bool:
    """BalancedAllocation's ``isBestEffortPod``: no request for any scored
    resource; the plugin then skips the pod (kubernetes/kubernetes#129138)."""
    return all(pod_requests.get(res, 0) == 0 for res, _ in resources)


def balanced_score(
    resources: Sequence[tuple[str, int]], pod_requests: Mapping[str, int], node: NodeState
) -> int:
    """NodeResourcesBalancedAllocation: ``(1 - std) * 100`` of the resources'
    requested fractions (capped at 1), with real requests."""
    fractions: list[float] = []
    for res, _ in resources:
        alloc, req = _allocatable_and_requested(node, None, res, pod_requests.get(res, 0))
        if alloc == 0:
            continue
        fractions.append(min(req / alloc, 1.0))
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) * (f - mean) for f in fractions) / len(fractions))
    return int((1 - std) * MAX_NODE_SCORE)


def resource_scorer(
    profile: Profile, pod_nonzero: tuple[int, int], pod_requests: Mapping[str, int]
) -> Callable[[NodeState, tuple[int, int]], int]:
    """``node, node's non-zero (cpu, memory) -> weighted fit + balanced score``
    for one pod: the part of the total that differs between nodes for a pod
    without inter-pod or spread terms. Equal to :func:`fit_score` and
    :func:`balanced_score` weighted; specialized for the default resources
    (cpu and memory, weight 1 each) because this runs once per node change."""
    w_fit, w_bal = profile.weight(FIT), profile.weight(BALANCED)
    if w_bal and requests_nothing(profile.resources, pod_requests):
        w_bal = 0
    if profile.resources != DEFAULT_RESOURCES:

        def generic(node: NodeState, nonzero: tuple[int, int]) -> int:
            total = w_fit * fit_score(
                profile.strategy, profile.resources, pod_nonzero, pod_requests, node, nonzero
            )
            if w_bal:
                total += w_bal * balanced_score(profile.resources, pod_requests, node)
            return total

        return generic
    want_cpu, want_mem = pod_nonzero
    req_cpu, req_mem = pod_requests.get("cpu", 0), pod_requests.get("memory", 0)
    least = profile.strategy == "LeastAllocated"

    def default(node: NodeState, nonzero: tuple[int, int]) -> int:
        alloc = node.allocatable
        a_cpu, a_mem = alloc.get("cpu", 0), alloc.get("memory", 0)
        fit = n = 0
        if a_cpu:
            r = nonzero[0] + want_cpu
            if least:
                fit += 0 if r > a_cpu else (a_cpu - r) * MAX_NODE_SCORE // a_cpu
            else:
                fit += (r if r < a_cpu else a_cpu) * MAX_NODE_SCORE // a_cpu
            n += 1
        if a_mem:
            r = nonzero[1] + want_mem
            if least:
                fit += 0 if r > a_mem else (a_mem - r) * MAX_NODE_SCORE // a_mem
            else:
                fit += (r if r < a_mem else a_mem) * MAX_NODE_SCORE // a_mem
            n += 1
        total = w_fit * (fit // n) if n else 0
        if w_bal:
            used = node.requested
            if a_cpu and a_mem:
                f1 = min((used.get("cpu", 0) + req_cpu) / a_cpu, 1.0)
                f2 = min((used.get("memory", 0) + req_mem) / a_mem, 1.0)
                total += w_bal * int((1 - abs((f1 - f2) / 2)) * MAX_NODE_SCORE)
            else:
                total += w_bal * MAX_NODE_SCORE  # one fraction or none: no deviation
        return total

    return default


# ------------------------------------------------------------ normalizing
def default_normalize(scores: Mapping[str, int], reverse: bool) -> dict[str, int]:
    """``helper.DefaultNormalizeScore``: scale to 0..100 by the highest score
    (reversed: 100 minus that); all zero stays 0 (reversed: all 100)."""
    top = max(scores.values(), default=0)
    if top == 0:
        return {n: MAX_NODE_SCORE if reverse else 0 for n in scores}
    out: dict[str, int] = {}
    for n, s in scores.items():
        v = MAX_NODE_SCORE * s // top
        out[n] = MAX_NODE_SCORE - v if reverse else v
    return out


def go_round(x: float) -> int:
    """Go's ``math.Round``: halves away from zero (Python's round() goes to even)."""
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)
