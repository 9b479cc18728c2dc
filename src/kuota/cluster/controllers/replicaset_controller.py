"""The ReplicaSet controller, after Kubernetes' ``pkg/controller/replicaset``:
``spec.replicas`` active pods (neither ended nor being deleted) controlled by
the set and matching its selector, created from the template and named by the
store from ``generateName`` ``<rs>-`` (five deterministic characters).

A pod that ends or is deleted is replaced (an ended one is left for the pod
garbage collector, as Kubernetes leaves it). Extra pods go in Kubernetes'
order (``getPodsToDelete``): unscheduled before scheduled, Pending before
Running, not Ready before Ready, more of the set's pods on the same node
before fewer, lower ``controller.kubernetes.io/pod-deletion-cost`` first,
Ready for less time before longer, newer before older. Orphans matching the
selector are not adopted.
"""

from __future__ import annotations

import contextlib
import heapq
from datetime import datetime, timedelta
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import msgspec

from kuota.api.k8s import Pod
from kuota.api.k8s.apps import ReplicaSet, ReplicaSetStatus
from kuota.api.meta import selector_matches
from kuota.cluster.controllers.appsutil import (
    APPS_V1,
    controller_index,
    is_active,
    pod_from_template,
    ready_available_at,
)
from kuota.cluster.controllers.controller_base import ClusterController
from kuota.cluster.podutil import (
    POD,
    controller_key,
    get_pod_condition,
    is_deleting,
    pod_phase,
)
from kuota.runtime.informer import Informer, key_of
from kuota.store.protocol import EventType, NotFound, StoreError
from kuota.store.resources import REPLICA_SET as REPLICASET

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager

__all__ = [
    "DELETION_COST",
    "PODS_BY_REPLICASET",
    "REPLICASET",
    "ReplicaSetController",
    "deletion_order",
]

DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
# The Pod informer's index of pods by the uid of their controlling ReplicaSet.
PODS_BY_REPLICASET = "apps:pods-by-replicaset"
COMPONENT = "replicaset-controller"
# replica_set.go BurstReplicas: the most pods one sync creates or deletes (a
# set of a billion replicas grows in steps, and the API server stays responsive).
BURST_REPLICAS = 500
_PHASE_RANK = {"Pending": 0, "Unknown": 1, "Running": 2}


def _deletion_cost(pod: Pod) -> int:
    raw = (pod.metadata.annotations or {}).get(DELETION_COST)
    try:
        return int(raw) if raw is not None else 0
    except ValueError:
        return 0  # the API server refuses a non-integer; kuota reads it as unset


def deletion_order(pods: list[Pod], n: int | None = None) -> list[Pod]:
    """``ActivePodsWithRanks``: the pods in the order a scale-down deletes
    them (the first ``n`` only, when given: a partial selection, not a
    sort of every pod, for a large set scaled down 500 at a time)."""
    on_node: dict[str, int] = {}
    for p in pods:
        node = p.spec.node_name if p.spec is not None else None
        if node:
            on_node[node] = on_node.get(node, 0) + 1

    def key(p: Pod) -> tuple[Any, ...]:
        node = (p.spec.node_name if p.spec is not None else None) or ""
        ready = get_pod_condition(p, "Ready")
        is_ready = ready is not None and ready.status == "True"
        ready_at = ready.last_transition_time if is_ready and ready is not None else None
        created = p.metadata.creation_timestamp
        return (
            bool(node),
            _PHASE_RANK.get(pod_phase(p), 2),
            is_ready,
            -on_node.get(node, 0),
            _deletion_cost(p),
            # Ready for less time first, newer first: later instants sort first.
            -(ready_at.timestamp() if ready_at is not None else 0.0),
            -(created.timestamp() if created is not None else 0.0),
        )

    # Last tie-break, deterministic: the later name first. Both selections
    # are stable, so the names' order stands among equal keys.
    by_name = sorted(pods, key=attrgetter("metadata.name"), reverse=True)
    if n is None or n >= len(pods):
        return sorted(by_name, key=key)
    return heapq.nsmallest(n, by_name, key=key)


class ReplicaSetController(ClusterController):
    """Reads ReplicaSets and Pods; creates and deletes pods and writes
    ReplicaSet status (only when it changed)."""

    name = "replicaset-controller"
    component = COMPONENT
    # Shared with the Deployment controller (one index, kept once per pod write).
    _BY_OWNER = PODS_BY_REPLICASET

    def __init__(self) -> None:
        super().__init__()
        self._sets: Informer | None = None
        self._pods: Informer | None = None

    def setup(self, mgr: Manager) -> None:
        super().setup(mgr)
        self._sets = mgr.informer(REPLICASET)
        self._pods = mgr.informer(POD)
        self._pods.add_index(self._BY_OWNER, controller_index("ReplicaSet"))
        self._sets.on_change(self._on_set)
        self._pods.on_change(self._on_pod)

    def _on_set(self, etype: EventType, rs: Any, old: Any | None) -> None:
        if etype != "DELETED":
            self.mgr.enqueue(self.name, key_of(rs))

    def _on_pod(self, etype: EventType, pod: Any, old: Any | None) -> None:
        key = controller_key(pod, "ReplicaSet", APPS_V1)
        if key is not None:
            self.mgr.enqueue_coalesced(self.name, key)

    # ------------------------------------------------------------ reconcile
    def reconcile(self, key: str) -> timedelta | None:
        assert self._sets is not None and self._pods is not None
        rs: ReplicaSet | None = self._sets.get(key)
        if rs is None or rs.spec is None or is_deleting(rs):
            return None  # a set being deleted: the garbage collector takes its pods
        spec = rs.spec
        now = self.mgr.clock.now()
        min_ready = spec.min_ready_seconds
        want = (spec.template.metadata.labels or {}).items()
        # One pass over the set's pods: the active ones, and the status'
        # counts with each pod's Ready condition read once (a set of 50,000
        # pods is synced 100 times while scaled down 500 at a time).
        active: list[Pod] = []
        labeled = ready = available = 0
        wake: datetime | None = None
        for p in self._pods.by_index(self._BY_OWNER, rs.metadata.uid):
            if not is_active(p) or not selector_matches(spec.selector, p.metadata.labels):
                continue
            active.append(p)
            labels = p.metadata.labels or {}
            labeled += all(labels.get(k) == v for k, v in want)
            c = get_pod_condition(p, "Ready")
            if c is None or c.status != "True":
                continue
            ready += 1
            at = ready_available_at(c, min_ready)
            if at is None or at <= now:
                available += 1
            elif wake is None or at < wake:
                wake = at  # available then: look again
        diff = len(active) - spec.replicas
        if diff < 0:
            for _ in range(min(-diff, BURST_REPLICAS)):
                self._create(rs)
        elif diff > 0:
            for pod in deletion_order(active, min(diff, BURST_REPLICAS)):
                self._delete(rs, pod)
        if abs(diff) > BURST_REPLICAS:
            self.mgr.enqueue(self.name, key)  # the rest in the next sync
        self._write_status(rs, len(active), labeled, ready, available)
        if wake is not None:
            self.mgr.enqueue_at(self.name, key, wake)
        return None

    def _create(self, rs: ReplicaSet) -> None:
        assert rs.spec is not None
        pod = pod_from_template(rs.spec.template, rs, generate_name=f"{rs.metadata.name}-")
        try:
            made = self.mgr.store.create(pod)
        except StoreError as err:
            if err.code >= 500:
                raise
            self.event(rs, "Warning", "FailedCreate", f"Error creating: {err}")
            return
        self.event(rs, "Normal", "SuccessfulCreate", f"Created pod: {made.metadata.name}")

    def _delete(self, rs: ReplicaSet, pod: Pod) -> None:
        with contextlib.suppress(NotFound):
            self.mgr.store.delete(POD, pod.metadata.namespace, pod.metadata.name)
            self.event(rs, "Normal", "SuccessfulDelete", f"Deleted pod: {pod.metadata.name}")

    def _write_status(
        self, rs: ReplicaSet, replicas: int, labeled: int, ready: int, available: int
    ) -> None:
        """``calculateStatus``: counted over the active pods this sync saw."""
        old = rs.status
        st = ReplicaSetStatus(
            replicas=replicas,
            fully_labeled_replicas=labeled,
            ready_replicas=ready,
            available_replicas=available,
            observed_generation=rs.metadata.generation,
            conditions=old.conditions if old is not None else None,
        )
        if st != old:
            with contextlib.suppress(NotFound):
                self.mgr.store.update_status(msgspec.structs.replace(rs, status=st))
