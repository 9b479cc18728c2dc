"""Where a pod set's pods go on a TAS flavor's topology (Kueue's
findTopologyAssignment in tas_flavor_snapshot.go): count how many pods (and
slices, and a group's leader) each domain can hold, find the level and the
domains that hold them all (required: one domain at the requested level;
preferred: going up a level at a time, then spread; unconstrained: any
domains), then go down level by level keeping the fewest domains. The
default profile chooses as Kueue's: BestFit (the fullest domain that still
fits the remainder) for required and preferred requests, LeastFreeCapacity
for unconstrained ones (TASProfileMixed)."""

from __future__ import annotations

from typing import Final

from kuota.api.k8s import NodeSelector, Toleration
from kuota.scheduler.tas.balanced import apply_balanced, find_best_domains
from kuota.scheduler.tas.snapshot import (
    PODS,
    Domain,
    FlavorTopology,
    affinity_matches,
    count_in,
    domain_id,
    selector_matches,
    untolerated,
)

MAX_INT32: Final = 2**31 - 1


class PodSetRequest:
    """One pod set's ask (TASPodSetRequests) with what the placement needs of
    its pods: per-pod requests, node selector, affinity and tolerations."""

    __slots__ = (
        "affinity",
        "count",
        "group",
        "implied",
        "inner_layers",
        "name",
        "node_selector",
        "preferred",
        "required",
        "single",
        "slice_level",
        "slice_size",
        "tolerations",
        "unconstrained",
    )

    def __init__(
        self,
        name: str,
        count: int,
        single: dict[str, int],
        *,
        required: str | None = None,
        preferred: str | None = None,
        unconstrained: bool = False,
        slice_level: str | None = None,
        slice_size: int | None = None,
        inner_layers: list[tuple[str, int]] | None = None,
        implied: bool = False,
        group: str | None = None,
        node_selector: dict[str, str] | None = None,
        affinity: NodeSelector | None = None,
        tolerations: list[Toleration] | None = None,
    ) -> None:
        self.name = name
        self.count = count
        self.single = single
        self.required = required
        self.preferred = preferred
        self.unconstrained = unconstrained
        self.slice_level = slice_level
        self.slice_size = slice_size
        # TASMultiLayerTopology: the slice layers inside the outermost one
        # (level, size), outermost first.
        self.inner_layers = inner_layers or []
        self.implied = implied
        self.group = group
        self.node_selector = node_selector or {}
        self.affinity = affinity
        self.tolerations = tolerations or []


class Assignment:
    """A pod set's topology assignment: the levels and (values, count) per domain."""

    __slots__ = ("domains", "levels")

    def __init__(self, levels: list[str], domains: list[tuple[list[str], int]]) -> None:
        self.levels = levels
        self.domains = domains


class _State:
    __slots__ = (
        "count",
        "excluded",
        "layers",
        "leader_count",
        "least_free",
        "requested_level",
        "required",
        "size_at_level",
        "slice_level",
        "slice_size",
        "total_nodes",
        "unconstrained",
    )

    def __init__(self) -> None:
        self.count = 0
        self.leader_count = 0
        self.slice_size = 1
        self.required = False
        self.unconstrained = False
        self.least_free = False
        self.requested_level = 0
        self.slice_level = 0
        # level index -> the slice size pods are grouped in there (inner layers)
        self.size_at_level: dict[int, int] = {}
        # every layer (level, size), for the not-fit message of a multi-layer ask
        self.layers: list[tuple[str, int]] = []
        self.total_nodes = 0
        self.excluded: dict[str, int] = {}


def _level_key(t: FlavorTopology, r: PodSetRequest) -> str | None:
    """levelKeyWithImpliedFallback."""
    if r.required is not None:
        return r.required
    if r.preferred is not None:
        return r.preferred
    if r.slice_level is not None:
        return t.levels[0]  # a slice-only request spans the highest level
    if r.unconstrained or r.implied:
        return t.levels[-1]
    return None


def has_level(t: FlavorTopology, r: PodSetRequest) -> bool:
    key = _level_key(t, r)
    if key is None or t.level_index(key) < 0:
        return False
    if r.slice_level is not None and t.level_index(r.slice_level) < 0:
        return False
    return all(t.level_index(level) >= 0 for level, _ in r.inner_layers)


def find(
    t: FlavorTopology,
    workers: PodSetRequest,
    leader: PodSetRequest | None,
    assumed: dict[str, dict[str, int]],
    simulate_empty: bool,
    least_free_profile: bool,
    balanced: bool = False,
    within: str = "",
) -> tuple[dict[str, Assignment], str]:
    """The assignments of a pod set (and its group's leader), or why none.
    ``balanced``: the TASBalancedPlacement gate (``balanced.py``).
    ``within``: a failed node's replacement confined to this domain (its id,
    the full level values; requiredReplacementDomain)."""
    st = _State()
    st.count = workers.count
    req = dict(workers.single)
    req[PODS] = req.get(PODS, 0) + 1
    leader_req: dict[str, int] | None = None
    if leader is not None:
        leader_req = dict(leader.single)
        leader_req[PODS] = leader_req.get(PODS, 0) + 1
        st.leader_count = 1
    if workers.slice_level is not None:
        size = workers.slice_size or 0
        if size <= 0:
            return {}, "slice topology requested, but slice size not provided"
        st.slice_size = size
    st.required = workers.required is not None
    slice_only = (
        workers.required is None and workers.preferred is None and workers.slice_level is not None
    )
    st.unconstrained = workers.unconstrained or workers.implied or slice_only
    st.least_free = st.unconstrained and least_free_profile
    key = _level_key(t, workers)
    if key is None:
        return {}, "topology level not specified"
    st.requested_level = t.level_index(key)
    if st.requested_level < 0:
        return {}, f"no requested topology level: {key}"
    skey = workers.slice_level if workers.slice_level is not None else t.levels[-1]
    st.slice_level = t.level_index(skey)
    if st.slice_level < 0:
        return {}, f"no requested topology level for slices: {skey}"
    if st.requested_level > st.slice_level:
        return {}, f"podset slice topology {skey} is above the podset topology {key}"
    st.size_at_level, reason = _slice_size_at_level(t, workers, st.slice_size, st.slice_level)
    if reason:
        return {}, reason
    if st.size_at_level:
        st.layers = [(skey, st.slice_size), *workers.inner_layers]

    _fill_in_counts(t, workers, req, leader_req, assumed, simulate_empty, st, within)
    fit: list[Domain] = []
    level = 0
    use_balanced = False
    if balanced and not st.required and not st.unconstrained:
        fit, level, use_balanced = _balanced(t, st)
    if not use_balanced:
        level, fit, reason = _find_level_with_fit_domains(t, st.requested_level, st)
        if reason:
            return {}, reason
    fit = _update_counts_to_minimum(fit, st.count, st.leader_count, st.slice_size, st, True)
    cur = level
    while cur < min(len(t.levels) - 1, st.slice_level) and not use_balanced:
        lower = _sorted(_lower(fit), st)
        fit = _update_counts_to_minimum(lower, st.count, st.leader_count, st.slice_size, st, True)
        cur += 1
    while cur < len(t.levels) - 1:
        # Below the outermost slice level pods go one by one, unless an inner
        # slice layer groups them at the next level.
        size = st.slice_size if cur < st.slice_level else st.size_at_level.get(cur + 1, 1)
        nxt: list[Domain] = []
        for d in fit:
            children = _sorted(d.children, st)
            if size > 1:
                # The slice counts filled in were for the outermost layer;
                # (after sorting, as Kueue does) count this layer's slices.
                for c in children:
                    c.slice_count = c.pod_count // size
                    c.slice_count_with_leader = c.pod_count_with_leader // size
            nxt += _update_counts_to_minimum(
                children, d.pod_count, d.leader_count, size, st, size > 1
            )
        fit = nxt
        cur += 1
    out: dict[str, Assignment] = {}
    if leader is not None:
        leaders: list[Domain] = []
        workers_fit: list[Domain] = []
        for d in fit:
            if d.leader_count > 0:
                c = d.copy_state()
                c.pod_count = d.leader_count
                leaders.append(c)
            if d.pod_count > 0:
                workers_fit.append(d)
        out[leader.name] = _build(t, leaders)
        fit = workers_fit
    out[workers.name] = _build(t, fit)
    return out, ""


def _balanced(t: FlavorTopology, st: _State) -> tuple[list[Domain], int, bool]:
    """Balanced placement's domains and level, if it finds them (else the
    caller falls back to BestFit)."""

    def by_slices(ds: list[Domain]) -> list[Domain]:
        return _sorted(ds, st)

    def by_leader(ds: list[Domain]) -> list[Domain]:
        return _sorted_with_leader(ds, st)

    def refill(d: Domain, level: int) -> None:
        _fill_helper(d, st.slice_size, st.slice_level, level, st.leader_count > 0, {})

    per_level = [list(level.values()) for level in t.per_level]
    fit, threshold = find_best_domains(
        per_level,
        st.requested_level,
        st.slice_level,
        st.count,
        st.slice_size,
        st.leader_count,
        by_slices,
        by_leader,
        refill,
    )
    if threshold <= 0:
        return [], 0, False
    placed, level, reason = apply_balanced(
        fit,
        threshold,
        st.requested_level,
        st.slice_level,
        st.count,
        st.slice_size,
        st.leader_count,
        by_slices,
        by_leader,
    )
    if reason:
        return [], 0, False
    return placed, level, True


def _slice_size_at_level(
    t: FlavorTopology, workers: PodSetRequest, size: int, level: int
) -> tuple[dict[int, int], str]:
    """buildSliceSizeAtLevel: each inner layer below the one before it, its
    size dividing that one's; every level from the one above down to the
    layer's own groups pods by the layer's size."""
    out: dict[int, int] = {}
    prev_size, prev_level = size, level
    for key, inner in workers.inner_layers:
        idx = t.level_index(key)
        if idx < 0:
            return {}, f"no requested topology level for additional slice layer: {key}"
        if idx <= prev_level:
            above = t.levels[prev_level]
            return (
                {},
                f"additional slice layer topology {key} must be at a lower level than {above}",
            )
        if prev_size % inner != 0:
            detail = f"additional slice layer size {inner} must evenly divide parent layer size"
            return {}, f"{detail} {prev_size}"
        for lvl in range(prev_level + 1, idx + 1):
            out[lvl] = inner
        prev_size, prev_level = inner, idx
    return out, ""


def _fill_in_counts(
    t: FlavorTopology,
    workers: PodSetRequest,
    req: dict[str, int],
    leader_req: dict[str, int] | None,
    assumed: dict[str, dict[str, int]],
    simulate_empty: bool,
    st: _State,
    within: str = "",
) -> None:
    for level in t.per_level:
        for d in level.values():
            d.reset()
    tolerations = workers.tolerations + t.tolerations
    for leaf in t.leaves.values():
        st.total_nodes += 1
        if within and not _belongs_to(domain_id(leaf.values), within):
            # (fillLeafCounts: outside the required replacement domain)
            st.excluded["topologyDomain"] = st.excluded.get("topologyDomain", 0) + 1
            continue
        n = leaf.node
        if t.lowest_is_node and n is not None:
            # FindFeasibleNodes: the pod's node selection and taints.
            if not selector_matches(n.labels, workers.node_selector):
                st.excluded["nodeSelector"] = st.excluded.get("nodeSelector", 0) + 1
                continue
            if not affinity_matches(n.labels, n.name, workers.affinity):
                st.excluded["affinity"] = st.excluded.get("affinity", 0) + 1
                continue
            taint = untolerated(n.taints, tolerations)
            if taint is not None:
                k = f'taint "{_taint_str(taint.key, taint.value, taint.effect)}"'
                st.excluded[k] = st.excluded.get(k, 0) + 1
                continue
        cap = t.remaining(leaf, simulate_empty)
        used = assumed.get(leaf.id)
        if used is not None:
            for r, q in used.items():
                cap[r] = cap.get(r, 0) - q
        leaf.pod_count, limiting = count_in(req, cap)
        if leaf.pod_count == 0 and limiting:
            k = f'resource "{limiting}"'
            st.excluded[k] = st.excluded.get(k, 0) + 1
        leaf.leader_count = 0
        if leader_req is not None and count_in(leader_req, cap)[0] > 0:
            leaf.leader_count = 1
            for r, q in leader_req.items():
                cap[r] = cap.get(r, 0) - q
        leaf.pod_count_with_leader = count_in(req, cap)[0]
    for root in t.roots:
        _fill_helper(root, st.slice_size, st.slice_level, 0, st.leader_count > 0, st.size_at_level)


def _belongs_to(did: str, target: str) -> bool:
    """TopologyDomainID.BelongsTo."""
    return did == target or did.startswith(target + ",")


def _taint_str(key: str, value: str | None, effect: str | None) -> str:
    return f"{key}={value}:{effect}" if value else f"{key}:{effect}"


def _fill_helper(
    d: Domain, size: int, slice_level: int, level: int, leader: bool, size_at: dict[int, int]
) -> None:
    if not d.children:
        if level == slice_level:
            d.slice_count = d.pod_count // size
            d.slice_count_with_leader = d.pod_count_with_leader // size
        return
    pods = 0
    slices = 0
    contributor = False
    min_pod_diff = MAX_INT32
    min_slice_diff = MAX_INT32
    leaders = 0
    # Children at an inner slice layer's level give whole slices of it only.
    inner = size_at.get(level + 1, 1) if size_at else 1
    for c in d.children:
        _fill_helper(c, size, slice_level, level + 1, leader, size_at)
        c_pods = c.pod_count
        c_with_leader = c.pod_count_with_leader
        if inner > 1:
            c_pods = c_pods // inner * inner
            c_with_leader = c_with_leader // inner * inner
        pods += c_pods
        slices += c.slice_count
        if not leader or c.leader_count > 0:
            contributor = True
            min_pod_diff = min(c_pods - c_with_leader, min_pod_diff)
            min_slice_diff = min(c.slice_count - c.slice_count_with_leader, min_slice_diff)
        leaders = max(c.leader_count, leaders)
    d.pod_count = pods
    slices_with_leader = 0
    if contributor:
        d.pod_count_with_leader = pods - min_pod_diff
        slices_with_leader = slices - min_slice_diff
    else:
        d.pod_count_with_leader = 0
    d.leader_count = leaders
    if level == slice_level:
        slices = d.pod_count // size
        slices_with_leader = d.pod_count_with_leader // size
    d.slice_count = slices
    d.slice_count_with_leader = slices_with_leader


def _values_key(d: Domain) -> list[str]:
    return d.values


def _sorted(domains: list[Domain], st: _State) -> list[Domain]:
    """sortedDomains: most slices first (fewest with LeastFreeCapacity),
    then fewest pods, then by level values."""
    if st.least_free:
        return sorted(domains, key=lambda d: (d.slice_count, d.pod_count, d.values))
    return sorted(domains, key=lambda d: (-d.slice_count, d.pod_count, d.values))


def _sorted_with_leader(domains: list[Domain], st: _State) -> list[Domain]:
    if st.least_free:
        return sorted(
            domains,
            key=lambda d: (
                -d.leader_count,
                d.slice_count_with_leader,
                d.pod_count_with_leader,
                d.values,
            ),
        )
    return sorted(
        domains,
        key=lambda d: (
            -d.leader_count,
            -d.slice_count_with_leader,
            d.pod_count_with_leader,
            d.values,
        ),
    )


def _best_fit(domains: list[Domain], needed: int, leader_count: int, slices: bool) -> Domain:
    """findBestFitDomain(ForSlices): the first domain with the smallest count
    that still holds ``needed`` (with a leader when one is asked); else the first."""
    best = domains[0]
    best_count = MAX_INT32
    found = False
    for d in domains:
        if d.leader_count < leader_count:
            continue
        if slices:
            n = d.slice_count_with_leader if leader_count > 0 else d.slice_count
        else:
            n = d.pod_count_with_leader if leader_count > 0 else d.pod_count
        if needed <= n < best_count:
            best = d
            best_count = n
            found = True
    return best if found else domains[0]


def _not_fit(t: FlavorTopology, fit: int, total: int, size: int, st: _State, level: int) -> str:
    """notFitMessage, or multiLayerNotFitMessage for a multi-layer ask."""
    if st.layers:
        return _multi_layer_not_fit(t, level, st)
    unit = "pod" if size == 1 else "slice"
    if fit == 0:
        msg = f'topology "{t.topology_name}" doesn\'t allow to fit any of {total} {unit}(s)'
    else:
        msg = f'topology "{t.topology_name}" allows to fit only {fit} out of {total} {unit}(s)'
    return msg + _excluded(st)


def _excluded(st: _State) -> str:
    if not st.excluded:
        return ""
    reasons = ", ".join(sorted(f"{k}: {v}" for k, v in st.excluded.items()))
    return f". Total nodes: {st.total_nodes}; excluded: {reasons}"


def _multi_layer_not_fit(t: FlavorTopology, level: int, st: _State) -> str:
    """multiLayerNotFitMessage: per layer, how many of its slices the domain
    of the searched level with the most slices holds (ties by domain id)."""
    msg = f'topology "{t.topology_name}" doesn\'t allow to fit'
    domains = list(t.per_level[level].values())
    if not domains:
        return msg
    best = min(domains, key=lambda d: (-d.slice_count, d.id))
    for key, size in st.layers:
        target = t.level_index(key)
        if target < 0:
            continue
        fit = _slices_in_subtree(best, level, target, size)
        msg += f"; {fit}/{st.count // size} slice(s) fit on level {key}"
    return msg + _excluded(st)


def _slices_in_subtree(d: Domain, level: int, target: int, size: int) -> int:
    if level == target:
        return d.pod_count // size
    return sum(_slices_in_subtree(c, level + 1, target, size) for c in d.children)


def _find_level_with_fit_domains(
    t: FlavorTopology, level: int, st: _State
) -> tuple[int, list[Domain], str]:
    domains = list(t.per_level[level].values())
    if not domains:
        return 0, [], f"no topology domains at level: {t.levels[level]}"
    ordered = _sorted_with_leader(domains, st)
    top = ordered[0]
    slice_count = st.count // st.slice_size
    if (
        not st.least_free
        and top.slice_count_with_leader >= slice_count
        and top.leader_count >= st.leader_count
    ):
        top = _best_fit(ordered, slice_count, st.leader_count, True)
    if st.least_free:
        for d in ordered:
            cap = d.slice_count
            if st.leader_count > 0:
                if d.leader_count < st.leader_count:
                    continue
                cap = d.slice_count_with_leader
            if cap >= slice_count:
                return level, [d], ""
        if st.required:
            return 0, [], _not_fit(t, ordered[-1].pod_count, slice_count, st.slice_size, st, level)
    if top.slice_count_with_leader < slice_count or top.leader_count < st.leader_count:
        if st.required:
            return 0, [], _not_fit(t, top.slice_count, slice_count, st.slice_size, st, level)
        if level > 0 and not st.unconstrained:
            return _find_level_with_fit_domains(t, level - 1, st)
        results: list[Domain] = []
        remaining = slice_count
        remaining_leaders = st.leader_count
        ordered = _prioritize_leader(ordered, st.count, st.leader_count, st.slice_size, True)
        idx = 0
        while remaining_leaders > 0 and idx < len(ordered) and ordered[idx].leader_count > 0:
            d = ordered[idx]
            if not st.least_free and d.slice_count_with_leader >= remaining:
                d = _best_fit(ordered[idx:], remaining, remaining_leaders, True)
            results.append(d)
            remaining_leaders -= d.leader_count
            remaining -= d.slice_count_with_leader
            idx += 1
        if remaining_leaders > 0:
            fit = st.leader_count - remaining_leaders
            return 0, [], _not_fit(t, fit, slice_count, st.slice_size, st, level)
        rest = _sorted(ordered[idx:], st)
        i = 0
        while remaining > 0 and i < len(rest):
            d = rest[i]
            if not st.least_free and d.slice_count >= remaining:
                d = _best_fit(rest[i:], remaining, 0, True)
            results.append(d)
            remaining -= d.slice_count
            i += 1
        if remaining > 0:
            return (
                0,
                [],
                _not_fit(t, slice_count - remaining, slice_count, st.slice_size, st, level),
            )
        return level, results, ""
    return level, [top], ""


def _prioritize_leader(
    domains: list[Domain], count: int, leader_count: int, size: int, slices: bool
) -> list[Domain]:
    """prioritizeLeaderDomain: a leader-capable domain first whose leader
    penalty the others' capacity still covers."""
    if leader_count == 0 or len(domains) < 2:
        return domains
    need = count // size if slices else count
    avail = sum(d.slice_count if slices else d.pod_count for d in domains)
    for i, d in enumerate(domains):
        if d.leader_count < leader_count:
            continue
        if slices:
            penalty = d.slice_count - d.slice_count_with_leader
        else:
            penalty = d.pod_count - d.pod_count_with_leader
        if avail - penalty < need:
            continue
        if i == 0:
            return domains
        return [d, *domains[:i], *domains[i + 1 :]]
    return domains


def _update_counts_to_minimum(
    domains: list[Domain], count: int, leader_count: int, size: int, st: _State, slices: bool
) -> list[Domain]:
    """updateCountsToMinimumGeneric: take domains in order until the pods (or
    slices) are placed, the last one chosen by BestFit."""
    domains = _prioritize_leader(domains, count, leader_count, size, slices)
    result: list[Domain] = []
    remaining = count // size if slices else count
    remaining_leaders = leader_count
    for i in range(len(domains)):
        d = domains[i]
        if remaining_leaders > 0:
            with_leader = d.slice_count_with_leader if slices else d.pod_count_with_leader
            if (
                not st.least_free
                and with_leader >= remaining
                and d.leader_count >= remaining_leaders
            ):
                d = _best_fit(domains[i:], remaining, remaining_leaders, slices)
                with_leader = d.slice_count_with_leader if slices else d.pod_count_with_leader
            mult = size if slices else 1
            if with_leader >= remaining and d.leader_count >= remaining_leaders:
                if slices:
                    d.slice_count = remaining
                d.leader_count = remaining_leaders
                d.pod_count = remaining * mult
                result.append(d)
                return result
            with_leader = min(with_leader, remaining)
            d.leader_count = min(d.leader_count, remaining_leaders)
            if slices:
                d.slice_count = with_leader
            d.pod_count = with_leader * mult
            remaining_leaders -= d.leader_count
            remaining -= with_leader
            result.append(d)
            continue
        if slices:
            if not st.least_free and d.slice_count >= remaining:
                d = _best_fit(domains[i:], remaining, 0, True)
            d.leader_count = 0
            if d.slice_count >= remaining:
                d.pod_count = remaining * size
                d.slice_count = remaining
                result.append(d)
                return result
            d.pod_count = d.slice_count * size
            remaining -= d.slice_count
            result.append(d)
            continue
        if not st.least_free and d.pod_count >= remaining:
            d = _best_fit(domains[i:], remaining, 0, False)
        d.leader_count = 0
        if d.pod_count >= remaining:
            d.pod_count = remaining
            result.append(d)
            return result
        remaining -= d.pod_count
        result.append(d)
    return result


def _lower(domains: list[Domain]) -> list[Domain]:
    out: list[Domain] = []
    for d in domains:
        out += d.children
    return out


def _build(t: FlavorTopology, domains: list[Domain]) -> Assignment:
    """buildAssignment: domains by their level values, only the hostname
    level when the topology's lowest level is the node."""
    start = len(t.levels) - 1 if t.lowest_is_node else 0
    out: list[tuple[list[str], int]] = []
    for d in sorted(domains, key=_values_key):
        if d.pod_count == 0:
            continue
        out.append((d.values[start:], d.pod_count))
    return Assignment(t.levels[start:], out)
