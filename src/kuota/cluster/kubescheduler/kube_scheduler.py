"""The embedded cluster's placement, after kube-scheduler's scheduling
framework with its default plugins: PreFilter, Filter, PostFilter
(preemption), Score, then the best node.

One pod at a time (``place``):

1. A pod nominated to a node by an earlier preemption tries that node
   first (``evaluateNominatedNode``).
2. Filters, per node, the first failing one reporting (``filters.py``,
   ``spread.py``, ``interpod.py``). Pods nominated to a node with at least
   the pod's priority count there as if bound.
3. Feasible nodes are scored by the profile (``scoring.py``); the highest
   total wins, ties going to the first node in name order (kube-scheduler
   picks at random among them). Every feasible node is scored, as with
   ``percentageOfNodesToScore: 100``.
4. No feasible node: kube-scheduler's FitError message, then preemption
   (``default_preemption.py``), whose part of the message ("preemption: ...") is
   appended on every failure, as DefaultPreemption's PostFilter does, even
   when no pod has a lower priority ("No preemption victims found for
   incoming pod").

Cost. What NodeUnschedulable, NodeName, TaintToleration and NodeAffinity
say depends on the node and the pod's scheduling fields only: it is
computed once per pod *shape* and node generation (``_StaticView``), and
so are the nodes and domains PodTopologySpread counts pods in. For
pods that need nothing else — no host ports, no inter-pod or spread terms,
no other pod with affinity terms, no nomination pending, and static scores
equal on every node they may use — the feasible nodes are kept ranked by
score in a heap per shape (``_Ranking``); after a binding only the nodes
whose usage changed are re-scored. Such a pod costs O(log nodes), every
other one a pass over the nodes.
"""

from __future__ import annotations

import heapq
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field

import msgspec

from kuota.api.core import Pod, Toleration
from kuota.cluster.kubescheduler.cluster_snapshot import ClusterSnapshot
from kuota.cluster.kubescheduler.default_preemption import (
    MSG_NEVER,
    MSG_NO_VICTIMS,
    MSG_NOT_HELPFUL,
    MSG_TERMINATING,
    Candidate,
    Fits,
    pick_candidate,
    select_victims,
)
from kuota.cluster.kubescheduler.filters import (
    REASON_CONFLICT,
    REASON_NODE_PORTS,
    NodeAffinitySpec,
    Rejection,
    fits,
    insufficient,
    intolerable_prefer_no_schedule,
    resource_checks,
    static_rejection,
)
from kuota.cluster.kubescheduler.interpod import InterPodFilter, interpod_scores
from kuota.cluster.kubescheduler.node_table import NodeState, NodeTable
from kuota.cluster.kubescheduler.placement import (
    NO_NODES_AVAILABLE,
    PlacementResult,
    fit_error_message,
)
from kuota.cluster.kubescheduler.podinfo import PodInfo, parse_pod, ports_conflict
from kuota.cluster.kubescheduler.scoring import (
    BALANCED,
    FIT,
    INTER_POD_AFFINITY,
    LOW_NODE_UTILIZATION,
    NODE_AFFINITY,
    SPREAD,
    TAINT_TOLERATION,
    Profile,
    default_normalize,
    profile_named,
    resource_scorer,
)
from kuota.cluster.kubescheduler.spread import (
    Constraint,
    SpreadFilter,
    domains_key,
    eligible_domains,
    parse_constraints,
    spread_scores,
)
from kuota.cluster.nodeutil import pod_resource_requests

__all__ = ["KubeScheduler", "Shape"]

_ABSENT = "node(s) didn't satisfy plugin(s) [NodeAffinity]"  # outside PreFilter's node names
_CACHE_LIMIT = 4096  # shapes whose static views are kept
_RANKINGS = 256  # shapes whose rankings are kept (the least recently used go)


@dataclass(slots=True)
class Shape:
    """The incoming pod, parsed once."""

    key: str
    pod: Pod
    info: PodInfo
    tolerations: tuple[Toleration, ...]
    affinity: NodeAffinitySpec
    checks: tuple[tuple[str, int], ...]
    constraints: tuple[Constraint, ...]
    static_key: bytes
    rank_key: Hashable
    class_key: Hashable
    never: bool
    nominated: str | None
    node_name: str | None
    simple: bool = field(default=False)


class _StaticView:
    """The static filters' and static scores' answers for one shape."""

    __slots__ = (
        "affinity_weights",
        "constant",
        "feasible",
        "generation",
        "index",
        "prefilter",
        "rejected",
        "spread_domains",
        "taint_counts",
    )

    def __init__(self, generation: int) -> None:
        self.generation = generation
        self.feasible: list[NodeState] = []
        self.index: dict[str, NodeState] = {}
        self.rejected: dict[str, Rejection] = {}
        self.taint_counts: dict[str, int] = {}
        self.affinity_weights: dict[str, int] = {}
        self.constant = True
        self.prefilter = ""
        # PodTopologySpread's eligible nodes and their domains, by domains_key.
        self.spread_domains: dict[Hashable, list[dict[str, str]]] = {}


class _Ranking:
    """Feasible nodes of one shape by score: a heap of (-score, name, usage
    version); an entry whose node changed since is stale."""

    __slots__ = ("generation", "heap", "position", "score")

    def __init__(
        self, generation: int, position: int, score: Callable[[NodeState, tuple[int, int]], int]
    ) -> None:
        self.generation = generation
        self.position = position
        self.heap: list[tuple[int, str, int]] = []
        self.score = score


@dataclass(slots=True)
class _Context:
    """One placement's PreFilter state."""

    snap: ClusterSnapshot
    shape: Shape
    spread: SpreadFilter | None
    interpod: InterPodFilter | None
    nominated: dict[str, tuple[dict[str, int], int]]  # node -> (requests, pods)


class KubeScheduler:
    """kube-scheduler's default plugins under one OpenShift profile
    (``LowNodeUtilization`` by default), with DefaultPreemption."""

    def __init__(
        self,
        profile: Profile | str = LOW_NODE_UTILIZATION,
        *,
        preemption: bool = True,
        fast: bool = True,
    ) -> None:
        self.profile = profile_named(profile) if isinstance(profile, str) else profile
        self.preemption = preemption
        self.fast = fast  # False: always the full pass (tests compare both)
        self._shapes: dict[str, tuple[Pod, Shape]] = {}
        self._views: dict[bytes, _StaticView] = {}
        self._rankings: OrderedDict[Hashable, _Ranking] = OrderedDict()

    # ------------------------------------------------------------ shapes
    def shape(self, pod: Pod) -> Shape:
        m = pod.metadata
        key = f"{m.namespace}/{m.name}" if m.namespace else (m.name or "")
        cached = self._shapes.get(key)
        if cached is not None and cached[0] is pod:
            return cached[1]
        if len(self._shapes) > 4 * _CACHE_LIMIT:
            self._shapes.clear()
        spec = pod.spec
        requests = pod_resource_requests(pod)
        info = parse_pod(key, pod, requests)
        tolerations = tuple((spec.tolerations or ()) if spec is not None else ())
        affinity = NodeAffinitySpec.of(spec)
        constraints = parse_constraints(spec, info.labels)
        na = spec.affinity.node_affinity if spec is not None and spec.affinity else None
        static_key = msgspec.json.encode(
            (
                spec.node_selector if spec else None,
                na,
                tolerations,
                spec.node_name if spec else None,
            )
        )
        checks = resource_checks(requests)
        rank_key = (static_key, checks, info.nonzero)
        simple = not (
            info.ports
            or constraints
            or info.required_affinity
            or info.required_anti_affinity
            or info.preferred_affinity
            or info.preferred_anti_affinity
        )
        policy = spec.preemption_policy if spec is not None else None
        extra: tuple[object, ...] = ()
        if not simple:
            # The pod's own labels and namespace matter to its terms.
            tsc = spec.topology_spread_constraints if spec is not None else None
            extra = (
                info.ports,
                msgspec.json.encode((spec.affinity if spec else None, tsc)),
                info.namespace,
                tuple(sorted(info.labels.items())),
            )
        status = pod.status
        shape = Shape(
            key=key,
            pod=pod,
            info=info,
            tolerations=tolerations,
            affinity=affinity,
            checks=checks,
            constraints=constraints,
            static_key=static_key,
            rank_key=rank_key,
            class_key=(rank_key, info.priority, policy, extra),
            never=policy == "Never",
            nominated=(status.nominated_node_name if status is not None else None) or None,
            node_name=(spec.node_name if spec is not None else None) or None,
            simple=simple,
        )
        self._shapes[key] = (pod, shape)
        return shape

    def bound_info(self, pod: Pod, node: str) -> PodInfo:
        """The pod as the snapshot records it once bound to ``node`` (parsed
        already: binding need not parse it again)."""
        return self.shape(pod).info.bound_to(node)

    def equivalence_key(self, pod: Pod) -> Hashable | None:
        """Pods with equal keys get equal answers from the same cluster state,
        as long as no other pod has inter-pod terms that could tell them apart
        (the scheduler adds labels to the key then)."""
        if pod.spec is None:
            return None
        return self.shape(pod).class_key

    # ------------------------------------------------------------ static view
    def _view(self, shape: Shape, snap: ClusterSnapshot) -> _StaticView:
        view = self._views.get(shape.static_key)
        if view is not None and view.generation == snap.generation:
            return view
        if len(self._views) > _CACHE_LIMIT:
            self._views.clear()
        view = _StaticView(snap.generation)
        names = shape.affinity.node_names()
        if names is not None and not names:
            view.prefilter = REASON_CONFLICT
        taint_set: set[int] = set()
        weight_set: set[int] = set()
        for node in snap.sorted():
            if names is not None and node.name not in names:
                view.rejected[node.name] = Rejection((_ABSENT,), True)
                continue
            taints = snap.taints(node)
            r = static_rejection(node, taints, shape.tolerations, shape.affinity, shape.node_name)
            if r is not None:
                view.rejected[node.name] = r
                continue
            view.feasible.append(node)
            view.index[node.name] = node
            tc = intolerable_prefer_no_schedule(taints, shape.tolerations)
            aw = shape.affinity.preferred_weight(node.name, node.labels)
            view.taint_counts[node.name] = tc
            view.affinity_weights[node.name] = aw
            taint_set.add(tc)
            weight_set.add(aw)
        view.constant = len(taint_set) <= 1 and len(weight_set) <= 1
        self._views[shape.static_key] = view
        return view

    # ------------------------------------------------------------ placing
    def place(self, pod: Pod, nodes: ClusterSnapshot | NodeTable) -> PlacementResult:
        snap = ClusterSnapshot.wrap(nodes)
        if len(snap) == 0:
            return PlacementResult(None, NO_NODES_AVAILABLE)
        shape = self.shape(pod)
        view = self._view(shape, snap)
        if view.prefilter:
            message = fit_error_message(len(snap), (), prefilter=view.prefilter)
            statuses = {n.name: Rejection((view.prefilter,), True) for n in snap.sorted()}
            return self._post_filter(shape, snap, None, statuses, message)
        nominated = snap.nominated_node(shape.key) or shape.nominated
        ctx: _Context | None = None
        if nominated is not None and nominated in view.index:
            ctx = self._context(shape, snap, view)
            if self._dynamic(ctx, view.index[nominated]) is None:
                return PlacementResult(nominated)
        if (
            self.fast
            and shape.simple
            and view.constant
            and not snap.with_affinity
            and not snap.nominated
        ):
            best = self._fast(shape, view, snap)
            if best is not None:
                return PlacementResult(best)
        ctx = ctx or self._context(shape, snap, view)
        feasible: list[NodeState] = []
        statuses: dict[str, Rejection] = {}
        for node in snap.sorted():
            why = view.rejected.get(node.name) or self._dynamic(ctx, node)
            if why is None:
                feasible.append(node)
            else:
                statuses[node.name] = why
        if feasible:
            return PlacementResult(self._select(ctx, view, feasible))
        message = fit_error_message(len(snap), (r.reasons for r in statuses.values()))
        return self._post_filter(shape, snap, ctx, statuses, message)

    def diagnose(self, pod: Pod, nodes: ClusterSnapshot | NodeTable) -> dict[str, Rejection]:
        """Why each node rejects ``pod`` now (feasible nodes are absent): the
        filters' statuses a failed placement summarizes in its message."""
        snap = ClusterSnapshot.wrap(nodes)
        shape = self.shape(pod)
        view = self._view(shape, snap)
        if view.prefilter:
            return {n.name: Rejection((view.prefilter,), True) for n in snap.sorted()}
        ctx = self._context(shape, snap, view)
        out: dict[str, Rejection] = {}
        for node in snap.sorted():
            why = view.rejected.get(node.name) or self._dynamic(ctx, node)
            if why is not None:
                out[node.name] = why
        return out

    def _context(
        self, shape: Shape, snap: ClusterSnapshot, view: _StaticView | None = None
    ) -> _Context:
        nodes = snap.sorted()
        spread = None
        if any(c.hard for c in shape.constraints):
            args = (shape.constraints, nodes, snap.taints, shape.affinity, shape.tolerations)
            domains = None
            if view is not None:
                key = domains_key(shape.constraints)
                domains = view.spread_domains.get(key)
                if domains is None:
                    domains = view.spread_domains[key] = eligible_domains(*args)
            spread = SpreadFilter(
                shape.info,
                shape.constraints,
                nodes,
                snap.on_node,
                snap.taints,
                shape.affinity,
                shape.tolerations,
                domains,
            )
        interpod = None
        if shape.info.required_affinity or shape.info.required_anti_affinity or snap.with_affinity:
            own = bool(shape.info.required_affinity or shape.info.required_anti_affinity)
            interpod = InterPodFilter.build(shape.info, snap.bound_pairs(own), snap.namespaces)
            if not interpod:
                interpod = None
        nominated: dict[str, tuple[dict[str, int], int]] = {}
        for key, (node, info) in snap.nominated.items():
            if key == shape.key or info.priority < shape.info.priority:
                continue
            reqs, count = nominated.get(node, ({}, 0))
            for k, v in info.requests.items():
                reqs[k] = reqs.get(k, 0) + v
            nominated[node] = (reqs, count + 1)
        return _Context(snap, shape, spread, interpod, nominated)

    def _dynamic(
        self,
        ctx: _Context,
        node: NodeState,
        removed: Sequence[PodInfo] = (),
        spread: SpreadFilter | None = None,
        interpod: InterPodFilter | None = None,
    ) -> Rejection | None:
        """NodePorts, NodeResourcesFit, PodTopologySpread, InterPodAffinity
        for one node (without the ``removed`` pods, when preemption asks)."""
        shape = ctx.shape
        if shape.info.ports:
            gone = {p.key for p in removed}
            used = [
                port
                for p in ctx.snap.on_node.get(node.name, {}).values()
                if p.key not in gone
                for port in p.ports
            ]
            if ports_conflict(shape.info.ports, used):
                return Rejection((REASON_NODE_PORTS,), False)
        extra: Mapping[str, int] | None = None
        extra_pods = 0
        nom = ctx.nominated.get(node.name)
        if nom is not None:
            extra, extra_pods = nom
        if removed:
            less = dict(extra or {})
            for p in removed:
                for k, v in p.requests.items():
                    less[k] = less.get(k, 0) - v
            extra, extra_pods = less, extra_pods - len(removed)
        if extra or extra_pods or not fits(shape.checks, node):
            # (fits: the common answer, without building the reasons)
            why = insufficient(shape.checks, node, extra, extra_pods)
            if why is not None:
                return why
        spread = spread if spread is not None else ctx.spread
        if spread is not None:
            why = spread.reject(node)
            if why is not None:
                return why
        interpod = interpod if interpod is not None else ctx.interpod
        if interpod is not None:
            return interpod.reject(node)
        return None

    # ------------------------------------------------------------ scoring
    def _select(self, ctx: _Context, view: _StaticView, feasible: list[NodeState]) -> str:
        if len(feasible) == 1 or not self.profile.scores:
            return feasible[0].name
        totals = self._scores(ctx, view, feasible)
        best = max(totals.values())
        return next(n.name for n in feasible if totals[n.name] == best)

    def _scores(
        self, ctx: _Context, view: _StaticView, feasible: list[NodeState]
    ) -> dict[str, int]:
        """Each feasible node's weighted total over the profile's plugins."""
        p, shape, snap = self.profile, ctx.shape, ctx.snap
        totals = {n.name: 0 for n in feasible}

        def add(weight: int, scores: Mapping[str, int] | None) -> None:
            if weight and scores is not None:
                for name, s in scores.items():
                    totals[name] += weight * s

        if p.weight(TAINT_TOLERATION):
            raw = {n.name: view.taint_counts[n.name] for n in feasible}
            add(p.weight(TAINT_TOLERATION), default_normalize(raw, True))
        if p.weight(NODE_AFFINITY) and shape.affinity.preferred:
            raw = {n.name: view.affinity_weights[n.name] for n in feasible}
            add(p.weight(NODE_AFFINITY), default_normalize(raw, False))
        if p.weight(FIT) or p.weight(BALANCED):
            # NodeResourcesFit and NodeResourcesBalancedAllocation, weighted
            # (resource_scorer is fit_score and balanced_score in one pass).
            score = resource_scorer(p, shape.info.nonzero, shape.info.requests)
            for n in feasible:
                totals[n.name] += score(n, snap.nonzero(n))
        if p.weight(SPREAD) and shape.constraints:
            add(
                p.weight(SPREAD),
                spread_scores(
                    shape.info,
                    shape.constraints,
                    feasible,
                    snap.sorted(),
                    snap.on_node,
                    snap.taints,
                    shape.affinity,
                    shape.tolerations,
                ),
            )
        if p.weight(INTER_POD_AFFINITY) and (
            shape.info.preferred_affinity
            or shape.info.preferred_anti_affinity
            or snap.with_affinity
        ):
            add(
                p.weight(INTER_POD_AFFINITY),
                interpod_scores(
                    shape.info,
                    feasible,
                    snap.bound_pairs(
                        bool(shape.info.preferred_affinity or shape.info.preferred_anti_affinity)
                    ),
                    snap.namespaces,
                ),
            )
        return totals

    def _fast(self, shape: Shape, view: _StaticView, snap: ClusterSnapshot) -> str | None:
        """The best node for a simple shape from its ranking, kept current."""
        if not self.profile.scores:
            for node in view.feasible:
                if fits(shape.checks, node):
                    return node.name
            return None
        rank = self._rankings.get(shape.rank_key)
        changed = None
        if rank is not None:
            self._rankings.move_to_end(shape.rank_key)
            if rank.generation == snap.generation:
                changed = snap.changes_since(rank.position)
            if len(rank.heap) > 4 * len(view.index) + 64:
                # Stale entries below the top are never popped: drop them.
                rank.heap = [e for e in rank.heap if snap.versions.get(e[1], 0) == e[2]]
                heapq.heapify(rank.heap)
        if rank is None or changed is None:
            score = resource_scorer(self.profile, shape.info.nonzero, shape.info.requests)
            rank = _Ranking(snap.generation, snap.log_position, score)
            self._rankings[shape.rank_key] = rank
            self._rankings.move_to_end(shape.rank_key)
            if len(self._rankings) > _RANKINGS:
                self._rankings.popitem(last=False)
            changed = set(view.index)
        rank.position = snap.log_position
        heap, index, checks = rank.heap, view.index, shape.checks
        push, version_of, nonzero, score = (
            heapq.heappush,
            snap.versions.get,
            snap.nonzero,
            rank.score,
        )
        for name in changed:
            node = index.get(name)
            if node is not None and fits(checks, node):
                push(heap, (-score(node, nonzero(node)), name, version_of(name, 0)))
        pop = heapq.heappop
        while heap:
            _, name, version = heap[0]
            if version_of(name, 0) == version:
                return name
            pop(heap)
        return None

    # ------------------------------------------------------------ preemption
    def _post_filter(
        self,
        shape: Shape,
        snap: ClusterSnapshot,
        ctx: _Context | None,
        statuses: Mapping[str, Rejection],
        message: str,
    ) -> PlacementResult:
        """DefaultPreemption (see ``default_preemption.py``)."""
        pod = shape.info
        if not self.preemption:
            return PlacementResult(None, message)
        if shape.never:
            return PlacementResult(None, f"{message} preemption: {MSG_NEVER}")
        if not snap.has_lower_priority(pod.priority):
            # Nobody to evict anywhere: what the dry run would find on every
            # node, without running it (kube-scheduler still reports it).
            reasons = (
                (MSG_NOT_HELPFUL,) if st is None or st.unresolvable else (MSG_NO_VICTIMS,)
                for st in (statuses.get(n.name) for n in snap.sorted())
            )
            detail = fit_error_message(len(snap), reasons)
            return PlacementResult(None, f"{message} preemption: {detail}")
        nominated = snap.nominated_node(shape.key) or shape.nominated
        if nominated is not None:
            st = statuses.get(nominated)
            if st is None or not st.unresolvable:
                for p in snap.on_node.get(nominated, {}).values():
                    if p.priority < pod.priority and p.deleting:
                        return PlacementResult(None, f"{message} preemption: {MSG_TERMINATING}")
        ctx = ctx or self._context(shape, snap)
        candidates: list[Candidate] = []
        outcome: dict[str, Rejection] = {}
        for node in snap.sorted():
            st = statuses.get(node.name)
            if st is None or st.unresolvable:
                outcome[node.name] = Rejection((MSG_NOT_HELPFUL,), True)
                continue
            on_node = list(snap.on_node.get(node.name, {}).values())
            victims, why = select_victims(pod, node.name, on_node, self._fits(ctx, node))
            if victims:
                candidates.append(Candidate(node.name, tuple(victims)))
            elif why is not None:
                outcome[node.name] = why
        if not candidates:
            detail = fit_error_message(len(snap), (r.reasons for r in outcome.values()))
            return PlacementResult(None, f"{message} preemption: {detail}")
        best = pick_candidate(candidates)
        lower = tuple(
            sorted(
                k
                for k, (n, info) in snap.nominated.items()
                if n == best.node and info.priority < pod.priority and k != shape.key
            )
        )
        return PlacementResult(
            None,
            message,
            nominated_node=best.node,
            victims=tuple(v.key for v in best.victims),
            unnominated=lower,
        )

    def _fits(self, ctx: _Context, node: NodeState) -> Fits:
        """Whether the pod fits ``node`` without some of its pods."""

        def fits(removed: Sequence[PodInfo]) -> Rejection | None:
            spread = ctx.spread.copy() if ctx.spread is not None else None
            interpod = ctx.interpod.copy() if ctx.interpod is not None else None
            for p in removed:
                if spread is not None:
                    spread.update(p, node, -1)
                if interpod is not None:
                    interpod.update(p, node, -1)
            return self._dynamic(ctx, node, removed, spread, interpod)

        return fits
