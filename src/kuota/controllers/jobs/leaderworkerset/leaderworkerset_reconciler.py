"""Kueue's LeaderWorkerSet reconciler (framework
``leaderworkerset.x-k8s.io/leaderworkerset``, ``pkg/controller/jobs/leaderworkerset``;
integrations.md §4; its webhooks are in ``leaderworkerset_webhook``): every
group of a LeaderWorkerSet (one replica index: a leader and its workers) is
one pod-group Workload, admitted all or nothing.

* ``LeaderWorkerSetReconciler``: one Workload per replica index, named
  ``leaderworkerset-<lws>-<i>-<hash5>`` and owned by the LWS (prebuilt: the pod
  integration finds it by name and does not build its own), podSets
  ``leader``/``worker`` (or ``main``); created on scale-up, deleted on
  scale-down; queue name, priority and admission gates kept in step. Each
  LWS pod gets the labels and annotations that make it a member of its
  group's Workload (``setDefault``); from there ``controllers.jobs.pod``
  admits the group, ungates its pods, and deletes them when it is preempted
  (the LWS operator's StatefulSets recreate them, gated). Pods of a
  StatefulSet's old revision during a rolling update, and pods whose LWS is
  gone, are ungated at once.

Keys are ``<namespace>/<lws name>``.
"""

from __future__ import annotations

import contextlib
from typing import Any, Final

from kuota.api import k8s as kc
from kuota.api.k8s.apps import CONTROLLER_REVISION_HASH
from kuota.api.kueue import types as kt
from kuota.api.kueue.config import KueueConfig
from kuota.api.kueue.webhooks import ADMISSION_GATED_BY
from kuota.api.lws import v1 as lw
from kuota.api.meta import OwnerReference
from kuota.controllers.jobframework import (
    FLAVOR,
    JOB_UID,
    LOCAL_QUEUE,
    NAMESPACE,
    PC,
    QUEUE_NAME,
    RESOURCE_IN_USE,
    WORKLOAD,
    WPC,
    extract_priority,
    new_workload,
    owner_workload_name,
    retry_on_priority_class,
    sync_workload_priority,
)
from kuota.controllers.jobs.leaderworkerset.leaderworkerset_webhook import (
    FRAMEWORK,
    GVK,
    LWS,
)
from kuota.controllers.jobs.pod import podmeta as pm
from kuota.controllers.jobs.pod.podgroup import controller_of
from kuota.controllers.multikueue_adapter import is_remote_copy, owner_uid
from kuota.controllers.parentpolicy import ParentPolicy
from kuota.quota.workload import has_quota_reservation
from kuota.runtime.informer import key_of
from kuota.runtime.manager import Manager
from kuota.store import AlreadyExists, NotFound, clone
from kuota.store.kinds import rtype_of
from kuota.store.protocol import ResourceType
from kuota.store.resources import POD, STATEFUL_SET

STATEFULSET: Final[ResourceType] = STATEFUL_SET
COMPONENT: Final = f"{FRAMEWORK}-kueue-controller"  # the events' source

# Workload annotations (pkg/controller/constants).
JOB_OWNER_GVK: Final = "kueue.x-k8s.io/job-owner-gvk"
JOB_OWNER_NAME: Final = "kueue.x-k8s.io/job-owner-name"
COMPONENT_INDEX: Final = "kueue.x-k8s.io/component-workload-index"
PROVREQ_PREFIX: Final = "provreq.kueue.x-k8s.io/"

LEADER: Final = "leader"
WORKER: Final = "worker"
MAIN: Final = "main"
_LWS_PREFIX: Final = "leaderworkerset.sigs.k8s.io"

_BY_OWNER: Final = "lws:workloads"  # workloads by the uid of the LWS owning them
_BY_SET: Final = "lws:members"  # pods and StatefulSets by "<namespace>/<lws>"


# ------------------------------------------------------------------ naming and podSets
def group_workload_name(lws_name: str, lws_uid: str, index: str) -> str:
    """GetWorkloadName: the Workload of group ``index`` (the pods'
    ``group-index`` label), ``leaderworkerset-<lws>-<index>-<hash5>``."""
    return owner_workload_name(lw.KIND, lw.API_VERSION, f"{lws_name}-{index}", lws_uid)


def lws_pod_sets(lws: lw.LeaderWorkerSet) -> list[kt.PodSet]:
    """podSets: ``leader`` (1 pod) and ``worker`` (size − 1) with a leader
    template, else ``main`` (size), each with its template less the LWS
    operator's own labels and annotations."""
    assert lws.spec is not None
    lwt = lws.spec.leader_worker_template
    out: list[kt.PodSet] = []
    name, count = MAIN, lwt.size
    if lwt.leader_template is not None:
        out.append(_pod_set(LEADER, 1, lwt.leader_template))
        name, count = WORKER, count - 1
    out.append(_pod_set(name, count, lwt.worker_template))
    return out


def _pod_set(name: str, count: int, template: kc.PodTemplateSpec) -> kt.PodSet:
    t = clone(template)
    m = t.metadata
    m.labels = _without_lws_keys(m.labels)
    m.annotations = _without_lws_keys(m.annotations)
    if t.spec is not None:  # SanitizePodSet: one env var per name, the last one's value
        for c in [*t.spec.containers, *(t.spec.init_containers or ())]:
            c.env = _dedup_env(c.env)
    return kt.PodSet(name=name, count=count, template=t)


def _without_lws_keys(values: dict[str, str] | None) -> dict[str, str] | None:
    if not values:
        return values
    kept = {
        k: v for k, v in values.items() if not k.startswith(_LWS_PREFIX) or k == lw.SET_NAME_LABEL
    }
    return kept or None


def _dedup_env(env: list[Any] | None) -> list[Any] | None:
    if not env:
        return env
    last: dict[Any, Any] = {}
    for v in env:  # a dict keeps a key's first place and takes its last value
        last[v.get("name") if isinstance(v, dict) else id(v)] = v
    return list(last.values())


def _surging(lws: lw.LeaderWorkerSet) -> bool:
    """isRollingUpdateWithSurge: a rolling update with maxSurge > 0 is under
    way. maxSurge is read as Go's IntOrString.IntValue: a percent reads 0."""
    assert lws.spec is not None
    ruc = lws.spec.rollout_strategy.rolling_update_configuration
    if ruc is None:
        return False
    surge = ruc.max_surge
    if isinstance(surge, str):
        surge = int(surge) if surge.isdigit() else 0
    updated = lws.status.updated_replicas if lws.status is not None else 0
    return surge > 0 and updated < lws.spec.replicas


# ------------------------------------------------------------------ reconciler
class LeaderWorkerSetReconciler:
    """Kueue's LeaderWorkerSet reconciler over the store."""

    name = "job:leaderworkerset.x-k8s.io/LeaderWorkerSet"

    def __init__(self, config: KueueConfig, parents: ParentPolicy) -> None:
        """``parents``: which LeaderWorkerSets Kueue manages (shared with the
        webhooks and the Deployment and StatefulSet integrations)."""
        self.parents = parents
        self.ids = config.gate("WorkloadIdentifierAnnotations")
        self.gated_by = config.gate("AdmissionGatedBy")
        self.label_keys = tuple(config.integrations.label_keys_to_copy)
        self.mgr: Manager | None = None

    # -------------------------------------------------------------- wiring
    def setup(self, mgr: Manager) -> None:
        self.mgr = mgr
        mgr.informer(LWS).on_change(self._lws_changed)
        wls = mgr.informer(WORKLOAD)
        wls.add_index(_BY_OWNER, _lws_owner_uids)
        wls.on_change(self._workload_changed)
        pods = mgr.informer(POD)
        pods.add_index(_BY_SET, _member_of)
        pods.on_change(self._pod_changed)
        sets = mgr.informer(STATEFULSET)
        sets.add_index(_BY_SET, _member_of)
        sets.on_change(self._statefulset_changed)
        for rt in (NAMESPACE, LOCAL_QUEUE, WPC, PC, FLAVOR):
            mgr.informer(rt)
        retry_on_priority_class(mgr, LWS, self.name)

    def _lws_changed(self, etype: str, obj: Any, old: Any | None) -> None:
        if etype != "DELETED":  # a deleted LWS's Workloads go with it (garbage collection)
            self._mgr().enqueue(self.name, key_of(obj))

    def _workload_changed(self, etype: str, wl: Any, old: Any | None) -> None:
        # Deleted ones too: a group's Workload deleted by hand is made again.
        for ref in wl.metadata.owner_references or ():
            if _is_lws_ref(ref):
                self._mgr().enqueue(self.name, f"{wl.metadata.namespace}/{ref.name}")
                return

    def _pod_changed(self, etype: str, pod: Any, old: Any | None) -> None:
        if etype == "DELETED" or pm.annotation(pod, pm.SUSPENDING_PARENT) != FRAMEWORK:
            return
        for key in _member_of(pod):
            self._mgr().enqueue(self.name, key)

    def _statefulset_changed(self, etype: str, sts: Any, old: Any | None) -> None:
        # A rolling update started: the old revision's pods may be ungated.
        st = sts.status
        if etype != "MODIFIED" or st is None or not st.current_revision:
            return
        if not st.update_revision or st.current_revision == st.update_revision:
            return
        tmpl = sts.spec.template.metadata if sts.spec is not None else None
        if tmpl is None or (tmpl.annotations or {}).get(pm.SUSPENDING_PARENT) != FRAMEWORK:
            return
        for key in _member_of(sts):
            self._mgr().enqueue(self.name, key)

    # -------------------------------------------------------------- reconcile
    def reconcile(self, key: str) -> None:
        mgr = self._mgr()
        lws: lw.LeaderWorkerSet | None = mgr.informer(LWS).get(key)
        if lws is not None:
            if lws.spec is None or not self.parents.should_suspend(lws, tolerate_deleting=False):
                return None  # not Kueue's
            self._reconcile_workloads(lws)
        # After the Workloads: a pod joins a group whose Workload exists.
        self._reconcile_pods(key, lws)
        return None

    # -------------------------------------------------------------- workloads
    def _reconcile_workloads(self, lws: lw.LeaderWorkerSet) -> None:
        """One Workload per group index in [0, replicas) (the surge replicas
        too, while a rolling update with maxSurge runs); the others deleted."""
        assert lws.spec is not None
        m = lws.metadata
        existing = {
            w.metadata.name: w for w in self._mgr().informer(WORKLOAD).by_index(_BY_OWNER, m.uid)
        }
        count = lws.spec.replicas
        have = lws.status.replicas if lws.status is not None else 0
        if have > count and _surging(lws):
            count = have
        remote = is_remote_copy(lws)  # a MultiKueue worker's: its Workloads are dispatched
        uid = owner_uid(lws)
        for i in range(count):
            name = group_workload_name(m.name, uid, str(i))
            wl = existing.pop(name, None)
            if wl is not None:
                self._update_workload(lws, wl)
            elif not remote:
                self._create_workload(lws, name, i)
        for wl in existing.values():
            self._delete_workload(wl)

    def _create_workload(self, lws: lw.LeaderWorkerSet, name: str, index: int) -> None:
        mgr = self._mgr()
        m = lws.metadata
        pod_sets = lws_pod_sets(lws)
        ref, priority = extract_priority(mgr, lws, pod_sets, COMPONENT)
        if ref is False:
            return  # the named WorkloadPriorityClass does not exist (event recorded)
        labels = {k: v for k, v in (m.labels or {}).items() if k in self.label_keys}
        labels[JOB_UID] = m.uid
        ann = m.annotations or {}
        annotations = {k: v for k, v in ann.items() if k.startswith(PROVREQ_PREFIX)}
        annotations[pm.IS_GROUP_WORKLOAD] = "true"
        annotations[JOB_OWNER_GVK] = GVK
        annotations[JOB_OWNER_NAME] = m.name
        annotations[COMPONENT_INDEX] = str(index)
        if self.gated_by and ann.get(ADMISSION_GATED_BY):
            annotations[ADMISSION_GATED_BY] = ann[ADMISSION_GATED_BY]
        # An owner, not the controller: the group's pods own it too, and the
        # pod integration takes a controlled Workload for another object's.
        owner = OwnerReference(api_version=lws.api_version, kind=lws.kind, name=m.name, uid=m.uid)
        wl = new_workload(name, lws, pod_sets, labels, [owner], ref, priority, annotations)
        try:
            mgr.store.create(wl)
        except AlreadyExists:
            return  # made by the previous reconcile; the informer has not seen it yet
        self._event(lws, "Normal", "CreatedWorkload", f"Created Workload: {key_of(wl)}")

    def _update_workload(self, lws: lw.LeaderWorkerSet, wl: kt.Workload) -> None:
        """updateWorkload: the LWS's queue name, admission gates and priority."""
        mgr = self._mgr()
        cur = self._fresh(wl)
        if cur is None:
            return
        new = clone(cur)
        if not has_quota_reservation(cur):
            # (The Workload's own rule: its queue is fixed while it holds quota.
            # Kueue would retry the refused write until the quota is released.)
            new.spec.queue_name = (lws.metadata.labels or {}).get(QUEUE_NAME) or None
        gate = (lws.metadata.annotations or {}).get(ADMISSION_GATED_BY, "")
        ann = dict(new.metadata.annotations or {})
        gate_changed = self.gated_by and ann.get(ADMISSION_GATED_BY, "") != gate
        if gate_changed:
            if gate:
                ann[ADMISSION_GATED_BY] = gate
            else:
                ann.pop(ADMISSION_GATED_BY, None)
            new.metadata.annotations = ann or None
        if new != cur:
            cur = mgr.store.update(new)
        if gate_changed:
            msg = f'Updated workload AdmissionGatedBy to "{gate}"'
            self._event(lws, "Normal", "UpdatedWorkload", msg)
        sync_workload_priority(mgr, lws, cur, COMPONENT)

    def _delete_workload(self, wl: kt.Workload) -> None:
        """workload.Delete: let go of the finalizer, then delete."""
        store = self._mgr().store
        cur = self._fresh(wl)
        if cur is None:
            return
        if RESOURCE_IN_USE in (cur.metadata.finalizers or ()):
            new = clone(cur)
            new.metadata.finalizers = [
                f for f in new.metadata.finalizers or () if f != RESOURCE_IN_USE
            ] or None
            store.update(new)  # (one being deleted goes with its last finalizer)
        if cur.metadata.deletion_timestamp is None:
            with contextlib.suppress(NotFound):
                store.delete(WORKLOAD, cur.metadata.namespace, cur.metadata.name)

    # -------------------------------------------------------------- pods
    def _reconcile_pods(self, key: str, lws: lw.LeaderWorkerSet | None) -> None:
        mgr = self._mgr()
        sets = {s.metadata.name: s for s in mgr.informer(STATEFULSET).by_index(_BY_SET, key)}
        for pod in mgr.informer(POD).by_index(_BY_SET, key):
            ref = controller_of(pod)
            sts = sets.get(ref.name) if ref is not None else None
            if lws is None or should_ungate(sts, pod):
                self._ungate(pod)
            elif not pm.is_terminated(pod) and pod.metadata.deletion_timestamp is None:
                self._set_default(lws, pod)

    def _ungate(self, pod: kc.Pod) -> None:
        if not _kueue_gated(pod):
            return
        cur = self._fresh(pod)
        if cur is None or not _kueue_gated(cur):
            return
        new = clone(cur)
        assert new.spec is not None
        pm.ungate(new.spec, pm.SCHEDULING_GATE, pm.TOPOLOGY_GATE)
        self._mgr().store.update(new)

    def _set_default(self, lws: lw.LeaderWorkerSet, pod: kc.Pod) -> None:
        """setDefault: the pod joins its group's Workload (managed, the group
        and prebuilt Workload name, the group size, its role)."""
        if with_group_defaults(lws, pod, ids=self.ids) is None:
            return  # (as the informer has it: most pods need nothing)
        cur = self._fresh(pod)
        new = with_group_defaults(lws, cur, ids=self.ids) if cur is not None else None
        if new is not None:
            self._mgr().store.update(new)

    # -------------------------------------------------------------- helpers
    def _fresh(self, obj: Any) -> Any | None:
        """The stored object: this reconcile may have written it already."""
        m = obj.metadata
        try:
            return self._mgr().store.get(rtype_of(obj), m.namespace, m.name)
        except NotFound:
            return None

    def _event(self, obj: Any, etype: Any, reason: str, message: str) -> None:
        self._mgr().recorder.event(obj, etype, reason, message, COMPONENT)

    def _mgr(self) -> Manager:
        assert self.mgr is not None, "setup() first"
        return self.mgr


def with_group_defaults(lws: lw.LeaderWorkerSet, pod: kc.Pod, *, ids: bool) -> kc.Pod | None:
    """setDefault on a copy of ``pod``; None when it needs no change. A pod
    already managed only takes the LWS's queue name while gated; one without
    its group index (not yet through the LWS pod webhook) waits."""
    assert lws.spec is not None
    m = pod.metadata
    labels = m.labels or {}
    queue = (lws.metadata.labels or {}).get(QUEUE_NAME, "")
    if pm.MANAGED in labels:
        if queue and pm.is_gated(pod) and labels.get(QUEUE_NAME) != queue:
            new = clone(pod)
            new.metadata.labels = {**labels, QUEUE_NAME: queue}
            return new
        return None
    index = labels.get(lw.GROUP_INDEX_LABEL)
    if index is None:
        return None
    name = group_workload_name(lws.metadata.name, owner_uid(lws), index)
    new = clone(pod)
    nl = dict(labels)
    ann = dict(m.annotations or {})
    nl[pm.MANAGED] = pm.MANAGED_VALUE
    if queue and pm.is_gated(pod):
        nl[QUEUE_NAME] = queue
    if ids:  # SetPodGroupName, SetPrebuiltWorkloadName
        ann[pm.GROUP_NAME] = name
    else:
        nl[pm.GROUP_NAME] = name
    if ids or len(name) > pm.LABEL_VALUE_MAX:
        ann[pm.PREBUILT_WORKLOAD] = name
    else:
        nl[pm.PREBUILT_WORKLOAD] = name
    lwt = lws.spec.leader_worker_template
    ann[pm.TOTAL_COUNT] = str(lwt.size)
    role = MAIN
    if lwt.leader_template is not None:
        role = WORKER if lw.LEADER_NAME_ANNOTATION in ann else LEADER
    ann[pm.ROLE_HASH] = role
    new.metadata.labels = nl
    new.metadata.annotations = ann
    return new


def should_ungate(sts: Any | None, pod: kc.Pod) -> bool:
    """ShouldUngatePod: no StatefulSet of the LWS controls the pod, or the pod
    is of its current revision while a rolling update moves it to another
    (the old revision's pods run as they did, without new admission)."""
    if sts is None:
        return True
    st = sts.status
    if st is None or st.current_revision == st.update_revision:
        return False
    return bool(st.current_revision == (pod.metadata.labels or {}).get(CONTROLLER_REVISION_HASH))


def _kueue_gated(pod: kc.Pod) -> bool:
    gates = pod.spec.scheduling_gates if pod.spec is not None else None
    return any(g.name in (pm.SCHEDULING_GATE, pm.TOPOLOGY_GATE) for g in gates or ())


def _is_lws_ref(ref: OwnerReference) -> bool:
    return ref.kind == lw.KIND and ref.api_version.partition("/")[0] == lw.GROUP


def _lws_owner_uids(wl: Any) -> list[str]:
    return [r.uid for r in wl.metadata.owner_references or () if _is_lws_ref(r)]


def _member_of(obj: Any) -> list[str]:
    name = (obj.metadata.labels or {}).get(lw.SET_NAME_LABEL)
    return [f"{obj.metadata.namespace}/{name}"] if name else []
