"""The taint eviction controller (``pkg/controller/tainteviction``, formerly
the node lifecycle controller's taint manager): pods on a node with a
``NoExecute`` taint they do not tolerate are evicted at once; pods that
tolerate every such taint are evicted after the shortest
``tolerationSeconds`` of the tolerations used (none given: never).

A pending eviction keeps the time it was first scheduled: later changes of
the node's taints do not push it back (``processPodOnNode``); it is
cancelled when the taints go away or become tolerated forever, or when the
pod leaves the node. The not-ready and unreachable taints come from the
node lifecycle controller (``node_lifecycle.py``) and every pod tolerates
them for 300 s by default (``apiserver/pod_admission.py``), so a node that turns NotReady
loses its pods five minutes later.

The eviction is the Eviction API's (``eviction.py``): a ``DisruptionTarget``
condition (reason ``DeletionByTaintManager``), then a graceful delete. A
Job's evicted pods are replaced by its Job controller.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from kuota.api.core import Node, Pod, Taint, Toleration
from kuota.cluster.controllers.controller_base import ClusterController
from kuota.cluster.controllers.eviction import evict_pod
from kuota.cluster.kubescheduler.filters import tolerates
from kuota.cluster.podutil import NODE, POD, is_deleting, is_terminal
from kuota.runtime.informer import Informer, key_of
from kuota.store.protocol import EventType

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager

__all__ = [
    "EVICTION_MESSAGE",
    "EVICTION_REASON",
    "TaintEviction",
    "eviction_delay",
    "no_execute_taints",
]

EVICTION_REASON = "DeletionByTaintManager"
EVICTION_MESSAGE = "Taint manager: deleting due to NoExecute taint"
_NEVER = None


def no_execute_taints(node: Node | None) -> tuple[Taint, ...]:
    if node is None or node.spec is None:
        return ()
    return tuple(t for t in node.spec.taints or () if t.effect == "NoExecute")


def eviction_delay(taints: tuple[Taint, ...], tolerations: list[Toleration]) -> timedelta | None:
    """How long the pod may stay (None: forever): zero when some taint is not
    tolerated, else ``getMinTolerationTime`` of the tolerations used — the
    least tolerationSeconds among them (<= 0 counts as 0), forever when none
    of them has one."""
    if not taints:
        return _NEVER
    used: list[Toleration] = []
    for taint in taints:
        match = [t for t in tolerations if tolerates(t, taint)]
        if not match:
            return timedelta(0)
        used += match
    seconds = [t.toleration_seconds for t in used if t.toleration_seconds is not None]
    if not seconds:
        return _NEVER
    return timedelta(seconds=max(0, min(seconds)))


@dataclass(frozen=True, slots=True)
class _Work:
    node: str
    created: datetime
    fire_at: datetime


class TaintEviction(ClusterController):
    """Reads Nodes and Pods (indexed by node); evicts pods."""

    name = "taint-eviction"
    component = "taint-eviction-controller"
    _BY_NODE = "taint-eviction:spec.nodeName"

    def __init__(self) -> None:
        super().__init__()
        self._pods: Informer | None = None
        self._nodes: Informer | None = None
        self._taints: dict[str, tuple[Taint, ...]] = {}  # node -> its NoExecute taints
        self._work: dict[str, _Work] = {}  # pod key -> the scheduled eviction

    def setup(self, mgr: Manager) -> None:
        super().setup(mgr)
        self._pods = mgr.informer(POD)
        self._nodes = mgr.informer(NODE)
        self._pods.add_index(self._BY_NODE, _node_of)
        self._nodes.on_change(self._on_node)
        self._pods.on_change(self._on_pod)

    # ------------------------------------------------------------ events
    def _on_node(self, etype: EventType, node: Any, old: Any | None) -> None:
        name = node.metadata.name
        taints = () if etype == "DELETED" else no_execute_taints(node)
        if taints == self._taints.get(name, ()):
            return
        if taints:
            self._taints[name] = taints
        else:
            self._taints.pop(name, None)
        assert self._pods is not None
        for pod in self._pods.by_index(self._BY_NODE, name):
            self._process(pod)

    def _on_pod(self, etype: EventType, pod: Any, old: Any | None) -> None:
        key = key_of(pod)
        if etype == "DELETED" or is_terminal(pod) or is_deleting(pod):
            self._work.pop(key, None)
            return
        node = pod.spec.node_name if pod.spec is not None else None
        was = old.spec.node_name if old is not None and old.spec is not None else None
        old_tols = old.spec.tolerations if old is not None and old.spec is not None else None
        if node != was or (pod.spec is not None and pod.spec.tolerations != old_tols):
            self._process(pod)

    def _process(self, pod: Pod) -> None:
        """``processPodOnNode``: schedule, keep or cancel the pod's eviction."""
        key = key_of(pod)
        node = pod.spec.node_name if pod.spec is not None else None
        if not node or is_terminal(pod) or is_deleting(pod):
            self._work.pop(key, None)
            return
        tolerations = list((pod.spec.tolerations if pod.spec is not None else None) or ())
        delay = eviction_delay(self._taints.get(node, ()), tolerations)
        if delay is None:
            self._work.pop(key, None)
            return
        now = self.mgr.clock.now()
        prev = self._work.get(key)
        if delay and prev is not None and prev.node == node and prev.created < now:
            return  # already scheduled: the first schedule stands
        work = _Work(node, now, now + delay)
        self._work[key] = work
        self.mgr.enqueue_at(self.name, key, work.fire_at)

    # ------------------------------------------------------------ reconcile
    def reconcile(self, key: str) -> timedelta | None:
        assert self._pods is not None
        work = self._work.get(key)
        if work is None:
            return None  # cancelled since
        now = self.mgr.clock.now()
        if work.fire_at > now:
            self.mgr.enqueue_at(self.name, key, work.fire_at)  # an earlier timer woke us
            return None
        del self._work[key]
        pod: Pod | None = self._pods.get(key)
        if pod is None or is_terminal(pod) or is_deleting(pod):
            return None
        if (pod.spec.node_name if pod.spec is not None else None) != work.node:
            return None
        evict_pod(self.mgr.store, pod, now, reason=EVICTION_REASON, message=EVICTION_MESSAGE)
        m = pod.metadata
        self.event(
            pod,
            "Normal",
            "TaintManagerEviction",
            f"Marking for deletion Pod {m.namespace}/{m.name}",
        )
        return None


def _node_of(pod: Any) -> list[str]:
    name = pod.spec.node_name if pod.spec is not None else None
    return [name] if name else []
