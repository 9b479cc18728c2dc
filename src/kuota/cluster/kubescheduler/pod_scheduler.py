"""The embedded kube-scheduler: binds pending pods to nodes.

One work key (``"pods"``) drives scheduling cycles. Pods waiting to be tried
sit in an active set; a cycle tries them highest priority first, then in the
order they were created (kube-scheduler's PrioritySort), so the order never
depends on the order events happened to arrive in. A pod that fits nowhere
gets ``PodScheduled=False``/``Unschedulable`` with kube-scheduler's message
and waits in the unschedulable set until capacity may have appeared (a bound
pod finished or went away, a node or namespace was added or changed); then
every waiting pod is tried again.

When the placement preempts (the pod fits nowhere but evicting lower
priority pods on some node would make room), the victims get the
``DisruptionTarget`` condition and are deleted, the pod gets
``status.nominatedNodeName``, and it is placed once the victims are gone;
meanwhile pods of no higher priority leave that room to it.

A cycle is queued from the manager's idle hook, once nothing else is left to
do at the current instant: the pods that finish together free their capacity
before the waiting pods are tried, and one cycle serves them all.
kube-scheduler's backoff between attempts is not modelled: in virtual time it
would only delay pods by a few seconds.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import msgspec

from kuota.api.k8s import Node, Pod, PodStatus
from kuota.cluster.controllers.controller_base import ClusterController
from kuota.cluster.controllers.eviction import evict_pod
from kuota.cluster.kubescheduler.cluster_snapshot import ClusterSnapshot
from kuota.cluster.kubescheduler.dra_extended import node_extended_devices
from kuota.cluster.kubescheduler.kube_scheduler import KubeScheduler
from kuota.cluster.kubescheduler.node_table import NodeTable
from kuota.cluster.kubescheduler.placement import Placement, PlacementResult
from kuota.cluster.kubescheduler.podinfo import parse_pod
from kuota.cluster.nodeutil import pod_resource_requests
from kuota.cluster.podutil import (
    NODE,
    POD,
    get_pod_condition,
    is_deleting,
    pod_phase,
    set_pod_condition,
)
from kuota.runtime.informer import Informer, key_of
from kuota.store import clone
from kuota.store.protocol import EventType
from kuota.store.resources import DEVICE_CLASS, NAMESPACE, RESOURCE_SLICE

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager

__all__ = ["DEFAULT_SCHEDULER_NAME", "REASON_UNSCHEDULABLE", "PodScheduler"]

DEFAULT_SCHEDULER_NAME = "default-scheduler"
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_PREEMPTED = "PreemptionByScheduler"  # the victim's DisruptionTarget reason
_CYCLE_KEY = "pods"
_EPOCH = datetime.min
_NO_CLASS = object()  # a pod whose placement says nothing about others
_replace = msgspec.structs.replace


class PodScheduler(ClusterController):
    """Places pods with ``placement`` (default :class:`KubeScheduler`) and binds them.

    Reads Pods, Nodes and Namespaces (informers) into a
    :class:`ClusterSnapshot`; writes a pod's ``spec.nodeName`` (update)
    then its ``PodScheduled`` condition (status), or only the condition
    (and ``nominatedNodeName``) when the pod fits nowhere; deletes the
    victims of preemption.

    A placement may offer ``equivalence_key(pod) -> Hashable | None``: pods
    with equal keys get equal answers from the same cluster state, so within
    a cycle a pod equivalent to one that did not fit, with nothing bound or
    preempted since, is not placed again.
    """

    name = "pod-scheduler"

    def __init__(
        self,
        placement: Placement | None = None,
        *,
        scheduler_name: str = DEFAULT_SCHEDULER_NAME,
    ) -> None:
        super().__init__()
        self.placement: Placement = placement if placement is not None else KubeScheduler()
        self.scheduler_name = scheduler_name
        self.component = scheduler_name  # kube-scheduler's Events come from its name
        self.snapshot = ClusterSnapshot()
        self.unschedulable: set[str] = set()
        self._pods: Informer | None = None
        self._active: set[str] = set()
        self._cycle_wanted = False
        self._classes: dict[str, Hashable] = {}  # pod key -> equivalence key
        self._nodes: Informer | None = None
        self._device_classes: Informer | None = None
        self._slices: Informer | None = None
        # node -> DRA extended resources its ResourceSlices offer
        self._dra: dict[str, dict[str, int]] = {}

    @property
    def nodes(self) -> NodeTable:
        """The per-node accounting (the snapshot's NodeTable)."""
        return self.snapshot.nodes

    # ------------------------------------------------------------ wiring
    def setup(self, mgr: Manager) -> None:
        super().setup(mgr)
        self._pods = mgr.informer(POD)
        self._pods.on_change(self._on_pod)
        self._nodes = mgr.informer(NODE)
        self._nodes.on_change(self._on_node)
        self._device_classes = mgr.informer(DEVICE_CLASS)
        self._device_classes.on_change(self._on_devices)
        self._slices = mgr.informer(RESOURCE_SLICE)
        self._slices.on_change(self._on_devices)
        mgr.informer(NAMESPACE).on_change(self._on_namespace)
        mgr.on_idle(self._on_idle)

    def _wants(self, pod: Pod) -> bool:
        """Unbound, Pending, not being deleted, not gated, and ours."""
        spec = pod.spec
        if spec is None or spec.node_name or spec.scheduling_gates:
            return False
        if is_deleting(pod) or pod_phase(pod) != "Pending":
            return False
        return (spec.scheduler_name or DEFAULT_SCHEDULER_NAME) == self.scheduler_name

    def _on_pod(self, etype: EventType, pod: Any, old: Any | None) -> None:
        key = key_of(pod)
        freed = self.snapshot.set_pod(key, None if etype == "DELETED" else pod)
        if etype == "DELETED" or not self._wants(pod):
            self._forget(key)
        else:
            self._restore_nomination(key, pod)
            if key not in self.unschedulable or old is None or old.spec != pod.spec:
                # New, or changed in a way that may change where it fits; our own
                # status writes (PodScheduled=False) change nothing here.
                if old is not None and old.spec != pod.spec:
                    self._classes.pop(key, None)
                self.unschedulable.discard(key)
                self._active.add(key)
                self._cycle_wanted = True
        if freed:
            self._wake()

    def _restore_nomination(self, key: str, pod: Pod) -> None:
        """A pending pod's ``nominatedNodeName`` holds its room (after a restart
        the snapshot learns it from the pod, as kube-scheduler's nominator does)."""
        st = pod.status
        node = st.nominated_node_name if st is not None else None
        if node and self.snapshot.nominated_node(key) != node:
            self.snapshot.nominate(key, node, parse_pod(key, pod, pod_resource_requests(pod)))

    def _on_node(self, etype: EventType, node: Any, old: Any | None) -> None:
        assert isinstance(node, Node)
        if etype == "DELETED":
            self.snapshot.remove_node(node.metadata.name)
            return
        before, after = self.snapshot.set_node(node, self._dra.get(node.metadata.name))
        if before is None or before.signature() != after.signature():
            self._wake()

    def _on_devices(self, etype: EventType, obj: Any, old: Any | None) -> None:
        """A DeviceClass or ResourceSlice changed: what each node offers of
        the DRA extended resources (devices of a class with
        ``extendedResourceName``) is counted again."""
        assert self._device_classes is not None and self._slices is not None
        assert self._nodes is not None
        dra = node_extended_devices(self._device_classes.list(), self._slices.list())
        changed = {n for n in dra.keys() | self._dra.keys() if dra.get(n) != self._dra.get(n)}
        self._dra = dra
        for name in sorted(changed):
            node = self._nodes.get(name)
            if node is not None:
                self._on_node("MODIFIED", node, node)

    def _on_namespace(self, etype: EventType, ns: Any, old: Any | None) -> None:
        # Namespace labels matter to namespaceSelectors of affinity terms.
        if etype == "DELETED":
            self.snapshot.remove_namespace(ns.metadata.name)
        else:
            self.snapshot.set_namespace(ns.metadata.name, ns.metadata.labels)
            if old is not None and old.metadata.labels == ns.metadata.labels:
                return
        if self.snapshot.with_affinity or self.unschedulable:
            self._wake()

    def _forget(self, key: str) -> None:
        self._active.discard(key)
        self.unschedulable.discard(key)
        self._classes.pop(key, None)

    def _wake(self) -> None:
        """Capacity may have appeared: try every unschedulable pod again."""
        if self.unschedulable:
            self._active |= self.unschedulable
            self.unschedulable.clear()
            self._cycle_wanted = True

    def _on_idle(self) -> bool:
        if not self._cycle_wanted:
            return False
        self._cycle_wanted = False
        self.mgr.enqueue(self.name, _CYCLE_KEY)
        return True

    # ------------------------------------------------------------ cycle
    def _order(self, key: str) -> tuple[int, datetime, str, str]:
        assert self._pods is not None
        pod = self._pods.get(key)
        if pod is None:
            return (0, _EPOCH, "", key)
        prio = (pod.spec.priority if pod.spec is not None else None) or 0
        m = pod.metadata
        # Pods created in one instant keep the order they were created in, as
        # the times they entered kube-scheduler's queue do: the store numbers
        # its uids in creation order (store/memory.py). Not the order events
        # arrived in: a restarted run lists its pods by name.
        created = m.creation_timestamp
        return (-prio, created if created is not None else _EPOCH, m.uid, key)

    def _class_of(self, key: str, pod: Pod) -> Hashable:
        if self.snapshot.nominated_node(key) is not None:
            return _NO_CLASS  # it tries its nominated node first: unlike the others
        cls = self._classes.get(key)
        if cls is None:
            fn = getattr(self.placement, "equivalence_key", None)
            cls = fn(pod) if fn is not None else None
            cls = self._classes[key] = _NO_CLASS if cls is None else cls
        if cls is not _NO_CLASS and self.snapshot.with_affinity:
            # Other pods' affinity terms may tell pods apart by labels.
            m = pod.metadata
            return (cls, m.namespace, tuple(sorted((m.labels or {}).items())))
        return cls

    def reconcile(self, key: str) -> timedelta | None:
        assert self._pods is not None
        pending = deque(sorted(self._active, key=self._order))
        self._active.clear()
        changes = 0  # bindings and preemptions so far: the cluster changed
        failed: dict[Hashable, tuple[int, str]] = {}  # class -> (changes then, message)
        try:
            while pending:
                pod_key = pending[0]
                pod = self._pods.get(pod_key)
                if pod is not None and self._wants(pod):
                    cls = self._class_of(pod_key, pod)
                    seen = failed.get(cls) if cls is not _NO_CLASS else None
                    if seen is not None and seen[0] == changes:
                        self._unschedulable(pod_key, pod, seen[1])
                    else:
                        result = self.placement.place(pod, self.snapshot)
                        if result.node is not None:
                            self._bind(pod_key, pod, result.node)
                            changes += 1
                        elif result.nominated_node is not None:
                            self._preempt(pod_key, pod, result)
                            changes += 1
                        else:
                            failed[cls] = (changes, result.message)
                            self._unschedulable(pod_key, pod, result.message)
                pending.popleft()
        finally:
            # A failed write leaves the rest to the retry of this key.
            self._active.update(pending)
        return None

    def _bind(self, key: str, pod: Pod, node: str) -> None:
        store, now = self.mgr.store, self.mgr.clock.now()
        assert pod.spec is not None
        # Shallow copies of what changes (the store copies what it keeps;
        # the informer's pod is never written to).
        bound = store.update(_replace(pod, spec=_replace(pod.spec, node_name=node)))
        # Count it at once: the next pod of this cycle must see the usage
        # before the informer delivers the event.
        parsed = getattr(self.placement, "bound_info", None)
        self.snapshot.set_pod(key, bound, parsed(pod, node) if parsed is not None else None)
        self._forget(key)
        status = clone(bound.status) if bound.status is not None else PodStatus(phase="Pending")
        changed = set_pod_condition(status, "PodScheduled", "True", now)
        if status.nominated_node_name:
            # The nomination served its purpose (kuota clears it; the field
            # is only a hint while the pod waits).
            status.nominated_node_name = None
            changed = True
        if changed:
            store.update_status(_replace(bound, status=status))

    def _preempt(self, key: str, pod: Pod, result: PlacementResult) -> None:
        """Evict the victims, drop the nominations they displace, nominate the pod."""
        assert self._pods is not None and result.nominated_node is not None
        store, now = self.mgr.store, self.mgr.clock.now()
        for vkey in result.victims:
            victim = self._pods.get(vkey)
            if victim is None or is_deleting(victim):
                continue
            # DisruptionTarget, then a graceful delete: the victim runs out its
            # terminationGracePeriodSeconds (the room appears when it is gone).
            evict_pod(
                store,
                victim,
                now,
                reason=REASON_PREEMPTED,
                message=f"{self.scheduler_name}: preempting to accommodate a higher priority pod",
            )
            self.event(
                victim,
                "Normal",
                "Preempted",
                f"Preempted by pod {pod.metadata.uid} on node {result.nominated_node}",
            )
        for okey in result.unnominated:
            self.snapshot.clear_nomination(okey)
            other = self._pods.get(okey)
            if other is not None and other.status is not None and other.status.nominated_node_name:
                new = clone(other)
                assert new.status is not None
                new.status.nominated_node_name = None
                store.update_status(new)
        self.snapshot.nominate(
            key, result.nominated_node, parse_pod(key, pod, pod_resource_requests(pod))
        )
        self._unschedulable(key, pod, result.message, result.nominated_node)

    def _unschedulable(
        self, key: str, pod: Pod, message: str, nominated: str | None = None
    ) -> None:
        """Park the pod and record why, writing only when the reason changed."""
        self.unschedulable.add(key)
        c = get_pod_condition(pod, "PodScheduled")
        current = pod.status.nominated_node_name if pod.status is not None else None
        if (
            c is not None
            and c.status == "False"
            and c.reason == REASON_UNSCHEDULABLE
            and c.message == message
            and (nominated is None or nominated == current)
        ):
            return
        new = clone(pod)
        if new.status is None:
            new.status = PodStatus(phase="Pending")
        set_pod_condition(
            new.status,
            "PodScheduled",
            "False",
            self.mgr.clock.now(),
            REASON_UNSCHEDULABLE,
            message,
        )
        if nominated is not None:
            new.status.nominated_node_name = nominated
        self.mgr.store.update_status(new)
        if c is None or c.message != message:
            self.event(pod, "Warning", "FailedScheduling", message)
