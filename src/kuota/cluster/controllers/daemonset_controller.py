"""The DaemonSet controller, after Kubernetes' ``pkg/controller/daemon``: one
pod per node that should run it, created as nodes appear, deleted from nodes
that no longer should.

A node should run the daemon pod when the template's nodeSelector and
required node affinity match it and it has no NoSchedule or NoExecute taint
the pod does not tolerate (``NodeShouldRunDaemonPod``: the node's own taints,
not the scheduler's view of its readiness). Each pod is pinned to its node by
a required node affinity on ``metadata.name`` (as the controller writes it
since pods are placed by the default scheduler) and tolerates what Kubernetes
lets every daemon pod tolerate: not-ready and unreachable (NoExecute), the
node pressures and ``unschedulable`` (NoSchedule), so a cordoned node keeps
and still gets its daemon pods. A pod that ends is deleted and replaced after
a backoff (1 s doubling to 15 min, per node). Rolling updates of a changed
template are not modelled: existing pods keep their template.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import msgspec

from kuota.api.k8s import (
    Affinity,
    DaemonSet,
    DaemonSetStatus,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PodSpec,
    PodStatus,
    Toleration,
)
from kuota.api.meta import ObjectMeta
from kuota.cluster.controllers.controller_base import ClusterController
from kuota.cluster.kubescheduler.placement import find_untolerated_taint, pod_matches_node
from kuota.cluster.podutil import (
    NODE,
    POD,
    controller_key,
    controller_ref,
    is_deleting,
    is_pod_ready,
    is_terminal,
    owner_reference,
)
from kuota.runtime.informer import Informer, key_of
from kuota.store import clone
from kuota.store.protocol import EventType, NotFound
from kuota.store.resources import DAEMON_SET as DAEMONSET

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager

__all__ = [
    "DAEMONSET",
    "DAEMON_TOLERATIONS",
    "DaemonSetController",
    "node_should_run",
]

TEMPLATE_GENERATION = "pod-template-generation"
_BACKOFF_BASE = timedelta(seconds=1)
_BACKOFF_MAX = timedelta(minutes=15)

# util.AddOrUpdateDaemonPodTolerations (network-unavailable only with hostNetwork).
DAEMON_TOLERATIONS = (
    Toleration(key="node.kubernetes.io/not-ready", operator="Exists", effect="NoExecute"),
    Toleration(key="node.kubernetes.io/unreachable", operator="Exists", effect="NoExecute"),
    Toleration(key="node.kubernetes.io/disk-pressure", operator="Exists", effect="NoSchedule"),
    Toleration(key="node.kubernetes.io/memory-pressure", operator="Exists", effect="NoSchedule"),
    Toleration(key="node.kubernetes.io/pid-pressure", operator="Exists", effect="NoSchedule"),
    Toleration(key="node.kubernetes.io/unschedulable", operator="Exists", effect="NoSchedule"),
)
_HOST_NETWORK_TOLERATION = Toleration(
    key="node.kubernetes.io/network-unavailable", operator="Exists", effect="NoSchedule"
)


def _tolerations(spec: PodSpec) -> list[Toleration]:
    """The template's tolerations plus the daemon ones it does not have."""
    out = list(spec.tolerations or ())
    extra = [*DAEMON_TOLERATIONS, *((_HOST_NETWORK_TOLERATION,) if spec.host_network else ())]
    for t in extra:
        if not any(o.key == t.key and o.effect == t.effect for o in out):
            out.append(t)
    return out


def node_should_run(ds: DaemonSet, node: Node) -> tuple[bool, bool]:
    """``NodeShouldRunDaemonPod``: (should a daemon pod be created there,
    may one already there keep running). Node affinity decides both; an
    untolerated NoSchedule taint only keeps new pods off (a node turning
    NotReady keeps its daemon pods), an untolerated NoExecute one evicts."""
    assert ds.spec is not None
    spec = ds.spec.template.spec
    if spec is None:
        return False, False
    labels = node.metadata.labels or {}
    if not pod_matches_node(spec, node.metadata.name, labels):
        return False, False
    taints = (node.spec.taints if node.spec is not None else None) or []
    tolerations = _tolerations(spec)
    if find_untolerated_taint(taints, tolerations) is None:
        return True, True
    return False, find_untolerated_taint(taints, tolerations, ("NoExecute",)) is None


def _target_node(pod: Pod) -> str | None:
    """``GetTargetNodeName``: the bound node, else the one its affinity pins."""
    spec = pod.spec
    if spec is None:
        return None
    if spec.node_name:
        return spec.node_name
    aff = spec.affinity
    na = aff.node_affinity if aff is not None else None
    req = na.required_during_scheduling_ignored_during_execution if na is not None else None
    for term in req.node_selector_terms if req is not None else ():
        for f in term.match_fields or ():
            if f.key == "metadata.name" and f.operator == "In" and len(f.values or ()) == 1:
                return (f.values or [""])[0]
    return None


def _pin(spec: PodSpec, node: str) -> PodSpec:
    """``ReplaceDaemonSetPodNodeNameNodeAffinity`` and the daemon tolerations."""
    spec = clone(spec)
    pinned = NodeSelector(
        node_selector_terms=[
            NodeSelectorTerm(
                match_fields=[
                    NodeSelectorRequirement(key="metadata.name", operator="In", values=[node])
                ]
            )
        ]
    )
    aff = spec.affinity if spec.affinity is not None else Affinity()
    na = aff.node_affinity if aff.node_affinity is not None else NodeAffinity()
    na.required_during_scheduling_ignored_during_execution = pinned
    aff.node_affinity = na
    spec.affinity = aff
    spec.tolerations = _tolerations(spec)
    return spec


@dataclass(frozen=True, slots=True)
class _Backoff:
    failures: int
    until: datetime


class DaemonSetController(ClusterController):
    """Reads DaemonSets, Nodes and Pods; creates and deletes daemon pods and
    writes DaemonSet status (only when it changed)."""

    name = "daemonset-controller"
    _BY_OWNER = "daemonset-controller:owner"

    def __init__(self) -> None:
        super().__init__()
        self._sets: Informer | None = None
        self._nodes: Informer | None = None
        self._pods: Informer | None = None
        self._backoff: dict[tuple[str, str], _Backoff] = {}  # (ds key, node)

    def setup(self, mgr: Manager) -> None:
        super().setup(mgr)
        self._sets = mgr.informer(DAEMONSET)
        self._nodes = mgr.informer(NODE)
        self._pods = mgr.informer(POD)
        self._pods.add_index(self._BY_OWNER, _daemonset_owner_uid)
        self._sets.on_change(self._on_set)
        self._nodes.on_change(self._on_node)
        self._pods.on_change(self._on_pod)

    def _on_set(self, etype: EventType, ds: Any, old: Any | None) -> None:
        if etype != "DELETED":
            self.mgr.enqueue(self.name, key_of(ds))

    def _on_node(self, etype: EventType, node: Any, old: Any | None) -> None:
        # A node added, removed, relabelled or retainted may change every set.
        if (
            old is not None
            and etype != "DELETED"
            and (old.metadata.labels, old.spec) == (node.metadata.labels, node.spec)
        ):
            return
        assert self._sets is not None
        for key in self._sets.objects:
            self.mgr.enqueue(self.name, key)

    def _on_pod(self, etype: EventType, pod: Any, old: Any | None) -> None:
        key = controller_key(pod, "DaemonSet", "apps/v1")
        if key is not None:
            self.mgr.enqueue_coalesced(self.name, key)

    # ------------------------------------------------------------ reconcile
    def reconcile(self, key: str) -> timedelta | None:
        assert self._sets is not None and self._nodes is not None and self._pods is not None
        ds: DaemonSet | None = self._sets.get(key)
        if ds is None or ds.spec is None or is_deleting(ds):
            return None
        now = self.mgr.clock.now()
        nodes: dict[str, Node] = dict(self._nodes.objects)
        by_node: dict[str, list[Pod]] = {}
        for pod in self._pods.by_index(self._BY_OWNER, ds.metadata.uid):
            target = _target_node(pod)
            if target is not None and not is_deleting(pod):
                by_node.setdefault(target, []).append(pod)
        desired = current = ready = misscheduled = 0
        for name in sorted(set(nodes) | set(by_node)):
            node = nodes.get(name)
            should, may_stay = node_should_run(ds, node) if node is not None else (False, False)
            pods = by_node.get(name, [])
            running = [p for p in pods if not is_terminal(p)]
            for p in pods:
                if is_terminal(p):  # a daemon pod that ended: replace it, after a backoff
                    self._delete(p)
                    self._fail(key, name, now)
            if not should:
                if not may_stay:
                    for p in running:
                        self._delete(p)
                if running and node is not None:
                    misscheduled += 1
                continue
            desired += 1
            running.sort(key=lambda p: (p.metadata.creation_timestamp or now, p.metadata.name))
            for extra in running[1:]:
                self._delete(extra)
            if running:
                current += 1
                ready += is_pod_ready(running[0])
                continue
            wait = self._wait(key, name, now)
            if wait is not None:
                self.mgr.enqueue_at(self.name, key, wait)
                continue
            self.mgr.store.create(self._pod_for(ds, name))
            current += 1
        self._write_status(ds, desired, current, ready, misscheduled)
        return None

    def _fail(self, key: str, node: str, now: datetime) -> None:
        prev = self._backoff.get((key, node))
        n = prev.failures + 1 if prev is not None else 1
        delay = min(_BACKOFF_BASE * 2 ** (n - 1), _BACKOFF_MAX)
        self._backoff[(key, node)] = _Backoff(n, now + delay)

    def _wait(self, key: str, node: str, now: datetime) -> datetime | None:
        b = self._backoff.get((key, node))
        return b.until if b is not None and b.until > now else None

    def _delete(self, pod: Pod) -> None:
        with contextlib.suppress(NotFound):
            self.mgr.store.delete(POD, pod.metadata.namespace, pod.metadata.name)

    def _pod_for(self, ds: DaemonSet, node: str) -> Pod:
        assert ds.spec is not None and ds.spec.template.spec is not None
        tmeta = ds.spec.template.metadata
        m = ds.metadata
        labels = {**(tmeta.labels or {}), TEMPLATE_GENERATION: str(m.generation)}
        return Pod(
            api_version="v1",
            kind="Pod",
            metadata=ObjectMeta(
                generate_name=f"{m.name}-",
                namespace=m.namespace,
                labels=labels,
                annotations=dict(tmeta.annotations) if tmeta.annotations else None,
                finalizers=list(tmeta.finalizers) if tmeta.finalizers else None,
                owner_references=[owner_reference(ds)],
            ),
            spec=_pin(ds.spec.template.spec, node),
            status=PodStatus(phase="Pending"),
        )

    def _write_status(
        self, ds: DaemonSet, desired: int, current: int, ready: int, misscheduled: int
    ) -> None:
        st = DaemonSetStatus(
            current_number_scheduled=current,
            number_misscheduled=misscheduled,
            desired_number_scheduled=desired,
            number_ready=ready,
            observed_generation=ds.metadata.generation,
            updated_number_scheduled=current,
            number_available=ready,
            number_unavailable=(desired - ready) or None,
        )
        if st != ds.status:
            with contextlib.suppress(NotFound):
                self.mgr.store.update_status(msgspec.structs.replace(ds, status=st))


def _daemonset_owner_uid(pod: Any) -> list[str]:
    ref = controller_ref(pod)
    if ref is None or ref.kind != "DaemonSet" or ref.api_version != "apps/v1":
        return []
    return [ref.uid]
