"""Waking parked workloads: a change in a ClusterQueue can help those of its
whole cohort tree, which the queue manager wakes (lazily, per tree)."""

from __future__ import annotations

from collections.abc import Iterable

from kuota.quota.tree import Cohort
from kuota.scheduler.admission.admissibility import Admissibility
from kuota.scheduler.admission.state import CoreState


class Wakes:
    def __init__(self, state: CoreState, adm: Admissibility) -> None:
        self.state = state
        self.adm = adm

    def root_cqs(self, cq_name: str) -> list[str]:
        """The ClusterQueues whose parked workloads a change in cq_name can wake."""
        st = self.state.snap.cqs.get(cq_name)
        if st is None or st.node.parent is None:
            return [cq_name]
        root = self.state.tree.root_of(st.node)
        if root is None:
            return []
        assert isinstance(root, Cohort)
        return [c.name for c in root.subtree_cqs()]

    def cqs_in_tree_of_cohort(self, name: str) -> list[str]:
        c = self.state.tree.cohorts.get(name)
        if c is None:
            return []
        root = self.state.tree.root_of(c)
        if root is None:
            return []
        assert isinstance(root, Cohort)
        return [q.name for q in root.subtree_cqs()]

    def tree_key(self, cq_name: str) -> int | None:
        """The cohort tree a ClusterQueue's wakes go to (the queue manager's
        name for it), None outside any cohort or in a cycle."""
        st = self.state.snap.cqs.get(cq_name)
        if st is None or st.node.parent is None:
            return None
        root = self.state.tree.root_of(st.node)
        return id(root) if root is not None else None

    def retry_tree(self, cq_name: str) -> None:
        """Wake the parked workloads a change in cq_name can help: those of
        its whole cohort tree (see root_cqs)."""
        st = self.state.snap.cqs.get(cq_name)
        if st is None or st.node.parent is None:
            self.retry([cq_name])
            return
        root = self.state.tree.root_of(st.node)
        if root is None:
            return
        assert isinstance(root, Cohort)
        self.state.queues.wake_tree(
            id(root),
            lambda: [c.name for c in root.subtree_cqs()],
            self.state.now,
            self.adm.namespace_matches,
        )

    def retry_tree_of_cohort(self, name: str) -> None:
        self.retry(self.cqs_in_tree_of_cohort(name))

    def retry(self, cq_names: Iterable[str]) -> None:
        self.state.queues.retry_inadmissible(
            list(cq_names), self.state.now, self.adm.namespace_matches
        )

    def retry_all(self) -> None:
        self.retry(list(self.state.queues.cqs))
