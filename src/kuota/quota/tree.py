"""The quota tree: ClusterQueues under Cohorts, Cohorts under Cohorts.

Every node holds, per (flavor, resource), its own quota (nominal, borrowing
and lending limits), its subtree quota and its usage, all exact integers in
Kueue's units (cpu in milli, everything else in units). Usage is updated
incrementally on admit and release; a structural change (a queue or cohort
added, removed or re-parented, a quota changed) rebuilds the one tree it
touches. The arithmetic is Kueue's resource_node.go, restated.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Final

# (flavor, resource). Typed as a tuple of any length: compiled (mypyc), a
# fixed-length tuple is unboxed, and boxed anew at every dict lookup it keys.
FR = tuple[str, ...]
Usage = dict[FR, int]


@dataclass(frozen=True, slots=True)
class Quota:
    nominal: int = 0
    borrowing_limit: int | None = None
    lending_limit: int | None = None


class Node:
    """A ClusterQueue or a Cohort in the tree."""

    __slots__ = ("local", "name", "parent", "quotas", "subtree", "usage", "weight")
    is_cq = False

    def __init__(self, name: str) -> None:
        self.name = name
        self.parent: Cohort | None = None
        self.quotas: dict[FR, Quota] = {}
        self.subtree: dict[FR, int] = {}
        self.usage: dict[FR, int] = {}
        self.weight: float = 1.0
        # local_quota per fr where it is not 0; it moves only with quotas and
        # subtree (set_local after they change), and is read millions of times.
        self.local: dict[FR, int] = {}

    def set_local(self) -> None:
        sub = self.subtree
        local = {}
        for fr, q in self.quotas.items():
            if q.lending_limit is not None:
                v = sub.get(fr, 0) - q.lending_limit
                if v > 0:
                    local[fr] = v
        self.local = local

    def path_to_root(self) -> Iterator[Cohort]:
        """Ancestors, parent first."""
        a = self.parent
        while a is not None:
            yield a
            a = a.parent

    def root(self) -> Node:
        n: Node = self
        while n.parent is not None:
            n = n.parent
        return n

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class ClusterQueueNode(Node):
    __slots__ = ("active",)
    is_cq = True

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.active = True


class Cohort(Node):
    __slots__ = ("child_cohorts", "child_cqs", "explicit")

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.child_cohorts: dict[str, Cohort] = {}
        self.child_cqs: dict[str, ClusterQueueNode] = {}
        self.explicit = False  # a Cohort object exists (else only named by others)

    def children(self) -> Iterator[Node]:
        yield from self.child_cohorts.values()
        yield from self.child_cqs.values()

    def subtree_cqs(self) -> list[ClusterQueueNode]:
        out: list[ClusterQueueNode] = []
        stack: list[Cohort] = [self]
        while stack:
            c = stack.pop()
            out.extend(sorted(c.child_cqs.values(), key=_name))
            stack.extend(sorted(c.child_cohorts.values(), key=_name, reverse=True))
        return out

    def height(self) -> int:
        """Kueue's getNodeHeight: 1 for a cohort with only queues, +1 per cohort level."""
        h = min(len(self.child_cohorts) + len(self.child_cqs), 1)
        for c in self.child_cohorts.values():
            h = max(h, c.height() + 1)
        return h


def _name(n: Node) -> str:
    return n.name


# ---------------------------------------------------------------- arithmetic


def local_quota(n: Node, fr: FR) -> int:
    """Capacity kept for n's subtree and never lent upward (needs a lending limit)."""
    return n.local.get(fr, 0)


def local_available(n: Node, fr: FR) -> int:
    lq = n.local.get(fr, 0)
    return max(0, lq - n.usage.get(fr, 0)) if lq else 0


def available(n: Node, fr: FR) -> int:
    """What n can still take of fr: its local part plus what its ancestors can
    give, capped by its borrowing limit. Negative after over-admission."""
    if n.parent is None:
        return n.subtree.get(fr, 0) - n.usage.get(fr, 0)
    parent_avail = available(n.parent, fr)
    lq = n.local.get(fr, 0)
    q = n.quotas.get(fr)
    if q is not None and q.borrowing_limit is not None:
        stored_in_parent = n.subtree.get(fr, 0) - lq
        used_in_parent = max(0, n.usage.get(fr, 0) - lq)
        parent_avail = min(stored_in_parent - used_in_parent + q.borrowing_limit, parent_avail)
    if lq:
        return max(0, lq - n.usage.get(fr, 0)) + parent_avail
    return parent_avail


def cq_available(n: Node, fr: FR) -> int:
    return max(0, available(n, fr))


def potential_available(n: Node, fr: FR) -> int:
    """The largest amount of fr n could ever hold with the rest of the tree empty."""
    if n.parent is None:
        return n.subtree.get(fr, 0)
    avail = local_quota(n, fr) + potential_available(n.parent, fr)
    q = n.quotas.get(fr)
    if q is not None and q.borrowing_limit is not None:
        avail = min(n.subtree.get(fr, 0) + q.borrowing_limit, avail)
    return avail


def add_usage_fr(n: Node, fr: FR, val: int) -> None:
    node: Node | None = n
    while node is not None and val:
        la = local_available(node, fr)
        node.usage[fr] = node.usage.get(fr, 0) + val
        if node.parent is None or val <= la:
            return
        val -= la
        node = node.parent


def remove_usage_fr(n: Node, fr: FR, val: int) -> None:
    node: Node | None = n
    while node is not None and val:
        used = node.usage.get(fr, 0)
        stored_in_parent = used - node.local.get(fr, 0)
        node.usage[fr] = used - val
        if stored_in_parent <= 0 or node.parent is None:
            return
        val = min(val, stored_in_parent)
        node = node.parent


def add_usage(n: Node, usage: Mapping[FR, int]) -> None:
    for fr, v in usage.items():
        add_usage_fr(n, fr, v)


def remove_usage(n: Node, usage: Mapping[FR, int]) -> None:
    for fr, v in usage.items():
        remove_usage_fr(n, fr, v)


def borrowing_with(n: Node, fr: FR, val: int) -> bool:
    """Would n use more than its own quota of fr after adding val?"""
    if n.is_cq:
        q = n.quotas.get(fr)
        return (q.nominal if q else 0) < n.usage.get(fr, 0) + val
    return n.subtree.get(fr, 0) < n.usage.get(fr, 0) + val


def is_borrowing(n: Node, fr: FR) -> bool:
    return borrowing_with(n, fr, 0)


def within_nominal(n: Node, frs: Iterable[FR]) -> bool:
    """IsWithinNominalInResources: usage ≤ subtree quota for every fr."""
    sub, use = n.subtree, n.usage
    for fr in frs:  # noqa: SIM110 (a loop: runs for every queue of a cohort per preemption)
        if sub.get(fr, 0) < use.get(fr, 0):
            return False
    return True


def fits_in_quota(n: Node, requests: Mapping[FR, int]) -> tuple[bool, Usage]:
    """QuantitiesFitInQuota: does requests fit n's subtree quota, and what is
    left of it after n's local capacity."""
    fits = True
    remaining: Usage = {}
    for fr, v in requests.items():
        if n.subtree.get(fr, 0) < n.usage.get(fr, 0) + v:
            fits = False
        remaining[fr] = max(0, v - local_available(n, fr))
    return fits, remaining


def lowest_fitting_subtree(cq: ClusterQueueNode, fr: FR, val: int) -> tuple[int, bool]:
    """Kueue's FindHeightOfLowestSubtreeThatFits: the borrowing level needed
    for val more of fr (0 = within the queue's nominal quota), and whether the
    subtree that fits is below the root (a hierarchical advantage)."""
    if not borrowing_with(cq, fr, val) or cq.parent is None:
        return 0, cq.parent is not None
    remaining = val - local_available(cq, fr)
    for node in cq.path_to_root():
        if not borrowing_with(node, fr, remaining):
            return node.height(), node.parent is not None
        remaining -= local_available(node, fr)
    root = cq.root()
    assert isinstance(root, Cohort)
    return root.height(), False


# ------------------------------------------------------------- fair sharing


@dataclass(frozen=True, slots=True)
class DRS:
    """Dominant resource share of a node (Kueue's fair_sharing.go)."""

    weight: float = 1.0
    ratio: float = 0.0  # unweighted, per mille of what the parent can lend
    resource: str = ""
    borrowing: bool = False
    borrowed: frozenset[FR] = frozenset()

    def is_zero(self) -> bool:
        return self.ratio == 0

    def zero_weight_borrows(self) -> bool:
        return self.weight == 0 and not self.is_zero()

    def share(self) -> float:
        if self.is_zero():
            return 0.0
        if self.weight == 0:
            return math.inf
        return self.ratio / self.weight

    def rounded(self) -> int:
        """status.fairSharing.weightedShare."""
        if self.zero_weight_borrows():
            return 2**63 - 1
        return math.ceil(self.share())

    def borrowing_on(self, requested: Mapping[FR, int]) -> bool:
        return any(requested.get(fr, 0) > 0 for fr in self.borrowed)


NEGATIVE_DRS: Final = DRS(ratio=-1.0)


def compare_drs(a: DRS, b: DRS) -> int:
    az, bz = a.zero_weight_borrows(), b.zero_weight_borrows()
    if az and bz:
        return (a.ratio > b.ratio) - (a.ratio < b.ratio)
    if az:
        return 1
    if bz:
        return -1
    sa, sb = a.share(), b.share()
    return (sa > sb) - (sa < sb)


def drs(n: Node, extra: Mapping[FR, int] | None = None) -> DRS:
    if n.parent is None:
        return DRS(weight=n.weight)
    borrowed_by_res: dict[str, int] = {}
    borrowed: list[FR] = []
    for fr, quota in n.subtree.items():
        b = (extra.get(fr, 0) if extra else 0) + n.usage.get(fr, 0) - quota
        if b > 0:
            borrowed_by_res[fr[1]] = borrowed_by_res.get(fr[1], 0) + b
            borrowed.append(fr)
    if not borrowed_by_res:
        return DRS(weight=n.weight)
    lendable = _lendable(n.parent)
    ratio, dominant = 0.0, ""
    for r, b in borrowed_by_res.items():
        lr = lendable.get(r, 0)
        if lr > 0:
            x = b * 1000.0 / lr
            if x > ratio or (x == ratio and r < dominant):
                ratio, dominant = x, r
    return DRS(n.weight, ratio, dominant, True, frozenset(borrowed))


def _lendable(n: Node) -> dict[str, int]:
    root = n.root()
    out: dict[str, int] = {}
    for fr in root.subtree:
        out[fr[1]] = out.get(fr[1], 0) + potential_available(n, fr)
    return out


# ------------------------------------------------------------------ the tree


class QuotaTree:
    """All ClusterQueues and Cohorts, and the structural operations on them."""

    def __init__(self) -> None:
        self.cqs: dict[str, ClusterQueueNode] = {}
        self.cohorts: dict[str, Cohort] = {}
        self._cohort_parent: dict[str, str | None] = {}  # explicit Cohort objects' parents

    # -- cohorts
    def _cohort(self, name: str) -> Cohort:
        c = self.cohorts.get(name)
        if c is None:
            c = self.cohorts[name] = Cohort(name)
        return c

    def set_cohort(
        self, name: str, parent: str | None, quotas: dict[FR, Quota], weight: float
    ) -> None:
        c = self._cohort(name)
        old_root = self.root_of(c)
        c.explicit = True
        c.quotas = quotas
        c.set_local()  # (a rebuild of its tree sets it again from the new subtree)
        c.weight = weight
        self._cohort_parent[name] = parent or None
        self._link_cohort(c, parent or None)
        self._rebuild_from(old_root)
        self._rebuild_from(c)

    def delete_cohort(self, name: str) -> None:
        c = self.cohorts.get(name)
        if c is None:
            return
        old_root = self.root_of(c)
        c.explicit = False
        c.quotas = {}
        c.local = {}
        c.weight = 1.0
        self._cohort_parent.pop(name, None)
        self._link_cohort(c, None)
        self._gc(c)
        self._rebuild_from(old_root)
        if name in self.cohorts:
            self._rebuild_from(c)

    def _link_cohort(self, c: Cohort, parent: str | None) -> None:
        if c.parent is not None and (parent is None or c.parent.name != parent):
            old = c.parent
            old.child_cohorts.pop(c.name, None)
            c.parent = None
            self._gc(old)
        if parent is not None and c.parent is None:
            p = self._cohort(parent)
            p.child_cohorts[c.name] = c
            c.parent = p

    def _gc(self, c: Cohort | None) -> None:
        """Drop implicit cohorts nobody names any more."""
        while c is not None and not c.explicit and not c.child_cohorts and not c.child_cqs:
            self.cohorts.pop(c.name, None)
            p = c.parent
            if p is not None:
                p.child_cohorts.pop(c.name, None)
            c.parent = None
            c = p

    # -- cluster queues
    def set_cluster_queue(
        self, name: str, cohort: str | None, quotas: dict[FR, Quota], weight: float
    ) -> ClusterQueueNode:
        cq = self.cqs.get(name)
        if cq is None:
            cq = self.cqs[name] = ClusterQueueNode(name)
        old_root = self.root_of(cq)
        cq.quotas = quotas
        cq.subtree = {fr: q.nominal for fr, q in quotas.items()}
        cq.set_local()
        cq.weight = weight
        if cq.parent is not None and (cohort is None or cq.parent.name != cohort):
            old = cq.parent
            old.child_cqs.pop(name, None)
            cq.parent = None
            self._gc(old)
        if cohort and cq.parent is None:
            p = self._cohort(cohort)
            p.child_cqs[name] = cq
            cq.parent = p
        if old_root is not None and old_root is not cq:
            self._rebuild_from(old_root)
        self._rebuild_from(cq)
        return cq

    def delete_cluster_queue(self, name: str) -> None:
        cq = self.cqs.pop(name, None)
        if cq is None or cq.parent is None:
            return
        p = cq.parent
        root = self.root_of(p)
        p.child_cqs.pop(name, None)
        cq.parent = None
        self._gc(p)
        if root is not None and (not isinstance(root, Cohort) or root.name in self.cohorts):
            self._rebuild_from(root)

    # -- structure
    def has_cycle(self, n: Node) -> bool:
        seen: set[str] = set()
        a = n.parent
        while a is not None:
            if a.name in seen:
                return True
            seen.add(a.name)
            a = a.parent
        return False

    def root_of(self, n: Node | None) -> Node | None:
        if n is None:
            return None
        seen: set[int] = set()
        while n.parent is not None:
            if id(n) in seen:
                return None  # a cycle: no root
            seen.add(id(n))
            n = n.parent
        return n

    def _rebuild_from(self, n: Node | None) -> None:
        root = self.root_of(n)
        if root is None:
            return
        if isinstance(root, Cohort):
            _rebuild(root)

    def in_cycle(self, cq: ClusterQueueNode) -> bool:
        return cq.parent is not None and self.root_of(cq) is None


def _rebuild(c: Cohort) -> None:
    c.subtree = {fr: q.nominal for fr, q in c.quotas.items()}
    c.usage = {}
    for child in list(c.child_cohorts.values()):
        _rebuild(child)
        _accumulate(c, child)
    for cq in c.child_cqs.values():
        _accumulate(c, cq)
    c.set_local()


def _accumulate(parent: Cohort, child: Node) -> None:
    for fr, q in child.subtree.items():
        parent.subtree[fr] = parent.subtree.get(fr, 0) + q - local_quota(child, fr)
    for fr, u in child.usage.items():
        d = max(0, u - local_quota(child, fr))
        if d:
            parent.usage[fr] = parent.usage.get(fr, 0) + d
