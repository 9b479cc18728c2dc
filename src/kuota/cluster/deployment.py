"""The Deployment controller, after Kubernetes' ``pkg/controller/deployment``.

One ReplicaSet per pod template, named ``<deployment>-<pod-template-hash>``
(the hash also a label of its selector and template, so the sets never share
pods) and numbered by the annotation ``deployment.kubernetes.io/revision``
(the Deployment carries its newest). A change of template rolls out:

* RollingUpdate: the new set grows while all sets together stay within
  ``replicas + maxSurge``, old sets shrink while ``replicas - maxUnavailable``
  pods stay available (old sets' unavailable pods go first, oldest set first);
* Recreate: old sets go to 0, the new one is created or scaled up only once
  none of their pods runs any more.

A change of ``replicas`` alone (a scaling event) scales the one active set,
or every active set in proportion during a rollout. Old sets beyond
``revisionHistoryLimit`` are deleted once the rollout is complete. Status sums
the sets' statuses; conditions ``Available`` (MinimumReplicasAvailable /
MinimumReplicasUnavailable) and ``Progressing`` (NewReplicaSetCreated,
FoundNewReplicaSet, ReplicaSetUpdated, NewReplicaSetAvailable,
ProgressDeadlineExceeded; DeploymentPaused / DeploymentResumed). Rollbacks
(``kubectl rollout undo``) are a template change like any other.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import msgspec

from kuota.api.apps import (
    DEPLOYMENT_REVISION,
    POD_TEMPLATE_HASH,
    Deployment,
    DeploymentCondition,
    DeploymentStatus,
    ReplicaSet,
    ReplicaSetSpec,
)
from kuota.api.conditions import find
from kuota.api.core import PodTemplateSpec
from kuota.api.meta import ObjectMeta
from kuota.cluster.appsutil import (
    APPS_V1,
    controller_index,
    scaled_value,
    template_hash,
)
from kuota.cluster.podutil import (
    POD,
    TERMINAL_PHASES,
    controller_key,
    is_deleting,
    owner_reference,
    pod_phase,
)
from kuota.cluster.replicaset import PODS_BY_REPLICASET, REPLICASET
from kuota.runtime.informer import Informer, key_of
from kuota.store import clone
from kuota.store.protocol import AlreadyExists, EventType, NotFound, ResourceType

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager

__all__ = [
    "DEPLOYMENT",
    "DESIRED_REPLICAS",
    "MAX_REPLICAS",
    "DeploymentController",
    "max_surge",
    "max_unavailable",
]

DEPLOYMENT: ResourceType = ("apps", "Deployment")
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
COMPONENT = "deployment-controller"

AVAILABLE = "Available"
PROGRESSING = "Progressing"
MIN_AVAILABLE = "MinimumReplicasAvailable"
MIN_UNAVAILABLE = "MinimumReplicasUnavailable"
NEW_RS_CREATED = "NewReplicaSetCreated"
FOUND_NEW_RS = "FoundNewReplicaSet"
RS_UPDATED = "ReplicaSetUpdated"
NEW_RS_AVAILABLE = "NewReplicaSetAvailable"
TIMED_OUT = "ProgressDeadlineExceeded"
PAUSED = "DeploymentPaused"
RESUMED = "DeploymentResumed"


# ------------------------------------------------------------ surge and unavailability
def _fenceposts(d: Deployment) -> tuple[int, int]:
    """``ResolveFenceposts``: (surge, unavailable); both 0 would deadlock, so
    unavailable is then 1."""
    assert d.spec is not None
    ru = d.spec.strategy.rolling_update
    if ru is None:
        return 0, 1
    surge = scaled_value(ru.max_surge, d.spec.replicas, True)
    unavailable = scaled_value(ru.max_unavailable, d.spec.replicas, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def _rolling(d: Deployment) -> bool:
    assert d.spec is not None
    return d.spec.strategy.type == "RollingUpdate"


def max_unavailable(d: Deployment) -> int:
    """``MaxUnavailable``: how many of ``replicas`` may be unavailable."""
    assert d.spec is not None
    if not _rolling(d) or d.spec.replicas == 0:
        return 0
    return min(_fenceposts(d)[1], d.spec.replicas)


def max_surge(d: Deployment) -> int:
    """``MaxSurge``: how many pods above ``replicas`` may exist."""
    return _fenceposts(d)[0] if _rolling(d) else 0


# ------------------------------------------------------------ replica set helpers
def _replicas(rs: ReplicaSet) -> int:
    return rs.spec.replicas if rs.spec is not None else 0


def _available(rs: ReplicaSet) -> int:
    return (rs.status.available_replicas or 0) if rs.status is not None else 0


def _ann_int(obj: Any, key: str) -> int | None:
    raw = (obj.metadata.annotations or {}).get(key)
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None


def _revision(rs: ReplicaSet) -> int:
    return _ann_int(rs, DEPLOYMENT_REVISION) or 0


def _creation_key(rs: ReplicaSet) -> tuple[float, str]:
    """``ReplicaSetsByCreationTimestamp``: oldest first, then by name."""
    ts = rs.metadata.creation_timestamp
    return (ts.timestamp() if ts is not None else 0.0, rs.metadata.name)


def _larger_newer_first(rs: ReplicaSet) -> tuple[int, float, str]:
    """``ReplicaSetsBySizeNewer``."""
    ts, name = _creation_key(rs)
    return (-_replicas(rs), -ts, name)


def _larger_older_first(rs: ReplicaSet) -> tuple[int, float, str]:
    """``ReplicaSetsBySizeOlder``."""
    ts, name = _creation_key(rs)
    return (-_replicas(rs), ts, name)


def _without_hash(t: PodTemplateSpec) -> PodTemplateSpec:
    labels = t.metadata.labels
    if not labels or POD_TEMPLATE_HASH not in labels:
        return t
    rest = {k: v for k, v in labels.items() if k != POD_TEMPLATE_HASH}
    meta = msgspec.structs.replace(t.metadata, labels=rest or None)
    return msgspec.structs.replace(t, metadata=meta)


def _same_template(a: PodTemplateSpec, b: PodTemplateSpec) -> bool:
    """``EqualIgnoreHash``: equal but for the pod-template-hash label."""
    return _without_hash(a) == _without_hash(b)


def _complete(d: Deployment, st: DeploymentStatus | None) -> bool:
    """``DeploymentComplete``: every replica updated and available."""
    assert d.spec is not None
    if st is None:
        return False
    n = d.spec.replicas
    return (
        (st.updated_replicas or 0) == n
        and (st.replicas or 0) == n
        and (st.available_replicas or 0) == n
        and (st.observed_generation or 0) >= d.metadata.generation
    )


def _condition(st: DeploymentStatus | None, ctype: str) -> DeploymentCondition | None:
    return find(st.conditions if st is not None else None, ctype)


def _set_condition(st: DeploymentStatus, cond: DeploymentCondition) -> None:
    """``SetDeploymentCondition``: unchanged when status and reason are; the
    transition time kept when only the reason moves; the condition goes last."""
    old = _condition(st, cond.type)
    if old is not None and old.status == cond.status and old.reason == cond.reason:
        return
    if old is not None and old.status == cond.status:
        cond = msgspec.structs.replace(cond, last_transition_time=old.last_transition_time)
    st.conditions = [c for c in st.conditions or () if c.type != cond.type] + [cond]


def _new_condition(
    ctype: str, status: str, reason: str, msg: str, now: datetime
) -> DeploymentCondition:
    return DeploymentCondition(
        type=ctype,
        status=status,  # type: ignore[arg-type]
        last_update_time=now,
        last_transition_time=now,
        reason=reason,
        message=msg,
    )


class DeploymentController:
    """Reads Deployments, ReplicaSets and Pods; creates, scales and deletes
    ReplicaSets and writes Deployment status and revision annotation."""

    name = "deployment-controller"
    _BY_OWNER = "deployment-controller:owner"
    _PODS_BY_RS = PODS_BY_REPLICASET

    def __init__(self) -> None:
        self._mgr: Manager | None = None
        self._deployments: Informer | None = None
        self._sets: Informer | None = None
        self._pods: Informer | None = None

    @property
    def mgr(self) -> Manager:
        assert self._mgr is not None
        return self._mgr

    def setup(self, mgr: Manager) -> None:
        self._mgr = mgr
        self._deployments = mgr.informer(DEPLOYMENT)
        self._sets = mgr.informer(REPLICASET)
        self._pods = mgr.informer(POD)
        self._sets.add_index(self._BY_OWNER, controller_index("Deployment"))
        self._pods.add_index(self._PODS_BY_RS, controller_index("ReplicaSet"))
        self._deployments.on_change(self._on_deployment)
        self._sets.on_change(self._on_set)
        self._pods.on_change(self._on_pod)

    def _on_deployment(self, etype: EventType, d: Any, old: Any | None) -> None:
        if etype != "DELETED":
            self.mgr.enqueue(self.name, key_of(d))

    def _on_set(self, etype: EventType, rs: Any, old: Any | None) -> None:
        key = controller_key(rs, "Deployment", APPS_V1)
        if key is not None:
            self.mgr.enqueue(self.name, key)

    def _on_pod(self, etype: EventType, pod: Any, old: Any | None) -> None:
        # A Recreate rollout waits for the old pods to be gone or ended.
        if etype != "DELETED" and (old is None or pod_phase(old) == pod_phase(pod)):
            return
        if etype != "DELETED" and pod_phase(pod) not in TERMINAL_PHASES:
            return
        assert self._sets is not None
        rs_key = controller_key(pod, "ReplicaSet", APPS_V1)
        if rs_key is None:
            return
        rs = self._sets.get(rs_key)
        key = controller_key(rs, "Deployment", APPS_V1) if rs is not None else None
        if key is not None:
            self.mgr.enqueue(self.name, key)

    # ------------------------------------------------------------ reconcile
    def reconcile(self, key: str) -> timedelta | None:
        assert self._deployments is not None and self._sets is not None
        d: Deployment | None = self._deployments.get(key)
        if d is None or d.spec is None or is_deleting(d):
            return None
        sets: list[ReplicaSet] = self._sets.by_index(self._BY_OWNER, d.metadata.uid)
        d = self._paused_conditions(d)
        assert d.spec is not None
        if d.spec.paused or self._scaling_event(d, sets):
            self._sync(d, sets)
        elif _rolling(d):
            self._rollout_rolling(d, sets)
        else:
            self._rollout_recreate(d, sets)
        return None

    # ------------------------------------------------------------ new and old sets
    def _new_and_old(
        self, d: Deployment, sets: list[ReplicaSet], create: bool
    ) -> tuple[Deployment, ReplicaSet | None, list[ReplicaSet]]:
        """``getAllReplicaSetsAndSyncRevision``: the set of the current
        template (created when ``create``), the others, and the Deployment as
        stored after its revision annotation and conditions were brought up to date."""
        assert d.spec is not None
        ordered = sorted(sets, key=_creation_key)
        new = next(
            (rs for rs in ordered if rs.spec and _same_template(rs.spec.template, d.spec.template)),
            None,
        )
        old = [rs for rs in ordered if rs is not new]
        revision = max((_revision(rs) for rs in old), default=0) + 1
        now = self.mgr.clock.now()
        if new is not None:
            new = self._sync_new_annotations(d, new, revision)
            d = self._set_revision(d, str(_revision(new)))
            if _condition(d.status, PROGRESSING) is None:
                st = clone(d.status) if d.status is not None else DeploymentStatus()
                _set_condition(
                    st,
                    _new_condition(
                        PROGRESSING,
                        "True",
                        FOUND_NEW_RS,
                        f'Found new replica set "{new.metadata.name}"',
                        now,
                    ),
                )
                d = self._write_status(d, st)
            return d, new, old
        if not create:
            return d, None, old
        return self._create_new(d, old, revision, now)

    def _sync_new_annotations(self, d: Deployment, rs: ReplicaSet, revision: int) -> ReplicaSet:
        """The new set's revision (the newest) and minReadySeconds follow the Deployment."""
        assert d.spec is not None and rs.spec is not None
        ann = dict(rs.metadata.annotations or {})
        changed = False
        if _revision(rs) < revision:
            ann[DEPLOYMENT_REVISION] = str(revision)
            changed = True
        spec = rs.spec
        if spec.min_ready_seconds != d.spec.min_ready_seconds:
            spec = msgspec.structs.replace(spec, min_ready_seconds=d.spec.min_ready_seconds)
            changed = True
        if not changed:
            return rs
        meta = msgspec.structs.replace(rs.metadata, annotations=ann)
        with contextlib.suppress(NotFound):
            updated: ReplicaSet = self.mgr.store.update(
                msgspec.structs.replace(rs, metadata=meta, spec=spec)
            )
            return updated
        return rs

    def _create_new(
        self, d: Deployment, old: list[ReplicaSet], revision: int, now: datetime
    ) -> tuple[Deployment, ReplicaSet | None, list[ReplicaSet]]:
        assert d.spec is not None
        collisions = d.status.collision_count if d.status is not None else None
        h = template_hash(d.spec.template, collisions)
        template = clone(d.spec.template)
        template.metadata.labels = {**(template.metadata.labels or {}), POD_TEMPLATE_HASH: h}
        selector = clone(d.spec.selector)
        selector.match_labels = {**(selector.match_labels or {}), POD_TEMPLATE_HASH: h}
        name = f"{d.metadata.name}-{h}"
        rs = ReplicaSet(
            api_version="apps/v1",
            kind="ReplicaSet",
            metadata=ObjectMeta(
                name=name,
                namespace=d.metadata.namespace,
                labels=dict(template.metadata.labels),
                annotations={
                    DEPLOYMENT_REVISION: str(revision),
                    DESIRED_REPLICAS: str(d.spec.replicas),
                    MAX_REPLICAS: str(d.spec.replicas + max_surge(d)),
                },
                owner_references=[owner_reference(d)],
            ),
            spec=ReplicaSetSpec(
                selector=selector,
                replicas=0,
                min_ready_seconds=d.spec.min_ready_seconds,
                template=template,
            ),
        )
        rs.spec.replicas = self._new_replicas(d, old, rs)  # type: ignore[union-attr]
        try:
            made: ReplicaSet = self.mgr.store.create(rs)
        except AlreadyExists:
            # A set of that name with another template (a hash collision):
            # count it, and the next sync hashes with the count.
            existing = self._sets.get(f"{d.metadata.namespace}/{name}") if self._sets else None
            if (
                existing is not None
                and existing.spec is not None
                and _same_template(existing.spec.template, d.spec.template)
            ):
                return d, existing, old
            st = clone(d.status) if d.status is not None else DeploymentStatus()
            st.collision_count = (st.collision_count or 0) + 1
            self._write_status(d, st)
            return d, None, old
        self._event(
            d,
            "Normal",
            "ScalingReplicaSet",
            f"Scaled up replica set {name} from 0 to {_replicas(made)}",
        )
        d = self._set_revision(d, str(revision))
        st = clone(d.status) if d.status is not None else DeploymentStatus()
        _set_condition(
            st,
            _new_condition(
                PROGRESSING, "True", NEW_RS_CREATED, f'Created new replica set "{name}"', now
            ),
        )
        d = self._write_status(d, st)
        return d, made, old

    # ------------------------------------------------------------ rolling update
    def _new_replicas(self, d: Deployment, sets: Sequence[ReplicaSet], new: ReplicaSet) -> int:
        """``NewRSNewReplicas``: how far the new set may grow now."""
        assert d.spec is not None
        if not _rolling(d):
            return d.spec.replicas
        current = sum(_replicas(rs) for rs in sets if rs is not new) + _replicas(new)
        most = d.spec.replicas + max_surge(d)
        if current >= most:
            return _replicas(new)
        return _replicas(new) + min(most - current, d.spec.replicas - _replicas(new))

    def _rollout_rolling(self, d: Deployment, sets: list[ReplicaSet]) -> None:
        d, new, old = self._new_and_old(d, sets, create=True)
        if new is None:
            return
        assert d.spec is not None
        all_sets = [*old, new]
        # reconcileNewReplicaSet
        if _replicas(new) != d.spec.replicas:
            target = (
                d.spec.replicas
                if _replicas(new) > d.spec.replicas
                else self._new_replicas(d, all_sets, new)
            )
            if target != _replicas(new):
                new = self._scale(d, new, target)
                self._sync_rollout_status(d, [*old, new], new)
                return
        if self._reconcile_old(d, old, new):
            self._sync_rollout_status(d, [*self._fresh(old), new], new)
            return
        if _complete(d, d.status):
            self._cleanup(d, old)
        self._sync_rollout_status(d, all_sets, new)

    def _fresh(self, sets: list[ReplicaSet]) -> list[ReplicaSet]:
        assert self._sets is not None
        return [self._sets.get(key_of(rs)) or rs for rs in sets]

    def _reconcile_old(self, d: Deployment, old: list[ReplicaSet], new: ReplicaSet) -> bool:
        """``reconcileOldReplicaSets``: shrink old sets as far as availability allows."""
        assert d.spec is not None
        if sum(_replicas(rs) for rs in old) == 0:
            return False
        all_pods = sum(_replicas(rs) for rs in old) + _replicas(new)
        min_available = d.spec.replicas - max_unavailable(d)
        new_unavailable = _replicas(new) - _available(new)
        budget = all_pods - min_available - new_unavailable
        if budget <= 0:
            return False
        # Unhealthy old pods first: they add nothing to availability.
        cleaned = 0
        old = sorted(old, key=_creation_key)
        for i, rs in enumerate(old):
            if cleaned >= budget:
                break
            n, avail = _replicas(rs), _available(rs)
            if n == 0 or n == avail:
                continue
            down = min(budget - cleaned, n - avail)
            old[i] = self._scale(d, rs, n - down)
            cleaned += down
        # Then as many as keep minAvailable available.
        available = sum(_available(rs) for rs in old) + _available(new)
        room = available - min_available
        scaled = 0
        for i, rs in enumerate(old):
            if scaled >= room:
                break
            n = _replicas(rs)
            if n == 0:
                continue
            down = min(n, room - scaled)
            old[i] = self._scale(d, rs, n - down)
            scaled += down
        return cleaned + max(scaled, 0) > 0

    # ------------------------------------------------------------ recreate
    def _rollout_recreate(self, d: Deployment, sets: list[ReplicaSet]) -> None:
        d, new, old = self._new_and_old(d, sets, create=False)
        assert d.spec is not None
        scaled = False
        for i, rs in enumerate(old):
            if _replicas(rs) > 0:
                old[i] = self._scale(d, rs, 0)
                scaled = True
        if scaled:
            self._sync_rollout_status(d, [*old, *([new] if new else [])], new)
            return
        if self._old_pods_running(old):
            self._sync_rollout_status(d, [*old, *([new] if new else [])], new)
            return
        if new is None:
            d, new, old = self._new_and_old(d, sets, create=True)
            if new is None:
                return
        assert d.spec is not None
        if _replicas(new) != d.spec.replicas:
            new = self._scale(d, new, d.spec.replicas)
            self._sync_rollout_status(d, [*old, new], new)
            return
        if _complete(d, d.status):
            self._cleanup(d, old)
        self._sync_rollout_status(d, [*old, new], new)

    def _old_pods_running(self, old: list[ReplicaSet]) -> bool:
        """``oldPodsRunning``: an old set still counts pods, or one of its pods
        has not ended (a pod being deleted still runs)."""
        assert self._pods is not None
        if any((rs.status.replicas if rs.status is not None else 0) > 0 for rs in old):
            return True
        return any(
            pod_phase(p) not in TERMINAL_PHASES
            for rs in old
            for p in self._pods.by_index(self._PODS_BY_RS, rs.metadata.uid)
        )

    # ------------------------------------------------------------ scaling events
    def _scaling_event(self, d: Deployment, sets: list[ReplicaSet]) -> bool:
        """``isScalingEvent``: an active set was sized for another ``replicas``."""
        assert d.spec is not None
        for rs in sets:
            if _replicas(rs) > 0:
                desired = _ann_int(rs, DESIRED_REPLICAS)
                if desired is not None and desired != d.spec.replicas:
                    return True
        return False

    def _sync(self, d: Deployment, sets: list[ReplicaSet]) -> None:
        """``sync``: scale to ``replicas`` (paused or a scaling event), no rollout."""
        d, new, old = self._new_and_old(d, sets, create=False)
        assert d.spec is not None
        self._scale_all(d, new, old)
        if d.spec.paused and new is None:
            self._cleanup(d, old)
        all_sets = self._fresh([*old, *([new] if new else [])])
        new = self._fresh([new])[0] if new is not None else None
        st = self._calculate_status(d, all_sets, new)
        self._write_status(d, st)

    def _scale_all(self, d: Deployment, new: ReplicaSet | None, old: list[ReplicaSet]) -> None:
        """``scale``: the one active set to ``replicas``; during a rollout
        every active set in proportion to its size."""
        assert d.spec is not None
        sets = [*([new] if new else []), *old]
        active = [rs for rs in sets if _replicas(rs) > 0]
        only: ReplicaSet | None = None
        if len(active) == 1:
            only = active[0]
        elif not active and sets:
            only = new if new is not None else max(old, key=_creation_key)
        if only is not None or not active:
            if only is not None and _replicas(only) != d.spec.replicas:
                self._scale(d, only, d.spec.replicas)
            return
        if (
            new is not None
            and _replicas(new) == d.spec.replicas
            and _available(new) == d.spec.replicas
        ):
            for rs in old:
                if _replicas(rs) > 0:
                    self._scale(d, rs, 0)
            return
        if not _rolling(d):
            return
        allowed = d.spec.replicas + max_surge(d) if d.spec.replicas > 0 else 0
        to_add = allowed - sum(_replicas(rs) for rs in active)
        # Larger sets first; on growth the newer of two equal ones, on shrink the older.
        ordered = sorted(active, key=_larger_newer_first if to_add > 0 else _larger_older_first)
        sizes: dict[str, int] = {}
        added = 0
        for rs in ordered:
            share = self._proportion(d, rs, to_add, added)
            sizes[rs.metadata.name] = _replicas(rs) + share
            added += share
        if ordered and to_add != 0:
            first = ordered[0].metadata.name
            sizes[first] = max(sizes[first] + to_add - added, 0)
        for rs in ordered:
            if sizes[rs.metadata.name] != _replicas(rs):
                self._scale(d, rs, sizes[rs.metadata.name])

    def _proportion(self, d: Deployment, rs: ReplicaSet, to_add: int, added: int) -> int:
        """``getProportion``: the set's share of the change, within what is left."""
        assert d.spec is not None
        if _replicas(rs) == 0 or to_add == 0 or to_add == added:
            return 0
        if d.spec.replicas == 0:
            fraction = -_replicas(rs)
        else:
            sized_for = _ann_int(rs, MAX_REPLICAS)
            if sized_for is None:
                sized_for = (d.status.replicas or 0) if d.status is not None else 0
            if sized_for <= 0:
                return 0
            exact = _replicas(rs) * (d.spec.replicas + max_surge(d)) / sized_for
            fraction = math.floor(exact + 0.5) - _replicas(rs)  # Go's math.Round
        left = to_add - added
        return min(fraction, left) if to_add > 0 else max(fraction, left)

    # ------------------------------------------------------------ writes
    def _scale(self, d: Deployment, rs: ReplicaSet, replicas: int) -> ReplicaSet:
        """``scaleReplicaSet``: size and the desired/max annotations."""
        assert d.spec is not None and rs.spec is not None
        ann = dict(rs.metadata.annotations or {})
        ann[DESIRED_REPLICAS] = str(d.spec.replicas)
        ann[MAX_REPLICAS] = str(d.spec.replicas + max_surge(d))
        before = rs.spec.replicas
        if before == replicas and ann == (rs.metadata.annotations or {}):
            return rs
        new = msgspec.structs.replace(
            rs,
            metadata=msgspec.structs.replace(rs.metadata, annotations=ann),
            spec=msgspec.structs.replace(rs.spec, replicas=replicas),
        )
        try:
            stored: ReplicaSet = self.mgr.store.update(new)
        except NotFound:
            return rs
        if before != replicas:
            verb = "up" if replicas > before else "down"
            self._event(
                d,
                "Normal",
                "ScalingReplicaSet",
                f"Scaled {verb} replica set {rs.metadata.name} from {before} to {replicas}",
            )
        return stored

    def _set_revision(self, d: Deployment, revision: str) -> Deployment:
        ann = d.metadata.annotations or {}
        if ann.get(DEPLOYMENT_REVISION) == revision:
            return d
        meta = msgspec.structs.replace(
            d.metadata, annotations={**ann, DEPLOYMENT_REVISION: revision}
        )
        try:
            stored: Deployment = self.mgr.store.update(msgspec.structs.replace(d, metadata=meta))
        except NotFound:
            return d
        return stored

    def _write_status(self, d: Deployment, st: DeploymentStatus) -> Deployment:
        if st == d.status:
            return d
        try:
            stored: Deployment = self.mgr.store.update_status(msgspec.structs.replace(d, status=st))
        except NotFound:
            return d
        return stored

    def _cleanup(self, d: Deployment, old: list[ReplicaSet]) -> None:
        """``cleanupDeployment``: old empty sets beyond revisionHistoryLimit go, oldest revision first."""
        assert d.spec is not None
        alive = [rs for rs in old if not is_deleting(rs)]
        extra = len(alive) - d.spec.revision_history_limit
        if extra <= 0:
            return
        alive.sort(key=lambda rs: (_revision(rs), _creation_key(rs)))
        for rs in alive[:extra]:
            st = rs.status
            if (
                (st.replicas if st is not None else 0) != 0
                or _replicas(rs) != 0
                or rs.metadata.generation > ((st.observed_generation or 0) if st is not None else 0)
            ):
                continue
            with contextlib.suppress(NotFound):
                self.mgr.store.delete(REPLICASET, rs.metadata.namespace, rs.metadata.name)

    def _event(self, obj: Any, etype: str, reason: str, message: str) -> None:
        recorder = getattr(self.mgr, "recorder", None)
        if recorder is not None:
            recorder.event(obj, etype, reason, message, COMPONENT)

    # ------------------------------------------------------------ status
    def _calculate_status(
        self, d: Deployment, sets: Sequence[ReplicaSet], new: ReplicaSet | None
    ) -> DeploymentStatus:
        """``calculateStatus``: the sets' counts summed, and Available."""
        assert d.spec is not None
        old = d.status
        available = sum(_available(rs) for rs in sets)
        total = sum(_replicas(rs) for rs in sets)

        def actual(rs: ReplicaSet) -> int:
            return rs.status.replicas if rs.status is not None else 0

        st = DeploymentStatus(
            observed_generation=d.metadata.generation,
            replicas=sum(actual(rs) for rs in sets),
            updated_replicas=actual(new) if new is not None else 0,
            ready_replicas=sum((rs.status.ready_replicas or 0) if rs.status else 0 for rs in sets),
            available_replicas=available,
            unavailable_replicas=max(total - available, 0),
            conditions=list(old.conditions) if old is not None and old.conditions else None,
            collision_count=old.collision_count if old is not None else None,
        )
        now = self.mgr.clock.now()
        if available >= d.spec.replicas - max_unavailable(d):
            cond = _new_condition(
                AVAILABLE, "True", MIN_AVAILABLE, "Deployment has minimum availability.", now
            )
        else:
            cond = _new_condition(
                AVAILABLE,
                "False",
                MIN_UNAVAILABLE,
                "Deployment does not have minimum availability.",
                now,
            )
        _set_condition(st, cond)
        return st

    def _sync_rollout_status(
        self, d: Deployment, sets: Sequence[ReplicaSet], new: ReplicaSet | None
    ) -> None:
        """``syncRolloutStatus``: status plus the Progressing condition; a
        rollout that has not progressed for progressDeadlineSeconds times out."""
        assert d.spec is not None
        st = self._calculate_status(d, sets, new)
        now = self.mgr.clock.now()
        cur = _condition(d.status, PROGRESSING)
        done = (
            (st.replicas or 0) == (st.updated_replicas or 0)
            and cur is not None
            and cur.reason == NEW_RS_AVAILABLE
        )
        name = (
            f'ReplicaSet "{new.metadata.name}"'
            if new is not None
            else f'Deployment "{d.metadata.name}"'
        )
        if not done:
            old = d.status or DeploymentStatus()
            if _complete(d, st):
                _set_condition(
                    st,
                    _new_condition(
                        PROGRESSING,
                        "True",
                        NEW_RS_AVAILABLE,
                        f"{name} has successfully progressed.",
                        now,
                    ),
                )
            elif (
                (st.updated_replicas or 0) > (old.updated_replicas or 0)
                or (st.replicas or 0) < (old.replicas or 0)
                or (st.ready_replicas or 0) > (old.ready_replicas or 0)
                or (st.available_replicas or 0) > (old.available_replicas or 0)
            ):
                cond = _new_condition(
                    PROGRESSING, "True", RS_UPDATED, f"{name} is progressing.", now
                )
                if cur is not None and cur.status == "True":
                    cond = msgspec.structs.replace(
                        cond, last_transition_time=cur.last_transition_time
                    )
                st.conditions = [c for c in st.conditions or () if c.type != PROGRESSING] + [cond]
            elif self._timed_out(d, cur, now):
                _set_condition(
                    st,
                    _new_condition(
                        PROGRESSING, "False", TIMED_OUT, f"{name} has timed out progressing.", now
                    ),
                )
        self._write_status(d, st)
        # A rollout that makes no progress times out: look again at its
        # deadline (only then: a timer left behind would keep a run going).
        c = _condition(st, PROGRESSING)
        if (
            not _complete(d, st)
            and c is not None
            and c.reason not in (NEW_RS_AVAILABLE, TIMED_OUT)
            and c.last_update_time is not None
        ):
            at = c.last_update_time + timedelta(seconds=d.spec.progress_deadline_seconds)
            self.mgr.enqueue_at(self.name, key_of(d), at + timedelta(seconds=1))
        else:
            self.mgr.cancel_timer(self.name, key_of(d))

    def _timed_out(self, d: Deployment, cur: DeploymentCondition | None, now: datetime) -> bool:
        """``DeploymentTimedOut``: no progress for progressDeadlineSeconds."""
        assert d.spec is not None
        if cur is None or cur.reason == NEW_RS_AVAILABLE:
            return False
        if cur.reason == TIMED_OUT:
            return True
        since = cur.last_update_time
        return (
            since is not None and since + timedelta(seconds=d.spec.progress_deadline_seconds) < now
        )

    def _paused_conditions(self, d: Deployment) -> Deployment:
        """``checkPausedConditions``: Progressing Unknown while paused, and once resumed."""
        assert d.spec is not None
        cur = _condition(d.status, PROGRESSING)
        if cur is not None and cur.reason == TIMED_OUT:
            return d
        paused_now = cur is not None and cur.reason == PAUSED
        now = self.mgr.clock.now()
        if d.spec.paused and not paused_now:
            cond = _new_condition(PROGRESSING, "Unknown", PAUSED, "Deployment is paused", now)
        elif not d.spec.paused and paused_now:
            cond = _new_condition(PROGRESSING, "Unknown", RESUMED, "Deployment is resumed", now)
        else:
            return d
        st = clone(d.status) if d.status is not None else DeploymentStatus()
        _set_condition(st, cond)
        return self._write_status(d, st)
