"""InterPodAffinity: required and preferred pod affinity and anti-affinity as
kube-scheduler's plugin (``pkg/scheduler/framework/plugins/interpodaffinity``)
filters and scores.

Filter, per candidate node (in this order):

* the pod's required affinity: every term needs a pod it selects in the
  node's domain of the term's ``topologyKey`` (a node without that label
  fails, unresolvable). The first pod of a group whose terms select itself
  may go anywhere with the labels, when no pod matches yet;
* the pod's required anti-affinity: no pod a term selects in that domain;
* the existing pods' required anti-affinity, symmetrically: no pod whose
  term selects the incoming pod in the node's domain of that term's key.

A term selects pods in its namespaces (default: the pod's own; a
``namespaceSelector`` adds the namespaces whose labels it selects, ``{}``
all) by its ``labelSelector`` (nil selects nothing).

Score: for the incoming pod's preferred terms, +weight (affinity) or
-weight (anti-affinity) per matching existing pod, credited to the existing
pod's domain; symmetrically for existing pods' preferred terms (and their
required affinity terms at weight 1, ``hardPodAffinityWeight``) that select
the incoming pod. Normalized to 0..100 between the lowest and highest total
(both taken with 0).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kuota.cluster.kubescheduler.filters import Rejection
from kuota.cluster.kubescheduler.node_table import NodeState
from kuota.cluster.kubescheduler.podinfo import AffinityTerm, PodInfo
from kuota.cluster.kubescheduler.scoring import MAX_NODE_SCORE

__all__ = [
    "REASON_AFFINITY",
    "REASON_ANTI_AFFINITY",
    "REASON_EXISTING_ANTI_AFFINITY",
    "InterPodFilter",
    "interpod_scores",
]

REASON_AFFINITY = "node(s) didn't match pod affinity rules"
REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
HARD_POD_AFFINITY_WEIGHT = 1

Pair = tuple[str, str]  # (topology key, value)
Namespaces = Mapping[str, Mapping[str, str]]  # namespace -> its labels


def _matches(term: AffinityTerm, pod: PodInfo, namespaces: Namespaces) -> bool:
    return term.matches(pod.namespace, pod.labels, namespaces.get(pod.namespace))


def _matches_all(terms: Iterable[AffinityTerm], pod: PodInfo, namespaces: Namespaces) -> bool:
    return all(_matches(t, pod, namespaces) for t in terms)


@dataclass
class InterPodFilter:
    """The PreFilter state: counts per topology pair of the pods the incoming
    pod's terms select, and of the existing pods whose anti-affinity selects it."""

    pod: PodInfo
    namespaces: Namespaces
    affinity: dict[Pair, int] = field(default_factory=dict)
    anti: dict[Pair, int] = field(default_factory=dict)
    existing_anti: dict[Pair, int] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        pod: PodInfo,
        bound: Iterable[tuple[PodInfo, NodeState]],
        namespaces: Namespaces,
    ) -> InterPodFilter:
        """From the bound pods with their nodes (all of them when the pod has
        required terms of its own, else those with anti-affinity terms suffice)."""
        state = cls(pod, namespaces)
        for other, node in bound:
            state.update(other, node, 1)
        return state

    def __bool__(self) -> bool:
        p = self.pod
        return bool(p.required_affinity or p.required_anti_affinity or self.existing_anti)

    def copy(self) -> InterPodFilter:
        return InterPodFilter(
            self.pod,
            self.namespaces,
            dict(self.affinity),
            dict(self.anti),
            dict(self.existing_anti),
        )

    def update(self, other: PodInfo, node: NodeState, delta: int) -> None:
        """Count ``other`` (bound to ``node``) in or out."""
        labels, pod, ns = node.labels, self.pod, self.namespaces
        for t in other.required_anti_affinity:
            if t.topology_key in labels and _matches(t, pod, ns):
                pair = (t.topology_key, labels[t.topology_key])
                self.existing_anti[pair] = self.existing_anti.get(pair, 0) + delta
        if pod.required_affinity and _matches_all(pod.required_affinity, other, ns):
            for t in pod.required_affinity:
                if t.topology_key in labels:
                    pair = (t.topology_key, labels[t.topology_key])
                    self.affinity[pair] = self.affinity.get(pair, 0) + delta
        for t in pod.required_anti_affinity:
            if t.topology_key in labels and _matches(t, other, ns):
                pair = (t.topology_key, labels[t.topology_key])
                self.anti[pair] = self.anti.get(pair, 0) + delta

    def reject(self, node: NodeState) -> Rejection | None:
        labels, pod = node.labels, self.pod
        if pod.required_affinity and not self._affinity_ok(labels):
            return Rejection((REASON_AFFINITY,), True)
        for t in pod.required_anti_affinity:
            v = labels.get(t.topology_key)
            if v is not None and self.anti.get((t.topology_key, v), 0) > 0:
                return Rejection((REASON_ANTI_AFFINITY,), False)
        if any(n > 0 for n in self.existing_anti.values()):
            for k, v in labels.items():
                if self.existing_anti.get((k, v), 0) > 0:
                    return Rejection((REASON_EXISTING_ANTI_AFFINITY,), False)
        return None

    def _affinity_ok(self, labels: Mapping[str, str]) -> bool:
        """``satisfyPodAffinity``."""
        found = True
        for t in self.pod.required_affinity:
            v = labels.get(t.topology_key)
            if v is None:
                return False  # every topology label must be on the node
            if self.affinity.get((t.topology_key, v), 0) <= 0:
                found = False
        if found:
            return True
        # The first pod of a group with affinity to itself: nobody matches
        # yet, and the pod matches all its own terms.
        nobody = not any(n > 0 for n in self.affinity.values())
        return nobody and _matches_all(self.pod.required_affinity, self.pod, self.namespaces)


def interpod_scores(
    pod: PodInfo,
    feasible: Iterable[NodeState],
    bound: Iterable[tuple[PodInfo, NodeState]],
    namespaces: Namespaces,
) -> dict[str, int] | None:
    """Normalized InterPodAffinity scores of the feasible nodes (None: nothing
    to score, the plugin is skipped). ``bound``: the bound pods with their
    nodes (all of them when the pod has preferred terms of its own, else
    those with inter-pod terms suffice)."""
    own_terms = [(t, 1) for t in pod.preferred_affinity] + [
        (t, -1) for t in pod.preferred_anti_affinity
    ]
    topology: dict[Pair, int] = {}
    for other, node in bound:
        labels = node.labels
        # The existing pod's terms count only if they select the incoming pod.
        theirs = [(t, HARD_POD_AFFINITY_WEIGHT) for t in other.required_affinity]
        theirs += [(t, t.weight) for t in other.preferred_affinity]
        theirs += [(t, -t.weight) for t in other.preferred_anti_affinity]
        for t, sign in own_terms:
            if t.topology_key in labels and _matches(t, other, namespaces):
                pair = (t.topology_key, labels[t.topology_key])
                topology[pair] = topology.get(pair, 0) + t.weight * sign
        for t, w in theirs:
            if t.topology_key in labels and _matches(t, pod, namespaces):
                pair = (t.topology_key, labels[t.topology_key])
                topology[pair] = topology.get(pair, 0) + w
    if not topology:
        return None
    # A node's total: its domain's count for each topology key (the pairs'
    # keys only: another label of the node adds nothing).
    keys = sorted({k for k, _ in topology})
    raw = {
        n.name: sum(topology.get((k, n.labels[k]), 0) for k in keys if k in n.labels)
        for n in feasible
    }
    high = max(0, *raw.values()) if raw else 0
    low = min(0, *raw.values()) if raw else 0
    spread = high - low
    return {
        name: int(MAX_NODE_SCORE * ((s - low) / spread)) if spread > 0 else 0
        for name, s in raw.items()
    }
