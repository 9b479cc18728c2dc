"""Kueue's StatefulSet reconcilers (framework ``statefulset``,
``pkg/controller/jobs/statefulset``; integrations.md §3; its webhooks are in
``statefulset_webhook``): a StatefulSet is one pod group, admitted all or
nothing through one prebuilt Workload.

* ``StatefulSetReconciler`` creates the Workload ``statefulset-<name>-<hash5>``
  (podSet ``main``, ``replicas`` pods of the set's pod spec, owned by the set),
  keeps its queue and WorkloadPriorityClass in step, puts it on hold when the
  set is scaled to 0 (QuotaReserved=False, reason ``OnHold``: quota released,
  not requeued) and off hold when it is scaled up again; during a rolling
  update it ungates pods of the current (old) revision at once.
* ``StatefulSetPodReconciler`` labels each pod of the set as a member of the
  group (managed, queue, priority class, group = prebuilt Workload, total
  count = replicas, fast admission, serving, role ``main``); the pod
  integration then admits the group, ungates every pod with the flavor's
  placement, and stops (deletes) all of them on preemption, after which the
  StatefulSet controller recreates them gated.

Deleting the StatefulSet deletes its pods and, with its last owner, the
Workload (garbage collection)."""

from __future__ import annotations

import contextlib
from typing import Any, Final

from kuota.api import k8s as kc
from kuota.api.k8s.apps import CONTROLLER_REVISION_HASH, POD_INDEX, StatefulSet
from kuota.api.kueue import types as kt
from kuota.api.kueue.config import KueueConfig
from kuota.api.kueue.webhooks import ADMISSION_GATED_BY
from kuota.api.meta import OwnerReference
from kuota.controllers.jobframework import (
    JOB_UID,
    PRIORITY_CLASS,
    QUEUE_NAME,
    WORKLOAD,
    extract_priority,
    new_workload,
    retry_on_priority_class,
    sync_workload_priority,
    unset_quota_reservation,
)
from kuota.controllers.jobs.pod import podmeta as pm
from kuota.controllers.jobs.pod.podgroup import controller_of
from kuota.controllers.jobs.statefulset.statefulset_webhook import (
    API_VERSION,
    FRAMEWORK,
    KIND,
    ON_HOLD,
    STATEFULSET,
    find_workload,
    is_on_hold,
    managed_by_another_framework,
    workload_name,
)
from kuota.controllers.multikueue_adapter import is_remote_copy
from kuota.controllers.parentpolicy import ParentPolicy
from kuota.quota.workload import (
    has_quota_reservation,
    is_admitted,
    is_evicted,
    is_finished,
)
from kuota.runtime.informer import key_of
from kuota.runtime.manager import Manager
from kuota.store import AlreadyExists, Conflict, Invalid, NotFound, clone
from kuota.store.protocol import EventType, group_of
from kuota.store.resources import POD

GVK: Final = "apps/v1, Kind=StatefulSet"  # schema.GroupVersionKind.String()
JOB_OWNER_GVK: Final = "kueue.x-k8s.io/job-owner-gvk"
JOB_OWNER_NAME: Final = "kueue.x-k8s.io/job-owner-name"
POD_INDEX_LABEL: Final = "kueue.x-k8s.io/pod-group-pod-index-label"
PROVREQ_PREFIX: Final = "provreq.kueue.x-k8s.io/"
POD_SET: Final = "main"
COMPONENT: Final = "statefulset-kueue-controller"  # the events' source

_BY_SET: Final = "statefulset:pods"  # pods by "<namespace>/<controlling StatefulSet>"


# ------------------------------------------------------------------ the set's pods
def should_ungate(sts: Any, pod: Any) -> bool:
    """ShouldUngatePod: during a rolling update, a pod of the current (old)
    revision runs without waiting for admission."""
    st = sts.status
    if st is None:
        return False
    rev = (pod.metadata.labels or {}).get(CONTROLLER_REVISION_HASH)
    return st.current_revision != st.update_revision and st.current_revision == rev


def _pod_set(sts: StatefulSet) -> kt.PodSet:
    """The set's podSet: ``replicas`` pods of its pod spec (without the
    template's metadata), duplicate env vars collapsed (SanitizePodSet)."""
    assert sts.spec is not None
    spec = clone(sts.spec.template.spec) or kc.PodSpec(containers=[])
    for c in [*(spec.containers or ()), *(spec.init_containers or ())]:
        if c.env:
            last: dict[Any, Any] = {}
            for var in c.env:  # the last value of a name, at its first place
                last[var.get("name") if isinstance(var, dict) else None] = var
            c.env = list(last.values())
    return kt.PodSet(name=POD_SET, count=sts.spec.replicas, template=kc.PodTemplateSpec(spec=spec))


# ------------------------------------------------------------------ reconcilers
def _set_of(pod: Any) -> list[str]:
    """The "<namespace>/<name>" of the StatefulSet controlling a pod."""
    ref = controller_of(pod)
    if ref is None or ref.kind != KIND or ref.api_version != API_VERSION:
        return []
    return [f"{pod.metadata.namespace}/{ref.name}"]


def _suspended_by_us(pod: Any) -> bool:
    return pm.annotation(pod, pm.SUSPENDING_PARENT) == FRAMEWORK


class _Base:
    """What both reconcilers read: the sets, their pods and Workloads."""

    def __init__(self, config: KueueConfig, parents: ParentPolicy) -> None:
        self.config = config
        self.parents = parents
        self.ids = config.gate("WorkloadIdentifierAnnotations")
        self.mgr: Manager | None = None

    def _m(self) -> Manager:
        assert self.mgr is not None, "setup() first"
        return self.mgr

    def _find(self, sts: Any) -> tuple[str, Any | None]:
        wls = self._m().informer(WORKLOAD)
        return find_workload(lambda ns, name: wls.get(f"{ns}/{name}"), sts)

    def _fresh(self, pod: Any) -> Any | None:
        try:
            return self._m().store.get(POD, pod.metadata.namespace, pod.metadata.name)
        except NotFound:
            return None


class StatefulSetReconciler(_Base):
    """Kueue's StatefulSet reconciler: the set's prebuilt Workload, its hold
    on scale to 0, the pods' queue label, and the old revision's pods
    ungated during a rolling update."""

    name = "job:apps/StatefulSet"

    def setup(self, mgr: Manager) -> None:
        self.mgr = mgr
        mgr.informer(STATEFULSET).on_change(lambda t, o, old: mgr.enqueue(self.name, key_of(o)))
        retry_on_priority_class(mgr, STATEFULSET, self.name)
        pods = mgr.informer(POD)
        pods.add_index(_BY_SET, _set_of)
        pods.on_change(self._pod_changed)
        mgr.informer(WORKLOAD).on_change(self._workload_changed)

    def _pod_changed(self, etype: EventType, pod: Any, old: Any | None) -> None:
        # A new pod, or one that just joined its group (the pod reconciler
        # labels it): it may need ungating or a queue label.
        if etype == "DELETED" or not _suspended_by_us(pod):
            return
        if old is not None and pm.group_name(old, self.ids) == pm.group_name(pod, self.ids):
            return
        for key in _set_of(pod):
            self._m().enqueue(self.name, key)

    def _workload_changed(self, etype: EventType, wl: Any, old: Any | None) -> None:
        ann = wl.metadata.annotations or {}
        if ann.get(JOB_OWNER_GVK) == GVK and ann.get(JOB_OWNER_NAME):
            self._m().enqueue(self.name, f"{wl.metadata.namespace}/{ann[JOB_OWNER_NAME]}")

    def reconcile(self, key: str) -> None:
        mgr = self._m()
        sts = mgr.informer(STATEFULSET).get(key)
        if sts is None or sts.spec is None:
            return None  # garbage collection takes the Workload with the set
        if managed_by_another_framework(sts) is not None:
            return None
        if not self.parents.should_suspend(sts, tolerate_deleting=False):
            return None
        name, wl = self._find(sts)
        pods = [
            p
            for p in mgr.informer(POD).by_index(_BY_SET, key)
            if pm.group_name(p, self.ids) == name
        ]
        self._sync_queue_label(sts, pods)
        if wl is not None and self._may_run_ungated(wl, pods, sts):
            for pod in pods:
                if should_ungate(sts, pod) and pm.is_gated(pod):
                    self._ungate(pod)
        self._reconcile_workload(sts, wl)
        return None

    @staticmethod
    def _may_run_ungated(wl: kt.Workload, pods: list[Any], sts: StatefulSet) -> bool:
        """Whether the pod integration lets pods of the old revision run once
        ungated: the Workload is not evicted, and it is admitted or another
        pod of the group stays suspended (a group running without admission
        is stopped). Else the pod would be stopped at once and the
        StatefulSet make it again, a loop (Kueue's, slowed there by each
        pod's graceful deletion) that never ends in virtual time."""
        if is_evicted(wl):
            return False
        if is_admitted(wl):
            return True
        return any(pm.is_suspended(p) and not should_ungate(sts, p) for p in pods)

    def _sync_queue_label(self, sts: StatefulSet, pods: list[Any]) -> None:
        assert sts.spec is not None
        queue = (sts.metadata.labels or {}).get(QUEUE_NAME, "")
        if sts.spec.replicas == 0 or not queue:
            return
        for pod in pods:
            if (pod.metadata.labels or {}).get(QUEUE_NAME) == queue:
                continue
            cur = self._fresh(pod)
            if cur is None:
                continue
            new = clone(cur)
            new.metadata.labels = {**(new.metadata.labels or {}), QUEUE_NAME: queue}
            try:
                self._m().store.update(new)
            except (Invalid, NotFound, Conflict):
                # A running pod keeps its queue (the pod webhook says so).
                continue

    def _ungate(self, pod: Any) -> None:
        cur = self._fresh(pod)
        if cur is None or cur.spec is None or not pm.is_gated(cur):
            return
        new = clone(cur)
        assert new.spec is not None
        pm.ungate(new.spec, pm.SCHEDULING_GATE, pm.TOPOLOGY_GATE)
        try:
            self._m().store.update(new)
        except NotFound:
            return

    def _reconcile_workload(self, sts: StatefulSet, wl: kt.Workload | None) -> None:
        assert sts.spec is not None
        replicas = sts.spec.replicas
        queue = (sts.metadata.labels or {}).get(QUEUE_NAME, "")
        if wl is None:
            # A MultiKueue worker's copy waits for the Workload dispatched with it.
            managed = queue or self.parents.policy.manage_without_queue_name
            if replicas > 0 and managed and not is_remote_copy(sts):
                self._create_workload(sts)
            return
        new = clone(wl)
        changed = False
        if replicas > 0 and not _owned_by(wl, sts):
            new.metadata.owner_references = [
                *(new.metadata.owner_references or ()),
                _owner_ref(sts),
            ]
            new.metadata.annotations = {
                **(new.metadata.annotations or {}),
                JOB_OWNER_GVK: GVK,
                JOB_OWNER_NAME: sts.metadata.name,
            }
            changed = True
        if replicas > 0 and (wl.spec.queue_name or "") != queue:
            new.spec.queue_name = queue or None
            changed = True
        if self.config.gate("AdmissionGatedBy"):
            changed = _propagate_gated_by(sts, new) or changed
        if changed:
            try:
                stored = self._m().store.update(new)
            except Invalid:
                # A Workload holding quota keeps its queue; its next change
                # (the quota released) brings the set back here.
                stored = None
            except NotFound:
                return
            if stored is not None:
                wl = stored
        # Kueue's own reconciler leaves the priority as it was made: an open
        # bug (kubernetes-sigs/kueue#13827), whose fix (#13846) is this call.
        wl = sync_workload_priority(self._m(), sts, wl, COMPONENT)
        if replicas == 0 and _holds_quota(wl):
            self._unset_reservation(wl, ON_HOLD, "StatefulSet scaled to zero; workload on hold")
        elif replicas > 0 and is_on_hold(wl):
            obs = self.config.gate("UnadmittedWorkloadsObservability")
            reason = "PendingEvaluation" if obs else "Pending"
            msg = "Workload no longer on hold; waiting for quota reservation"
            self._unset_reservation(wl, reason, msg)

    def _create_workload(self, sts: StatefulSet) -> None:
        mgr = self._m()
        m = sts.metadata
        pod_sets = [_pod_set(sts)]
        ref, priority = extract_priority(mgr, sts, pod_sets, COMPONENT)
        if ref is False:
            return  # the named WorkloadPriorityClass does not exist (event recorded)
        annotations = {
            k: v for k, v in (m.annotations or {}).items() if k.startswith(PROVREQ_PREFIX)
        }
        annotations[pm.IS_GROUP_WORKLOAD] = "true"
        annotations[JOB_OWNER_GVK] = GVK
        annotations[JOB_OWNER_NAME] = m.name
        if self.config.gate("AdmissionGatedBy") and (m.annotations or {}).get(ADMISSION_GATED_BY):
            annotations[ADMISSION_GATED_BY] = (m.annotations or {})[ADMISSION_GATED_BY]
        wl = new_workload(
            workload_name(sts),
            sts,
            pod_sets,
            {JOB_UID: m.uid},
            [_owner_ref(sts)],
            ref,
            priority,
            annotations,
        )
        try:
            mgr.store.create(wl)
        except AlreadyExists:
            return
        mgr.recorder.event(
            sts, "Normal", "CreatedWorkload", f"Created Workload: {key_of(wl)}", COMPONENT
        )

    def _unset_reservation(self, wl: kt.Workload, reason: str, message: str) -> None:
        obs = self.config.gate("UnadmittedWorkloadsObservability")
        unset_quota_reservation(self._m(), wl, reason, message, obs)


class StatefulSetPodReconciler(_Base):
    """Kueue's StatefulSet pod reconciler: each pod of a managed set joins
    the set's group (prebuilt Workload), serving and fast-admitted, role
    ``main``, its index the StatefulSet's pod index."""

    name = "job:apps/StatefulSet:pods"

    def setup(self, mgr: Manager) -> None:
        self.mgr = mgr
        mgr.informer(STATEFULSET)
        mgr.informer(POD).on_change(self._pod_changed)

    def _pod_changed(self, etype: EventType, pod: Any, old: Any | None) -> None:
        if etype != "DELETED" and _suspended_by_us(pod):
            self._m().enqueue(self.name, key_of(pod))

    def reconcile(self, key: str) -> None:
        mgr = self._m()
        pod = mgr.informer(POD).get(key)
        if pod is None or pm.is_terminated(pod) or pod.metadata.deletion_timestamp is not None:
            return None
        sets = _set_of(pod)
        if not sets:
            return None
        sts = mgr.informer(STATEFULSET).get(sets[0])
        if sts is None or sts.spec is None:
            return None
        cur = self._fresh(pod)
        if cur is None:
            return None
        new = self._defaulted(cur, sts)
        if new is not None:
            with contextlib.suppress(NotFound):
                mgr.store.update(new)
        return None

    def _defaulted(self, pod: Any, sts: StatefulSet) -> Any | None:
        """setDefault: the pod as a member of the set's group, or None when it
        needs no change."""
        assert sts.spec is not None
        queue = (sts.metadata.labels or {}).get(QUEUE_NAME, "")
        name, _ = self._find(sts)
        labels = dict(pod.metadata.labels or {})
        if pm.group_name(pod, self.ids) == name:
            if not queue or labels.get(QUEUE_NAME) == queue:
                return None
            new = clone(pod)
            new.metadata.labels = {**labels, QUEUE_NAME: queue}
            return new
        if not queue and not self.parents.policy.manage_without_queue_name:
            return None
        ann = dict(pod.metadata.annotations or {})
        labels[pm.MANAGED] = pm.MANAGED_VALUE
        if queue:
            labels[QUEUE_NAME] = queue
        wpc = (sts.metadata.labels or {}).get(PRIORITY_CLASS)
        if wpc:
            labels[PRIORITY_CLASS] = wpc
        # SetPrebuiltWorkloadName and SetPodGroupName: annotations under
        # WorkloadIdentifierAnnotations (or a name too long for a label).
        if self.ids or len(name) > pm.LABEL_VALUE_MAX:
            ann[pm.PREBUILT_WORKLOAD] = name
        else:
            labels[pm.PREBUILT_WORKLOAD] = name
        if self.ids:
            ann[pm.GROUP_NAME] = name
        else:
            labels[pm.GROUP_NAME] = name
        ann[pm.TOTAL_COUNT] = str(sts.spec.replicas)
        ann[pm.FAST_ADMISSION] = "true"
        ann[pm.SERVING] = "true"
        ann[POD_INDEX_LABEL] = POD_INDEX
        ann[pm.ROLE_HASH] = POD_SET
        new = clone(pod)
        new.metadata.labels = labels
        new.metadata.annotations = ann
        return new


def statefulset_reconcilers(config: KueueConfig, parents: ParentPolicy) -> list[Any]:
    """The integration's controllers, for the manager."""
    return [StatefulSetReconciler(config, parents), StatefulSetPodReconciler(config, parents)]


# ------------------------------------------------------------------ helpers
def _owner_ref(sts: Any) -> OwnerReference:
    """SetOwnerReference (not a controller reference: the pods of the group own
    the Workload too, and the pod integration takes a Workload another object
    controls for someone else's)."""
    m = sts.metadata
    return OwnerReference(api_version=API_VERSION, kind=KIND, name=m.name, uid=m.uid)


def _owned_by(wl: Any, sts: Any) -> bool:
    """controllerutil.HasOwnerReference: same group, kind and name."""
    return any(
        r.kind == KIND and group_of(r.api_version) == "apps" and r.name == sts.metadata.name
        for r in wl.metadata.owner_references or ()
    )


def _holds_quota(wl: kt.Workload) -> bool:
    """HasActiveQuotaReservation: reserving, not finished, active."""
    return has_quota_reservation(wl) and not is_finished(wl) and wl.spec.active


def _propagate_gated_by(sts: Any, wl: kt.Workload) -> bool:
    """PropagateAdmissionGatedByAnnotation, on ``wl`` (a copy): whether it changed."""
    want = (sts.metadata.annotations or {}).get(ADMISSION_GATED_BY, "")
    ann = dict(wl.metadata.annotations or {})
    if ann.get(ADMISSION_GATED_BY, "") == want:
        return False
    if want:
        ann[ADMISSION_GATED_BY] = want
    else:
        ann.pop(ADMISSION_GATED_BY, None)
    wl.metadata.annotations = ann or None
    return True
