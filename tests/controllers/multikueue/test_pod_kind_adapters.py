"""MultiKueue's adapters of the kinds without ``managedBy``: plain pods and
pod groups, StatefulSets and LeaderWorkerSets (Kueue's
``pod_multikueue_adapter_test.go``, ``statefulset_multikueue_adapter_test.go``,
``leaderworkerset_multikueue_adapter_test.go``, and the component-workload
cases of ``multikueue/workload_test.go``), and what the worker's Kueue does
with their copies (``GetOwnerUID``: the copy's Workloads named from the
manager's uid, none of its own made).

Dispatch runs the MultiKueue workload reconciler against a worker stood in
by a memory store (as test_workload_dispatch.py); the worker's side runs the
embedded control plane."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from tests.controllers.multikueue.test_workload_dispatch import (
    ORIGIN,
    T0,
    Setup,
    Worker,
    obj,
    remote_copy,
    state,
    workload,
)
from tests.embedded.world import config, control_plane

from kuota.api.meta import Condition, OwnerReference
from kuota.controllers.jobframework import owner_workload_name
from kuota.controllers.multikueue.job_adapters import adapters_for
from kuota.store.resources import LEADER_WORKER_SET, POD, STATEFUL_SET, WORKLOAD

GATE = "kueue.x-k8s.io/admission"
GROUP = "kueue.x-k8s.io/pod-group-name"
PREBUILT = "kueue.x-k8s.io/prebuilt-workload-name"
ORIGIN_LABEL = "kueue.x-k8s.io/multikueue-origin"
ORIGIN_UID = "kueue.x-k8s.io/multikueue-origin-uid"
OWNER_GVK = "kueue.x-k8s.io/job-owner-gvk"
OWNER_NAME = "kueue.x-k8s.io/job-owner-name"
INDEX = "kueue.x-k8s.io/component-workload-index"


def _container() -> dict[str, Any]:
    return {"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}


def pod(name: str = "pod1", group: str | None = None, **status: Any) -> Any:
    labels = {"kueue.x-k8s.io/queue-name": "lq", "kueue.x-k8s.io/managed": "true"}
    if group:
        labels[GROUP] = group
    raw: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}", "labels": labels},
        "spec": {
            "restartPolicy": "Never",
            "schedulingGates": [{"name": GATE}],
            "containers": [_container()],
        },
    }
    if status:
        raw["status"] = status
    return obj(raw)


def _owned(wl: Any, *owners: tuple[str, str, str, str], controller: bool = False) -> Any:
    wl.metadata.owner_references = [
        OwnerReference(api_version=a, kind=k, name=n, uid=u, controller=controller or None)
        for a, k, n, u in owners
    ]
    return wl


def _admitted_remote(w: Worker, name: str = "wl1") -> None:
    """The worker's copy of the Workload (made if missing) admitted."""
    made = w.get(WORKLOAD, f"ns/{name}")
    if made is None:
        new = remote_copy()
        new.metadata.name = name
        made = w.store.create(new)
    made.status = remote_copy(("QuotaReserved", "QuotaReserved"), ("Admitted", "Admitted")).status
    w.store.update_status(made)


def _finish(s: Setup, name: str = "wl1") -> None:
    wl = s.store.get(WORKLOAD, "ns", name)
    wl.status.conditions = [
        *wl.status.conditions,
        Condition(
            type="Finished", status="True", reason="Succeeded", message="", last_transition_time=T0
        ),
    ]
    s.store.update_status(wl)


def _cond(type_: str, status: str, reason: str = "") -> dict[str, Any]:
    return {"type": type_, "status": status, "reason": reason}


# ------------------------------------------------------------------ plain pods
def test_sync_creates_the_missing_remote_pod() -> None:
    """ "sync creates missing remote pod, WorkloadIdentifierAnnotations
    enabled": the pod as it is (gated, its labels), the origin label, the
    prebuilt Workload named in an annotation; the pod is MultiKueue's
    though it has no managedBy."""
    w1 = Worker("worker1")
    _admitted_remote(w1)
    s = Setup(w1)
    local = pod()
    s.add(local, _owned(workload(), ("v1", "Pod", "pod1", "uid-pod1"), controller=True))
    assert state(s.run()) == ("Ready", 'The workload was admitted on "worker1"')
    [remote] = w1.store.list(POD).items
    assert remote.metadata.labels == {**local.metadata.labels, ORIGIN_LABEL: ORIGIN}
    assert remote.metadata.annotations == {PREBUILT: "wl1"}
    assert remote.spec == local.spec  # Kueue's gate kept: the worker's Kueue lifts it


def test_without_workload_identifier_annotations_the_prebuilt_name_is_a_label() -> None:
    """ "sync creates missing remote pod" (the gate off)."""
    off = config(
        featureGates={"WorkloadIdentifierAnnotations": False},
        integrations={"frameworks": ["pod"]},
    )
    w1 = Worker("worker1")
    _admitted_remote(w1)
    s = Setup(w1)
    s.adapters = adapters_for(off)
    s.add(pod(), _owned(workload(), ("v1", "Pod", "pod1", "uid-pod1"), controller=True))
    s.run()
    [remote] = w1.store.list(POD).items
    assert remote.metadata.labels[PREBUILT] == "wl1"
    assert not remote.metadata.annotations


def test_sync_status_from_the_remote_pod() -> None:
    """ "sync status from remote pod"."""
    w1 = Worker("worker1")
    _admitted_remote(w1)
    s = Setup(w1)
    s.add(pod(), _owned(workload(), ("v1", "Pod", "pod1", "uid-pod1"), controller=True))
    s.run()
    [remote] = w1.store.list(POD).items
    remote.status = pod(phase="Running", conditions=[_cond("Ready", "True")]).status
    w1.store.update_status(remote)
    s.run()
    local = s.store.get(POD, "ns", "pod1")
    assert local.status == remote.status
    assert [g.name for g in local.spec.scheduling_gates] == [GATE]


def test_a_gated_manager_pod_keeps_scheduling_gated_until_the_remote_pod_is_scheduled() -> None:
    """ "keeps SchedulingGated condition on gated manager pod (avoids spurious
    autoscaler scale-up)", then "overwrites SchedulingGated once the remote
    pod is scheduled"."""
    w1 = Worker("worker1")
    _admitted_remote(w1)
    s = Setup(w1)
    gated = _cond("PodScheduled", "False", "SchedulingGated")
    s.add(
        pod(phase="Pending", conditions=[gated]),
        _owned(workload(), ("v1", "Pod", "pod1", "uid-pod1"), controller=True),
    )
    s.run()
    [remote] = w1.store.list(POD).items
    unschedulable = _cond("PodScheduled", "False", "Unschedulable")
    remote.status = pod(phase="Pending", conditions=[unschedulable]).status
    remote = w1.store.update_status(remote)
    s.run()
    local = s.store.get(POD, "ns", "pod1")
    assert [(c.type, c.status, c.reason) for c in local.status.conditions] == [
        ("PodScheduled", "False", "SchedulingGated")
    ]
    scheduled = [_cond("PodScheduled", "True"), _cond("Ready", "True")]
    remote.status = pod(phase="Running", conditions=scheduled).status
    w1.store.update_status(remote)
    s.run()
    local = s.store.get(POD, "ns", "pod1")
    assert local.status.phase == "Running"
    assert [(c.type, c.status) for c in local.status.conditions] == [
        ("PodScheduled", "True"),
        ("Ready", "True"),
    ]


# ------------------------------------------------------------------ pod groups
def _group(s: Setup, n: int = 3) -> list[Any]:
    pods = [pod(f"p{i}", group="wl1") for i in range(n)]
    owners = [("v1", "Pod", p.metadata.name, p.metadata.uid) for p in pods]
    s.add(*pods, _owned(workload(), *owners))
    return pods


def test_sync_creates_the_missing_remote_pods_of_the_group() -> None:
    """ "sync creates missing remote pods of the group" and "sync status from
    remote pod group": the Workload's owner is one pod; every pod of its
    group is copied, and each copy's status is its pod's."""
    w1 = Worker("worker1")
    _admitted_remote(w1)
    s = Setup(w1)
    _group(s)
    s.add(pod("other"))  # not of the group: not copied
    assert state(s.run())[0] == "Ready"
    assert sorted(w1.names(POD)) == ["p0", "p1", "p2"]
    for remote in w1.store.list(POD).items:
        assert remote.metadata.annotations == {PREBUILT: "wl1"}
        assert remote.metadata.labels[GROUP] == "wl1"
        remote.status = pod(phase="Succeeded").status
        w1.store.update_status(remote)
    s.run()
    phases = {p.metadata.name: p.status.phase for p in s.store.list(POD, "ns").items if p.status}
    assert phases == {"p0": "Succeeded", "p1": "Succeeded", "p2": "Succeeded"}


def test_the_remote_pod_group_is_deleted_with_the_workload() -> None:
    """ "remote pod group is deleted": once the manager's Workload finishes,
    the worker's copy of every pod of the group goes with the Workload."""
    w1 = Worker("worker1")
    _admitted_remote(w1)
    s = Setup(w1)
    _group(s)
    s.run()
    assert len(w1.names(POD)) == 3
    _finish(s)
    s.run()
    assert w1.names(POD) == [] and w1.names(WORKLOAD) == []


# ------------------------------------------------------------------ StatefulSets
def statefulset() -> Any:
    return obj(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {
                "name": "sts",
                "namespace": "ns",
                "uid": "uid-sts",
                "labels": {"kueue.x-k8s.io/queue-name": "lq"},
            },
            "spec": {
                "replicas": 2,
                "serviceName": "sts",
                "selector": {"matchLabels": {"app": "sts"}},
                "template": {
                    "metadata": {"labels": {"app": "sts"}},
                    "spec": {"containers": [_container()]},
                },
            },
            "status": {"replicas": 1},
        }
    )


def _sts_workload() -> Any:
    """As the StatefulSet reconciler makes it: owned by the set (and its
    pods), the job owner in annotations."""
    wl = _owned(
        workload(),
        ("v1", "Pod", "sts-0", "uid-sts-0"),
        ("apps/v1", "StatefulSet", "sts", "uid-sts"),
    )
    wl.metadata.annotations = {OWNER_GVK: "apps/v1, Kind=StatefulSet", OWNER_NAME: "sts"}
    return wl


def test_sync_creates_the_missing_remote_statefulset_and_mirrors_no_status() -> None:
    """ "sync creates missing remote statefulset, WorkloadIdentifierAnnotations
    enabled" and "sync status from remote statefulset" (none: the manager's
    set is its own controller's); its adapter found by the job-owner
    annotations though a pod owns the Workload first."""
    w1 = Worker("worker1")
    _admitted_remote(w1)
    s = Setup(w1)
    local = statefulset()
    s.add(local, _sts_workload())
    assert state(s.run())[0] == "Ready"
    [remote] = w1.store.list(STATEFUL_SET).items
    assert remote.metadata.labels == {**local.metadata.labels, ORIGIN_LABEL: ORIGIN}
    assert remote.metadata.annotations == {PREBUILT: "wl1", ORIGIN_UID: "uid-sts"}
    assert remote.spec == local.spec
    assert w1.names(POD) == []  # the set's pods are the worker's set's to make
    remote.status = statefulset().status
    remote.status.replicas, remote.status.ready_replicas = 2, 2
    w1.store.update_status(remote)
    s.run()
    assert s.store.get(STATEFUL_SET, "ns", "sts").status == local.status
    _finish(s)
    s.run()
    assert w1.names(STATEFUL_SET) == []  # "remote statefulset is deleted"


def test_a_worker_takes_the_dispatched_workload_for_a_statefulset_copy() -> None:
    """The worker's side (GetOwnerUID): a copy (origin label, origin-uid)
    makes no Workload of its own and its pods join the group named from the
    manager's uid, the dispatched Workload's name."""
    cp = control_plane(config(integrations={"frameworks": ["statefulset"]}))
    cp.create([obj({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})])
    copy = statefulset()
    copy.status = None
    copy.metadata.uid = ""
    copy.metadata.labels = {**copy.metadata.labels, ORIGIN_LABEL: ORIGIN}
    copy.metadata.annotations = {PREBUILT: "x", ORIGIN_UID: "uid-manager"}
    copy.spec.pod_management_policy = "Parallel"
    cp.create([copy])
    cp.run(until=T0 + timedelta(seconds=5))
    assert cp.store.list(WORKLOAD, "ns").items == []
    name = owner_workload_name("StatefulSet", "apps/v1", "sts", "uid-manager")
    pods = cp.store.list(POD, "ns").items
    assert len(pods) == 2
    for p in pods:
        groups = {**(p.metadata.labels or {}), **(p.metadata.annotations or {})}
        assert groups[GROUP] == name


# ------------------------------------------------------------------ LeaderWorkerSets
def lws(replicas: int = 2) -> Any:
    return obj(
        {
            "apiVersion": "leaderworkerset.x-k8s.io/v1",
            "kind": "LeaderWorkerSet",
            "metadata": {
                "name": "lws",
                "namespace": "ns",
                "uid": "uid-lws",
                "labels": {"kueue.x-k8s.io/queue-name": "lq"},
            },
            "spec": {
                "replicas": replicas,
                "leaderWorkerTemplate": {
                    "size": 2,
                    "workerTemplate": {"spec": {"containers": [_container()]}},
                },
            },
        }
    )


def _group_name(i: int) -> str:
    return owner_workload_name(
        "LeaderWorkerSet", "leaderworkerset.x-k8s.io/v1", f"lws-{i}", "uid-lws"
    )


def _lws_workload(i: int, *, reserved: bool = True) -> Any:
    wl = _owned(
        workload(reserved=reserved),
        ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", "lws", "uid-lws"),
    )
    wl.metadata.name = _group_name(i)
    wl.metadata.annotations = {
        OWNER_GVK: "leaderworkerset.x-k8s.io/v1, Kind=LeaderWorkerSet",
        OWNER_NAME: "lws",
        INDEX: str(i),
    }
    return wl


def _admitted_lws_copy(w: Worker, i: int) -> None:
    _admitted_remote(w, _group_name(i))


def test_sync_creates_the_missing_remote_lws_with_the_origin_uid() -> None:
    """ "sync creates missing remote leaderworkerset with origin UID
    annotation" (no prebuilt Workload: it has one per group) and "sync does
    not overwrite existing remote leaderworkerset"."""
    w1 = Worker("worker1")
    _admitted_lws_copy(w1, 0)
    s = Setup(w1)
    local = lws()
    s.add(local, _lws_workload(0), _lws_workload(1))
    s.run()
    wl0 = s.store.get(WORKLOAD, "ns", _group_name(0))
    assert state(wl0) == ("Ready", 'The workload was admitted on "worker1"')
    [remote] = w1.store.list(LEADER_WORKER_SET).items
    assert remote.metadata.labels == {**local.metadata.labels, ORIGIN_LABEL: ORIGIN}
    assert remote.metadata.annotations == {ORIGIN_UID: "uid-lws"}
    assert remote.spec == local.spec
    version = remote.metadata.resource_version
    _admitted_lws_copy(w1, 1)
    s.run()
    assert state(s.store.get(WORKLOAD, "ns", _group_name(1)))[0] == "Ready"
    [again] = w1.store.list(LEADER_WORKER_SET).items
    assert again.metadata.resource_version == version


def test_lws_groups_wait_for_every_workload_then_follow_group_0() -> None:
    """Kueue's component workloads (``nominateAndSynchronizeWorkers``): none
    is dispatched until every group's Workload exists
    (``allExpectedWorkloadsExist``); group 0 is nominated to every worker,
    the others wait (``isPrimaryComponentWorkload``) and, once group 0 is
    admitted on a worker, go to that worker alone (``syncToSingleCluster``)."""
    w1, w2 = Worker("worker1"), Worker("worker2")
    s = Setup(w1, w2)
    s.add(lws(), _lws_workload(1))
    s.run()
    assert w1.names(WORKLOAD) == [] and w2.names(WORKLOAD) == []  # group 0's is missing
    s.add(_lws_workload(0))
    s.run()
    assert w1.names(WORKLOAD) == [_group_name(0)] and w2.names(WORKLOAD) == [_group_name(0)]
    wl1 = s.store.get(WORKLOAD, "ns", _group_name(1))
    assert not wl1.status.nominated_cluster_names

    # group 0 admitted on worker2: group 1 goes there only
    _admitted_lws_copy(w2, 0)
    s.run()
    wl0 = s.store.get(WORKLOAD, "ns", _group_name(0))
    assert wl0.status.cluster_name == "worker2"
    assert w1.names(WORKLOAD) == []  # the losing copy deleted
    wl1 = s.store.get(WORKLOAD, "ns", _group_name(1))
    assert wl1.status.nominated_cluster_names == ["worker2"]
    assert sorted(w2.names(WORKLOAD)) == sorted([_group_name(0), _group_name(1)])


def test_the_workload_index_and_expected_count() -> None:
    """GetWorkloadIndex (-1 without a numeric annotation) and
    GetExpectedWorkloadCount (the LWS's replicas)."""
    [a] = [a for a in adapters_for(None).values() if a.kind == "LeaderWorkerSet"]
    wl = _lws_workload(5)
    assert a.workload_index(wl) == 5
    wl.metadata.annotations[INDEX] = "x"
    assert a.workload_index(wl) == -1
    wl.metadata.annotations = None
    assert a.workload_index(wl) == -1
    assert a.expected_workloads(lws(3)) == 3
    assert a.multi_workload


def test_garbage_collection_deletes_an_lws_copy_whose_workloads_are_gone() -> None:
    """WorkloadKeysFor: the worker's LWS belongs to the Workloads named from
    its origin uid; with all of them gone from the manager the collector
    deletes it."""
    w1 = Worker("worker1")
    copy = lws()
    copy.metadata.uid = ""
    copy.metadata.labels = {**copy.metadata.labels, ORIGIN_LABEL: ORIGIN}
    copy.metadata.annotations = {ORIGIN_UID: "uid-lws"}
    w1.store.create(copy)
    s = Setup(w1)
    s.add(_lws_workload(1))  # one of its Workloads still in the manager: kept
    s.run(gc=timedelta(minutes=1))
    assert w1.names(LEADER_WORKER_SET) == ["lws"]
    Setup(w1).run(gc=timedelta(minutes=1))  # a manager without them
    assert w1.names(LEADER_WORKER_SET) == []


def test_a_worker_takes_the_dispatched_workloads_for_an_lws_copy() -> None:
    """The worker's side (GetOwnerUID): an LWS copy makes no Workload of its
    own; its pods join the groups named from the manager's uid."""
    cp = control_plane(
        config(integrations={"frameworks": ["leaderworkerset.x-k8s.io/leaderworkerset"]})
    )
    cp.create([obj({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})])
    copy = lws()
    copy.metadata.uid = ""
    copy.metadata.labels = {**copy.metadata.labels, ORIGIN_LABEL: ORIGIN}
    copy.metadata.annotations = {ORIGIN_UID: "uid-lws"}
    cp.create([copy])
    cp.run(until=T0 + timedelta(seconds=5))
    assert cp.store.list(WORKLOAD, "ns").items == []
    pods = cp.store.list(POD, "ns").items
    assert len(pods) == 4
    groups = set()
    for p in pods:
        ids = {**(p.metadata.labels or {}), **(p.metadata.annotations or {})}
        groups.add(ids[GROUP])
    assert groups == {_group_name(0), _group_name(1)}
