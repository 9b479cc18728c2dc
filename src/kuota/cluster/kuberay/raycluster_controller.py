"""KubeRay's RayCluster controller (``ray-operator/controllers/ray/
raycluster_controller.go``) in the embedded cluster: per RayCluster, one
head pod and, per worker group, its desired workers (``replicas`` kept
within ``minReplicas``..``maxReplicas``, times ``numOfHosts``), labelled as
KubeRay labels them; a terminated pod is deleted and made again. Suspended
(``spec.suspend``, as Kueue suspends it), it has no pods and its state is
``suspended``; once every pod runs and is ready its state is ``ready``. The
status counts the workers and sums the pods' requests (CPU, memory, GPU,
TPU). A spec KubeRay's checks refuse gets a Warning event and no pods.

Not modelled: the head Service, the autoscaler (replicas only change when
someone changes them), GCS fault tolerance's Redis cleanup job, ingress and
network policies."""

from __future__ import annotations

import contextlib
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Final

import msgspec

from kuota.api.base import Quantity
from kuota.api.meta import Condition
from kuota.api.ray import kuberay_rules as rules
from kuota.api.ray import ray_types as r
from kuota.cluster.controllers.appsutil import pod_from_template
from kuota.cluster.controllers.controller_base import ClusterController
from kuota.cluster.podutil import POD, controller_ref, is_deleting, is_pod_ready, pod_phase
from kuota.runtime.informer import Informer, key_of
from kuota.store import AlreadyExists, Conflict, NotFound, clone
from kuota.store.protocol import EventType
from kuota.store.resources import RAY_CLUSTER

if TYPE_CHECKING:
    from kuota.api.k8s import PodTemplateSpec
    from kuota.runtime.manager import Manager

__all__ = ["RayClusterController", "desired_workers"]

COMPONENT: Final = "raycluster-controller"
_BY_CLUSTER: Final = "kuberay:cluster"
_HEAD_GROUP: Final = "headgroup"  # RayNodeHeadGroupLabelValue
_GPU: Final = "nvidia.com/gpu"
_TPU: Final = "google.com/tpu"


def _cluster_uid(pod: Any) -> list[str]:
    ref = controller_ref(pod)
    return [ref.uid] if ref is not None and ref.kind == "RayCluster" else []


def desired_workers(wg: r.WorkerGroupSpec) -> int:
    """GetWorkerGroupDesiredReplicas: replicas (minReplicas when unset) kept
    within min..max, times numOfHosts; none while the group is suspended."""
    if wg.suspend:
        return 0
    lo = wg.min_replicas or 0
    hi = wg.max_replicas if wg.max_replicas is not None else r.MAX_INT32
    n = wg.replicas if wg.replicas is not None else lo
    n = max(min(n, hi), lo) if lo <= hi else n
    return n * max(wg.num_of_hosts or 1, 1)


def _requests(template: PodTemplateSpec) -> dict[str, Quantity]:
    """A pod's requests (a container's limits where it requests nothing)."""
    out: dict[str, Quantity] = {}
    for c in template.spec.containers if template.spec is not None else ():
        res = c.resources
        want = dict((res.limits or {}) if res else {})
        want.update((res.requests or {}) if res else {})
        for k, q in want.items():
            out[k] = out[k] + q if k in out else q
    return out


class RayClusterController(ClusterController):
    """Reads RayClusters and Pods; writes pods and RayCluster status."""

    name = "kuberay-raycluster"
    component = COMPONENT

    def __init__(self) -> None:
        super().__init__()
        self._clusters: Informer | None = None
        self._pods: Informer | None = None

    def setup(self, mgr: Manager) -> None:
        super().setup(mgr)
        self._clusters = mgr.informer(RAY_CLUSTER)
        self._clusters.on_change(self._on_cluster)
        self._pods = mgr.informer(POD)
        self._pods.add_index(_BY_CLUSTER, _cluster_uid)
        self._pods.on_change(self._on_pod)

    def _on_cluster(self, etype: EventType, rc: Any, old: Any | None) -> None:
        if etype != "DELETED":
            self.mgr.enqueue(self.name, key_of(rc))

    def _on_pod(self, etype: EventType, pod: Any, old: Any | None) -> None:
        ref = controller_ref(pod)
        if ref is not None and ref.kind == "RayCluster":
            self.mgr.enqueue(self.name, f"{pod.metadata.namespace}/{ref.name}")

    # ------------------------------------------------------------ reconcile
    def reconcile(self, key: str) -> timedelta | None:
        assert self._clusters is not None and self._pods is not None
        rc: r.RayCluster | None = self._clusters.get(key)
        if rc is None or is_deleting(rc):
            return None
        if rc.spec.managed_by not in (None, r.OPERATOR):
            return None  # another controller's (MultiKueue)
        err = rules.cluster_metadata_error(rc.metadata.name) or rules.cluster_spec_error(rc.spec)
        if err:
            self.event(rc, "Warning", "InvalidRayClusterSpec", f"{key}: {err}")
            return None
        pods = [p for p in self._pods.by_index(_BY_CLUSTER, rc.metadata.uid) if not is_deleting(p)]
        st = clone(rc.status) if rc.status is not None else r.RayClusterStatus()
        now = self.mgr.clock.now()
        if rc.spec.suspend:
            self._delete(pods)
            self._state(st, "suspended", now)
            self._condition(st, "RayClusterSuspended", "True", "RayClusterSuspended", "", now)
            st.head = None
            st.ready_worker_replicas = st.available_worker_replicas = 0
        else:
            self._condition(st, "RayClusterSuspended", "False", "RayClusterResumed", "", now)
            pods = self._sync_pods(rc, pods)
            self._count(rc, pods, st, now)
        self._desired(rc, st)
        st.observed_generation = rc.metadata.generation or None
        if st != (rc.status or r.RayClusterStatus()):
            st.last_update_time = now
            with contextlib.suppress(NotFound, Conflict):
                self.mgr.store.update_status(msgspec.structs.replace(rc, status=st))
        return None

    def _sync_pods(self, rc: r.RayCluster, pods: list[Any]) -> list[Any]:
        """reconcilePods: terminated pods go; the head and each group's
        missing workers are made; a group's excess workers go, newest first."""
        live = []
        for p in pods:
            if pod_phase(p) in ("Succeeded", "Failed"):
                self._delete([p])
            else:
                live.append(p)
        by_group: dict[str, list[Any]] = {}
        for p in live:
            by_group.setdefault((p.metadata.labels or {}).get(r.GROUP_LABEL, ""), []).append(p)
        heads = by_group.get(_HEAD_GROUP, [])
        if not heads:
            self._create(rc, rc.spec.head_group_spec.template, "head", _HEAD_GROUP)
        for wg in rc.spec.worker_group_specs or ():
            have = sorted(
                by_group.get(wg.group_name, []),
                key=lambda p: (p.metadata.creation_timestamp or 0, p.metadata.name),
            )
            want = desired_workers(wg)
            for _ in range(want - len(have)):
                self._create(rc, wg.template, "worker", wg.group_name)
            if len(have) > want:
                doomed = (
                    set(wg.scale_strategy.workers_to_delete or ()) if wg.scale_strategy else set()
                )
                first = [p for p in have if p.metadata.name in doomed]
                rest = [p for p in reversed(have) if p.metadata.name not in doomed]
                self._delete((first + rest)[: len(have) - want])
        return live

    def _count(self, rc: r.RayCluster, pods: list[Any], st: r.RayClusterStatus, now: Any) -> None:
        head = next(
            (p for p in pods if (p.metadata.labels or {}).get(r.NODE_TYPE_LABEL) == "head"), None
        )
        workers = [p for p in pods if (p.metadata.labels or {}).get(r.NODE_TYPE_LABEL) == "worker"]
        ready = sum(1 for p in workers if pod_phase(p) == "Running" and is_pod_ready(p))
        st.ready_worker_replicas = ready
        st.available_worker_replicas = sum(1 for p in workers if pod_phase(p) == "Running")
        head_ready = head is not None and pod_phase(head) == "Running" and is_pod_ready(head)
        st.head = r.HeadInfo(pod_name=head.metadata.name) if head is not None else None
        self._condition(
            st,
            "HeadPodReady",
            "True" if head_ready else "False",
            "HeadPodRunningAndReady" if head_ready else "HeadPodNotFound",
            "",
            now,
        )
        want = sum(desired_workers(wg) for wg in rc.spec.worker_group_specs or ())
        if head_ready and ready >= want:
            self._condition(
                st, "RayClusterProvisioned", "True", "AllPodRunningAndReadyFirstTime", "", now
            )
            self._state(st, "ready", now)
        else:
            if not any(
                c.type == "RayClusterProvisioned" and c.status == "True"
                for c in st.conditions or ()
            ):
                self._condition(
                    st, "RayClusterProvisioned", "False", "RayClusterPodsProvisioning", "", now
                )
            if st.state in ("suspended", "ready"):
                self._state(st, None, now)

    def _desired(self, rc: r.RayCluster, st: r.RayClusterStatus) -> None:
        """The desired workers and resources, as ``kubectl get raycluster`` shows them."""
        groups = rc.spec.worker_group_specs or ()
        st.desired_worker_replicas = sum(desired_workers(wg) for wg in groups)
        st.min_worker_replicas = sum(
            (wg.min_replicas or 0) * max(wg.num_of_hosts or 1, 1) for wg in groups
        )
        st.max_worker_replicas = sum(
            (wg.max_replicas if wg.max_replicas is not None else 0) * max(wg.num_of_hosts or 1, 1)
            for wg in groups
        )
        total = _requests(rc.spec.head_group_spec.template)
        for wg in groups:
            n = desired_workers(wg)
            for k, q in _requests(wg.template).items():
                add = Quantity.from_milli(q.milli_value() * n)
                total[k] = total[k] + add if k in total else add
        zero = Quantity.parse("0")
        st.desired_cpu = total.get("cpu", zero)
        st.desired_memory = total.get("memory", zero)
        st.desired_gpu = total.get(_GPU, zero)
        st.desired_tpu = total.get(_TPU, zero)

    @staticmethod
    def _state(st: r.RayClusterStatus, state: Any, now: Any) -> None:
        if st.state == state:
            return
        st.state = state
        if state:
            st.state_transition_times = {**(st.state_transition_times or {}), state: now}

    @staticmethod
    def _condition(
        st: r.RayClusterStatus, ctype: str, status: str, reason: str, message: str, now: Any
    ) -> None:
        conds = list(st.conditions or ())
        old = next((c for c in conds if c.type == ctype), None)
        if old is not None and old.status == status and old.reason == reason:
            return
        if old is None and status == "False" and ctype == "RayClusterSuspended":
            return  # never suspended: no condition to clear
        new = Condition(
            type=ctype,
            status=status,  # type: ignore[arg-type]
            reason=reason,
            message=message,
            last_transition_time=now
            if old is None or old.status != status
            else old.last_transition_time,
        )
        st.conditions = [c for c in conds if c.type != ctype] + [new]

    # ------------------------------------------------------------ writes
    def _create(self, rc: r.RayCluster, template: PodTemplateSpec, node: str, group: str) -> None:
        labels = {
            r.CLUSTER_LABEL: rc.metadata.name,
            r.NODE_TYPE_LABEL: node,
            r.GROUP_LABEL: group,
            r.IS_HEAD_LABEL: "yes",
            "app.kubernetes.io/name": "kuberay",
            "app.kubernetes.io/created-by": "kuberay-operator",
        }
        for k in (r.ORIGINATED_FROM_CR_LABEL, r.ORIGINATED_FROM_NAME_LABEL):
            v = (rc.metadata.labels or {}).get(k)
            if v:
                labels[k] = v
        prefix = (
            f"{rc.metadata.name}-head-"
            if node == "head"
            else (f"{rc.metadata.name}-{group}-worker-")
        )
        pod = pod_from_template(template, rc, generate_name=prefix, labels=labels)
        try:
            self.mgr.store.create(pod)
        except AlreadyExists:
            return
        except Exception as err:  # refused by an admission rule: said as KubeRay says it
            self.event(
                rc,
                "Warning",
                "FailedToCreateWorkerPod" if node == "worker" else ("FailedToCreateHeadPod"),
                f"Failed to create {node} Pod: {err}",
            )

    def _delete(self, pods: list[Any]) -> None:
        for p in pods:
            if not is_deleting(p):
                with contextlib.suppress(NotFound, Conflict):
                    self.mgr.store.delete(POD, p.metadata.namespace, p.metadata.name)
