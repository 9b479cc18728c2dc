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

Pods a node selector sends to such a node that are still pending, unbound
and ungated (they can never run there), or sent to a node the workload's
assignment no longer names, are marked Failed with Kueue's
``TerminatedByKueue`` condition (reason ``UnschedulableOnAssignedNode``) and
a ``PodTerminatedByKueue`` event, so their job makes new ones, which the
ungater keeps gated until the replacement is found.

Not here: the node controller's other duties (the TAS cache's node sync is
the admission core's input)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Final

import msgspec

from kuota.api import k8s as kc
from kuota.api.k8s.nodeselection import tolerates
from kuota.api.kueue import types as kt
from kuota.api.kueue.config import KueueConfig
from kuota.api.kueue.topology import TOPOLOGY_GATE, WORKLOAD_ANNOTATION, is_tas_pod
from kuota.api.kueue.v1beta1 import domains_of
from kuota.runtime.informer import Informer
from kuota.runtime.manager import Manager
from kuota.store import Conflict, NotFound
from kuota.store.resources import NODE, POD, WORKLOAD

__all__ = ["NODE_FAILURE_DELAY", "NodeFailureController"]

NODE_FAILURE_DELAY: Final = timedelta(seconds=30)  # (tas.NodeFailureDelay)
_BY_NODE: Final = "tas-assigned-node"
_PODS_BY_WORKLOAD: Final = "tas-node-failure-workload"
_PODS_BY_SELECTED_NODE: Final = "tas-node-failure-selected-node"
HOSTNAME: Final = "kubernetes.io/hostname"
# (the node controller's TerminatedByKueue pod condition and event)
TERMINATED_BY_KUEUE: Final = "TerminatedByKueue"
UNSCHEDULABLE_ON_ASSIGNED_NODE: Final = "UnschedulableOnAssignedNode"
TERMINATED_MESSAGE: Final = "Pod terminated by Kueue NodeController due to node taint"


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


def _key(wl: kt.Workload) -> str:
    return f"{wl.metadata.namespace}/{wl.metadata.name}"


def _finished_or_evicted(wl: kt.Workload) -> bool:
    conds = (wl.status.conditions if wl.status is not None else None) or ()
    return any(c.type in ("Finished", "Evicted") and c.status == "True" for c in conds)


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
        self._pods.add_index(_PODS_BY_SELECTED_NODE, self._selected_node)
        self._nodes.on_change(self._on_node)
        self._pods.on_change(self._on_pod)

    @staticmethod
    def _pod_workload(pod: Any) -> list[str]:
        name = (pod.metadata.annotations or {}).get(WORKLOAD_ANNOTATION)
        return [f"{pod.metadata.namespace}/{name}"] if name else []

    @staticmethod
    def _selected_node(pod: Any) -> list[str]:
        """PodNodeSelectorHostnameKey: the host a pod's node selector names."""
        host = (pod.spec.node_selector or {}).get(HOSTNAME) if pod.spec is not None else None
        return [host] if host else []

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
        if self._mgr is None or not is_tas_pod(pod) or pod.spec is None:
            return
        node = pod.spec.node_name
        selected = (pod.spec.node_selector or {}).get(HOSTNAME)
        if not node and selected:
            self._mgr.enqueue(self.name, selected)  # (a pending pod sent to the node)
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
        stray = self._stray_pods(name)
        keys = {_key(w) for w in affected}
        for key in sorted(stray.keys() - keys):
            # (getWorkloadsFromPodsOnNode: pods sent here by a workload whose
            # assignment no longer names the node)
            wl = wls.get(key)
            if wl is not None and not _finished_or_evicted(wl):
                affected.append(wl)
        for wl in affected:
            terminate: list[Any] = []
            if name not in _assigned_nodes(wl):
                terminate = stray.get(_key(wl), [])  # stray: always terminated
            elif self._workload_unhealthy(wl, name, node):
                self._mark(wl, name)
                terminate = stray.get(_key(wl), [])
            else:
                if name in _unhealthy(wl):
                    self._unmark(wl, name)
                if self._checks_pods(wl, name, node):
                    terminate = stray.get(_key(wl), [])
            if not _finished_or_evicted(wl):
                for pod in terminate:
                    self._terminate(pod)

    def _stray_pods(self, name: str) -> dict[str, list[Any]]:
        """getPodsToTerminate's candidates: per workload, its pods a node
        selector sends to the node that are still pending, unbound and
        ungated (they can never run there)."""
        pods = self._pods
        assert pods is not None
        out: dict[str, list[Any]] = {}
        for p in pods.by_index(_PODS_BY_SELECTED_NODE, name):
            spec, st = p.spec, p.status
            if (
                spec is None
                or spec.node_name
                or (st is not None and st.phase not in (None, "Pending"))
            ):
                continue
            if any(g.name == TOPOLOGY_GATE for g in spec.scheduling_gates or ()):
                continue
            for key in self._pod_workload(p):
                out.setdefault(key, []).append(p)
        return out

    def _checks_pods(self, wl: kt.Workload, name: str, node: Any) -> bool:
        """Whether a healthy verdict still came from checkPodsOnNode (a
        NotReady node, or a taint the pod sets on it do not tolerate for
        ever): only then are its stray pods terminated."""
        if not _is_ready(node):
            return self._gate("TASReplaceNodeOnPodTermination")
        if not self._gate("TASReplaceNodeOnNodeTaints"):
            return False
        pod_sets = self._pod_sets_on(wl, name)
        for t in (node.spec.taints if node.spec else None) or ():
            if t.effect not in ("NoSchedule", "NoExecute"):
                continue
            forever = all(
                any(tolerates(tol, t) and tol.toleration_seconds is None for tol in tols)
                for tols in pod_sets
            )
            if not forever:
                return True
        return False

    def _pod_sets_on(self, wl: kt.Workload, name: str) -> list[list[Any]]:
        """The tolerations of each pod set the assignment puts on the node."""
        specs = {ps.name: ps for ps in wl.spec.pod_sets}
        adm = wl.status.admission if wl.status is not None else None
        out: list[list[Any]] = []
        for psa in (adm.pod_set_assignments if adm is not None else None) or ():
            ps = specs.get(psa.name)
            ta = psa.topology_assignment
            if ps is None or ta is None:
                continue
            if any(v and v[-1] == name for v, _ in domains_of(ta)):
                spec = ps.template.spec
                out.append(list((spec.tolerations if spec is not None else None) or ()))
        return out

    def _terminate(self, pod: Any) -> None:
        """markPodsFailed: the pod Failed with Kueue's condition and event."""
        mgr = self._mgr
        assert mgr is not None
        cond = kc.PodCondition(
            type=TERMINATED_BY_KUEUE,
            status="True",
            reason=UNSCHEDULABLE_ON_ASSIGNED_NODE,
            message=TERMINATED_MESSAGE,
            last_transition_time=mgr.clock.now(),
        )
        st = pod.status if pod.status is not None else kc.PodStatus()
        status = msgspec.structs.replace(
            st, phase="Failed", conditions=[*(st.conditions or ()), cond]
        )
        try:
            out = mgr.store.update_status(msgspec.structs.replace(pod, status=status))
        except (Conflict, NotFound):
            return
        if mgr.recorder.enabled:
            mgr.recorder.event(out, "Normal", "PodTerminatedByKueue", TERMINATED_MESSAGE, self.name)

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
        # classifyTaints: a taint one of the pod sets on the node does not
        # tolerate (checkTaintTolerations).
        pod_sets = self._pod_sets_on(wl, name)
        for t in taints:
            if pod_sets and not all(any(tolerates(tol, t) for tol in tols) for tols in pod_sets):
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
