"""TAS balanced placement (Kueue's TASBalancedPlacement gate,
pkg/cache/scheduler/tas_balanced_placement.go): for a preferred request,
spread the slices evenly over the fewest domains that hold them instead of
filling the largest first. One level above the requested one, each domain
(each whole level at the top) is tried: the greedy fill of its domains gives
how many domains are needed and so a balance threshold (the most slices
every chosen domain can hold); domains below the threshold are pruned; the
best threshold wins (ties: fewer domains). Then the set of domains holding
the request with the least spare capacity is chosen (a dynamic program over
the domain count the greedy fill needs) and each gets the threshold, the
rest spread in sorted order. Any failure falls back to BestFit.

Works on copies of the domains (their counts are a placement's state), so
the fallback sees the snapshot's counts untouched.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from kuota.scheduler.tas.snapshot import Domain

__all__ = ["apply_balanced", "find_best_domains"]

Sorter = Callable[[list[Domain]], list[Domain]]
Refill = Callable[[Domain, int], None]


def _greedy(
    domains: list[Domain],
    slice_count: int,
    leader_count: int,
    by_slices: Sorter,
    by_leader: Sorter,
) -> tuple[bool, int, Domain | None, Domain | None]:
    """evaluateGreedyAssignment: whether the request fits, on how many
    domains, and the last domain taken with and without a leader."""
    selected = 0
    last: Domain | None = None
    last_with_leader: Domain | None = None
    remaining = slice_count
    leaders = leader_count
    idx = 0
    if leader_count > 0:
        ordered = by_leader(domains)
        while leaders > 0 and idx < len(ordered) and ordered[idx].leader_count > 0:
            d = ordered[idx]
            selected += 1
            last_with_leader = d
            leaders -= d.leader_count
            remaining -= d.slice_count_with_leader
            idx += 1
        rest = by_slices(ordered[idx:])
    else:
        rest = by_slices(domains)
    if leaders > 0:
        return False, 0, None, None
    idx = 0
    while remaining > 0 and idx < len(rest) and rest[idx].slice_count > 0:
        d = rest[idx]
        selected += 1
        last = d
        remaining -= d.slice_count
        idx += 1
    if remaining > 0:
        return False, 0, None, None
    return True, selected, last_with_leader, last


def _threshold(
    slice_count: int, selected: int, last_with_leader: Domain | None, last: Domain | None
) -> int:
    """balanceThresholdValue."""
    t = slice_count // selected
    if last_with_leader is not None:
        t = min(t, last_with_leader.slice_count_with_leader)
    if last is not None:
        t = min(t, last.slice_count)
    return t


def _entropy(domains: list[Domain]) -> float:
    total = sum(d.pod_count for d in domains)
    if total == 0:
        return 0.0
    out = 0.0
    for d in domains:
        if d.pod_count > 0:
            p = d.pod_count / total
            out -= p * math.log2(p)
    return out


def _select_optimal(
    domains: list[Domain],
    slice_count: int,
    leader_count: int,
    slice_size: int,
    by_entropy: bool,
    by_slices: Sorter,
    by_leader: Sorter,
) -> list[Domain] | None:
    """selectOptimalDomainSetToFit: of the sets of as many domains as the
    greedy fill takes, the first (in order) that holds the leaders and pods
    with the least left over."""
    fit, optimal, _, _ = _greedy(domains, slice_count, leader_count, by_slices, by_leader)
    if not fit:
        return None
    if by_entropy:
        # compareDomainCapacityAndEntropy: leaders, then slices with a
        # leader, descending; then the higher entropy of the children's pods.
        ordered = sorted(
            domains,
            key=lambda d: (
                -d.leader_count,
                -d.slice_count_with_leader,
                -_entropy(d.children),
                d.values,
            ),
        )
    else:
        ordered = sorted(domains, key=lambda d: d.values)
    # places[i][leaders left][pods left]: the first set of i domains found
    places: list[dict[int, dict[int, list[Domain]]]] = [{} for _ in range(optimal + 1)]
    places[0][leader_count] = {slice_count * slice_size: []}
    for d in ordered:
        for i in range(optimal, 0, -1):
            before = places[i - 1]
            for b_leader in sorted(before):
                for b_pods in sorted(before[b_leader]):
                    if b_leader <= 0 and b_pods <= 0:
                        continue
                    chosen = [*before[b_leader][b_pods], d]
                    if b_leader > 0 and d.leader_count > 0:
                        after = places[i].setdefault(b_leader - d.leader_count, {})
                        after.setdefault(b_pods - d.pod_count_with_leader, chosen)
                    if d.slice_count > 0:
                        after = places[i].setdefault(b_leader, {})
                        after.setdefault(b_pods - d.pod_count, chosen)
    done = places[optimal].get(0, {})
    best: list[Domain] | None = None
    best_left = -(2**31)
    for left in sorted(done):
        if best_left < left <= 0:
            best_left = left
            best = done[left]
    return best


def _place_balanced(
    domains: list[Domain],
    slice_count: int,
    leader_count: int,
    slice_size: int,
    threshold: int,
    by_slices: Sorter,
    by_leader: Sorter,
) -> tuple[list[Domain], str]:
    """placeSlicesOnDomainsBalanced: the threshold on each domain of the
    optimal set, the slices left over spread in order."""
    result = _select_optimal(
        domains, slice_count, leader_count, slice_size, False, by_slices, by_leader
    )
    if result is None:
        return [], "TAS Balanced Placement: Cannot find optimal domain set to fit the request"
    if slice_count < len(result) * threshold:
        return [], "TAS Balanced Placement: Not enough slices to meet the threshold"
    result = by_leader(result)
    extra = slice_count - len(result) * threshold
    leaders = leader_count
    for d in result:
        if leaders > 0:
            take = min(d.slice_count_with_leader - threshold, extra)
            d.leader_count = 1
            leaders -= 1
        elif extra > 0:
            take = min(d.slice_count - threshold, extra)
            d.leader_count = 0
        else:
            d.leader_count = 0
            take = 0
        d.slice_count = threshold + take
        d.pod_count = d.slice_count * slice_size
        d.slice_count_with_leader = d.slice_count
        d.pod_count_with_leader = d.pod_count - d.leader_count
        extra -= take
    if extra > 0 or leaders > 0:
        return [], "TAS Balanced Placement: Not all slices or leaders could be placed"
    return result, ""


def _clone(d: Domain, parent: Domain | None) -> Domain:
    c = Domain(d.id, d.values, parent)
    c.node = d.node
    c.pod_count = d.pod_count
    c.slice_count = d.slice_count
    c.leader_count = d.leader_count
    c.pod_count_with_leader = d.pod_count_with_leader
    c.slice_count_with_leader = d.slice_count_with_leader
    c.children = [_clone(ch, c) for ch in d.children]
    return c


def _clear(d: Domain) -> None:
    d.reset()
    for c in d.children:
        _clear(c)


def _clear_leader(d: Domain) -> None:
    d.pod_count_with_leader = 0
    d.slice_count_with_leader = 0
    d.leader_count = 0
    for c in d.children:
        _clear_leader(c)


def _prune_node(d: Domain, threshold: int, leader: bool) -> None:
    if d.slice_count < threshold:
        _clear(d)
        return
    # Still a host for workers, but not for the leader at this threshold.
    if leader and d.leader_count > 0 and d.slice_count_with_leader < threshold:
        _clear_leader(d)


def _prune(domains: list[Domain], threshold: int, level: int, leader: bool, refill: Refill) -> None:
    """pruneDomainsBelowThreshold: children below the threshold emptied,
    each domain's counts filled in again, then the domain itself pruned."""
    for d in domains:
        for c in d.children:
            _prune_node(c, threshold, leader)
    for d in domains:
        refill(d, level)
        _prune_node(d, threshold, leader)


def _lower(domains: list[Domain]) -> list[Domain]:
    out: list[Domain] = []
    for d in domains:
        out += d.children
    return out


def find_best_domains(
    per_level: list[list[Domain]],
    requested_level: int,
    slice_level: int,
    count: int,
    slice_size: int,
    leader_count: int,
    by_slices: Sorter,
    by_leader: Sorter,
    refill: Refill,
) -> tuple[list[Domain], int]:
    """findBestDomainsForBalancedPlacement: copies of the best domains of
    the requested level and the balance threshold (0: not balanced)."""
    slice_count = count // slice_size
    if requested_level == 0:
        candidates_sets = [per_level[0]]
    else:
        higher = sorted(per_level[requested_level - 1], key=lambda d: d.values)
        candidates_sets = [h.children for h in higher]
    best_threshold = 0
    best_count = 0
    best: list[Domain] = []
    leader = leader_count > 0
    for siblings in candidates_sets:
        candidates = [_clone(d, None) for d in siblings]
        lower = _lower(candidates) if requested_level < slice_level else candidates
        fits, selected, last_leader, last = _greedy(
            lower, slice_count, leader_count, by_slices, by_leader
        )
        if not fits:
            continue
        threshold = _threshold(slice_count, selected, last_leader, last)
        with_leader = threshold
        if leader and last is not None:
            with_leader = min(threshold, last.slice_count_with_leader)
        if threshold < best_threshold:
            continue
        _prune(candidates, threshold, requested_level, leader, refill)
        fits, on_level, _, _ = _greedy(candidates, slice_count, leader_count, by_slices, by_leader)
        if not fits and with_leader < threshold:
            # Again with a lower threshold that leaves room for the leader.
            if with_leader <= 0 or with_leader < best_threshold:
                continue
            threshold = with_leader
            candidates = [_clone(d, None) for d in siblings]
            _prune(candidates, threshold, requested_level, leader, refill)
            fits, on_level, _, _ = _greedy(
                candidates, slice_count, leader_count, by_slices, by_leader
            )
        if not fits:
            continue
        if threshold > best_threshold or (threshold == best_threshold and on_level < best_count):
            best_threshold = threshold
            best_count = on_level
            best = candidates
    return best, best_threshold


def apply_balanced(
    fit: list[Domain],
    threshold: int,
    requested_level: int,
    slice_level: int,
    count: int,
    slice_size: int,
    leader_count: int,
    by_slices: Sorter,
    by_leader: Sorter,
) -> tuple[list[Domain], int, str]:
    """applyBalancedPlacementAlgorithm: the domains placed on, the level
    they are at, or why balanced placement failed."""
    slice_count = count // slice_size
    level = requested_level
    if requested_level < slice_level:
        chosen = _select_optimal(
            fit, slice_count, leader_count, slice_size, True, by_slices, by_leader
        )
        if chosen is None:
            return (
                [],
                0,
                "TAS Balanced Placement: Cannot find optimal domain set to fit the request",
            )
        fit = _lower(chosen)
        level = requested_level + 1
    placed, reason = _place_balanced(
        fit, slice_count, leader_count, slice_size, threshold, by_slices, by_leader
    )
    if reason:
        return [], 0, reason
    return placed, level, ""
