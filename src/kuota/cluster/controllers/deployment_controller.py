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

This module writes; what it computes (sizes, shares, status, conditions) is
in ``deployment_util``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import msgspec

from kuota.api.apps import (
    DEPLOYMENT_REVISION,
    POD_TEMPLATE_HASH,
    Deployment,
    DeploymentStatus,
    ReplicaSet,
    ReplicaSetSpec,
)
from kuota.api.meta import ObjectMeta
from kuota.cluster.controllers.appsutil import (
    APPS_V1,
    controller_index,
    template_hash,
)
from kuota.cluster.controllers.controller_base import ClusterController
from kuota.cluster.controllers.deployment_util import (
    DEPLOYMENT,
    DESIRED_REPLICAS,
    FOUND_NEW_RS,
    MAX_REPLICAS,
    NEW_RS_AVAILABLE,
    NEW_RS_CREATED,
    PAUSED,
    PROGRESSING,
    RESUMED,
    RS_UPDATED,
    TIMED_OUT,
    calculate_status,
    deployment_complete,
    get_condition,
    is_rolling,
    is_scaling_event,
    larger_newer_first,
    larger_older_first,
    max_surge,
    max_unavailable,
    new_condition,
    new_rs_replicas,
    proportion,
    rs_available,
    rs_creation_key,
    rs_replicas,
    rs_revision,
    same_template,
    set_condition,
    timed_out,
)
from kuota.cluster.controllers.replicaset_controller import PODS_BY_REPLICASET, REPLICASET
from kuota.cluster.podutil import (
    POD,
    TERMINAL_PHASES,
    controller_key,
    is_deleting,
    owner_reference,
    pod_phase,
)
from kuota.runtime.informer import Informer, key_of
from kuota.store import clone
from kuota.store.protocol import AlreadyExists, EventType, NotFound

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager

__all__ = ["DeploymentController"]

COMPONENT = "deployment-controller"


class DeploymentController(ClusterController):
    """Reads Deployments, ReplicaSets and Pods; creates, scales and deletes
    ReplicaSets and writes Deployment status and revision annotation."""

    name = "deployment-controller"
    component = COMPONENT
    _BY_OWNER = "deployment-controller:owner"
    _PODS_BY_RS = PODS_BY_REPLICASET

    def __init__(self) -> None:
        super().__init__()
        self._deployments: Informer | None = None
        self._sets: Informer | None = None
        self._pods: Informer | None = None

    def setup(self, mgr: Manager) -> None:
        super().setup(mgr)
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
        if d.spec.paused or is_scaling_event(d, sets):
            self._sync(d, sets)
        elif is_rolling(d):
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
        ordered = sorted(sets, key=rs_creation_key)
        new = next(
            (rs for rs in ordered if rs.spec and same_template(rs.spec.template, d.spec.template)),
            None,
        )
        old = [rs for rs in ordered if rs is not new]
        revision = max((rs_revision(rs) for rs in old), default=0) + 1
        now = self.mgr.clock.now()
        if new is not None:
            new = self._sync_new_annotations(d, new, revision)
            d = self._set_revision(d, str(rs_revision(new)))
            if get_condition(d.status, PROGRESSING) is None:
                st = clone(d.status) if d.status is not None else DeploymentStatus()
                set_condition(
                    st,
                    new_condition(
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
        if rs_revision(rs) < revision:
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
        rs.spec.replicas = new_rs_replicas(d, old, rs)  # type: ignore[union-attr]
        try:
            made: ReplicaSet = self.mgr.store.create(rs)
        except AlreadyExists:
            # A set of that name with another template (a hash collision):
            # count it, and the next sync hashes with the count.
            existing = self._sets.get(f"{d.metadata.namespace}/{name}") if self._sets else None
            if (
                existing is not None
                and existing.spec is not None
                and same_template(existing.spec.template, d.spec.template)
            ):
                return d, existing, old
            st = clone(d.status) if d.status is not None else DeploymentStatus()
            st.collision_count = (st.collision_count or 0) + 1
            self._write_status(d, st)
            return d, None, old
        self.event(
            d,
            "Normal",
            "ScalingReplicaSet",
            f"Scaled up replica set {name} from 0 to {rs_replicas(made)}",
        )
        d = self._set_revision(d, str(revision))
        st = clone(d.status) if d.status is not None else DeploymentStatus()
        set_condition(
            st,
            new_condition(
                PROGRESSING, "True", NEW_RS_CREATED, f'Created new replica set "{name}"', now
            ),
        )
        d = self._write_status(d, st)
        return d, made, old

    # ------------------------------------------------------------ rolling update
    def _rollout_rolling(self, d: Deployment, sets: list[ReplicaSet]) -> None:
        d, new, old = self._new_and_old(d, sets, create=True)
        if new is None:
            return
        assert d.spec is not None
        all_sets = [*old, new]
        # reconcileNewReplicaSet
        if rs_replicas(new) != d.spec.replicas:
            target = (
                d.spec.replicas
                if rs_replicas(new) > d.spec.replicas
                else new_rs_replicas(d, all_sets, new)
            )
            if target != rs_replicas(new):
                new = self._scale(d, new, target)
                self._sync_rollout_status(d, [*old, new], new)
                return
        if self._reconcile_old(d, old, new):
            self._sync_rollout_status(d, [*self._fresh(old), new], new)
            return
        if deployment_complete(d, d.status):
            self._cleanup(d, old)
        self._sync_rollout_status(d, all_sets, new)

    def _fresh(self, sets: list[ReplicaSet]) -> list[ReplicaSet]:
        assert self._sets is not None
        return [self._sets.get(key_of(rs)) or rs for rs in sets]

    def _reconcile_old(self, d: Deployment, old: list[ReplicaSet], new: ReplicaSet) -> bool:
        """``reconcileOldReplicaSets``: shrink old sets as far as availability allows."""
        assert d.spec is not None
        if sum(rs_replicas(rs) for rs in old) == 0:
            return False
        all_pods = sum(rs_replicas(rs) for rs in old) + rs_replicas(new)
        min_available = d.spec.replicas - max_unavailable(d)
        new_unavailable = rs_replicas(new) - rs_available(new)
        budget = all_pods - min_available - new_unavailable
        if budget <= 0:
            return False
        # Unhealthy old pods first: they add nothing to availability.
        cleaned = 0
        old = sorted(old, key=rs_creation_key)
        for i, rs in enumerate(old):
            if cleaned >= budget:
                break
            n, avail = rs_replicas(rs), rs_available(rs)
            if n == 0 or n == avail:
                continue
            down = min(budget - cleaned, n - avail)
            old[i] = self._scale(d, rs, n - down)
            cleaned += down
        # Then as many as keep minAvailable available.
        available = sum(rs_available(rs) for rs in old) + rs_available(new)
        room = available - min_available
        scaled = 0
        for i, rs in enumerate(old):
            if scaled >= room:
                break
            n = rs_replicas(rs)
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
            if rs_replicas(rs) > 0:
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
        if rs_replicas(new) != d.spec.replicas:
            new = self._scale(d, new, d.spec.replicas)
            self._sync_rollout_status(d, [*old, new], new)
            return
        if deployment_complete(d, d.status):
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
    def _sync(self, d: Deployment, sets: list[ReplicaSet]) -> None:
        """``sync``: scale to ``replicas`` (paused or a scaling event), no rollout."""
        d, new, old = self._new_and_old(d, sets, create=False)
        assert d.spec is not None
        self._scale_all(d, new, old)
        if d.spec.paused and new is None:
            self._cleanup(d, old)
        all_sets = self._fresh([*old, *([new] if new else [])])
        new = self._fresh([new])[0] if new is not None else None
        st = calculate_status(d, all_sets, new, self.mgr.clock.now())
        self._write_status(d, st)

    def _scale_all(self, d: Deployment, new: ReplicaSet | None, old: list[ReplicaSet]) -> None:
        """``scale``: the one active set to ``replicas``; during a rollout
        every active set in proportion to its size."""
        assert d.spec is not None
        sets = [*([new] if new else []), *old]
        active = [rs for rs in sets if rs_replicas(rs) > 0]
        only: ReplicaSet | None = None
        if len(active) == 1:
            only = active[0]
        elif not active and sets:
            only = new if new is not None else max(old, key=rs_creation_key)
        if only is not None or not active:
            if only is not None and rs_replicas(only) != d.spec.replicas:
                self._scale(d, only, d.spec.replicas)
            return
        if (
            new is not None
            and rs_replicas(new) == d.spec.replicas
            and rs_available(new) == d.spec.replicas
        ):
            for rs in old:
                if rs_replicas(rs) > 0:
                    self._scale(d, rs, 0)
            return
        if not is_rolling(d):
            return
        allowed = d.spec.replicas + max_surge(d) if d.spec.replicas > 0 else 0
        to_add = allowed - sum(rs_replicas(rs) for rs in active)
        # Larger sets first; on growth the newer of two equal ones, on shrink the older.
        ordered = sorted(active, key=larger_newer_first if to_add > 0 else larger_older_first)
        sizes: dict[str, int] = {}
        added = 0
        for rs in ordered:
            share = proportion(d, rs, to_add, added)
            sizes[rs.metadata.name] = rs_replicas(rs) + share
            added += share
        if ordered and to_add != 0:
            first = ordered[0].metadata.name
            sizes[first] = max(sizes[first] + to_add - added, 0)
        for rs in ordered:
            if sizes[rs.metadata.name] != rs_replicas(rs):
                self._scale(d, rs, sizes[rs.metadata.name])

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
            self.event(
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
        alive.sort(key=lambda rs: (rs_revision(rs), rs_creation_key(rs)))
        for rs in alive[:extra]:
            st = rs.status
            if (
                (st.replicas if st is not None else 0) != 0
                or rs_replicas(rs) != 0
                or rs.metadata.generation > ((st.observed_generation or 0) if st is not None else 0)
            ):
                continue
            with contextlib.suppress(NotFound):
                self.mgr.store.delete(REPLICASET, rs.metadata.namespace, rs.metadata.name)

    # ------------------------------------------------------------ status
    def _sync_rollout_status(
        self, d: Deployment, sets: Sequence[ReplicaSet], new: ReplicaSet | None
    ) -> None:
        """``syncRolloutStatus``: status plus the Progressing condition; a
        rollout that has not progressed for progressDeadlineSeconds times out."""
        assert d.spec is not None
        st = calculate_status(d, sets, new, self.mgr.clock.now())
        now = self.mgr.clock.now()
        cur = get_condition(d.status, PROGRESSING)
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
            if deployment_complete(d, st):
                set_condition(
                    st,
                    new_condition(
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
                cond = new_condition(
                    PROGRESSING, "True", RS_UPDATED, f"{name} is progressing.", now
                )
                if cur is not None and cur.status == "True":
                    cond = msgspec.structs.replace(
                        cond, last_transition_time=cur.last_transition_time
                    )
                st.conditions = [c for c in st.conditions or () if c.type != PROGRESSING] + [cond]
            elif timed_out(d, cur, now):
                set_condition(
                    st,
                    new_condition(
                        PROGRESSING, "False", TIMED_OUT, f"{name} has timed out progressing.", now
                    ),
                )
        self._write_status(d, st)
        # A rollout that makes no progress times out: look again at its
        # deadline (only then: a timer left behind would keep a run going).
        c = get_condition(st, PROGRESSING)
        if (
            not deployment_complete(d, st)
            and c is not None
            and c.reason not in (NEW_RS_AVAILABLE, TIMED_OUT)
            and c.last_update_time is not None
        ):
            at = c.last_update_time + timedelta(seconds=d.spec.progress_deadline_seconds)
            self.mgr.enqueue_at(self.name, key_of(d), at + timedelta(seconds=1))
        else:
            self.mgr.cancel_timer(self.name, key_of(d))

    def _paused_conditions(self, d: Deployment) -> Deployment:
        """``checkPausedConditions``: Progressing Unknown while paused, and once resumed."""
        assert d.spec is not None
        cur = get_condition(d.status, PROGRESSING)
        if cur is not None and cur.reason == TIMED_OUT:
            return d
        paused_now = cur is not None and cur.reason == PAUSED
        now = self.mgr.clock.now()
        if d.spec.paused and not paused_now:
            cond = new_condition(PROGRESSING, "Unknown", PAUSED, "Deployment is paused", now)
        elif not d.spec.paused and paused_now:
            cond = new_condition(PROGRESSING, "Unknown", RESUMED, "Deployment is resumed", now)
        else:
            return d
        st = clone(d.status) if d.status is not None else DeploymentStatus()
        set_condition(st, cond)
        return self._write_status(d, st)
