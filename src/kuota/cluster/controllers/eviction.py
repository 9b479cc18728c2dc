"""Evicting a pod as the Eviction API does: a ``DisruptionTarget`` condition,
then a graceful delete — the pod keeps running (and holding its node's
resources) for its termination grace period, then its kubelet kills it.

kuota's store deletes at once (its ``deletionGracePeriodSeconds`` is always
0), so graceful deletion is emulated: an evicted running pod carries the
finalizer :data:`GRACEFUL_FINALIZER` and its grace in the annotation
:data:`GRACE_ANNOTATION` until the kubelet has finished it
(:func:`termination_deadline` tells the kubelet when), then
:class:`GracefulTermination` drops the finalizer and the pod is gone. Other
deletions (a Job suspended, a pod deleted by its owner) stay immediate.
"""

from __future__ import annotations

import contextlib
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from kuota.api.core import Pod, PodStatus
from kuota.cluster.controllers.controller_base import ClusterController
from kuota.cluster.nodeutil import node_ready
from kuota.cluster.podutil import (
    NODE,
    POD,
    is_deleting,
    is_terminal,
    pod_phase,
    set_pod_condition,
)
from kuota.runtime.informer import Informer, key_of
from kuota.store import clone
from kuota.store.protocol import EventType, NotFound, ObjectStore

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager

__all__ = [
    "DEFAULT_GRACE_SECONDS",
    "DISRUPTION_TARGET",
    "GRACEFUL_FINALIZER",
    "GRACE_ANNOTATION",
    "GracefulTermination",
    "evict_pod",
    "grace_seconds",
    "termination_deadline",
]

GRACEFUL_FINALIZER = "kuota.dev/graceful-termination"
GRACE_ANNOTATION = "kuota.dev/termination-grace-period-seconds"
DISRUPTION_TARGET = "DisruptionTarget"
DEFAULT_GRACE_SECONDS = 30  # the API default of terminationGracePeriodSeconds
# What the Eviction API writes into the condition.
EVICTION_REASON = "EvictionByEvictionAPI"
EVICTION_MESSAGE = "Eviction API: evicting"


def grace_seconds(pod: Pod, override: int | None = None) -> int:
    """The grace a delete gives: ``override`` when it is 0 or more (``oc adm
    drain --grace-period``), else the pod's terminationGracePeriodSeconds."""
    if override is not None and override >= 0:
        return override
    own = pod.spec.termination_grace_period_seconds if pod.spec is not None else None
    return own if own is not None else DEFAULT_GRACE_SECONDS


def termination_deadline(pod: Pod) -> datetime | None:
    """When the kubelet kills a pod being deleted gracefully (None: now)."""
    m = pod.metadata
    if m.deletion_timestamp is None or GRACEFUL_FINALIZER not in (m.finalizers or ()):
        return None
    raw = (m.annotations or {}).get(GRACE_ANNOTATION, "0")
    seconds = int(raw) if raw.isascii() and raw.isdigit() else 0
    return m.deletion_timestamp + timedelta(seconds=seconds)


def evict_pod(
    store: ObjectStore,
    pod: Pod,
    now: datetime,
    *,
    grace: int | None = None,
    reason: str = EVICTION_REASON,
    message: str = EVICTION_MESSAGE,
) -> None:
    """Evict ``pod``: the DisruptionTarget condition, then a delete that lets a
    running pod finish within its grace period. A pod already gone is fine."""
    m = pod.metadata
    seconds = grace_seconds(pod, grace)
    try:
        if not is_terminal(pod) and not is_deleting(pod):
            if pod_phase(pod) == "Running" and seconds > 0:
                new = clone(pod)
                new.metadata.finalizers = [*(m.finalizers or ()), GRACEFUL_FINALIZER]
                new.metadata.annotations = {**(m.annotations or {}), GRACE_ANNOTATION: str(seconds)}
                pod = store.update(new)
            new = clone(pod)
            st = new.status if new.status is not None else PodStatus(phase="Pending")
            new.status = st
            if set_pod_condition(st, DISRUPTION_TARGET, "True", now, reason, message):
                pod = store.update_status(new)
        store.delete(POD, m.namespace, m.name)
    except NotFound:
        return


class GracefulTermination(ClusterController):
    """Drops :data:`GRACEFUL_FINALIZER` once its pod has finished and its
    kubelet can say so: the node is Ready (the kubelet confirms the deletion)
    or gone (the pod garbage collector removes pods of deleted nodes). A pod
    on a NotReady node stays Terminating, as in a cluster."""

    name = "graceful-termination"
    _BY_NODE = "graceful-termination:node"

    def __init__(self) -> None:
        super().__init__()
        self._pods: Informer | None = None
        self._nodes: Informer | None = None

    def setup(self, mgr: Manager) -> None:
        super().setup(mgr)
        self._pods = mgr.informer(POD)
        self._nodes = mgr.informer(NODE)
        self._pods.add_index(self._BY_NODE, _held_on_node)
        self._pods.on_change(self._on_pod)
        self._nodes.on_change(self._on_node)

    def _on_pod(self, etype: EventType, pod: Any, old: Any | None) -> None:
        if etype != "DELETED" and _held_on_node(pod) and is_terminal(pod):
            self.mgr.enqueue(self.name, key_of(pod))

    def _on_node(self, etype: EventType, node: Any, old: Any | None) -> None:
        if etype == "DELETED" or node_ready(node):
            assert self._pods is not None
            mgr = self.mgr
            for pod in self._pods.by_index(self._BY_NODE, node.metadata.name):
                mgr.enqueue(self.name, key_of(pod))

    def reconcile(self, key: str) -> timedelta | None:
        assert self._pods is not None and self._nodes is not None
        mgr = self.mgr
        pod: Pod | None = self._pods.get(key)
        if pod is None or GRACEFUL_FINALIZER not in (pod.metadata.finalizers or ()):
            return None
        if not is_terminal(pod):
            return None
        node_name = pod.spec.node_name if pod.spec is not None else None
        node = self._nodes.get(node_name) if node_name else None
        if node is not None and not node_ready(node):
            return None  # nobody can confirm it: Terminating until the node returns
        rest = [f for f in pod.metadata.finalizers or () if f != GRACEFUL_FINALIZER]
        with contextlib.suppress(NotFound):
            mgr.store.patch(
                POD,
                pod.metadata.namespace,
                pod.metadata.name,
                {"metadata": {"finalizers": rest or None}},
            )
        return None


def _held_on_node(pod: Any) -> list[str]:
    """The node of a pod held by the graceful-termination finalizer."""
    if GRACEFUL_FINALIZER not in (pod.metadata.finalizers or ()):
        return []
    name = pod.spec.node_name if pod.spec is not None else None
    return [name] if name else []
