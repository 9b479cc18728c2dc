"""What the pod integration writes on pods: the admission's placement and the
gate's removal (start), TerminationTarget and deletion (stop), the excess
pods' deletion, and the release of Kueue's finalizer. Each write reads the
stored pod first: one reconcile may write a pod twice, and the informer
learns of the first write only after the reconcile."""

from __future__ import annotations

from typing import Any, Final

from kuota.api import k8s as kc
from kuota.api.kueue import types as kt
from kuota.api.kueue.config import KueueConfig
from kuota.controllers.jobframework import PodSetInfo, finish_workload, pod_set_infos
from kuota.controllers.jobs.pod import podmeta as pm
from kuota.controllers.jobs.pod.podgroup import PodJob, with_termination_target
from kuota.runtime.manager import Manager
from kuota.store import Conflict, NotFound, clone
from kuota.store.resources import POD

COMPONENT: Final = "pod-kueue-controller"  # the events' source
WORKLOAD_DELETED: Final = "WorkloadDeleted"  # the stop reason that stops even ended pods


class PodWriter:
    """The pod integration's writes, through the manager's store."""

    def __init__(self, mgr: Manager, config: KueueConfig) -> None:
        self.mgr = mgr
        self.config = config  # (its gates decide what admitted pods carry)

    def start(self, job: PodJob, wl: kt.Workload) -> None:
        """Run: every gated pod gets its podSet's placement and loses the gate."""
        mgr = self.mgr
        infos = {i.name: i for i in pod_set_infos(mgr, wl, self.config)}
        adm = wl.status.admission if wl.status else None
        msg = f"Admitted by clusterQueue {adm.cluster_queue if adm else ''}"
        for pod in job.pods:
            if not pm.is_gated(pod):
                continue
            cur = self.fresh(pod)
            if cur is None or not pm.is_gated(cur):
                continue
            role = pm.role_hash(cur) if job.is_group else "main"
            info = infos.get(role)
            try:
                if info is None:
                    raise ValueError(
                        f"invalid podset infos: podSetInfo with the name '{role}' is not found"
                    )
                started = prepared(cur, info)
            except ValueError as err:
                # A permanent error: nothing to retry (FailedToStart).
                finish_workload(mgr, wl, "FailedToStart", str(err))
                return
            mgr.store.update(started)
            self.event(cur, "Normal", "Started", msg)

    def stop(self, job: PodJob, reason: str, message: str) -> None:
        """Stop: each running pod (every pod, when the Workload is deleted) gets
        TerminationTarget=True and is deleted."""
        mgr = self.mgr
        now = mgr.clock.now()
        for pod in job.pods:
            cur = self.fresh(pod)
            if cur is None or cur.metadata.deletion_timestamp is not None:
                continue
            if reason != WORKLOAD_DELETED and pm.is_suspended(cur):
                continue
            try:
                mgr.store.update_status(with_termination_target(cur, reason, message, now))
                mgr.store.delete(POD, cur.metadata.namespace, cur.metadata.name)
            except NotFound:
                continue
            self.event(cur, "Normal", "Stopped", message)
        if job.is_group and reason == WORKLOAD_DELETED:
            self.finalize_pods(job.pods)

    def remove_excess(self, pods: list[kc.Pod]) -> None:
        """Pods beyond a role's count: let go and deleted."""
        for pod in pods:
            self.finalize_pods([pod])
            if pod.metadata.deletion_timestamp is not None:
                continue
            try:
                self.mgr.store.delete(POD, pod.metadata.namespace, pod.metadata.name)
            except NotFound:
                continue
            self.event(pod, "Normal", "ExcessPodDeleted", "Excess pod deleted")

    def finalize_pods(self, pods: list[kc.Pod]) -> None:
        """Remove Kueue's finalizer from the pods (Finalize)."""
        store = self.mgr.store
        for pod in pods:
            if not pm.has_finalizer(pod):
                continue
            for _ in range(3):  # RemoveFinalizersWithStrictPatch: retry on conflict
                try:
                    cur = store.get(POD, pod.metadata.namespace, pod.metadata.name)
                except NotFound:
                    break
                if not pm.has_finalizer(cur):
                    break
                new = clone(cur)
                new.metadata.finalizers = [
                    f for f in new.metadata.finalizers or () if f != pm.MANAGED
                ] or None
                try:
                    store.update(new)
                except NotFound:
                    break
                except Conflict:
                    continue
                break

    def fresh(self, pod: kc.Pod) -> kc.Pod | None:
        """The stored pod: this reconcile may have written it already, and the
        informer learns of that only after the reconcile."""
        try:
            got: kc.Pod = self.mgr.store.get(POD, pod.metadata.namespace, pod.metadata.name)
        except NotFound:
            return None
        return got

    def update(self, obj: Any) -> Any | None:
        try:
            return self.mgr.store.update(obj)
        except NotFound:
            return None

    def event(self, obj: Any, etype: Any, reason: str, message: str) -> None:
        self.mgr.recorder.event(obj, etype, reason, message, COMPONENT)


def prepared(pod: kc.Pod, info: PodSetInfo) -> kc.Pod:
    """prepare: podset.Merge of the admission's placement into the pod, then
    the admission gate (and the topology gate, with no topology assignment:
    with one, the topology ungater lifts it with the pod's domain) removed. A key the pod already has with another value is a permanent
    error (ValueError with Kueue's message)."""
    new = clone(pod)
    m = new.metadata
    spec = new.spec
    assert spec is not None
    for what, have, want in (
        ("labels", m.labels or {}, info.labels),
        ("nodeSelector", spec.node_selector or {}, info.node_selector),
    ):
        for k in sorted(have):
            if k in want and want[k] != have[k]:
                raise ValueError(
                    f"invalid admission check PodSetUpdate: conflict for {what}: "
                    f"conflict for key={k}, value1={have[k]}, value2={want[k]}"
                )
    m.labels = {**(m.labels or {}), **info.labels} or None
    spec.node_selector = {**(spec.node_selector or {}), **info.node_selector} or None
    tolerations = list(spec.tolerations or ())
    tolerations += [t for t in info.tolerations if t not in tolerations]
    spec.tolerations = tolerations or None
    if info.annotations:
        m.annotations = {**(m.annotations or {}), **info.annotations}
    if pm.TOPOLOGY_GATE in info.scheduling_gates:
        pm.ungate(spec, pm.SCHEDULING_GATE)
    else:
        pm.ungate(spec, pm.SCHEDULING_GATE, pm.TOPOLOGY_GATE)
    return new
