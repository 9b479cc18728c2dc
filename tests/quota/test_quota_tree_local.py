"""The quota tree keeps each node's local (never lent) quota with its quotas
instead of deriving it at every read. Driven through random sequences of the
tree's own transitions (queues and cohorts set, re-parented and deleted,
usage added and removed), the kept value must always equal its definition,
max(0, subtree - lendingLimit), and the availability read through it must
equal Kueue's formula computed from the definition."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kuota.quota.tree import (
    FR,
    Cohort,
    Node,
    Quota,
    QuotaTree,
    add_usage,
    available,
    remove_usage,
)

FRS: list[FR] = [("f", "cpu"), ("f", "gpu")]
CQS = ["a", "b", "c"]
COHORTS = ["x", "y"]


def _defined_local(n: Node, fr: FR) -> int:
    q = n.quotas.get(fr)
    if q is None or q.lending_limit is None:
        return 0
    return max(0, n.subtree.get(fr, 0) - q.lending_limit)


def _defined_available(n: Node, fr: FR) -> int:
    """Kueue's available(), written from the definition of the local quota."""
    if n.parent is None:
        return n.subtree.get(fr, 0) - n.usage.get(fr, 0)
    parent = _defined_available(n.parent, fr)
    lq = _defined_local(n, fr)
    q = n.quotas.get(fr)
    if q is not None and q.borrowing_limit is not None:
        stored = n.subtree.get(fr, 0) - lq
        used = max(0, n.usage.get(fr, 0) - lq)
        parent = min(stored - used + q.borrowing_limit, parent)
    return max(0, lq - n.usage.get(fr, 0)) + parent


quota = st.builds(
    Quota,
    nominal=st.integers(0, 20),
    borrowing_limit=st.none() | st.integers(0, 20),
    lending_limit=st.none() | st.integers(0, 20),
)
quotas = st.dictionaries(st.sampled_from(FRS), quota, max_size=2)
ops = st.lists(
    st.one_of(
        st.tuples(
            st.just("cq"), st.sampled_from(CQS), st.none() | st.sampled_from(COHORTS), quotas
        ),
        st.tuples(st.just("cohort"), st.sampled_from(COHORTS), st.none() | st.just("y"), quotas),
        st.tuples(st.just("del-cq"), st.sampled_from(CQS), st.none(), st.none()),
        st.tuples(st.just("del-cohort"), st.sampled_from(COHORTS), st.none(), st.none()),
        st.tuples(st.just("use"), st.sampled_from(CQS), st.sampled_from(FRS), st.integers(-5, 8)),
    ),
    max_size=25,
)


@settings(max_examples=300, deadline=None)
@given(ops)
def test_kept_local_quota_follows_every_transition(steps: list[tuple[object, ...]]) -> None:
    tree = QuotaTree()
    held: dict[str, dict[FR, int]] = {}
    for kind, name, arg, extra in steps:
        assert isinstance(name, str)
        if kind == "cq":
            tree.set_cluster_queue(name, arg, extra, 1.0)  # type: ignore[arg-type]
            held.pop(name, None)  # a re-set queue starts from its tree's rebuild
        elif kind == "cohort":
            if arg == name:
                continue  # a cohort may not be its own parent
            tree.set_cohort(name, arg, extra, 1.0)  # type: ignore[arg-type]
        elif kind == "del-cq":
            tree.delete_cluster_queue(name)
            held.pop(name, None)
        elif kind == "del-cohort":
            tree.delete_cohort(name)
        elif kind == "use":
            cq = tree.cqs.get(name)
            if cq is None or tree.in_cycle(cq):
                continue
            fr, v = arg, extra
            assert isinstance(v, int)
            mine = held.setdefault(name, {})
            if v >= 0:
                add_usage(cq, {fr: v})  # type: ignore[dict-item]
                mine[fr] = mine.get(fr, 0) + v  # type: ignore[index]
            elif mine.get(fr, 0) >= -v:  # type: ignore[call-overload]
                remove_usage(cq, {fr: -v})  # type: ignore[dict-item]
                mine[fr] -= -v  # type: ignore[index]
        nodes: list[Node] = [*tree.cqs.values(), *tree.cohorts.values()]
        for n in nodes:
            for fr in FRS:
                assert n.local.get(fr, 0) == _defined_local(n, fr), (n, fr, steps)
        for cq in tree.cqs.values():
            if tree.in_cycle(cq):
                continue
            for fr in FRS:
                assert available(cq, fr) == _defined_available(cq, fr), (cq, fr, steps)


def test_a_new_child_moves_its_cohorts_local_quota() -> None:
    """A cohort's local quota depends on its subtree: adding a queue under it
    changes it with no change to the cohort itself."""
    tree = QuotaTree()
    fr: FR = ("f", "cpu")
    tree.set_cohort("x", None, {fr: Quota(nominal=0, lending_limit=4)}, 1.0)
    tree.set_cluster_queue("a", "x", {fr: Quota(nominal=10)}, 1.0)
    x = tree.cohorts["x"]
    assert isinstance(x, Cohort)
    assert x.local.get(fr, 0) == 6  # subtree 10, lends 4
    tree.set_cluster_queue("b", "x", {fr: Quota(nominal=5)}, 1.0)
    assert x.local.get(fr, 0) == 11
    tree.delete_cluster_queue("a")
    assert x.local.get(fr, 0) == 1
