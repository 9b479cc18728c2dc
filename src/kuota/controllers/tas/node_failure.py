"""Kueue's TAS node controller, its failed-node half (pkg/controller/tas/
node_controller.go, TASFailedNodeReplacement): a node that an admitted
workload's topology assignment names is marked in the workload's
``status.unhealthyNodes`` when it fails, so that the scheduler's second pass
(``kuota.scheduler.admission.node_replacement``) places its pods again; it
is taken off the list when the node is healthy again.

A node fails when it is deleted or has no Ready condition (at once), or is
not Ready: with TASReplaceNodeOnPodTermination (on by default) once none of
the workload's pods on it is still running (they were deleted or have
terminated: the taint manager's eviction, a drain), else once it has been
NotReady for ``NodeFailureDelay`` (30s; TASReplaceNodeDueToNotReadyOverFixedTime
marks it then even with pods left). With TASReplaceNodeOnNodeTaints, a Ready
node with a NoSchedule or NoExecute taint the workload's pods do not
tolerate fails the same way once its pods are gone.

A workload that already has another node marked: Kueue evicts it here
(``Workload eviction triggered due to multiple TAS assigned node failures``);
kuota marks the second node and the admission core evicts it with that
message in its next cycle (the core owns the Evicted condition).

Not here: the node controller's other duties (the TAS cache's node sync is
the admission core's input), stray pods sent by an old node selector
(``TerminatedByKueue``)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Final

import msgspec

from kuota.api.k8s.nodeselection import tolerates
from kuota.api.kueue import types as kt
from kuota.api.kueue.config import KueueConfig
from kuota.api.kueue.topology import WORKLOAD_ANNOTATION, is_tas_pod
from kuota.api.kueue.v1beta1 import domains_of
from kuota.runtime.informer import Informer
from kuota.runtime.manager import Manager
from kuota.store import Conflict, NotFound
from kuota.store.resources import NODE, POD, WORKLOAD

__all__ = ["NODE_FAILURE_DELAY", "NodeFailureController"]

NODE_FAILURE_DELAY: Final = timedelta(seconds=30)  # (tas.NodeFailureDelay)
_BY_NODE: Final = "tas-assigned-node"
_PODS_BY_WORKLOAD: Final = "tas-node-failure-workload"


def _admitted(wl: kt.Workload) -> bool:
    st = wl.status
    return st is not None and any(
        c.type == "Admitted" and c.status == "True" for c in st.conditions or ()
    )


def _assigned_nodes(wl: kt.Workload) -> set[str]:
    """The lowest-level values of the workload's topology assignments
    (Kueue's AdmittedWorkloadNodesKey index: node names)."""
    st = wl.status
    if st is None or st.admission is None:
        return set()
    out: set[str] = set()
    for psa in st.admission.pod_set_assignments:
        if psa.topology_assignment is not None:
            out.update(v[-1] for v, _ in domains_of(psa.topology_assignment) if v)
    return out


def _ready_condition(node: Any) -> Any | None:
    st = node.status
    return next((c for c in (st.conditions if st else None) or () if c.type == "Ready"), None)


def _is_ready(node: Any) -> bool:
    c = _ready_condition(node)
    return c is not None and c.status == "True"


def _terminated(pod: Any) -> bool:
    st = pod.status
    return st is not None and st.phase in ("Succeeded", "Failed")


def _unhealthy(wl: kt.Workload) -> list[str]:
    st = wl.status
    return [n.name for n in (st.unhealthy_nodes if st is not None else None) or ()]


class NodeFailureController:
    name = "tas-node-controller"

    def __init__(self, config: KueueConfig) -> None:
        self.config = config
        self._mgr: Manager | None = None
        self._nodes: Informer | None = None
        self._wls: Informer | None = None
        self._pods: Informer | None = None

    def setup(self, mgr: Manager) -> None:
        self._mgr = mgr
        self._nodes = mgr.informer(NODE)
        self._wls = mgr.informer(WORKLOAD)
        self._pods = mgr.informer(POD)
        self._wls.add_index(
            _BY_NODE, lambda wl: sorted(_assigned_nodes(wl)) if _admitted(wl) else []
        )
        self._pods.add_index(_PODS_BY_WORKLOAD, self._pod_workload)
        self._nodes.on_change(self._on_node)
        self._pods.on_change(self._on_pod)

    @staticmethod
    def _pod_workload(pod: Any) -> list[str]:
        name = (pod.metadata.annotations or {}).get(WORKLOAD_ANNOTATION)
        return [f"{pod.metadata.namespace}/{name}"] if name else []

    def _gate(self, name: str) -> bool:
        return self.config.gate(name)

    def _on_node(self, etype: str, node: Any, old: Any | None) -> None:
        """The node reconciler's predicate: created or deleted, Ready
        changed, or (TASReplaceNodeOnNodeTaints) its taints changed."""
        if self._mgr is None or not self._gate("TASFailedNodeReplacement"):
            return
        if etype == "MODIFIED" and old is not None:
            taints_changed = self._gate("TASReplaceNodeOnNodeTaints") and (
                (old.spec.taints if old.spec else None) != (node.spec.taints if node.spec else None)
            )
            if _is_ready(old) == _is_ready(node) and not taints_changed:
                return
        self._mgr.enqueue(self.name, node.metadata.name)

    def _on_pod(self, etype: str, pod: Any, old: Any | None) -> None:
        """nodeFailurePodHandler: a TAS pod that was running on a node and
        is going (deleted, being deleted, terminated) asks for its node."""
        if self._mgr is None or not is_tas_pod(pod):
            return
        node = pod.spec.node_name if pod.spec is not None else None
        if node and (
            etype == "DELETED" or pod.metadata.deletion_timestamp is not None or _terminated(pod)
        ):
            self._mgr.enqueue(self.name, node)

    # ------------------------------------------------------------ reconcile
    def reconcile(self, name: str) -> None:
        mgr, nodes, wls = self._mgr, self._nodes, self._wls
        assert mgr is not None and nodes is not None and wls is not None
        node = nodes.get(name)
        ready = _ready_condition(node) if node is not None else None
        expired = False
        if ready is not None and ready.status != "True":
            since = ready.last_transition_time
            remaining = (
                NODE_FAILURE_DELAY - (mgr.clock.now() - since)
                if isinstance(since, datetime)
                else timedelta(0)
            )
            expired = remaining <= timedelta(0)
            if not expired and not self._gate("TASReplaceNodeOnPodTermination"):
                mgr.enqueue_after(self.name, name, remaining)
                return
        affected = sorted(wls.by_index(_BY_NODE, name), key=lambda w: w.metadata.name)
        if node is None or ready is None:
            for wl in affected:
                self._mark(wl, name)
            return
        if self._gate("TASReplaceNodeDueToNotReadyOverFixedTime") and expired:
            for wl in affected:
                self._mark(wl, name)
            return
        for wl in affected:
            if self._workload_unhealthy(wl, name, node):
                self._mark(wl, name)
            elif name in _unhealthy(wl):
                self._unmark(wl, name)

    def _workload_unhealthy(self, wl: kt.Workload, name: str, node: Any) -> bool:
        """getWorkloadStatus: whether the node has failed for this workload."""
        if not _is_ready(node):
            if not self._gate("TASReplaceNodeOnPodTermination"):
                return True
            return not self._progressing(wl, name)
        if not self._gate("TASReplaceNodeOnNodeTaints"):
            return False
        taints = [
            t
            for t in (node.spec.taints if node.spec else None) or ()
            if t.effect in ("NoSchedule", "NoExecute")
        ]
        if not taints:
            return False
        # classifyTaints: one taint none of the pod sets on the node tolerates.
        specs = {ps.name: ps for ps in wl.spec.pod_sets}
        on_node = [
            specs[psa.name]
            for psa in (
                wl.status.admission.pod_set_assignments if wl.status and wl.status.admission else ()
            )
            if psa.name in specs
            and psa.topology_assignment is not None
            and any(v and v[-1] == name for v, _ in domains_of(psa.topology_assignment))
        ]
        for t in taints:
            if (
                all(
                    not any(
                        tolerates(tol, t)
                        for tol in (
                            (ps.template.spec.tolerations if ps.template.spec else None) or ()
                        )
                    )
                    for ps in on_node
                )
                and on_node
            ):
                # Untolerated: failed once its pods there are gone (with
                # TASReplaceNodeOnPodTermination), at once otherwise.
                if not self._gate("TASReplaceNodeOnPodTermination"):
                    return True
                return not self._progressing(wl, name)
        return False

    def _progressing(self, wl: kt.Workload, name: str) -> bool:
        """hasProgressingPods: a pod of the workload on the node, not being
        deleted and not terminated."""
        pods = self._pods
        assert pods is not None
        key = f"{wl.metadata.namespace}/{wl.metadata.name}"
        return any(
            p.spec is not None
            and p.spec.node_name == name
            and p.metadata.deletion_timestamp is None
            and not _terminated(p)
            for p in pods.by_index(_PODS_BY_WORKLOAD, key)
        )

    def _mark(self, wl: kt.Workload, name: str) -> None:
        """addUnhealthyNode (an evicted workload is left alone)."""
        st = wl.status
        if st is None or name in _unhealthy(wl):
            return
        if any(c.type == "Evicted" and c.status == "True" for c in st.conditions or ()):
            return
        nodes = [*(st.unhealthy_nodes or ()), kt.UnhealthyNode(name=name)]
        self._write(wl, name, nodes)

    def _unmark(self, wl: kt.Workload, name: str) -> None:
        st = wl.status
        assert st is not None
        nodes = [n for n in st.unhealthy_nodes or () if n.name != name]
        self._write(wl, name, nodes or None)

    def _write(self, wl: kt.Workload, name: str, nodes: list[kt.UnhealthyNode] | None) -> None:
        mgr = self._mgr
        assert mgr is not None and wl.status is not None
        status = msgspec.structs.replace(wl.status, unhealthy_nodes=nodes)
        try:
            mgr.store.update_status(msgspec.structs.replace(wl, status=status))
        except Conflict:
            # The newer workload comes back through the watch; look again.
            mgr.enqueue_after(self.name, name, timedelta(seconds=1))
        except NotFound:
            pass
