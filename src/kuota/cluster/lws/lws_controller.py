"""The LeaderWorkerSet operator's set controller (integrations.md §5.2,
§5.5, §5.6), after kubernetes-sigs/lws
``pkg/controllers/leaderworkerset_controller.go``: per LWS, its
ControllerRevisions, the leader StatefulSet ``<lws>`` (Parallel, one leader
pod ``<lws>-<i>`` per group) with the rolling update's partition and surge
replicas, the Shared headless Service, and status (replicas, readyReplicas,
updatedReplicas, hpaPodSelector, the Available / Progressing /
UpdateInProgress conditions) with LWS's events.

Its pod controller (each group's workers, the restart policy) is in
``lws_pod_controller``, the webhooks (§5.1, §5.3) in ``lws_webhooks``, the
objects written in ``lws_objects``.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Final

import msgspec

from kuota.api import lws as lw
from kuota.api.apps import ControllerRevision, StatefulSet
from kuota.api.lws import (
    GROUP_INDEX_LABEL,
    REPLICAS_ANNOTATION,
    SET_NAME_LABEL,
    WORKER_INDEX_LABEL,
    LeaderWorkerSet,
    LeaderWorkerSetStatus,
)
from kuota.api.meta import Condition
from kuota.cluster.controllers.controller_base import ClusterController
from kuota.cluster.lws.lws_objects import (
    BY_LWS,
    COMPONENT,
    CONTROLLER_REVISION,
    CREATING_REVISION,
    FAILED_CREATE,
    FAILED_UPDATE,
    GROUPS_PROGRESSING,
    GROUPS_UPDATING,
    LWS,
    STATEFULSET,
    create_service_if_missing,
    find_revision,
    labels_of,
    leader_statefulset,
    lws_owner,
    new_revision,
    owned_by,
    revision_data,
    revision_key,
    revision_of,
    running_and_ready,
    statefulset_ready,
)
from kuota.cluster.lws.lws_pod_controller import LeaderWorkerSetPodController
from kuota.cluster.podutil import POD, is_deleting
from kuota.runtime.informer import Informer, key_of
from kuota.store import Invalid, NotFound, clone
from kuota.store.protocol import AlreadyExists, Conflict, EventType

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager

__all__ = ["LeaderWorkerSetController"]

AVAILABLE: Final = "Available"
PROGRESSING: Final = "Progressing"
UPDATE_IN_PROGRESS: Final = "UpdateInProgress"
_CONDITIONS: Final = {
    AVAILABLE: ("AllGroupsReady", "All replicas are ready"),
    UPDATE_IN_PROGRESS: (GROUPS_UPDATING, "Rolling Upgrade is in progress"),
    PROGRESSING: (GROUPS_PROGRESSING, "Replicas are progressing"),
}
# Available excludes Progressing and UpdateInProgress (a True one flips the other).
_EXCLUSIVE: Final = {
    frozenset({AVAILABLE, PROGRESSING}),
    frozenset({AVAILABLE, UPDATE_IN_PROGRESS}),
}


@dataclass(frozen=True, slots=True)
class _State:
    ready: bool
    updated: bool


def _set_index(obj: Any) -> list[str]:
    name = labels_of(obj).get(SET_NAME_LABEL)
    return [f"{obj.metadata.namespace}/{name}"] if name else []


def _leader_index(obj: Any) -> list[str]:
    labels = labels_of(obj)
    name = labels.get(SET_NAME_LABEL)
    if not name or labels.get(WORKER_INDEX_LABEL) != "0":
        return []
    return [f"{obj.metadata.namespace}/{name}"]


def _by_group_index(objs: list[Any], length: int) -> list[Any | None]:
    """``SortByIndex``: slot i holds the object labelled group-index i."""
    out: list[Any | None] = [None] * length
    for o in objs:
        text = labels_of(o).get(GROUP_INDEX_LABEL, "")
        if text.isdigit() and int(text) < length:
            out[int(text)] = o
    return out


class LeaderWorkerSetController(ClusterController):
    """Reads LeaderWorkerSets, StatefulSets and Pods; writes the leader
    StatefulSet, the Shared headless Service and LWS status. ``pods`` is the
    pod controller that goes with it (the two share the revision history)."""

    name = "leaderworkerset-controller"
    component = COMPONENT
    _SETS = "lws:set"
    _LEADERS = "lws:leaders"

    def __init__(self) -> None:
        super().__init__()
        self.pods = LeaderWorkerSetPodController()
        self._lws: Informer | None = None
        self._sts: Informer | None = None
        self._pods: Informer | None = None
        self._revisions: Informer | None = None

    def setup(self, mgr: Manager) -> None:
        super().setup(mgr)
        self._lws = mgr.informer(LWS)
        self._sts = mgr.informer(STATEFULSET)
        self._pods = mgr.informer(POD)
        self._revisions = mgr.informer(CONTROLLER_REVISION)
        self._sts.add_index(self._SETS, _set_index)
        self._pods.add_index(self._LEADERS, _leader_index)
        self._revisions.add_index(BY_LWS, lws_owner)
        self._lws.on_change(self._on_lws)
        self._sts.on_change(self._on_labelled)
        self._pods.on_change(self._on_labelled)

    def _on_lws(self, etype: EventType, obj: Any, old: Any | None) -> None:
        if etype != "DELETED":
            self.mgr.enqueue(self.name, key_of(obj))

    def _on_labelled(self, etype: EventType, obj: Any, old: Any | None) -> None:
        for key in _set_index(obj):
            self.mgr.enqueue(self.name, key)

    # ------------------------------------------------------------ reconcile
    def reconcile(self, key: str) -> timedelta | None:
        assert self._lws is not None and self._sts is not None
        lws: LeaderWorkerSet | None = self._lws.get(key)
        if lws is None or lws.spec is None or is_deleting(lws):
            return None
        sts: StatefulSet | None = self._sts.get(key)
        if sts is not None and not owned_by(sts, lws):
            self.event(
                lws,
                "Warning",
                FAILED_CREATE,
                f"Failed to create leader statefulset {lws.metadata.name}: a StatefulSet "
                "of that name exists and is not owned by this LeaderWorkerSet",
            )
            return None
        if sts is not None and is_deleting(sts):
            return timedelta(seconds=5)
        revision = self._revision(lws, sts)
        if revision is None:
            return None  # refused (an event says why); the next change retries
        rev = revision_of(revision)
        updated = False
        if sts is not None and revision.data != revision_data(lws.spec):
            # getUpdatedRevision: the template changed, a new revision starts a rolling update.
            made = self._create_revision(lws, "for updated LWS")
            if made is None:
                return None
            rev, updated = revision_of(made), True
        partition, replicas = self._rolling_parameters(lws, sts, rev, updated)
        partition = max(partition, lw.rolling_update(lws.spec).partition)
        stored = self._apply_leader_sts(lws, sts, partition, replicas, rev, updated)
        if lw.subdomain_policy(lws.spec) == "Shared":
            name = lws.metadata.name
            create_service_if_missing(self.mgr.store, lws, name, {SET_NAME_LABEL: name}, lws)
        if self._update_status(lws, stored, rev):
            self._truncate_revisions(lws, rev)
        return None

    # ------------------------------------------------------------ revisions
    def _revision(self, lws: LeaderWorkerSet, sts: StatefulSet | None) -> ControllerRevision | None:
        """``getOrCreateRevisionIfNonExist``: the revision the leader
        StatefulSet runs (a new LWS: its spec's), created if missing."""
        assert lws.spec is not None
        key = revision_of(sts) if sts is not None else revision_key(lws.spec)
        found = find_revision(self._owned_revisions(lws), key)
        if found is not None:
            return found
        if sts is None:
            return self._create_revision(lws, "for a newly created LeaderWorkerSet")
        # A leader StatefulSet whose revision is gone: LWS files the current
        # spec under the StatefulSet's key, so that nothing rolls.
        return self._create_revision(lws, "for existing LeaderWorkerSet", key, "missing ")

    def _owned_revisions(self, lws: LeaderWorkerSet) -> list[ControllerRevision]:
        assert self._revisions is not None
        return self._revisions.by_index(BY_LWS, lws.metadata.uid)

    def _create_revision(
        self, lws: LeaderWorkerSet, why: str, key: str = "", missing: str = ""
    ) -> ControllerRevision | None:
        revs = self._owned_revisions(lws)
        number = max((r.revision for r in revs), default=0) + 1
        cr = new_revision(lws, number, key)
        try:
            made: ControllerRevision = self.mgr.store.create(cr)
        except AlreadyExists:
            made = self.mgr.store.get(CONTROLLER_REVISION, cr.metadata.namespace, cr.metadata.name)
        except Invalid as err:
            self.event(lws, "Warning", FAILED_CREATE, f"Failed to create revision: {err}")
            return None
        self.event(
            lws,
            "Normal",
            CREATING_REVISION,
            f"Creating {missing}revision with key {revision_of(made)} {why}",
        )
        return made

    def _truncate_revisions(self, lws: LeaderWorkerSet, keep: str) -> None:
        """``TruncateRevisions``: once a rollout is done only its revision stays."""
        for r in self._owned_revisions(lws):
            if revision_of(r) != keep:
                with contextlib.suppress(NotFound):
                    self.mgr.store.delete(
                        CONTROLLER_REVISION, r.metadata.namespace, r.metadata.name
                    )

    # ------------------------------------------------------------ rolling update
    def _rolling_parameters(
        self, lws: LeaderWorkerSet, sts: StatefulSet | None, rev: str, updated: bool
    ) -> tuple[int, int]:
        """``rollingUpdateParameters`` (§5.5): the leader StatefulSet's
        partition and replicas (spec.replicas plus the surge in use)."""
        spec = lws.spec
        assert spec is not None
        want = spec.replicas
        if sts is None or sts.spec is None:
            return 0, want
        have = sts.spec.replicas
        ruc = lw.rolling_update(spec)
        surge = min(lw.scaled_value(ruc.max_surge, want, round_up=True), want)
        unavailable = lw.scaled_value(ruc.max_unavailable, want, round_up=False)
        burst = want + surge

        def want_replicas(unready: int) -> int:
            final = burst if unready > surge else want + max(0, unready - unavailable)
            name = lws.metadata.name
            if final == have - 1:
                msg = f"deleting surge replica {name}-{final}"
            elif final < have:
                msg = f"deleting surge replicas from {name}-{final} to {name}-{have - 1}"
            else:
                return final
            self.event(lws, "Normal", GROUPS_PROGRESSING, msg)
            return final

        if updated:  # a new rolling update: scale first
            partition = min(want, have)
            return (partition, want) if have < want else (partition, want_replicas(want))
        ru = sts.spec.update_strategy.rolling_update
        partition = ru.partition if ru is not None else 0
        if partition == 0 and have == want:
            return 0, want
        if have < want:
            return partition, want
        states = self._replica_states(lws, have, rev)
        unready = sum(
            1
            for i in range(want)
            if i >= len(states) or not (states[i].ready and states[i].updated)
        )
        try:
            original = int((sts.metadata.annotations or {}).get(REPLICAS_ANNOTATION, ""))
        except ValueError:
            original = want
        if original != want:  # replicas changed during the update
            return min(partition, burst), want_replicas(unready)
        step = unavailable + surge - (burst - have)
        return _rolling_partition(states, have, step, partition), want_replicas(unready)

    def _replica_states(self, lws: LeaderWorkerSet, count: int, rev: str) -> list[_State]:
        assert self._pods is not None and self._sts is not None and lws.spec is not None
        key = key_of(lws)
        leaders = _by_group_index(self._pods.by_index(self._LEADERS, key), count)
        workers = _by_group_index(self._sts.by_index(self._SETS, key), count)
        no_workers = lws.spec.leader_worker_template.size == 1
        states = []
        for i in range(count):
            nominated = f"{lws.metadata.name}-{i}"
            pod, sts = leaders[i], workers[i]
            if (
                pod is None
                or pod.metadata.name != nominated
                or (not no_workers and (sts is None or sts.metadata.name != nominated))
            ):
                states.append(_State(False, False))
                continue
            ready = running_and_ready(pod)
            updated = revision_of(pod) == rev
            if not no_workers:
                assert sts is not None
                ready = ready and statefulset_ready(sts)
                updated = updated and revision_of(sts) == rev
            states.append(_State(ready, updated))
        return states

    # ------------------------------------------------------------ writes
    def _apply_leader_sts(
        self,
        lws: LeaderWorkerSet,
        sts: StatefulSet | None,
        partition: int,
        replicas: int,
        rev: str,
        updated: bool,
    ) -> StatefulSet | None:
        desired = leader_statefulset(lws, partition, replicas, rev)
        store = self.mgr.store
        if sts is None:
            try:
                created: StatefulSet = store.create(desired)
            except AlreadyExists:
                return None  # our cache is behind; the watch brings it
            except Invalid as err:
                self.event(
                    lws,
                    "Warning",
                    FAILED_CREATE,
                    f"Failed to create leader statefulset {lws.metadata.name}: {err}",
                )
                return None
            self.event(
                lws, "Normal", GROUPS_PROGRESSING, f"Created leader statefulset {lws.metadata.name}"
            )
            return created
        new = clone(sts)
        assert new.spec is not None and desired.spec is not None
        m = new.metadata
        m.labels = {**(m.labels or {}), **(desired.metadata.labels or {})}
        m.annotations = {**(m.annotations or {}), **(desired.metadata.annotations or {})}
        for f in (
            "selector",
            "template",
            "replicas",
            "service_name",
            "pod_management_policy",
            "update_strategy",
            "volume_claim_templates",
        ):
            setattr(new.spec, f, getattr(desired.spec, f))
        if desired.spec.volume_claim_templates is not None:
            new.spec.persistent_volume_claim_retention_policy = (
                desired.spec.persistent_volume_claim_retention_policy
            )
        ru = sts.spec.update_strategy.rolling_update if sts.spec is not None else None
        old_partition = ru.partition if ru is not None else 0
        if new == sts:
            return sts
        try:
            stored: StatefulSet = store.update(new)
        except Conflict:  # our copy is behind: the watch brings the new one, and us again
            self.mgr.enqueue(self.name, key_of(lws))
            return None
        except Invalid as err:
            self.event(
                lws,
                "Warning",
                FAILED_UPDATE,
                f"Failed to update leader statefulset {lws.metadata.name}: {err}",
            )
            return None
        if not updated and partition != old_partition:
            msg = (
                f"Updating replica {partition}"
                if old_partition - 1 == partition
                else f"Updating replicas {partition} to {old_partition - 1} (inclusive)"
            )
            self.event(lws, "Normal", GROUPS_UPDATING, msg)
        return stored

    # ------------------------------------------------------------ status
    def _update_status(self, lws: LeaderWorkerSet, sts: StatefulSet | None, rev: str) -> bool:
        """``updateStatus`` and ``updateConditions`` (§5.6); returns whether
        the rollout is done (every group updated and ready)."""
        assert self._pods is not None and self._sts is not None and lws.spec is not None
        if sts is None:
            return False
        spec = lws.spec
        old = lws.status if lws.status is not None else LeaderWorkerSetStatus()
        st = clone(old)
        st.replicas = sts.status.replicas if sts.status is not None else 0
        st.observed_generation = lws.metadata.generation
        if not st.hpa_pod_selector:
            st.hpa_pod_selector = f"{SET_NAME_LABEL}={lws.metadata.name},{WORKER_INDEX_LABEL}=0"
        no_workers = spec.leader_worker_template.size == 1
        lws_partition = lw.rolling_update(spec).partition
        want = spec.replicas
        ready_count = updated_count = ready_non_burst = 0
        part_updated = part_current = part_updated_ready = 0
        ns = lws.metadata.namespace
        for pod in self._pods.by_index(self._LEADERS, key_of(lws)):
            text = labels_of(pod).get(GROUP_INDEX_LABEL, "")
            if not text.isdigit():
                continue
            index = int(text)
            workers: StatefulSet | None = None
            if not no_workers:
                workers = self._sts.get(f"{ns}/{pod.metadata.name}")
                if workers is None:
                    continue
            in_partition = lws_partition <= index < want
            part_current += in_partition
            ready = (workers is None or statefulset_ready(workers)) and running_and_ready(pod)
            updated = (workers is None or revision_of(workers) == rev) and revision_of(pod) == rev
            ready_count += ready
            updated_count += updated
            part_updated += updated and in_partition
            if index < want:
                ready_non_burst += ready
                part_updated_ready += in_partition and ready and updated
        st.ready_replicas, st.updated_replicas = ready_count, updated_count
        if part_updated < part_current:
            wanted = [UPDATE_IN_PROGRESS, PROGRESSING]
        elif ready_non_burst == want and part_updated_ready == part_current:
            wanted = [AVAILABLE]
        else:
            wanted = [PROGRESSING]
        conditions_changed = self._set_conditions(lws, st, wanted)
        if conditions_changed:
            reason, message = _CONDITIONS[wanted[0]]
            self.event(
                lws,
                "Normal",
                reason,
                f"{message}, with {ready_count} groups ready of total {want} groups",
            )
        if st != old:
            try:
                self.mgr.store.update_status(msgspec.structs.replace(lws, status=st))
            except NotFound:
                return False
            except Conflict:
                self.mgr.enqueue(self.name, key_of(lws))
                return False
        return lws_partition == 0 and part_updated_ready == want

    def _set_conditions(
        self, lws: LeaderWorkerSet, st: LeaderWorkerSetStatus, wanted: list[str]
    ) -> bool:
        """``setConditions``: each wanted condition True, the exclusive ones
        that are True flipped to False, every condition at the LWS's generation."""
        now = self.mgr.clock.now()
        gen = lws.metadata.generation
        conds = list(st.conditions or ())
        changed = False
        for ctype in wanted:
            reason, message = _CONDITIONS[ctype]
            new = Condition(
                type=ctype,
                status="True",
                reason=reason,
                message=message,
                last_transition_time=now,
                observed_generation=gen,
            )
            found = False
            for i, cur in enumerate(conds):
                if cur.type == ctype:
                    found = True
                    if cur.status != "True" or cur.observed_generation != gen:
                        conds[i] = new
                        changed = True
                elif frozenset({cur.type, ctype}) in _EXCLUSIVE and cur.status == "True":
                    conds[i] = msgspec.structs.replace(
                        cur, status="False", last_transition_time=now, observed_generation=gen
                    )
                    changed = True
            if not found:
                conds.append(new)
                changed = True
        for i, cur in enumerate(conds):
            if cur.observed_generation != gen:
                conds[i] = msgspec.structs.replace(cur, observed_generation=gen)
                changed = True
        st.conditions = conds or None
        return changed


def _rolling_partition(states: list[_State], replicas: int, step: int, current: int) -> int:
    """``rollingUpdatePartition``: move the partition down by up to ``step``
    groups past the ready and updated tail, never across a group that is
    still serving the old revision unless others are unready anyway."""
    tail = 0
    for s in reversed(states):
        if not (s.ready and s.updated):
            break
        tail += 1
    floor = max(0, replicas - tail - step)
    partition = floor + sum(1 for s in states[:floor] if not s.ready)
    i = min(partition, replicas - 1)
    while i >= floor:
        if not states[i].ready or states[i].updated:
            partition = i
        else:
            break
        i -= 1
    return min(partition, current)
