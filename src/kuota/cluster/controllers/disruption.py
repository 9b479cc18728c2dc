"""kube-controller-manager's disruption controller (``pkg/controller/disruption``):
each PodDisruptionBudget's ``status`` from the pods its selector picks —
expectedPods, currentHealthy (Ready, not being deleted), desiredHealthy,
disruptionsAllowed and the DisruptionAllowed condition — so ``kubectl get
pdb`` shows ALLOWED DISRUPTIONS as on a cluster. kuota has no eviction API:
nothing reads the budget back (``disruptedPods`` stays empty)."""

from __future__ import annotations

import contextlib
import math
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Final

import msgspec

from kuota.api.k8s.policy import PodDisruptionBudget, PodDisruptionBudgetStatus
from kuota.api.meta import Condition, selector_matches
from kuota.cluster.controllers.controller_base import ClusterController
from kuota.cluster.podutil import controller_ref, is_deleting, is_pod_ready
from kuota.runtime.informer import Informer, key_of
from kuota.store.kinds import kind_named
from kuota.store.protocol import Conflict, EventType, NotFound, ResourceType
from kuota.store.resources import DEPLOYMENT, POD, REPLICA_SET, STATEFUL_SET

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager

__all__ = ["PDB", "DisruptionController", "pdb_status"]

PDB: Final[ResourceType] = kind_named("policy", "PodDisruptionBudget").rtype
_COND: Final = "DisruptionAllowed"


def _scaled(value: int | str, total: int) -> int:
    """``GetScaledValueFromIntOrPercent`` rounding up."""
    if isinstance(value, int):
        return value
    if value.endswith("%"):
        with contextlib.suppress(ValueError):
            return math.ceil(int(value[:-1]) * total / 100)
    return 0


def _expected_scale(pods: list[Any], lookup: Any) -> int:
    """``getExpectedScale``: the replicas of the pods' controllers, each once
    (a ReplicaSet's Deployment's, a StatefulSet's); a pod of no such
    controller counts itself."""
    seen: dict[tuple[str, str], int] = {}
    alone = 0
    for pod in pods:
        ref = controller_ref(pod)
        ns = pod.metadata.namespace or ""
        owner = None
        if ref is not None and ref.kind == "ReplicaSet":
            owner = lookup(REPLICA_SET, ns, ref.name)
            parent = controller_ref(owner) if owner is not None else None
            if parent is not None and parent.kind == "Deployment":
                owner = lookup(DEPLOYMENT, ns, parent.name) or owner
        elif ref is not None and ref.kind == "StatefulSet":
            owner = lookup(STATEFUL_SET, ns, ref.name)
        if owner is None:
            alone += 1
            continue
        replicas = getattr(owner.spec, "replicas", None)
        seen[(owner.kind, owner.metadata.name)] = 1 if replicas is None else replicas
    return alone + sum(seen.values())


def pdb_status(
    pdb: PodDisruptionBudget, pods: list[Any], lookup: Any, now: Any
) -> PodDisruptionBudgetStatus:
    spec = pdb.spec
    expected = desired = 0
    if spec.max_unavailable is not None:
        expected = _expected_scale(pods, lookup)
        desired = max(0, expected - _scaled(spec.max_unavailable, expected))
    elif spec.min_available is not None:
        if isinstance(spec.min_available, int):
            desired, expected = spec.min_available, len(pods)
        else:
            expected = _expected_scale(pods, lookup)
            desired = _scaled(spec.min_available, expected)
    healthy = sum(1 for p in pods if is_pod_ready(p) and not is_deleting(p))
    allowed = healthy - desired
    if expected <= 0 or allowed <= 0:
        allowed = 0
    old = next(
        (c for c in (pdb.status.conditions if pdb.status else None) or () if c.type == _COND),
        None,
    )
    status, reason = ("True", "SufficientPods") if allowed > 0 else ("False", "InsufficientPods")
    cond = Condition(
        type=_COND,
        status=status,
        reason=reason,
        last_transition_time=(
            old.last_transition_time if old is not None and old.status == status else now
        ),
        observed_generation=pdb.metadata.generation,
    )
    return PodDisruptionBudgetStatus(
        observed_generation=pdb.metadata.generation,
        disruptions_allowed=allowed,
        current_healthy=healthy,
        desired_healthy=desired,
        expected_pods=expected,
        conditions=[cond],
    )


class DisruptionController(ClusterController):
    """Keeps each PodDisruptionBudget's status current: on the budget's
    change and on a change of a pod in its namespace."""

    name = "disruption"

    def __init__(self) -> None:
        super().__init__()
        self._pdbs: Informer | None = None
        self._pods: Informer | None = None
        self._keys_by_ns: dict[str, set[str]] = {}

    def setup(self, mgr: Manager) -> None:
        super().setup(mgr)
        self._pdbs = mgr.informer(PDB)
        self._pdbs.on_change(self._on_pdb)
        self._pods = mgr.informer(POD)
        self._pods.on_change(self._on_pod)

    def _on_pdb(self, etype: EventType, pdb: Any, old: Any | None) -> None:
        keys = self._keys_by_ns.setdefault(pdb.metadata.namespace or "", set())
        if etype == "DELETED":
            keys.discard(key_of(pdb))
            return
        keys.add(key_of(pdb))
        self.mgr.enqueue(self.name, key_of(pdb))

    def _on_pod(self, etype: EventType, pod: Any, old: Any | None) -> None:
        for key in self._keys_by_ns.get(pod.metadata.namespace or "", ()):
            self.mgr.enqueue(self.name, key)

    def reconcile(self, key: str) -> timedelta | None:
        assert self._pdbs is not None and self._pods is not None
        pdb: PodDisruptionBudget | None = self._pdbs.get(key)
        if pdb is None or pdb.metadata.deletion_timestamp is not None:
            return None
        store = self.mgr.store

        def lookup(rtype: ResourceType, ns: str, name: str) -> Any | None:
            try:
                return store.get(rtype, ns, name)
            except NotFound:
                return None

        pods = [
            p
            for p in self._pods.list(pdb.metadata.namespace)
            if selector_matches(pdb.spec.selector, p.metadata.labels)
        ]
        status = pdb_status(pdb, pods, lookup, self.mgr.clock.now())
        if pdb.status is not None and _same(pdb.status, status):
            return None
        with contextlib.suppress(NotFound, Conflict):
            store.update_status(msgspec.structs.replace(pdb, status=status))
        return None


def _same(a: PodDisruptionBudgetStatus, b: PodDisruptionBudgetStatus) -> bool:
    def key(s: PodDisruptionBudgetStatus) -> tuple[Any, ...]:
        conds = tuple((c.type, c.status, c.reason) for c in s.conditions or ())
        return (
            s.observed_generation,
            s.disruptions_allowed,
            s.current_healthy,
            s.desired_healthy,
            s.expected_pods,
            conds,
        )

    return key(a) == key(b)
