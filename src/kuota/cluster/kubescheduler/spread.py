"""PodTopologySpread: ``topologySpreadConstraints`` as kube-scheduler's plugin
(``pkg/scheduler/framework/plugins/podtopologyspread``) filters and scores.

Hard constraints (``whenUnsatisfiable: DoNotSchedule``) filter: a node fits
when ``matching pods in its domain + (1 if the pod matches its own selector)
- the fewest matching pods in any eligible domain <= maxSkew``; with fewer
eligible domains than ``minDomains`` the fewest counts as 0. A node without
the topology label is rejected as unresolvable. Eligible domains come from
nodes with every constraint's key that pass the inclusion policies:
``nodeAffinityPolicy`` (default Honor: the pod's nodeSelector and required
node affinity) and ``nodeTaintsPolicy`` (default Ignore; Honor: the node's
NoSchedule/NoExecute taints must be tolerated).

Soft constraints (``ScheduleAnyway``) score: fewer matching pods in a
node's domain is better, weighted by log(number of domains + 2).

Only pods in the incoming pod's namespace and not being deleted count.
kube-scheduler's system default constraints apply to pods selected by a
Service, ReplicaSet or StatefulSet, none of which the embedded cluster has,
so pods without constraints are not spread.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from kuota.api.core import PodSpec, Taint, Toleration
from kuota.api.meta import LabelSelector, selector_matches
from kuota.cluster.kubescheduler.filters import NodeAffinitySpec, Rejection, find_untolerated_taint
from kuota.cluster.kubescheduler.node_table import NodeState
from kuota.cluster.kubescheduler.podinfo import PodInfo, merge_label_keys
from kuota.cluster.kubescheduler.scoring import MAX_NODE_SCORE, go_round

__all__ = [
    "REASON_CONSTRAINTS",
    "REASON_MISSING_LABEL",
    "Constraint",
    "SpreadFilter",
    "domains_key",
    "eligible_domains",
    "parse_constraints",
    "spread_scores",
]

REASON_CONSTRAINTS = "node(s) didn't match pod topology spread constraints"
REASON_MISSING_LABEL = (
    "node(s) didn't match pod topology spread constraints (missing required label)"
)
HOSTNAME = "kubernetes.io/hostname"
TaintsOf = Callable[[NodeState], Sequence[Taint]]


@dataclass(frozen=True, slots=True)
class Constraint:
    max_skew: int
    topology_key: str
    hard: bool
    selector: LabelSelector | None
    min_domains: int
    honor_affinity: bool
    honor_taints: bool


def parse_constraints(spec: PodSpec | None, labels: Mapping[str, str]) -> tuple[Constraint, ...]:
    """The pod's constraints with ``matchLabelKeys`` merged into the selector."""
    out = []
    for c in (spec.topology_spread_constraints if spec is not None else None) or ():
        out.append(
            Constraint(
                max_skew=c.max_skew,
                topology_key=c.topology_key,
                hard=c.when_unsatisfiable == "DoNotSchedule",
                selector=merge_label_keys(c.label_selector, labels, c.match_label_keys),
                min_domains=c.min_domains if c.min_domains is not None else 1,
                honor_affinity=(c.node_affinity_policy or "Honor") == "Honor",
                honor_taints=(c.node_taints_policy or "Ignore") == "Honor",
            )
        )
    return tuple(out)


def _has_keys(labels: Mapping[str, str], constraints: Sequence[Constraint]) -> bool:
    return all(c.topology_key in labels for c in constraints)


def _included(
    c: Constraint,
    node: NodeState,
    taints: Sequence[Taint],
    affinity: NodeAffinitySpec,
    tolerations: Sequence[Toleration],
) -> bool:
    """``matchNodeInclusionPolicies``."""
    if c.honor_affinity and not affinity.matches(node.name, node.labels):
        return False
    return not (c.honor_taints and find_untolerated_taint(taints, tolerations) is not None)


def _count(pods: Iterable[PodInfo], selector: LabelSelector | None, namespace: str) -> int:
    """``countPodsMatchSelector``: same namespace, not being deleted, selected."""
    return sum(
        1
        for p in pods
        if not p.deleting and p.namespace == namespace and selector_matches(selector, p.labels)
    )


def domains_key(constraints: Sequence[Constraint]) -> tuple[tuple[str, bool, bool], ...]:
    """What :func:`eligible_domains` depends on besides the nodes and the
    pod's node affinity and tolerations."""
    return tuple((c.topology_key, c.honor_affinity, c.honor_taints) for c in constraints if c.hard)


def eligible_domains(
    constraints: Sequence[Constraint],
    nodes: Sequence[NodeState],
    taints_of: TaintsOf,
    affinity: NodeAffinitySpec,
    tolerations: Sequence[Toleration],
) -> list[dict[str, str]]:
    """Per hard constraint, in node order: node name -> its domain, for the
    nodes whose pods count (every constraint's key, the inclusion policies).
    Depends on the nodes alone, not on the pods: placement caches it."""
    hard = [c for c in constraints if c.hard]
    out: list[dict[str, str]] = [{} for _ in hard]
    if not hard:
        return out
    for node in nodes:
        if not _has_keys(node.labels, hard):
            continue
        taints = taints_of(node)
        for i, c in enumerate(hard):
            if _included(c, node, taints, affinity, tolerations):
                out[i][node.name] = node.labels[c.topology_key]
    return out


class SpreadFilter:
    """The PreFilter state of the hard constraints: matching pods per domain."""

    def __init__(
        self,
        pod: PodInfo,
        constraints: Sequence[Constraint],
        nodes: Sequence[NodeState],
        pods_on: Mapping[str, Mapping[str, PodInfo]],
        taints_of: TaintsOf,
        affinity: NodeAffinitySpec,
        tolerations: Sequence[Toleration],
        domains: Sequence[Mapping[str, str]] | None = None,
    ) -> None:
        """``domains``: :func:`eligible_domains` of these nodes, if known."""
        self.pod = pod
        self.constraints = [c for c in constraints if c.hard]
        self.counts: list[dict[str, int]] = [{} for _ in self.constraints]
        # Whether the pod matches each constraint's own selector.
        self._own = [1 if selector_matches(c.selector, pod.labels) else 0 for c in self.constraints]
        self._lows: list[int] | None = None  # the fewest per constraint (counts' cache)
        self._affinity = affinity
        self._tolerations = tolerations
        self._taints_of = taints_of
        if not self.constraints:
            return
        if domains is None:
            domains = eligible_domains(self.constraints, nodes, taints_of, affinity, tolerations)
        for c, counts, domain_of in zip(self.constraints, self.counts, domains, strict=True):
            for name, v in domain_of.items():
                on = pods_on.get(name)
                n = _count(on.values(), c.selector, pod.namespace) if on else 0
                counts[v] = counts.get(v, 0) + n

    def __bool__(self) -> bool:
        return bool(self.constraints)

    def update(self, other: PodInfo, node: NodeState, delta: int) -> None:
        """``AddPod`` / ``RemovePod``: count ``other`` in or out of its domain
        (preemption tries the node without its victims)."""
        if other.namespace != self.pod.namespace or other.deleting:
            return
        if not _has_keys(node.labels, self.constraints):
            return
        taints = self._taints_of(node)
        for i, c in enumerate(self.constraints):
            if not selector_matches(c.selector, other.labels):
                continue
            if not _included(c, node, taints, self._affinity, self._tolerations):
                continue
            v = node.labels[c.topology_key]
            self.counts[i][v] = self.counts[i].get(v, 0) + delta
            self._lows = None

    def copy(self) -> SpreadFilter:
        new = object.__new__(SpreadFilter)
        new.pod, new.constraints = self.pod, self.constraints
        new.counts = [dict(c) for c in self.counts]
        new._own, new._lows = self._own, None
        new._affinity, new._tolerations = self._affinity, self._tolerations
        new._taints_of = self._taints_of
        return new

    def _fewest(self) -> list[int]:
        """The fewest matching pods in an eligible domain, per constraint (0
        with fewer eligible domains than minDomains)."""
        lows = []
        for c, counts in zip(self.constraints, self.counts, strict=True):
            low = min(counts.values()) if counts else 2**31 - 1
            lows.append(0 if len(counts) < c.min_domains else low)
        return lows

    def reject(self, node: NodeState) -> Rejection | None:
        lows = self._lows
        if lows is None:
            lows = self._lows = self._fewest()
        for i, c in enumerate(self.constraints):
            v = node.labels.get(c.topology_key)
            if v is None:
                return Rejection((REASON_MISSING_LABEL,), True)
            if self.counts[i].get(v, 0) + self._own[i] - lows[i] > c.max_skew:
                return Rejection((REASON_CONSTRAINTS,), False)
        return None


def spread_scores(
    pod: PodInfo,
    constraints: Sequence[Constraint],
    feasible: Sequence[NodeState],
    all_nodes: Sequence[NodeState],
    pods_on: Mapping[str, Mapping[str, PodInfo]],
    taints_of: TaintsOf,
    affinity: NodeAffinitySpec,
    tolerations: Sequence[Toleration],
) -> dict[str, int] | None:
    """The soft constraints' normalized scores for the feasible nodes (None:
    the pod has none, the plugin is skipped)."""
    soft = [c for c in constraints if not c.hard]
    if not soft:
        return None
    ignored: set[str] = set()
    domains: list[dict[str, int]] = [{} for _ in soft]
    for node in feasible:
        if not _has_keys(node.labels, soft):
            ignored.add(node.name)
            continue
        for i, c in enumerate(soft):
            if c.topology_key != HOSTNAME:
                domains[i].setdefault(node.labels[c.topology_key], 0)
    weights = []
    for i, c in enumerate(soft):
        size = len(feasible) - len(ignored) if c.topology_key == HOSTNAME else len(domains[i])
        weights.append(math.log(size + 2))
    for node in all_nodes:
        if not _has_keys(node.labels, soft):
            continue
        taints = taints_of(node)
        for i, c in enumerate(soft):
            if c.topology_key == HOSTNAME or not _included(c, node, taints, affinity, tolerations):
                continue
            v = node.labels[c.topology_key]
            if v in domains[i]:
                domains[i][v] += _count(
                    pods_on.get(node.name, {}).values(), c.selector, pod.namespace
                )
    raw: dict[str, int] = {}
    for node in feasible:
        if node.name in ignored:
            continue
        score = 0.0
        for i, c in enumerate(soft):
            if c.topology_key == HOSTNAME:
                cnt = _count(pods_on.get(node.name, {}).values(), c.selector, pod.namespace)
            else:
                cnt = domains[i][node.labels[c.topology_key]]
            score += cnt * weights[i] + (c.max_skew - 1)
        raw[node.name] = go_round(score)
    # NormalizeScore: fewer matching pods, higher score; ignored nodes 0.
    low = min(raw.values(), default=0)
    high = max(raw.values(), default=0)
    out: dict[str, int] = {}
    for node in feasible:
        if node.name in ignored:
            out[node.name] = 0
        elif high == 0:
            out[node.name] = MAX_NODE_SCORE
        else:
            out[node.name] = MAX_NODE_SCORE * (high + low - raw[node.name]) // high
    return out
