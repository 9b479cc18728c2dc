"""The embedded kube-scheduler: binds pending pods to nodes.

One work key (``"pods"``) drives scheduling cycles. Pods waiting to be tried
sit in an active set; a cycle tries them highest priority first, then in the
order they were created (kube-scheduler's PrioritySort), so the order never
depends on the order events happened to arrive in. A pod that fits nowhere
gets ``PodScheduled=False``/``Unschedulable`` with kube-scheduler's message
and waits in the unschedulable set until capacity may have appeared (a bound
pod finished or went away, a node was added or changed); then every waiting
pod is tried again.

A cycle is queued from the manager's idle hook, once nothing else is left to
do at the current instant: the pods that finish together free their capacity
before the waiting pods are tried, and one cycle serves them all.
kube-scheduler's backoff between attempts is not modelled: in virtual time it
would only delay pods by a few seconds.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Hashable
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
_NO_CLASS = object()  # a pod whose placement says nothing about others


class PodScheduler:
    """Places pods with ``placement`` (default :class:`FirstFit`) and binds them.

    Reads Pods and Nodes (informers); writes a pod's ``spec.nodeName``
    (update) then its ``PodScheduled`` condition (status), or only the
    condition when the pod fits nowhere.

    A placement may offer ``equivalence_key(pod) -> Hashable | None``: pods
    with equal keys get equal answers from the same nodes, so within a cycle
    a pod equivalent to one that did not fit, with nothing bound since, is
    not placed again.
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
        self.unschedulable: set[str] = set()
        self._mgr: Manager | None = None
        self._pods: Informer | None = None
        self._active: set[str] = set()
        self._cycle_wanted = False
        # The order pods were first seen in breaks creation-time ties, as the
        # time a pod entered kube-scheduler's queue does.
        self._seen: dict[str, int] = {}
        self._seq = itertools.count()
        self._classes: dict[str, Hashable] = {}  # pod key -> equivalence key

    @property
    def mgr(self) -> Manager:
        assert self._mgr is not None
        return self._mgr

    # ------------------------------------------------------------ wiring
    def setup(self, mgr: Manager) -> None:
        self._mgr = mgr
        self._pods = mgr.informer(POD)
        self._pods.on_change(self._on_pod)
        mgr.informer(NODE).on_change(self._on_node)
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
        freed = self.nodes.set_pod(key, None if etype == "DELETED" else pod)
        if etype == "DELETED" or not self._wants(pod):
            self._forget(key)
        elif key not in self.unschedulable or old is None or old.spec != pod.spec:
            # New, or changed in a way that may change where it fits; our own
            # status writes (PodScheduled=False) change nothing here.
            if old is not None and old.spec != pod.spec:
                self._classes.pop(key, None)
            self.unschedulable.discard(key)
            self._seen.setdefault(key, next(self._seq))
            self._active.add(key)
            self._cycle_wanted = True
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

    def _forget(self, key: str) -> None:
        self._active.discard(key)
        self.unschedulable.discard(key)
        self._seen.pop(key, None)
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
    def _order(self, key: str) -> tuple[int, datetime, int, str]:
        assert self._pods is not None
        pod = self._pods.get(key)
        if pod is None:
            return (0, _EPOCH, 0, key)
        prio = (pod.spec.priority if pod.spec is not None else None) or 0
        created = pod.metadata.creation_timestamp
        return (-prio, created if created is not None else _EPOCH, self._seen.get(key, 0), key)

    def _class_of(self, key: str, pod: Pod) -> Hashable:
        cls = self._classes.get(key)
        if cls is None:
            fn = getattr(self.placement, "equivalence_key", None)
            cls = fn(pod) if fn is not None else None
            cls = self._classes[key] = _NO_CLASS if cls is None else cls
        return cls

    def reconcile(self, key: str) -> timedelta | None:
        assert self._pods is not None
        pending = deque(sorted(self._active, key=self._order))
        self._active.clear()
        binds = 0
        failed: dict[Hashable, tuple[int, str]] = {}  # class -> (binds then, message)
        try:
            while pending:
                pod_key = pending[0]
                pod = self._pods.get(pod_key)
                if pod is not None and self._wants(pod):
                    cls = self._class_of(pod_key, pod)
                    seen = failed.get(cls) if cls is not _NO_CLASS else None
                    if seen is not None and seen[0] == binds:
                        self._unschedulable(pod_key, pod, seen[1])
                    else:
                        result = self.placement.place(pod, self.nodes)
                        if result.node is not None:
                            self._bind(pod_key, pod, result.node)
                            binds += 1
                        else:
                            failed[cls] = (binds, result.message)
                            self._unschedulable(pod_key, pod, result.message)
                pending.popleft()
        finally:
            # A failed write leaves the rest to the retry of this key.
            self._active.update(pending)
        return None

    def _bind(self, key: str, pod: Pod, node: str) -> None:
        store, now = self.mgr.store, self.mgr.clock.now()
        new = clone(pod)
        assert new.spec is not None
        new.spec.node_name = node
        bound = store.update(new)
        # Count it at once: the next pod of this cycle must see the usage
        # before the informer delivers the event.
        self.nodes.set_pod(key, bound)
        self._forget(key)
        new = clone(bound)
        if new.status is None:
            new.status = PodStatus(phase="Pending")
        if set_pod_condition(new.status, "PodScheduled", "True", now):
            store.update_status(new)

    def _unschedulable(self, key: str, pod: Pod, message: str) -> None:
        """Park the pod and record why, writing only when the reason changed."""
        self.unschedulable.add(key)
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
            self.mgr.clock.now(),
            REASON_UNSCHEDULABLE,
            message,
        )
        self.mgr.store.update_status(new)
