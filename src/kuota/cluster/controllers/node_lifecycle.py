"""The node lifecycle controller's tainting (``pkg/controller/nodelifecycle``:
TaintNodesByCondition and taint-based evictions): a node's conditions become
taints, so the scheduler and the taint eviction controller act on them.

* Ready ``False`` → ``node.kubernetes.io/not-ready`` with effects NoSchedule
  and NoExecute; Ready ``Unknown`` → ``node.kubernetes.io/unreachable``
  likewise; Ready again → both removed. (kube-controller-manager waits out
  ``node-monitor-grace-period`` before calling a silent node Unknown; a
  world says when it is.)
* MemoryPressure, DiskPressure, PIDPressure ``True`` and NetworkUnavailable
  ``True`` → ``node.kubernetes.io/<condition>`` NoSchedule.
* ``spec.unschedulable`` (a cordoned node) →
  ``node.kubernetes.io/unschedulable`` NoSchedule; removed on uncordon.

A node without a Ready condition (as hand-written worlds have them) counts
as Ready. Taints anyone else put on the node are left as they are.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from kuota.api.core import Node, NodeSpec, Taint
from kuota.cluster.controllers.controller_base import ClusterController
from kuota.cluster.nodeutil import NOT_READY_TAINT, UNREACHABLE_TAINT, UNSCHEDULABLE_TAINT
from kuota.cluster.podutil import NODE
from kuota.runtime.informer import Informer
from kuota.store import NotFound, clone
from kuota.store.protocol import EventType

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager

__all__ = ["NodeLifecycle", "condition_taints"]

_PRESSURE = {
    "MemoryPressure": "node.kubernetes.io/memory-pressure",
    "DiskPressure": "node.kubernetes.io/disk-pressure",
    "PIDPressure": "node.kubernetes.io/pid-pressure",
    "NetworkUnavailable": "node.kubernetes.io/network-unavailable",
}
# Every taint this controller owns, by (key, effect).
_OWNED = {(NOT_READY_TAINT, "NoSchedule"), (NOT_READY_TAINT, "NoExecute")}
_OWNED |= {(UNREACHABLE_TAINT, "NoSchedule"), (UNREACHABLE_TAINT, "NoExecute")}
_OWNED |= {(k, "NoSchedule") for k in (*_PRESSURE.values(), UNSCHEDULABLE_TAINT)}


def condition_taints(node: Node) -> list[tuple[str, str]]:
    """The (key, effect) taints the node's conditions (and ``unschedulable``)
    call for."""
    out: list[tuple[str, str]] = []
    st = node.status
    for c in (st.conditions if st is not None else None) or ():
        if c.type == "Ready" and c.status in ("False", "Unknown"):
            key = NOT_READY_TAINT if c.status == "False" else UNREACHABLE_TAINT
            out += [(key, "NoSchedule"), (key, "NoExecute")]
        elif c.type in _PRESSURE and c.status == "True":
            out.append((_PRESSURE[c.type], "NoSchedule"))
    if node.spec is not None and node.spec.unschedulable:
        out.append((UNSCHEDULABLE_TAINT, "NoSchedule"))
    return out


class NodeLifecycle(ClusterController):
    """Reads Nodes; writes their ``spec.taints`` (only the taints it owns)."""

    name = "node-lifecycle"

    def __init__(self) -> None:
        super().__init__()
        self._nodes: Informer | None = None

    def setup(self, mgr: Manager) -> None:
        super().setup(mgr)
        self._nodes = mgr.informer(NODE)
        self._nodes.on_change(self._on_node)

    def _on_node(self, etype: EventType, node: Any, old: Any | None) -> None:
        if etype != "DELETED":
            self.mgr.enqueue(self.name, node.metadata.name)

    def reconcile(self, key: str) -> timedelta | None:
        assert self._nodes is not None
        mgr = self.mgr
        node: Node | None = self._nodes.get(key)
        if node is None:
            return None
        current = list(node.spec.taints or ()) if node.spec is not None else []
        wanted = condition_taints(node)
        keep = [
            t for t in current if (t.key, t.effect) not in _OWNED or (t.key, t.effect) in wanted
        ]
        have = {(t.key, t.effect) for t in keep}
        now = mgr.clock.now()
        added = [
            Taint(key=k, effect=e, time_added=now if e == "NoExecute" else None)
            for k, e in wanted
            if (k, e) not in have
        ]
        if not added and len(keep) == len(current):
            return None
        new = clone(node)
        spec = new.spec if new.spec is not None else NodeSpec()
        spec.taints = [*keep, *added] or None
        new.spec = spec
        try:
            mgr.store.update(new)
        except NotFound:
            return None
        return None
