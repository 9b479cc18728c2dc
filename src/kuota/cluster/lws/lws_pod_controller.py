"""The LeaderWorkerSet operator's pod controller (integrations.md §5.2,
§5.4), after kubernetes-sigs/lws ``pkg/controllers/pod_controller.go``: per
leader pod, the worker StatefulSet ``<lws>-<i>`` (ordinals from 1, owned by
the leader pod, so deleting the leader takes its group with it) once the
leader exists (LeaderCreated) or is Ready (LeaderReady), and the group's
Service under UniquePerReplica; and the restart policy: a restarted or
deleted pod of a group under RecreateGroupOnPodRestart /
RecreateGroupAfterStart deletes the group's leader, so the whole group is
recreated.

kuota's store collects garbage at once, in the background: the foreground
deletion LWS asks for when it recreates a group is a plain delete, and a
worker pod deleted without finalizers is gone before the pod controller sees
it being deleted, so its removal is what counts (``_gone``).
"""

from __future__ import annotations

import contextlib
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Final

from kuota.api import lws as lw
from kuota.api.core import Pod
from kuota.api.lws import (
    EXCLUSIVE_TOPOLOGY_ANNOTATION,
    GROUP_INDEX_LABEL,
    LEADER_NAME_ANNOTATION,
    RECREATE_GROUP_AFTER_START_ANNOTATION,
    SET_NAME_LABEL,
    WORKER_INDEX_LABEL,
    LeaderWorkerSet,
)
from kuota.cluster.controllers.controller_base import ClusterController
from kuota.cluster.lws.lws_objects import (
    BY_LWS,
    COMPONENT,
    CONTROLLER_REVISION,
    FAILED_CREATE,
    GROUPS_PROGRESSING,
    LWS,
    RECREATE_GROUP,
    STATEFULSET,
    Revision,
    create_service_if_missing,
    find_revision,
    is_leader,
    labels_of,
    lws_owner,
    owned_by,
    parent_and_ordinal,
    revision_of,
    worker_statefulset,
)
from kuota.cluster.podutil import (
    NODE,
    POD,
    controller_key,
    controller_ref,
    is_deleting,
    is_pod_ready,
    pod_phase,
)
from kuota.runtime.informer import Informer, key_of
from kuota.store import Invalid, NotFound
from kuota.store.protocol import AlreadyExists, EventType

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager

__all__ = ["LeaderWorkerSetPodController"]

_RECREATING_POLICIES: Final = ("RecreateGroupOnPodRestart", "RecreateGroupAfterStart")


def _restarted(pod: Pod) -> bool:
    """``ContainerRestarted``: a container of a Pending or Running pod restarted."""
    if pod_phase(pod) not in ("Running", "Pending") or pod.status is None:
        return False
    for statuses in (pod.status.init_container_statuses, pod.status.container_statuses):
        for cs in statuses or ():
            if isinstance(cs, dict) and (cs.get("restartCount") or 0) > 0:
                return True
    return False


def _group_index(obj: Any) -> list[str]:
    labels = labels_of(obj)
    name, group = labels.get(SET_NAME_LABEL), labels.get(GROUP_INDEX_LABEL)
    return [f"{obj.metadata.namespace}/{name}/{group}"] if name and group is not None else []


class LeaderWorkerSetPodController(ClusterController):
    """Reads the pods of LeaderWorkerSets; creates each group's worker
    StatefulSet (and UniquePerReplica Service) and recreates a group whose
    pod restarted or was deleted, as the restart policy says (§5.2, §5.4)."""

    name = "leaderworkerset-pod-controller"
    component = COMPONENT
    _GROUPS = "lws:group"

    def __init__(self) -> None:
        super().__init__()
        self._lws: Informer | None = None
        self._sts: Informer | None = None
        self._pods: Informer | None = None
        self._nodes: Informer | None = None
        self._revisions: Informer | None = None
        # leader pod key -> (its uid, the group pod that went away): a worker
        # pod removed at once (no finalizers) is no longer there to reconcile.
        self._doomed: dict[str, tuple[str, str]] = {}

    def setup(self, mgr: Manager) -> None:
        super().setup(mgr)
        self._lws = mgr.informer(LWS)
        self._sts = mgr.informer(STATEFULSET)
        self._pods = mgr.informer(POD)
        self._nodes = mgr.informer(NODE)
        self._revisions = mgr.informer(CONTROLLER_REVISION)
        self._pods.add_index(self._GROUPS, _group_index)
        self._revisions.add_index(BY_LWS, lws_owner)
        self._pods.on_change(self._on_pod)
        self._sts.on_change(self._on_sts)

    def _on_pod(self, etype: EventType, pod: Any, old: Any | None) -> None:
        if SET_NAME_LABEL not in labels_of(pod):
            return
        if etype == "DELETED":
            if not is_deleting(pod):
                self._gone(pod)
            return
        self.mgr.enqueue(self.name, key_of(pod))

    def _on_sts(self, etype: EventType, sts: Any, old: Any | None) -> None:
        key = controller_key(sts, "Pod", "v1")
        if key is not None:
            self.mgr.enqueue(self.name, key)

    # ------------------------------------------------------------ restart policy
    def _lws_of(self, pod: Pod) -> LeaderWorkerSet | None:
        assert self._lws is not None
        return self._lws.get(f"{pod.metadata.namespace}/{labels_of(pod)[SET_NAME_LABEL]}")

    def _recreates(self, lws: LeaderWorkerSet) -> bool:
        assert lws.spec is not None
        return lws.spec.leader_worker_template.restart_policy in _RECREATING_POLICIES

    def _after_start(self, lws: LeaderWorkerSet) -> bool:
        assert lws.spec is not None
        return (
            lws.spec.leader_worker_template.restart_policy == "RecreateGroupAfterStart"
            or RECREATE_GROUP_AFTER_START_ANNOTATION in (lws.metadata.annotations or {})
        )

    def _pending(self, pod: Pod, size: int, gone: Pod | None = None) -> bool:
        """``pendingPodsInGroup``: the group lacks pods or one is Pending (a
        pod just removed still counts, as one being deleted would)."""
        assert self._pods is not None
        group = self._pods.by_index(self._GROUPS, _group_index(pod)[0]) if _group_index(pod) else []
        if gone is not None and all(p.metadata.name != gone.metadata.name for p in group):
            group = [*group, gone]
        return len(group) != size or any(pod_phase(p) == "Pending" for p in group)

    def _group_leader(self, pod: Pod) -> Pod | None:
        """The current leader of a worker's group, if the worker belongs to it
        (its revision, and its StatefulSet owned by that leader)."""
        assert self._pods is not None and self._sts is not None
        leader_name, ordinal = parent_and_ordinal(pod.metadata.name)
        if ordinal < 0:
            return None
        leader: Pod | None = self._pods.get(f"{pod.metadata.namespace}/{leader_name}")
        if leader is None or revision_of(leader) != revision_of(pod):
            return None
        owner = controller_ref(pod)
        if owner is None:
            return None
        if owner.kind == "Pod":
            ok = owner.name == leader.metadata.name and owner.uid == leader.metadata.uid
            return leader if ok else None
        if owner.kind != "StatefulSet":
            return None
        sts = self._sts.get(f"{pod.metadata.namespace}/{owner.name}")
        if sts is None or sts.metadata.uid != owner.uid or not owned_by(sts, leader):
            return None
        return leader

    def _gone(self, pod: Pod) -> None:
        """A group pod removed without a deletion in progress: under a
        recreating policy the group goes with it (its leader is deleted)."""
        lws = self._lws_of(pod)
        if lws is None or lws.spec is None or not self._recreates(lws) or is_leader(pod):
            return  # (a leader that went took its group with it)
        size = lws.spec.leader_worker_template.size
        if self._after_start(lws) and self._pending(pod, size, gone=pod):
            return
        leader = self._group_leader(pod)
        if leader is None or is_deleting(leader):
            return
        key = key_of(leader)
        self._doomed[key] = (leader.metadata.uid, pod.metadata.name)
        self.mgr.enqueue(self.name, key)

    def _restart_group(self, lws: LeaderWorkerSet, pod: Pod) -> bool:
        """``handleRestartPolicy`` for a pod still there: True when its group's
        leader is (being) deleted."""
        assert lws.spec is not None
        if not self._recreates(lws) or not (_restarted(pod) or is_deleting(pod)):
            return False
        if self._after_start(lws) and self._pending(pod, lws.spec.leader_worker_template.size):
            return False
        leader = pod if is_leader(pod) else self._group_leader(pod)
        if leader is None:
            return False
        if is_deleting(leader):
            return True
        self._delete_leader(lws, leader, pod.metadata.name)
        return True

    def _delete_leader(self, lws: LeaderWorkerSet, leader: Pod, cause: str) -> None:
        with contextlib.suppress(NotFound):
            self.mgr.store.delete(POD, leader.metadata.namespace, leader.metadata.name)
        group = labels_of(leader).get(GROUP_INDEX_LABEL, "")
        self.event(
            lws,
            "Normal",
            RECREATE_GROUP,
            f"Worker pod {cause} failed, deleted leader pod {leader.metadata.name} "
            f"to recreate group {group}",
        )

    # ------------------------------------------------------------ reconcile
    def reconcile(self, key: str) -> timedelta | None:
        assert self._pods is not None and self._sts is not None and self._revisions is not None
        pod: Pod | None = self._pods.get(key)
        doomed = self._doomed.pop(key, None)
        if pod is None:
            return None
        labels = labels_of(pod)
        if SET_NAME_LABEL not in labels or WORKER_INDEX_LABEL not in labels:
            return None
        lws = self._lws_of(pod)
        if lws is None or lws.spec is None:
            return None  # its pods go with the deleted LWS
        if doomed is not None and doomed[0] == pod.metadata.uid and not is_deleting(pod):
            self._delete_leader(lws, pod, doomed[1])
            return None
        if self._restart_group(lws, pod) or not is_leader(pod):
            return None
        if LEADER_NAME_ANNOTATION in (pod.metadata.annotations or {}):
            self.event(
                lws,
                "Warning",
                FAILED_CREATE,
                f"leader pod {pod.metadata.namespace}/{pod.metadata.name} contains mistake "
                f"annotation '{LEADER_NAME_ANNOTATION}'",
            )
            return None
        if is_deleting(pod):
            return None
        spec = lws.spec
        if lw.subdomain_policy(spec) == "UniquePerReplica":
            selector = {
                SET_NAME_LABEL: lws.metadata.name,
                GROUP_INDEX_LABEL: labels.get(GROUP_INDEX_LABEL, ""),
            }
            create_service_if_missing(self.mgr.store, lws, pod.metadata.name, selector, pod)
        if spec.leader_worker_template.size == 1:
            return None
        if spec.startup_policy == "LeaderReady" and not is_pod_ready(pod):
            return None
        if self._sts.get(key) is not None:
            return None  # created once; LWS never updates a group's workers
        found = find_revision(self._revisions.by_index(BY_LWS, lws.metadata.uid), revision_of(pod))
        if found is None:
            return timedelta(seconds=1)  # the revision is being written: look again
        rev = Revision.of(found)
        node_selector: dict[str, str] | None = None
        topology = (lws.metadata.annotations or {}).get(EXCLUSIVE_TOPOLOGY_ANNOTATION)
        if topology is not None:
            node_selector = self._leader_topology(lws, pod, topology)
            if node_selector is None:
                return None
        try:
            self.mgr.store.create(worker_statefulset(pod, lws, rev, node_selector))
        except AlreadyExists:
            return None
        except Invalid as err:
            self.event(
                lws,
                "Warning",
                FAILED_CREATE,
                f"Failed to create worker statefulset for leader pod {pod.metadata.name}: {err}",
            )
            return None
        self.event(
            lws,
            "Normal",
            GROUPS_PROGRESSING,
            f"Created worker statefulset for leader pod {pod.metadata.name}",
        )
        return None

    def _leader_topology(
        self, lws: LeaderWorkerSet, leader: Pod, topology: str
    ) -> dict[str, str] | None:
        """The workers' node selector under exclusive placement: the leader's
        topology domain. None while the leader is unscheduled, or when its
        node lacks the topology label (a Warning event says so)."""
        assert self._nodes is not None
        node_name = leader.spec.node_name if leader.spec is not None else None
        if not node_name:
            return None
        node = self._nodes.get(node_name)
        value = (node.metadata.labels or {}).get(topology) if node is not None else None
        if value is None:
            self.event(
                lws,
                "Warning",
                FAILED_CREATE,
                f"node {node_name} of leader pod {leader.metadata.name} does not have "
                f"topology label: {topology}",
            )
            return None
        return {topology: value}
