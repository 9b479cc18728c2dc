"""The embedded kube-scheduler: binds pending pods to nodes.

One work key (``"pods"``) drives scheduling cycles. Pods waiting to be tried
sit in an active set; a cycle tries them highest priority first, then in the
order they were created (kube-scheduler's PrioritySort), so the order never
depends on the order events happened to arrive in. A pod that fits nowhere
gets ``PodScheduled=False``/``Unschedulable`` with kube-scheduler's message
and waits in the unschedulable set until capacity may have appeared (a bound
pod finished or went away, a node was added or changed); then every waiting
pod is tried again. kube-scheduler's backoff between attempts is not modelled:
in virtual time it would only delay pods by a few seconds.
"""

from __future__ import annotations

import itertools
from collections import deque
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from kuota.api.core import Node, Pod, PodStatus
from kuota.cluster.nodes import NodeTable
from kuota.cluster.placement import FirstFit, Placement
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

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager

__all__ = ["DEFAULT_SCHEDULER_NAME", "REASON_UNSCHEDULABLE", "PodScheduler"]

DEFAULT_SCHEDULER_NAME = "default-scheduler"
REASON_UNSCHEDULABLE = "Unschedulable"
_CYCLE_KEY = "pods"
_EPOCH = datetime.min


class PodScheduler:
    """Places pods with ``placement`` (default :class:`FirstFit`) and binds them.

    Reads Pods and Nodes (informers); writes a pod's ``spec.nodeName``
    (update) then its ``PodScheduled`` condition (status), or only the
    condition when the pod fits nowhere.
    """

    name = "pod-scheduler"

    def __init__(
        self,
        placement: Placement | None = None,
        *,
        scheduler_name: str = DEFAULT_SCHEDULER_NAME,
    ) -> None:
        self.placement: Placement = placement if placement is not None else FirstFit()
        self.scheduler_name = scheduler_name
        self.nodes = NodeTable()
        self._mgr: Manager | None = None
        self._pods: Informer | None = None
        self._active: set[str] = set()
        self.unschedulable: set[str] = set()
        # The order pods were first seen in breaks creation-time ties, as the
        # time a pod entered kube-scheduler's queue does.
        self._seen: dict[str, int] = {}
        self._seq = itertools.count()

    # ------------------------------------------------------------ wiring
    def setup(self, mgr: Manager) -> None:
        self._mgr = mgr
        self._pods = mgr.informer(POD)
        self._pods.on_change(self._on_pod)
        mgr.informer(NODE).on_change(self._on_node)

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
        freed = self.nodes.set_pod(key, None if etype == "DELETED" else pod)
        if etype == "DELETED" or not self._wants(pod):
            self._active.discard(key)
            self.unschedulable.discard(key)
            self._seen.pop(key, None)
        elif key not in self.unschedulable or old is None or old.spec != pod.spec:
            # New, or changed in a way that may change where it fits; our own
            # status writes (PodScheduled=False) change nothing here.
            self.unschedulable.discard(key)
            self._seen.setdefault(key, next(self._seq))
            self._activate(key)
        if freed:
            self._wake()

    def _on_node(self, etype: EventType, node: Any, old: Any | None) -> None:
        assert isinstance(node, Node)
        if etype == "DELETED":
            self.nodes.remove_node(node.metadata.name)
            return
        before, after = self.nodes.set_node(node)
        if before is None or before.signature() != after.signature():
            self._wake()

    def _activate(self, key: str) -> None:
        self._active.add(key)
        assert self._mgr is not None
        self._mgr.enqueue(self.name, _CYCLE_KEY)

    def _wake(self) -> None:
        """Capacity may have appeared: try every unschedulable pod again."""
        if not self.unschedulable:
            return
        self._active |= self.unschedulable
        self.unschedulable.clear()
        assert self._mgr is not None
        self._mgr.enqueue(self.name, _CYCLE_KEY)

    # ------------------------------------------------------------ cycle
    def _order(self, key: str) -> tuple[int, datetime, int, str]:
        assert self._pods is not None
        pod = self._pods.get(key)
        if pod is None:
            return (0, _EPOCH, 0, key)
        prio = (pod.spec.priority if pod.spec is not None else None) or 0
        created = pod.metadata.creation_timestamp
        return (-prio, created if created is not None else _EPOCH, self._seen.get(key, 0), key)

    def reconcile(self, key: str) -> timedelta | None:
        assert self._pods is not None
        pending = deque(sorted(self._active, key=self._order))
        self._active.clear()
        try:
            while pending:
                pod = self._pods.get(pending[0])
                if pod is not None and self._wants(pod):
                    self._schedule_one(pending[0], pod)
                pending.popleft()
        finally:
            # A failed write leaves the rest to the retry of this key.
            self._active.update(pending)
        return None

    def _schedule_one(self, key: str, pod: Pod) -> None:
        assert self._mgr is not None
        result = self.placement.place(pod, self.nodes)
        if result.node is None:
            self.unschedulable.add(key)
            self._mark_unschedulable(pod, result.message)
            return
        self._bind(key, pod, result.node)

    def _bind(self, key: str, pod: Pod, node: str) -> None:
        assert self._mgr is not None
        store, now = self._mgr.store, self._mgr.clock.now()
        new = clone(pod)
        assert new.spec is not None
        new.spec.node_name = node
        bound = store.update(new)
        # Count it at once: the next pod of this cycle must see the usage
        # before the informer delivers the event.
        self.nodes.set_pod(key, bound)
        self._seen.pop(key, None)
        new = clone(bound)
        if new.status is None:
            new.status = PodStatus(phase="Pending")
        if set_pod_condition(new.status, "PodScheduled", "True", now):
            store.update_status(new)

    def _mark_unschedulable(self, pod: Pod, message: str) -> None:
        assert self._mgr is not None
        c = get_pod_condition(pod, "PodScheduled")
        if (
            c is not None
            and c.status == "False"
            and c.reason == REASON_UNSCHEDULABLE
            and c.message == message
        ):
            return
        new = clone(pod)
        if new.status is None:
            new.status = PodStatus(phase="Pending")
        set_pod_condition(
            new.status,
            "PodScheduled",
            "False",
            self._mgr.clock.now(),
            REASON_UNSCHEDULABLE,
            message,
        )
        self._mgr.store.update_status(new)
