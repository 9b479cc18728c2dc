"""The StatefulSet controller, after Kubernetes' ``pkg/controller/statefulset``.

Pods have stable names ``<sts>-<ordinal>`` for the ordinals
``[ordinals.start, ordinals.start + replicas)``, with the labels
``statefulset.kubernetes.io/pod-name``, ``apps.kubernetes.io/pod-index`` and
``controller-revision-hash``, hostname = pod name and subdomain = serviceName.
Each distinct pod template is an ``apps/v1`` ControllerRevision named
``<sts>-<hash>`` (the pods' ``controller-revision-hash`` and the status'
``currentRevision`` / ``updateRevision``); revisions no pod uses beyond
``revisionHistoryLimit`` are deleted.

* OrderedReady: ordinal i is created only once every lower one is Running and
  Ready (and available, ``minReadySeconds``); scale-down deletes the highest
  ordinal first, one at a time, each once the previous one is gone.
* Parallel: every missing pod is created, every condemned one deleted, at once.
* A pod that ended (Failed or Succeeded) is deleted and created again under
  the same name once the old one is gone; so is a deleted one.
* RollingUpdate: pods of another revision are replaced from the highest
  ordinal down to ``partition``, one at a time, the next only once the
  replaced one is Running and Ready (``maxUnavailable`` at a time when set,
  as with the MaxUnavailableStatefulSet feature); a pod recreated below the
  partition keeps the current revision. OnDelete: only pods deleted by
  someone else come back at the new revision.
* ``currentRevision`` becomes ``updateRevision`` once a rolling update has
  every pod updated and Ready.

Volume claims (``volumeClaimTemplates``) are not created: the embedded
cluster has no storage. Orphan pods are not adopted.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import msgspec

from kuota.api.base import dec_hook, enc_hook
from kuota.api.k8s import Pod, PodTemplateSpec
from kuota.api.k8s.apps import (
    CONTROLLER_REVISION_HASH,
    POD_INDEX,
    STATEFULSET_POD_NAME,
    ControllerRevision,
    IntOrString,
    StatefulSet,
    StatefulSetStatus,
)
from kuota.api.meta import ObjectMeta
from kuota.cluster.controllers.appsutil import (
    APPS_V1,
    available_at,
    canonical_json,
    controller_index,
    earliest,
    fnv32,
    is_available,
    pod_from_template,
    safe_encode,
    scaled_value,
)
from kuota.cluster.controllers.controller_base import ClusterController
from kuota.cluster.podutil import (
    POD,
    controller_key,
    controller_ref,
    is_deleting,
    is_pod_ready,
    is_terminal,
    owner_reference,
    pod_phase,
)
from kuota.runtime.informer import Informer, key_of
from kuota.store.protocol import AlreadyExists, EventType, NotFound, StoreError
from kuota.store.resources import CONTROLLER_REVISION
from kuota.store.resources import STATEFUL_SET as STATEFULSET

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager

__all__ = [
    "CONTROLLER_REVISION",
    "REVISION_HASH_LABEL",
    "STATEFULSET",
    "StatefulSetController",
    "revision_template",
]

REVISION_HASH_LABEL = "controller.kubernetes.io/hash"
COMPONENT = "statefulset-controller"


def _revision_data(template: PodTemplateSpec) -> dict[str, Any]:
    """``getPatch``: the strategic merge patch that puts the template back."""
    wire = msgspec.to_builtins(template, enc_hook=enc_hook)
    return {"spec": {"template": {**wire, "$patch": "replace"}}}


def revision_template(rev: ControllerRevision) -> PodTemplateSpec:
    """The pod template a StatefulSet's ControllerRevision holds."""
    raw = dict(((rev.data or {}).get("spec") or {}).get("template") or {})
    raw.pop("$patch", None)
    return msgspec.convert(raw, PodTemplateSpec, dec_hook=dec_hook)


def _revision_name(sts: StatefulSet, data: dict[str, Any], collisions: int) -> tuple[str, str]:
    """``HashControllerRevision`` (FNV-1 of the patch and the collision count)
    and ``ControllerRevisionName``: (hash, name)."""
    raw = canonical_json(data)
    if collisions:
        raw += str(collisions).encode()
    h = safe_encode(str(fnv32(raw)))
    return h, f"{sts.metadata.name[:223]}-{h}"


def _ordinal(sts: StatefulSet, pod: Pod) -> int | None:
    """``getOrdinal`` for a member of the set (``<sts>-<n>``), else None."""
    prefix = f"{sts.metadata.name}-"
    name = pod.metadata.name
    if not name.startswith(prefix):
        return None
    tail = name[len(prefix) :]
    if not tail.isdigit() or (len(tail) > 1 and tail[0] == "0"):
        return None
    return int(tail)


def _revision_of(pod: Pod) -> str:
    return (pod.metadata.labels or {}).get(CONTROLLER_REVISION_HASH, "")


def _running_and_ready(pod: Pod) -> bool:
    return pod_phase(pod) == "Running" and is_pod_ready(pod)


def _healthy(pod: Pod) -> bool:
    """``isHealthy``: Running and Ready and not being deleted."""
    return _running_and_ready(pod) and not is_deleting(pod)


def _max_unavailable(value: IntOrString | None, replicas: int) -> int:
    """``getStatefulSetMaxUnavailable``: rounded up, at least 1."""
    if value is None:
        return 1
    return max(scaled_value(value, replicas, True), 1)


class StatefulSetController(ClusterController):
    """Reads StatefulSets, Pods and ControllerRevisions; creates and deletes
    pods and revisions and writes StatefulSet status (only when it changed)."""

    name = "statefulset-controller"
    component = COMPONENT
    _BY_OWNER = "statefulset-controller:owner"

    def __init__(self) -> None:
        super().__init__()
        self._sets: Informer | None = None
        self._pods: Informer | None = None
        self._revisions: Informer | None = None

    def setup(self, mgr: Manager) -> None:
        super().setup(mgr)
        self._sets = mgr.informer(STATEFULSET)
        self._pods = mgr.informer(POD)
        self._revisions = mgr.informer(CONTROLLER_REVISION)
        index = controller_index("StatefulSet")
        self._pods.add_index(self._BY_OWNER, index)
        self._revisions.add_index(self._BY_OWNER, index)
        self._sets.on_change(self._on_set)
        self._pods.on_change(self._on_pod)

    def _on_set(self, etype: EventType, sts: Any, old: Any | None) -> None:
        if etype != "DELETED":
            self.mgr.enqueue(self.name, key_of(sts))

    def _on_pod(self, etype: EventType, pod: Any, old: Any | None) -> None:
        key = controller_key(pod, "StatefulSet", APPS_V1)
        if key is not None:
            self.mgr.enqueue_coalesced(self.name, key)

    # ------------------------------------------------------------ reconcile
    def reconcile(self, key: str) -> timedelta | None:
        assert self._sets is not None and self._pods is not None and self._revisions is not None
        sts: StatefulSet | None = self._sets.get(key)
        if sts is None or sts.spec is None or is_deleting(sts):
            return None  # a set being deleted: the garbage collector takes its pods
        spec = sts.spec
        now = self.mgr.clock.now()
        revisions = sorted(
            self._revisions.by_index(self._BY_OWNER, sts.metadata.uid),
            key=lambda r: (r.revision, r.metadata.name),
        )
        found = self._revisions_of(sts, revisions)
        if found is None:
            return None  # a revision name collided: the next sync hashes anew
        current, update, collisions = found
        start = spec.ordinals.start if spec.ordinals is not None else 0
        end = start + spec.replicas
        slots: dict[int, Pod] = {}
        condemned: list[Pod] = []
        members: list[Pod] = []
        for pod in self._pods.by_index(self._BY_OWNER, sts.metadata.uid):
            n = _ordinal(sts, pod)
            if n is None:
                continue
            members.append(pod)
            if start <= n < end:
                slots[n] = pod
            else:
                condemned.append(pod)
        condemned.sort(key=lambda p: -(_ordinal(sts, p) or 0))  # highest ordinal first
        if self._process(sts, slots, condemned, start, end, current, update):
            self._rolling_update(sts, slots, start, end, update)
        # Counted after this sync's creations, as Kubernetes counts them: a
        # pod below the partition just recreated at the current revision
        # keeps the rollout from reading as complete.
        status = self._status(sts, [*slots.values(), *condemned], current, update, collisions, now)
        self._write_status(sts, status)
        self._truncate_history(sts, members, revisions, current, update)
        wake = earliest(
            t
            for p in members
            if (t := available_at(p, spec.min_ready_seconds)) is not None and t > now
        )
        if wake is not None:
            self.mgr.enqueue_at(self.name, key, wake)
        return None

    def _process(
        self,
        sts: StatefulSet,
        slots: dict[int, Pod],
        condemned: list[Pod],
        start: int,
        end: int,
        current: ControllerRevision,
        update: ControllerRevision,
    ) -> bool:
        """Create, replace and delete pods; False when OrderedReady must
        wait (and nothing else may happen this sync)."""
        assert sts.spec is not None
        ordered = sts.spec.pod_management_policy == "OrderedReady"
        min_ready = sts.spec.min_ready_seconds
        now = self.mgr.clock.now()
        first_unhealthy: Pod | None = None
        for n in range(start, end):
            pod = slots.get(n)
            if pod is not None and (not _running_and_ready(pod) or is_deleting(pod)):
                first_unhealthy = first_unhealthy or pod
        for pod in reversed(condemned):
            if not _running_and_ready(pod) or is_deleting(pod):
                first_unhealthy = first_unhealthy or pod
        for n in range(start, end):
            pod = slots.get(n)
            if pod is not None and is_terminal(pod):
                if not is_deleting(pod):
                    failed = pod_phase(pod) == "Failed"
                    self.event(
                        sts,
                        "Warning" if failed else "Normal",
                        "RecreatingFailedPod" if failed else "RecreatingTerminatedPod",
                        f"StatefulSet {sts.metadata.namespace}/{sts.metadata.name} is recreating "
                        f"{'failed' if failed else 'terminated'} Pod {pod.metadata.name}",
                    )
                    self._delete(sts, pod)
                pod = None
                slots.pop(n, None)
            if pod is None:
                made = self._create(sts, n, start, current, update)
                if made is not None:
                    slots[n] = made
                if ordered:
                    return False
                continue
            if ordered and (
                is_deleting(pod)
                or not _running_and_ready(pod)
                or not is_available(pod, min_ready, now)
            ):
                return False  # wait: ordinal n must be Running, Ready and available first
        for pod in condemned:
            if is_deleting(pod):
                if ordered:
                    return False
                continue
            healthy = _running_and_ready(pod) and is_available(pod, min_ready, now)
            if ordered and not healthy and pod is not first_unhealthy:
                return False
            self._delete(sts, pod)
            if ordered:
                return False
        return True

    def _rolling_update(
        self,
        sts: StatefulSet,
        slots: dict[int, Pod],
        start: int,
        end: int,
        update: ControllerRevision,
    ) -> None:
        """Replace pods of another revision, highest ordinal first, down to the partition."""
        assert sts.spec is not None
        strategy = sts.spec.update_strategy
        if strategy.type != "RollingUpdate":
            return  # OnDelete
        ru = strategy.rolling_update
        lowest = start + (ru.partition if ru is not None else 0)
        targets = [slots.get(n) for n in range(end - 1, start - 1, -1)]
        if ru is not None and ru.max_unavailable is not None:
            budget = _max_unavailable(ru.max_unavailable, sts.spec.replicas)
            budget -= sum(1 for p in targets if p is None or not _healthy(p))
            for n in range(end - 1, lowest - 1, -1):
                if budget <= 0:
                    return
                pod = slots.get(n)
                if (
                    pod is not None
                    and _revision_of(pod) != update.metadata.name
                    and not is_deleting(pod)
                ):
                    self._delete(sts, pod)
                    budget -= 1
            return
        for n in range(end - 1, lowest - 1, -1):
            pod = slots.get(n)
            if pod is None:
                return
            if _revision_of(pod) != update.metadata.name and not is_deleting(pod):
                self._delete(sts, pod)
                return
            if not _healthy(pod):
                return  # wait for the replaced pod before the next

    # ------------------------------------------------------------ pods
    def _create(
        self,
        sts: StatefulSet,
        ordinal: int,
        start: int,
        current: ControllerRevision,
        update: ControllerRevision,
    ) -> Pod | None:
        """``newVersionedStatefulSetPod``: below the partition a rolling update
        keeps the current revision; everything else gets the update revision."""
        assert sts.spec is not None
        strategy = sts.spec.update_strategy
        ru = strategy.rolling_update
        status = sts.status
        keep_current = strategy.type == "RollingUpdate" and (
            (ru is None and ordinal < start + ((status.current_replicas or 0) if status else 0))
            or (ru is not None and ordinal < start + ru.partition)
        )
        rev = current if keep_current else update
        template = sts.spec.template if rev is update else revision_template(rev)
        name = f"{sts.metadata.name}-{ordinal}"
        pod = pod_from_template(
            template,
            sts,
            name=name,
            labels={
                STATEFULSET_POD_NAME: name,
                POD_INDEX: str(ordinal),
                CONTROLLER_REVISION_HASH: rev.metadata.name,
            },
        )
        assert pod.spec is not None
        pod.spec.hostname = name
        if sts.spec.service_name:
            pod.spec.subdomain = sts.spec.service_name
        try:
            made: Pod = self.mgr.store.create(pod)
        except AlreadyExists:
            return None  # the old pod is still being deleted: wait for it
        except StoreError as err:
            if err.code >= 500:
                raise
            self.event(
                sts,
                "Warning",
                "FailedCreate",
                f"create Pod {name} in StatefulSet {sts.metadata.name} failed error: {err}",
            )
            return None
        self.event(
            sts,
            "Normal",
            "SuccessfulCreate",
            f"create Pod {name} in StatefulSet {sts.metadata.name} successful",
        )
        return made

    def _delete(self, sts: StatefulSet, pod: Pod) -> None:
        with contextlib.suppress(NotFound):
            self.mgr.store.delete(POD, pod.metadata.namespace, pod.metadata.name)
            self.event(
                sts,
                "Normal",
                "SuccessfulDelete",
                f"delete Pod {pod.metadata.name} in StatefulSet {sts.metadata.name} successful",
            )

    # ------------------------------------------------------------ revisions
    def _revisions_of(
        self, sts: StatefulSet, revisions: list[ControllerRevision]
    ) -> tuple[ControllerRevision, ControllerRevision, int] | None:
        """``getStatefulSetRevisions``: (current, update, collision count).
        The template's revision is found (a rollback renumbers an older one
        the newest) or created."""
        assert sts.spec is not None
        collisions = (sts.status.collision_count or 0) if sts.status is not None else 0
        data = _revision_data(sts.spec.template)
        nxt = (revisions[-1].revision + 1) if revisions else 1
        equal = [r for r in revisions if r.data == data]
        if equal and equal[-1] is revisions[-1]:
            update = revisions[-1]
        elif equal:
            update = self._renumber(equal[-1], nxt)
        else:
            made = self._create_revision(sts, data, nxt, collisions)
            if made is None:
                return None
            update, collisions = made
        current = next(
            (r for r in revisions if sts.status and r.metadata.name == sts.status.current_revision),
            update,
        )
        return current, update, collisions

    def _renumber(self, rev: ControllerRevision, revision: int) -> ControllerRevision:
        try:
            stored: ControllerRevision = self.mgr.store.update(
                msgspec.structs.replace(rev, revision=revision)
            )
        except NotFound:
            return rev
        return stored

    def _create_revision(
        self, sts: StatefulSet, data: dict[str, Any], revision: int, collisions: int
    ) -> tuple[ControllerRevision, int] | None:
        assert sts.spec is not None
        while True:
            h, name = _revision_name(sts, data, collisions)
            rev = ControllerRevision(
                api_version="apps/v1",
                kind="ControllerRevision",
                metadata=ObjectMeta(
                    name=name,
                    namespace=sts.metadata.namespace,
                    labels={**(sts.spec.template.metadata.labels or {}), REVISION_HASH_LABEL: h},
                    owner_references=[owner_reference(sts)],
                ),
                data=data,
                revision=revision,
            )
            try:
                made: ControllerRevision = self.mgr.store.create(rev)
                return made, collisions
            except AlreadyExists:
                try:
                    existing: ControllerRevision = self.mgr.store.get(
                        CONTROLLER_REVISION, sts.metadata.namespace, name
                    )
                except NotFound:
                    continue
                if (
                    existing.data == data
                    and (ref := controller_ref(existing)) is not None
                    and ref.uid == sts.metadata.uid
                ):
                    return existing, collisions
                collisions += 1  # another object holds the name: hash again

    def _truncate_history(
        self,
        sts: StatefulSet,
        pods: Sequence[Pod],
        revisions: list[ControllerRevision],
        current: ControllerRevision,
        update: ControllerRevision,
    ) -> None:
        """``truncateHistory``: revisions no pod uses, oldest first, beyond the limit."""
        assert sts.spec is not None
        live = {current.metadata.name, update.metadata.name, *(_revision_of(p) for p in pods)}
        history = [r for r in revisions if r.metadata.name not in live]
        extra = len(history) - sts.spec.revision_history_limit
        for r in history[: max(extra, 0)]:
            with contextlib.suppress(NotFound):
                self.mgr.store.delete(CONTROLLER_REVISION, r.metadata.namespace, r.metadata.name)

    # ------------------------------------------------------------ status
    def _status(
        self,
        sts: StatefulSet,
        pods: Sequence[Pod],
        current: ControllerRevision,
        update: ControllerRevision,
        collisions: int,
        now: datetime,
    ) -> StatefulSetStatus:
        """``updateStatus`` and ``completeRollingUpdate``: counted over the set's pods."""
        assert sts.spec is not None
        min_ready = sts.spec.min_ready_seconds
        replicas = ready = available = on_current = on_update = 0
        for p in pods:
            replicas += 1
            if _running_and_ready(p):
                ready += 1
                available += is_available(p, min_ready, now)
            if not is_deleting(p):
                rev = _revision_of(p)
                on_current += rev == current.metadata.name
                on_update += rev == update.metadata.name
        current_name = current.metadata.name
        if (
            sts.spec.update_strategy.type == "RollingUpdate"
            and on_update == replicas
            and ready == replicas
        ):
            on_current, current_name = on_update, update.metadata.name
        old = sts.status
        return StatefulSetStatus(
            replicas=replicas,
            observed_generation=sts.metadata.generation,
            ready_replicas=ready,
            current_replicas=on_current,
            updated_replicas=on_update,
            current_revision=current_name,
            update_revision=update.metadata.name,
            collision_count=collisions or (old.collision_count if old is not None else None),
            conditions=old.conditions if old is not None else None,
            available_replicas=available,
        )

    def _write_status(self, sts: StatefulSet, st: StatefulSetStatus) -> None:
        if st != sts.status:
            with contextlib.suppress(NotFound):
                self.mgr.store.update_status(msgspec.structs.replace(sts, status=st))
