"""A failed node's replacement (Kueue's TASFailedNodeReplacement:
``findReplacementAssignment`` and its helpers in tas_flavor_snapshot.go).

An admitted workload whose topology assignment names a node marked in
``status.unhealthyNodes`` keeps its quota and every other domain; only the
pods of that node are placed again: inside the domain its required topology
(or the slice it broke) confines them to, else anywhere the pod set's
request allows, on the usage of everyone else. The result is the old
assignment without the node, merged with the new domains."""

from __future__ import annotations

from kuota.scheduler.tas.placement import PodSetRequest, find
from kuota.scheduler.tas.snapshot import Domain, FlavorTopology, domain_id

Domains = list[tuple[list[str], int]]


def _leaf(t: FlavorTopology, values: list[str]) -> Domain | None:
    """The snapshot's leaf of an assignment's domain (the hostname alone when
    the lowest level is the node)."""
    return t.leaves.get(values[-1] if t.lowest_is_node else domain_id(values))


def _slices(r: PodSetRequest) -> list[tuple[str, int]]:
    """PodSetSliceRequiredTopologyConstraints, outermost first."""
    if r.slice_level is None:
        return []
    return [(r.slice_level, r.slice_size or 0), *r.inner_layers]


def _level_key(t: FlavorTopology, r: PodSetRequest) -> str | None:
    """levelKeyWithImpliedFallback."""
    if r.required is not None:
        return r.required
    if r.preferred is not None:
        return r.preferred
    if r.slice_level is not None:
        return t.levels[0]
    if r.unconstrained or r.implied:
        return t.levels[-1]
    return None


def _ancestor(leaf: Domain, t: FlavorTopology, level: int) -> str:
    """The id (full level values) of the leaf's domain at ``level``."""
    return domain_id(leaf.values[: level + 1])


def _incomplete_slice_domain(
    t: FlavorTopology, left: Domains, missing: int, size: int, key: str
) -> str:
    """findIncompleteSliceDomain: the domain at the slice level whose pods
    and the missing ones make whole slices."""
    level = t.level_index(key)
    if level < 0 or size <= 0:
        return ""
    per: dict[str, int] = {}
    for values, count in left:
        leaf = _leaf(t, values)
        if leaf is None:
            continue
        did = _ancestor(leaf, t, level)
        per[did] = per.get(did, 0) + count
    for did, count in per.items():
        if (count + missing) % size == 0:
            return did
    return ""


def required_domain(t: FlavorTopology, r: PodSetRequest, left: Domains, missing: int) -> str:
    """requiredReplacementDomain: the domain the replacement must stay in."""
    key = _level_key(t, r)
    if key is None:
        return ""
    level = t.level_index(key)
    if level < 0 or not left:
        return ""  # (the failed node held the whole assignment: nothing to comply with)
    layers = _slices(r)
    size = layers[0][1] if layers else 1
    if layers and size > 0 and missing % size != 0:
        if len(layers) > 1:
            for lkey, lsize in reversed(layers):
                if lsize > 0 and missing % lsize != 0:
                    return _incomplete_slice_domain(t, left, missing, lsize, lkey)
        return _incomplete_slice_domain(t, left, missing, size, layers[0][0])
    if r.required is None:
        return ""
    leaf = _leaf(t, left[0][0])
    if leaf is None:
        return ""
    return _ancestor(leaf, t, level)


def merge(t: FlavorTopology, a: Domains, b: Domains) -> Domains:
    """mergeTopologyAssignments: both lists by the domains' full level
    values, a domain in both counted once with the pods of both."""

    def key(d: tuple[list[str], int]) -> str:
        leaf = _leaf(t, d[0])
        return domain_id(leaf.values) if leaf is not None else domain_id(d[0])

    out: Domains = []
    for values, count in sorted([*a, *b], key=key):
        if out and domain_id(out[-1][0]) == domain_id(values):
            out[-1] = (out[-1][0], out[-1][1] + count)
        else:
            out.append((list(values), count))
    return out


def find_replacement(
    t: FlavorTopology,
    r: PodSetRequest,
    existing: Domains,
    unhealthy: str,
    assumed: dict[str, dict[str, int]],
    least_free_profile: bool,
    balanced: bool,
) -> tuple[Domains, Domains, str]:
    """The pod set's new domains and the replacement ones, or why none
    (findReplacementAssignment)."""
    left: Domains = []
    missing = 0
    for values, count in existing:
        if values[-1] == unhealthy:
            missing = count
        else:
            left.append((values, count))
    for values, _ in left:
        if _leaf(t, values) is None:
            return (
                [],
                [],
                "Cannot replace the node, because the existing topologyAssignment is invalid, "
                f"as it contains the stale domain {values[0]}",
            )
    within = required_domain(t, r, left, missing)
    layers = _slices(r)
    size = layers[0][1] if layers else 1
    ask = PodSetRequest(
        r.name,
        missing,
        r.single,
        required=r.required,
        preferred=r.preferred,
        unconstrained=r.unconstrained,
        slice_level=r.slice_level,
        slice_size=r.slice_size,
        inner_layers=r.inner_layers,
        implied=r.implied,
        node_selector=r.node_selector,
        affinity=r.affinity,
        tolerations=r.tolerations,
    )
    if layers and within and size > 0 and missing % size != 0:
        # The innermost layer whose size divides the missing pods keeps
        # their grouping; none: one by one.
        ask.slice_level, ask.slice_size, ask.inner_layers = None, None, []
        for lkey, lsize in reversed(layers):
            if lsize > 0 and missing % lsize == 0:
                ask.slice_level, ask.slice_size = lkey, lsize
                break
    found, reason = find(t, ask, None, assumed, False, least_free_profile, balanced, within)
    if reason:
        return [], [], reason
    got = found.get(r.name)
    if got is None or not got.domains:
        return [], [], f"cannot find replacement assignment for unhealthy node: {unhealthy}"
    return merge(t, left, got.domains), got.domains, ""
