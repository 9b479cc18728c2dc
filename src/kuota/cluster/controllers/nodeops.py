"""Node operations as ``oc adm`` performs them: cordon, uncordon, drain,
taint, label — over any store (``kuota node ... --state DIR`` uses a kept
state; a world's ``NodeOperation`` objects use the running control plane) —
and the controller that performs ``NodeOperation`` objects in virtual time.

Drain follows kubectl's ``pkg/drain``: cordon, then pick the node's pods
(DaemonSet-managed pods are an error unless ignored, mirror pods are left,
pods with emptyDir data need ``deleteEmptyDirData``, pods no controller
manages need ``force``; finished pods always go), then evict each one (see
``kuota.cluster.controllers.eviction``: it keeps running for its grace
period), then wait until every evicted pod is gone. A Job's evicted pod counts as failed and is
replaced by its Job elsewhere, as in a cluster.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from kuota.api.core import (
    Node,
    NodeCondition,
    NodeOperation,
    NodeOperationStatus,
    NodeSpec,
    NodeStatus,
    Pod,
)
from kuota.api.nodeargs import (
    NodeArgError,
    apply_labels,
    apply_taints,
    parse_label_specs,
    parse_taint_specs,
)
from kuota.cluster.controllers.controller_base import ClusterController
from kuota.cluster.controllers.eviction import evict_pod
from kuota.cluster.podutil import NODE, POD, controller_ref, is_deleting, is_terminal
from kuota.runtime.informer import Informer, key_of
from kuota.store import clone
from kuota.store.protocol import EventType, NotFound, ObjectStore, StoreError

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager

__all__ = [
    "NODE_OPERATION",
    "DrainOptions",
    "DrainPlan",
    "NodeOpError",
    "NodeOperationController",
    "cordon",
    "label",
    "plan_drain",
    "set_ready",
    "start_drain",
    "still_there",
    "taint",
]

NODE_OPERATION = ("kuota.dev", "NodeOperation")
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"

# kubectl's pkg/drain/filters.go texts.
DAEMONSET_FATAL = "DaemonSet-managed Pods (use --ignore-daemonsets to ignore)"
DAEMONSET_WARNING = "ignoring DaemonSet-managed Pods"
LOCAL_STORAGE_FATAL = "Pods with local storage (use --delete-emptydir-data to override)"
LOCAL_STORAGE_WARNING = "deleting Pods with local storage"
UNMANAGED_FATAL = "Pods declare no controller (use --force to override)"
UNMANAGED_WARNING = "deleting Pods that declare no controller"


class NodeOpError(Exception):
    """An operation that could not be done; the message is what oc prints after ``error:``."""


def _get_node(store: ObjectStore, name: str) -> Node:
    try:
        node: Node = store.get(NODE, "", name)
    except NotFound:
        raise NodeOpError(f'nodes "{name}" not found') from None
    return node


# -------------------------------------------------------------- cordon, taint, label
def cordon(store: ObjectStore, name: str, *, unschedulable: bool = True) -> str:
    """``oc adm cordon``/``uncordon``: what oc prints (``node/x cordoned``,
    ``node/x already uncordoned``)."""
    node = _get_node(store, name)
    verb = "cordoned" if unschedulable else "uncordoned"
    current = bool(node.spec is not None and node.spec.unschedulable)
    if current == unschedulable:
        return f"node/{name} already {verb}"
    new = clone(node)
    new.spec = new.spec if new.spec is not None else NodeSpec()
    new.spec.unschedulable = True if unschedulable else None
    store.update(new)
    return f"node/{name} {verb}"


def taint(store: ObjectStore, name: str, specs: list[str], *, overwrite: bool = False) -> str:
    """``oc adm taint nodes NAME key=value:Effect key:Effect-``."""
    try:
        edit = parse_taint_specs(specs)
    except NodeArgError as err:
        raise NodeOpError(str(err)) from None
    node = _get_node(store, name)
    current = list(node.spec.taints or ()) if node.spec is not None else []
    try:
        verb, taints = apply_taints(name, current, edit, overwrite=overwrite)
    except NodeArgError as err:
        raise NodeOpError(str(err)) from None
    new = clone(node)
    new.spec = new.spec if new.spec is not None else NodeSpec()
    new.spec.taints = taints or None
    store.update(new)
    return f"node/{name} {verb}"


def label(
    store: ObjectStore, name: str, specs: list[str], *, overwrite: bool = False
) -> tuple[str, list[str]]:
    """``oc label node NAME key=value key-``: (what oc prints, warnings)."""
    try:
        edit = parse_label_specs(specs)
    except NodeArgError as err:
        raise NodeOpError(str(err)) from None
    node = _get_node(store, name)
    try:
        verb, labels, warnings = apply_labels(node.metadata.labels or {}, edit, overwrite=overwrite)
    except NodeArgError as err:
        raise NodeOpError(str(err)) from None
    if verb != "not labeled":
        new = clone(node)
        new.metadata.labels = labels or None
        store.update(new)
    return f"node/{name} {verb}", warnings


def set_ready(store: ObjectStore, name: str, ready: bool, now: datetime) -> str:
    """The node's kubelet stops (NotReady) or resumes (Ready) posting a ready
    status: its Ready condition, as the node lifecycle controller sees it."""
    node = _get_node(store, name)
    status, reason, message = (
        ("True", "KubeletReady", "kubelet is posting ready status")
        if ready
        else ("False", "KubeletNotReady", "kubelet stopped posting ready status")
    )
    new = clone(node)
    st = new.status if new.status is not None else NodeStatus()
    new.status = st
    conds = [c for c in st.conditions or () if c.type != "Ready"]
    old = next((c for c in st.conditions or () if c.type == "Ready"), None)
    if old is not None and old.status == status:
        return f"node/{name} already {'Ready' if ready else 'NotReady'}"
    conds.append(
        NodeCondition(
            type="Ready",
            status=status,  # type: ignore[arg-type]
            last_heartbeat_time=now,
            last_transition_time=now,
            reason=reason,
            message=message,
        )
    )
    st.conditions = conds
    store.update_status(new)
    return f"node/{name} {'Ready' if ready else 'NotReady'}"


# ------------------------------------------------------------------------ drain
@dataclass(frozen=True, slots=True)
class DrainOptions:
    ignore_daemonsets: bool = False
    force: bool = False
    delete_emptydir_data: bool = False
    grace_period_seconds: int = -1  # -1: each pod's own terminationGracePeriodSeconds


@dataclass
class DrainPlan:
    """kubectl's ``GetPodsForDeletion``: the pods to evict, and what oc would
    print as warnings and errors (an error stops the drain)."""

    evict: list[Pod] = field(default_factory=list)
    warnings: dict[str, list[str]] = field(default_factory=dict)  # message -> ns/name
    errors: dict[str, list[str]] = field(default_factory=dict)

    def warning_text(self) -> str:
        return "; ".join(f"{msg}: {', '.join(pods)}" for msg, pods in self.warnings.items())

    def error_text(self) -> str:
        errs = [f"cannot delete {msg}: {', '.join(pods)}" for msg, pods in self.errors.items()]
        return errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"


def _has_emptydir(pod: Pod) -> bool:
    vols = (pod.spec.volumes if pod.spec is not None else None) or []
    return any(isinstance(v, dict) and "emptyDir" in v for v in vols)


def plan_drain(store: ObjectStore, pods: list[Pod], opts: DrainOptions) -> DrainPlan:
    """Run kubectl's filters, in its order, over ``pods`` (those on the node)."""
    plan = DrainPlan()
    for pod in pods:
        ref = f"{pod.metadata.namespace}/{pod.metadata.name}"
        verdict, message = _filter(store, pod, opts)
        if verdict == "error":
            plan.errors.setdefault(message, []).append(ref)
            continue
        if message:
            plan.warnings.setdefault(message, []).append(ref)
        if verdict == "evict":
            plan.evict.append(pod)
    return plan


def _filter(store: ObjectStore, pod: Pod, opts: DrainOptions) -> tuple[str, str]:
    """("evict" | "skip" | "error", message) for one pod."""
    done = is_terminal(pod)
    ref = controller_ref(pod)
    # daemonSetFilter
    if ref is not None and ref.kind == "DaemonSet" and not done:
        try:
            store.get(("apps", "DaemonSet"), pod.metadata.namespace, ref.name)
        except NotFound:
            msg = f'daemonsets.apps "{ref.name}" not found'
            return ("evict", msg) if opts.force else ("error", msg)
        if not opts.ignore_daemonsets:
            return "error", DAEMONSET_FATAL
        return "skip", DAEMONSET_WARNING
    # mirrorPodFilter
    if MIRROR_ANNOTATION in (pod.metadata.annotations or {}):
        return "skip", ""
    # localStorageFilter
    warning = ""
    if not done and _has_emptydir(pod):
        if not opts.delete_emptydir_data:
            return "error", LOCAL_STORAGE_FATAL
        warning = LOCAL_STORAGE_WARNING
    # unreplicatedFilter
    if not done and ref is None:
        if not opts.force:
            return "error", UNMANAGED_FATAL
        warning = warning or UNMANAGED_WARNING
    return "evict", warning


def pods_on(store: ObjectStore, node: str) -> list[Pod]:
    return [p for p in store.list(POD).items if p.spec is not None and p.spec.node_name == node]


def start_drain(
    store: ObjectStore, name: str, opts: DrainOptions, now: datetime
) -> tuple[str, DrainPlan]:
    """Cordon, plan and (when the plan has no error) evict: (what cordon
    printed, the plan). The node stays cordoned when the plan has errors, as
    with ``oc adm drain``."""
    cordoned = cordon(store, name)
    plan = plan_drain(store, pods_on(store, name), opts)
    if plan.errors:
        return cordoned, plan
    for pod in plan.evict:
        if not is_deleting(pod):
            evict_pod(store, pod, now, grace=opts.grace_period_seconds)
    return cordoned, plan


def still_there(store: ObjectStore, refs: list[str]) -> list[str]:
    """The evicted pods (``namespace/name``) that still exist."""
    left = []
    for ref in refs:
        ns, _, name = ref.partition("/")
        try:
            store.get(POD, ns, name)
        except NotFound:
            continue
        left.append(ref)
    return left


# ------------------------------------------------------------------ the controller
class NodeOperationController(ClusterController):
    """Performs each ``NodeOperation`` once, when it is created (a world's
    operation arrives at its creationTimestamp); a Drain stays Running until
    every evicted pod is gone or its ``timeoutSeconds`` pass. The outcome is
    the object's status: phase, oc's message, start and completion times,
    the evicted pods."""

    name = "node-operations"

    def __init__(self) -> None:
        super().__init__()
        self._ops: Informer | None = None
        self._running: set[str] = set()  # keys of Running drains

    def setup(self, mgr: Manager) -> None:
        super().setup(mgr)
        self._ops = mgr.informer(NODE_OPERATION)
        self._ops.on_change(self._on_op)
        mgr.informer(POD).on_change(self._on_pod)

    def _on_op(self, etype: EventType, op: Any, old: Any | None) -> None:
        if etype != "DELETED":
            self.mgr.enqueue(self.name, key_of(op))

    def _on_pod(self, etype: EventType, pod: Any, old: Any | None) -> None:
        if self._running and (etype == "DELETED" or is_terminal(pod)):
            for key in self._running:
                self.mgr.enqueue(self.name, key)

    def reconcile(self, key: str) -> timedelta | None:
        assert self._ops is not None
        op: NodeOperation | None = self._ops.get(key)
        if op is None or op.spec is None:
            self._running.discard(key)
            return None
        st = op.status
        phase = st.phase if st is not None else None
        if phase in ("Succeeded", "Failed"):
            self._running.discard(key)
            return None
        now = self.mgr.clock.now()
        if phase == "Running":
            self._watch_drain(key, op, now)
            return None
        try:
            self._perform(key, op, now)
        except (NodeOpError, StoreError) as err:
            self._finish(op, "Failed", f"error: {err}", now)
        return None

    def _perform(self, key: str, op: NodeOperation, now: datetime) -> None:
        spec = op.spec
        assert spec is not None
        node, what = spec.node_name, spec.operation
        if what in ("Cordon", "Uncordon"):
            self._finish(
                op, "Succeeded", cordon(self.mgr.store, node, unschedulable=what == "Cordon"), now
            )
        elif what == "Taint":
            msg = taint(
                self.mgr.store, node, list(spec.taints or ()), overwrite=bool(spec.overwrite)
            )
            self._finish(op, "Succeeded", msg, now)
        elif what == "Label":
            msg, warnings = label(
                self.mgr.store, node, list(spec.labels or ()), overwrite=bool(spec.overwrite)
            )
            self._finish(op, "Succeeded", "; ".join([*warnings, msg]), now)
        elif what in ("Ready", "NotReady"):
            self._finish(
                op, "Succeeded", set_ready(self.mgr.store, node, what == "Ready", now), now
            )
        elif what == "Drain":
            self._start_drain(key, op, now)
        else:
            raise NodeOpError(f"unknown operation {what!r}")

    def _start_drain(self, key: str, op: NodeOperation, now: datetime) -> None:
        spec = op.spec
        assert spec is not None
        opts = DrainOptions(
            ignore_daemonsets=bool(spec.ignore_daemon_sets),
            force=bool(spec.force),
            delete_emptydir_data=bool(spec.delete_empty_dir_data),
            grace_period_seconds=(
                spec.grace_period_seconds if spec.grace_period_seconds is not None else -1
            ),
        )
        cordoned, plan = start_drain(self.mgr.store, spec.node_name, opts, now)
        lines = [cordoned]
        if plan.warnings:
            lines.append(f"Warning: {plan.warning_text()}")
        if plan.errors:
            lines.append(
                f'error: unable to drain node "{spec.node_name}" due to error: {plan.error_text()}'
            )
            self._finish(op, "Failed", "; ".join(lines), now)
            return
        new = clone(op)
        new.status = NodeOperationStatus(
            phase="Running",
            message="; ".join(lines),
            start_time=now,
            evicted_pods=[f"{p.metadata.namespace}/{p.metadata.name}" for p in plan.evict] or None,
        )
        written = self.mgr.store.update_status(new)
        self._running.add(key)
        self._watch_drain(key, written, now)

    def _watch_drain(self, key: str, op: NodeOperation, now: datetime) -> None:
        st = op.status
        spec = op.spec
        assert st is not None and spec is not None
        self._running.add(key)
        left = still_there(self.mgr.store, list(st.evicted_pods or ()))
        if not left:
            done = f"node/{spec.node_name} drained"
            self._finish(op, "Succeeded", f"{st.message}; {done}" if st.message else done, now)
            return
        timeout = spec.timeout_seconds or 0
        if timeout and st.start_time is not None:
            deadline = st.start_time + timedelta(seconds=timeout)
            if now >= deadline:
                self._finish(
                    op,
                    "Failed",
                    f"{st.message}; error: drain did not complete within {timeout}s: "
                    f"{len(left)} pod(s) still terminating: {', '.join(left)}",
                    now,
                )
                return
            self.mgr.enqueue_at(self.name, key, deadline)

    def _finish(self, op: NodeOperation, phase: str, message: str, now: datetime) -> None:
        key = key_of(op)
        self._running.discard(key)
        st = clone(op.status) if op.status is not None else NodeOperationStatus()
        st.phase = phase  # type: ignore[assignment]
        st.message = message
        st.start_time = st.start_time or now
        st.completion_time = now
        new = clone(op)
        new.status = st
        self.mgr.store.update_status(new)


def _exists(store: ObjectStore, ns: str, name: str) -> bool:
    try:
        store.get(POD, ns, name)
    except NotFound:
        return False
    return True
