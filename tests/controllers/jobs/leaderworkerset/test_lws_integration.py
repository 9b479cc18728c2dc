"""Kueue's LeaderWorkerSet integration (integrations.md §4) through the control
plane: each group of an LWS is one Workload (podSets ``leader``/``worker`` or
``main``), admitted all or nothing; its pods are gated until then and
deleted together when it is preempted (the LWS operator recreates them,
gated); scaling creates and deletes the groups' Workloads; Kueue's webhook
marks the templates and refuses what it refuses, naming the field."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from embedded.world import (
    GPU,
    T0,
    cluster_queue,
    config,
    control_plane,
    flavor,
    job,
    local_queue,
    namespace,
    node,
    obj,
)
from kuota.api.kueue import types as kt
from kuota.api.meta import OwnerReference
from kuota.cli.main import main
from kuota.embedded.controlplane import ControlPlane
from kuota.store import Invalid, clone
from kuota.store.resources import LEADER_WORKER_SET, POD, STATEFUL_SET, WORKLOAD

FW = "leaderworkerset.x-k8s.io/leaderworkerset"
LWS = LEADER_WORKER_SET
WL = WORKLOAD
GATE = "kueue.x-k8s.io/admission"
QUEUE = "kueue.x-k8s.io/queue-name"
HIGH = {"kueue.x-k8s.io/priority-class": "high"}
P = "leaderworkerset.sigs.k8s.io/"
EXAMPLE = Path(__file__).parents[4] / "examples" / "serving" / "world.yaml"


# ------------------------------------------------------------------ worlds
def plane(**cfg: Any) -> ControlPlane:
    return control_plane(config(integrations={"frameworks": ["batch/job", FW]}, **cfg))


def world(gpus: int, *, preemption: bool = False) -> list[Any]:
    """Quota on H100s only; an A100 node, empty, the pods must not land on."""
    cq = cluster_queue("cq", {"h100": gpus})
    if preemption:
        cq.spec.preemption = kt.ClusterQueuePreemption(within_cluster_queue="LowerPriority")
    high = obj(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "WorkloadPriorityClass",
            "metadata": {"name": "high"},
            "value": 1000,
        }
    )
    return [
        namespace("team"),
        high,
        flavor("h100", {"gpu": "h100"}),
        cq,
        local_queue("team", "main", "cq"),
        *(node(f"n-h100-{i}", 8, {"gpu": "h100"}) for i in range(6)),
        node("n-a100", 16, {"gpu": "a100"}),
    ]


def container(gpus: int, image: str = "vllm:1") -> dict[str, Any]:
    return {
        "name": "vllm",
        "image": image,
        "resources": {"requests": {"cpu": "1", GPU: str(gpus)}, "limits": {GPU: str(gpus)}},
    }


def lws(
    name: str = "vllm",
    *,
    replicas: int = 2,
    size: int = 3,
    leader: bool = True,
    queue: str | None = "main",
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    worker_meta: dict[str, Any] | None = None,
    priority_class_name: str | None = None,
    ns: str = "team",
    **spec: Any,
) -> Any:
    """An LWS whose groups take 10 GPUs: a leader of 2 and workers of 4
    (or ``size`` pods of 4 without a leader template)."""
    worker: dict[str, Any] = {"containers": [container(4)]}
    if priority_class_name:
        worker["priorityClassName"] = priority_class_name
    lwt: dict[str, Any] = {
        "size": size,
        "workerTemplate": {"metadata": worker_meta or {}, "spec": worker},
    }
    if leader:
        lwt["leaderTemplate"] = {"spec": {"containers": [container(2)]}}
    meta_labels = {QUEUE: queue} if queue else {}
    meta_labels.update(labels or {})
    return obj(
        {
            "apiVersion": "leaderworkerset.x-k8s.io/v1",
            "kind": "LeaderWorkerSet",
            "metadata": {
                "namespace": ns,
                "name": name,
                "labels": meta_labels,
                "annotations": annotations or {},
            },
            "spec": {"replicas": replicas, "leaderWorkerTemplate": lwt, **spec},
        }
    )


# ------------------------------------------------------------------ readers
def wl_name(cp: ControlPlane, index: int, name: str = "vllm", ns: str = "team") -> str:
    """Kueue's name of group ``index``'s Workload, worked out here from its recipe."""
    uid = cp.store.get(LWS, ns, name).metadata.uid
    digest = hashlib.sha1(
        f"LeaderWorkerSet\nleaderworkerset.x-k8s.io\n{name}-{index}\n{uid}".encode()
    ).hexdigest()
    return f"leaderworkerset-{name}-{index}-{digest[:5]}"


def group_wl(cp: ControlPlane, index: int, name: str = "vllm", ns: str = "team") -> Any:
    return cp.store.get(WL, ns, wl_name(cp, index, name, ns))


def group_pods(cp: ControlPlane, index: int, name: str = "vllm", ns: str = "team") -> list[Any]:
    """The group's pods, leader first."""
    selector = f"{P}name={name},{P}group-index={index}"
    items = cp.store.list(POD, ns, label_selector=selector).items
    return sorted(items, key=lambda p: p.metadata.name)


def workload_names(cp: ControlPlane, ns: str = "team") -> list[str]:
    return sorted(w.metadata.name for w in cp.store.list(WL, ns).items)


def cond(o: Any, ctype: str) -> Any:
    for c in (o.status.conditions if o.status else None) or ():
        if c.type == ctype:
            return c
    return None


def admitted(wl: Any) -> bool:
    c = cond(wl, "Admitted")
    return c is not None and c.status == "True"


def gated(p: Any) -> bool:
    return any(g.name == GATE for g in p.spec.scheduling_gates or ())


def running_on_h100(pods: list[Any]) -> bool:
    return all(
        not gated(p)
        and p.status.phase == "Running"
        and p.spec.node_selector == {"gpu": "h100"}
        and p.spec.node_name.startswith("n-h100-")
        for p in pods
    )


def update_lws(cp: ControlPlane, change: Any, name: str = "vllm") -> Any:
    new = clone(cp.store.get(LWS, "team", name))
    change(new)
    return cp.store.update(new)


# ------------------------------------------------------------------ admission
def test_each_group_is_admitted_whole_and_the_next_waits_gated_until_quota_frees() -> None:
    cp = plane()
    cp.create(world(gpus=20))
    cp.create([job("team", "blocker", 5, pods=2, duration="10m")])
    cp.run(until=T0 + timedelta(minutes=1))
    # Two groups of 10 GPUs; the Job holds 10 of the 20 until 10m.
    cp.create([lws()])
    cp.run(until=T0 + timedelta(minutes=5))
    g0 = group_wl(cp, 0)
    assert admitted(g0)
    assert [(ps.name, ps.count) for ps in g0.spec.pod_sets] == [("leader", 1), ("worker", 2)]
    members = group_pods(cp, 0)
    assert [p.metadata.name for p in members] == ["vllm-0", "vllm-0-1", "vllm-0-2"]
    assert running_on_h100(members)
    assert {p.metadata.labels["kueue.x-k8s.io/podset"] for p in members} == {"leader", "worker"}
    g1 = group_wl(cp, 1)
    qr = cond(g1, "QuotaReserved")
    assert qr.status == "False" and "insufficient unused quota" in qr.message
    waiting = group_pods(cp, 1)
    assert len(waiting) == 3
    assert all(gated(p) and p.spec.node_name is None for p in waiting)
    # The Job ends at 10m: group 1 is admitted and its three pods start together.
    cp.run(until=T0 + timedelta(minutes=11))
    assert admitted(group_wl(cp, 1))
    started = group_pods(cp, 1)
    assert running_on_h100(started)
    assert {p.status.start_time for p in started} == {T0 + timedelta(minutes=10)}
    assert cond(group_wl(cp, 0), "Finished") is None  # serving: never finished


def test_a_preempted_group_loses_all_its_pods_which_come_back_gated_and_wait() -> None:
    cp = plane()
    cp.create(world(gpus=10, preemption=True))
    cp.create([lws(replicas=1)])
    cp.mgr.run_until_idle()
    before = {p.metadata.name: p.metadata.uid for p in group_pods(cp, 0)}
    assert running_on_h100(group_pods(cp, 0))
    wl_uid = group_wl(cp, 0).metadata.uid
    cp.create([job("team", "urgent", 5, pods=2, duration="10m", labels=HIGH)])
    cp.mgr.run_until_idle()
    wl = group_wl(cp, 0)
    assert wl.metadata.uid == wl_uid  # the same Workload waits again
    assert cond(wl, "Evicted").reason == "Preempted"
    assert cond(wl, "QuotaReserved").status == "False"
    back = group_pods(cp, 0)
    # Every pod of the group was deleted; the LWS operator made them again, gated.
    assert [p.metadata.name for p in back] == sorted(before)
    assert all(p.metadata.uid != before[p.metadata.name] for p in back)
    assert all(gated(p) and p.spec.node_name is None for p in back)
    urgent = cp.store.list(POD, "team", label_selector="job-name=urgent").items
    assert len(urgent) == 2 and all(p.status.phase == "Running" for p in urgent)
    # The urgent Job ends at 10m: the group is admitted again, whole.
    cp.run(until=T0 + timedelta(minutes=11))
    assert admitted(group_wl(cp, 0))
    assert running_on_h100(group_pods(cp, 0))


def test_scaling_deletes_and_creates_the_groups_workloads() -> None:
    cp = plane()
    cp.create(world(gpus=30))
    cp.create([lws(replicas=2)])
    cp.mgr.run_until_idle()
    first = group_wl(cp, 0)
    assert workload_names(cp) == sorted([wl_name(cp, 0), wl_name(cp, 1)])

    def scale(n: int) -> Any:
        def change(o: Any) -> None:
            o.spec.replicas = n

        return change

    update_lws(cp, scale(1))
    cp.mgr.run_until_idle()
    assert workload_names(cp) == [wl_name(cp, 0)]
    assert group_pods(cp, 1) == []
    kept = group_wl(cp, 0)
    assert kept.metadata.uid == first.metadata.uid and admitted(kept)
    assert running_on_h100(group_pods(cp, 0))
    # Scaling up makes the missing groups' Workloads; their pods start once admitted.
    update_lws(cp, scale(3))
    cp.mgr.run_until_idle()
    assert workload_names(cp) == sorted(wl_name(cp, i) for i in range(3))
    assert all(admitted(group_wl(cp, i)) for i in range(3))
    assert running_on_h100(group_pods(cp, 2))
    # Deleting the LWS takes its Workloads (and their quota) with it.
    cp.delete("LeaderWorkerSet", "team", "vllm")
    assert workload_names(cp) == []


def test_workload_names_annotations_owner_and_priority_are_kueues() -> None:
    cp = plane()
    serving = obj(
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "serving"},
            "value": 500,
        }
    )
    cp.create([*world(gpus=40), serving])
    template_labels = {"app": "vllm", f"{P}custom": "dropped"}
    cp.create(
        [
            lws(
                replicas=1,
                labels=HIGH,
                annotations={"provreq.kueue.x-k8s.io/maxRunDurationSeconds": "600"},
                worker_meta={"labels": template_labels},
            ),
            lws(
                "plain",
                replicas=1,
                size=2,
                leader=False,
                priority_class_name="serving",
            ),
        ]
    )
    cp.mgr.run_until_idle()
    owner = cp.store.get(LWS, "team", "vllm")
    uid = owner.metadata.uid
    wl = group_wl(cp, 0)
    assert wl.metadata.name.startswith("leaderworkerset-vllm-0-")
    assert wl.metadata.annotations == {
        "kueue.x-k8s.io/is-group-workload": "true",
        "kueue.x-k8s.io/job-owner-gvk": "leaderworkerset.x-k8s.io/v1, Kind=LeaderWorkerSet",
        "kueue.x-k8s.io/job-owner-name": "vllm",
        "kueue.x-k8s.io/component-workload-index": "0",
        "provreq.kueue.x-k8s.io/maxRunDurationSeconds": "600",
    }
    assert wl.metadata.labels == {"kueue.x-k8s.io/job-uid": uid}
    # Owned, not controlled, by the LWS; the group's pods own it too.
    refs = wl.metadata.owner_references
    assert refs[0] == OwnerReference(
        api_version="leaderworkerset.x-k8s.io/v1", kind="LeaderWorkerSet", name="vllm", uid=uid
    )
    assert sorted(r.name for r in refs[1:]) == ["vllm-0", "vllm-0-1", "vllm-0-2"]
    assert not any(r.controller for r in refs)
    assert wl.spec.queue_name == "main"
    assert (wl.spec.priority, wl.spec.priority_class_ref.name) == (1000, "high")
    assert wl.spec.priority_class_ref.kind == "WorkloadPriorityClass"
    # The LWS operator's keys are dropped from the templates, Kueue's kept.
    worker = wl.spec.pod_sets[1].template.metadata
    assert worker.labels == {"app": "vllm", QUEUE: "main", **HIGH}
    assert worker.annotations["kueue.x-k8s.io/pod-suspending-parent"] == FW
    # No leader template: one podSet "main" of size pods; priority from the
    # pod template's PriorityClass.
    plain = group_wl(cp, 0, "plain")
    assert [(ps.name, ps.count) for ps in plain.spec.pod_sets] == [("main", 2)]
    assert plain.spec.priority == 500
    assert plain.spec.priority_class_ref == kt.PriorityClassRef(
        group="scheduling.k8s.io", kind="PriorityClass", name="serving"
    )


def test_the_groups_workloads_follow_the_lws_priority_class_and_admission_gates() -> None:
    cp = plane()
    low = obj(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "WorkloadPriorityClass",
            "metadata": {"name": "low"},
            "value": 10,
        }
    )
    cp.create([*world(gpus=40), low])
    gate = "kueue.x-k8s.io/admission-gated-by"
    cp.create([lws(replicas=2, labels=HIGH, annotations={gate: "example.com/warmup"})])
    cp.mgr.run_until_idle()
    for i in (0, 1):
        wl = group_wl(cp, i)
        assert wl.metadata.annotations[gate] == "example.com/warmup"
        assert not admitted(wl)
    assert all(gated(p) for i in (0, 1) for p in group_pods(cp, i))

    def relabel(o: Any) -> None:
        o.metadata.labels["kueue.x-k8s.io/priority-class"] = "low"
        del o.metadata.annotations[gate]  # the gate lifts

    update_lws(cp, relabel)
    cp.mgr.run_until_idle()
    for i in (0, 1):
        wl = group_wl(cp, i)
        assert gate not in wl.metadata.annotations
        assert (wl.spec.priority, wl.spec.priority_class_ref.name) == (10, "low")
        assert admitted(wl) and running_on_h100(group_pods(cp, i))


def test_group_pods_join_their_groups_workload() -> None:
    cp = plane()
    cp.create(world(gpus=40))
    cp.create([lws(replicas=2), lws("plain", replicas=1, size=2, leader=False)])
    cp.mgr.run_until_idle()
    for index in (0, 1):
        name = wl_name(cp, index)
        roles = {}
        for p in group_pods(cp, index):
            labels, ann = p.metadata.labels, p.metadata.annotations
            assert labels["kueue.x-k8s.io/managed"] == "true" and labels[QUEUE] == "main"
            assert ann["kueue.x-k8s.io/pod-group-name"] == name
            assert ann["kueue.x-k8s.io/prebuilt-workload-name"] == name
            assert ann["kueue.x-k8s.io/pod-group-total-count"] == "3"
            assert not p.metadata.finalizers  # a parent suspends them: no finalizer
            roles[p.metadata.name] = ann["kueue.x-k8s.io/role-hash"]
        assert roles == {
            f"vllm-{index}": "leader",
            f"vllm-{index}-1": "worker",
            f"vllm-{index}-2": "worker",
        }
    plain = group_pods(cp, 0, "plain")
    assert [p.metadata.annotations["kueue.x-k8s.io/role-hash"] for p in plain] == ["main"] * 2
    assert running_on_h100(plain)


# ------------------------------------------------------------------ webhook
def test_webhook_marks_the_templates_of_a_managed_lws_only() -> None:
    cp = plane()
    cp.create([*world(gpus=40), namespace("serve"), local_queue("serve", "default", "cq")])
    cp.create(
        [
            lws(replicas=1, labels=HIGH),
            lws("free", replicas=1, queue=None),
            lws("defaulted", replicas=1, queue=None, ns="serve"),
        ]
    )
    cp.mgr.run_until_idle()
    lwt = cp.store.get(LWS, "team", "vllm").spec.leader_worker_template
    for t, offset in ((lwt.leader_template, None), (lwt.worker_template, "1")):
        assert t.metadata.labels == {QUEUE: "main", **HIGH}
        assert t.metadata.annotations["kueue.x-k8s.io/pod-suspending-parent"] == FW
        assert t.metadata.annotations["kueue.x-k8s.io/pod-group-serving"] == "true"
        assert t.metadata.annotations.get("kueue.x-k8s.io/pod-index-offset") == offset
    # No queue name (and no default LocalQueue): not Kueue's, its pods run as they come.
    free = cp.store.get(LWS, "team", "free").spec.leader_worker_template
    assert free.worker_template.metadata.annotations is None
    pods = cp.store.list(POD, "team", label_selector=f"{P}name=free").items
    assert len(pods) == 3 and all(not gated(p) and p.status.phase == "Running" for p in pods)
    assert not [n for n in workload_names(cp) if "free" in n]
    # A namespace with a LocalQueue named default: the LWS takes it.
    defaulted = cp.store.get(LWS, "serve", "defaulted")
    assert defaulted.metadata.labels[QUEUE] == "default"
    assert admitted(group_wl(cp, 0, "defaulted", "serve"))


def refusal(cp: ControlPlane, change: Any) -> str:
    with pytest.raises(Invalid) as err:
        update_lws(cp, change)
    return str(err.value)


def test_webhook_refuses_what_kueue_refuses_naming_the_field() -> None:
    cp = plane()
    cp.create(world(gpus=10))
    with pytest.raises(Invalid) as err:
        cp.create([lws("bad", queue="Bad_Queue")])
    assert 'metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: "Bad_Queue"' in str(
        err.value
    )
    with pytest.raises(Invalid) as err:
        cp.create([lws("elastic", annotations={"kueue.x-k8s.io/elastic-job": "true"})])
    assert (
        "metadata.annotations[kueue.x-k8s.io/elastic-job]: Forbidden: elastic job is not "
        'supported for "leaderworkerset.x-k8s.io/v1, Kind=LeaderWorkerSet"'
    ) in str(err.value)
    cp.create([lws(replicas=1, labels=HIGH)])
    cp.mgr.run_until_idle()
    assert cp.store.get(LWS, "team", "vllm").status.ready_replicas == 1
    lwt = "spec.leaderWorkerTemplate"

    def size(o: Any) -> None:
        o.spec.leader_worker_template.size = 4

    assert f"{lwt}.size: Invalid value: 4: field is immutable" in refusal(cp, size)

    def requests(o: Any) -> None:
        o.spec.leader_worker_template.worker_template.spec.containers[0].resources.requests[
            "cpu"
        ] = "2"

    path = f"{lwt}.workerTemplate.spec.containers[0].resources.requests"
    assert f'{path}: Invalid value: "object": field is immutable' in refusal(cp, requests)

    def no_leader(o: Any) -> None:
        o.spec.leader_worker_template.leader_template = None

    assert f"{lwt}.leaderTemplate: Invalid value: null: field is immutable" in refusal(
        cp, no_leader
    )

    def selector(o: Any) -> None:
        o.spec.leader_worker_template.leader_template.spec.node_selector = {"zone": "a"}

    path = f"{lwt}.leaderTemplate.spec.nodeSelector"
    assert f'{path}: Invalid value: "object": field is immutable' in refusal(cp, selector)

    def move(o: Any) -> None:
        o.metadata.labels[QUEUE] = "other"

    queue_path = "metadata.labels[kueue.x-k8s.io/queue-name]"
    msg = refusal(cp, move)  # a group is ready
    assert f'{queue_path}: Invalid value: "other": field is immutable' in msg

    def unprioritized(o: Any) -> None:
        del o.metadata.labels["kueue.x-k8s.io/priority-class"]

    assert "WorkloadPriorityClass cannot be removed from a workload" in refusal(cp, unprioritized)

    # What the Workloads do not depend on may change: images, replicas.
    def image(o: Any) -> None:
        o.spec.leader_worker_template.worker_template.spec.containers[0].image = "vllm:2"
        o.spec.replicas = 2

    update_lws(cp, image)


def test_queue_name_changes_while_no_group_is_ready_and_the_workloads_follow() -> None:
    cp = plane()
    cp.create(
        [
            *world(gpus=0),
            cluster_queue("roomy", {"h100": 10}),
            local_queue("team", "other", "roomy"),
        ]
    )
    cp.create([lws(replicas=1)])
    cp.mgr.run_until_idle()
    assert not admitted(group_wl(cp, 0))
    assert cp.store.get(LWS, "team", "vllm").status.ready_replicas == 0

    def move(o: Any) -> None:
        o.metadata.labels[QUEUE] = "other"

    update_lws(cp, move)
    cp.mgr.run_until_idle()
    wl = group_wl(cp, 0)
    assert wl.spec.queue_name == "other" and admitted(wl)
    assert running_on_h100(group_pods(cp, 0))


# ------------------------------------------------------------------ ungating
def test_pods_whose_lws_is_gone_are_ungated() -> None:
    cp = plane()
    cp.create(world(gpus=10))
    # A leader pod as the LWS operator makes them, of an LWS that no longer exists.
    orphan = obj(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "namespace": "team",
                "name": "ghost-0",
                "labels": {f"{P}name": "ghost", f"{P}worker-index": "0", QUEUE: "main"},
                "annotations": {
                    f"{P}size": "1",
                    "kueue.x-k8s.io/pod-suspending-parent": FW,
                },
            },
            "spec": {"containers": [container(1)]},
        }
    )
    (created,) = cp.create([orphan])
    assert gated(created)  # the pod webhook gates what a parent suspends
    cp.mgr.run_until_idle()
    pod = cp.store.get(POD, "team", "ghost-0")
    assert not gated(pod) and pod.status.phase == "Running"
    assert "kueue.x-k8s.io/managed" not in pod.metadata.labels
    assert workload_names(cp) == []


def test_a_pod_of_the_old_revision_recreated_during_a_rolling_update_is_ungated_at_once() -> None:
    cp = plane()
    cp.create(world(gpus=20))
    # size 1: a group is its leader. The update stops at partition 2: groups 0
    # and 1 keep the old revision, group 2 moves to the new one.
    cp.create([lws(replicas=3, size=1, leader=False)])
    cp.mgr.run_until_idle()
    old = cp.store.get(POD, "team", "vllm-0")
    assert running_on_h100([old])

    def roll(o: Any) -> None:
        o.spec.leader_worker_template.worker_template.spec.containers[0].image = "vllm:2"
        o.spec.rollout_strategy.rolling_update_configuration.partition = 2

    update_lws(cp, roll)
    cp.mgr.run_until_idle()
    new = cp.store.get(POD, "team", "vllm-2")
    assert new.spec.containers[0].image == "vllm:2"
    assert running_on_h100([new])  # admitted again with its group's Workload
    sts = cp.store.get(STATEFUL_SET, "team", "vllm")
    assert sts.status.current_revision != sts.status.update_revision
    # vllm-0 fails over: the StatefulSet recreates it at the old revision, and
    # Kueue lets it start at once, not as a new member of its group.
    cp.store.delete(POD, "team", "vllm-0")
    cp.mgr.run_until_idle()
    again = cp.store.get(POD, "team", "vllm-0")
    assert again.metadata.uid != old.metadata.uid
    assert again.metadata.labels["controller-revision-hash"] == sts.status.current_revision
    assert again.spec.containers[0].image == "vllm:1"
    assert not gated(again) and again.status.phase == "Running"
    assert "kueue.x-k8s.io/managed" not in again.metadata.labels


# ------------------------------------------------------------------ kuota run
def test_the_serving_example_runs_under_kuota_run(tmp_path: Path) -> None:
    state = tmp_path / "state"
    r = CliRunner().invoke(main, ["run", str(EXAMPLE), "--state", str(state), "--no-live"])
    assert r.exit_code == 0, r.output
    assert "Traceback" not in r.output
    assert "5 admissions of 4 workloads; 1 eviction (1 Preempted)" in r.output
    r = CliRunner().invoke(main, ["get", "workloads", "-n", "inference", "--state", str(state)])
    rows = [line.split() for line in r.output.splitlines()[1:]]
    assert [(row[0][:-6], row[2], row[3]) for row in rows] == [
        ("leaderworkerset-llama-405b-0", "inference", "True"),
        ("leaderworkerset-llama-405b-1", "inference", "True"),
    ]
    r = CliRunner().invoke(main, ["get", "lws", "-n", "inference", "--state", str(state)])
    assert r.output.splitlines()[1].split()[:3] == ["llama-405b", "2", "2"]
