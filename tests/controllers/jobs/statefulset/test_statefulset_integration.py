"""Kueue's StatefulSet integration (integrations.md §3): a StatefulSet is one
pod group with one prebuilt Workload, admitted all or nothing: none of its
pods gets a node until the whole set fits, all start together with the
flavor's placement, and all are deleted (and come back gated) when it is
preempted. Scaling to 0 puts the Workload on hold and frees its quota;
scaling up queues it again. While managed, replicas and the pod spec's
shape are frozen; refusals name the field."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from controllers.jobs.deployment.test_deployment_integration import CQ, HIGH, PARENT, set_gpu_quota
from controllers.jobs.pod.test_pod_integration import (
    MANAGED,
    POD,
    QUEUE,
    WL,
    cond,
    events,
    gated,
    workloads,
    world,
)
from embedded.world import (
    GPU,
    T0,
    cluster_queue,
    config,
    control_plane,
    job,
    local_queue,
    namespace,
    obj,
)
from kuota.controllers.jobframework import owner_workload_name
from kuota.embedded.controlplane import ControlPlane
from kuota.store import Invalid, clone
from kuota.store.resources import STATEFUL_SET

STS = STATEFUL_SET
GROUP = "kueue.x-k8s.io/pod-group-name"
PREBUILT = "kueue.x-k8s.io/prebuilt-workload-name"
HOLD = "example.com/hold"  # a finalizer of the test's: a pod that takes its time to go


def statefulset(
    name: str = "db",
    replicas: int = 3,
    gpus: int = 1,
    *,
    queue: str | None = "main",
    labels: dict[str, str] | None = None,
    finalizers: list[str] | None = None,
    **spec: Any,
) -> Any:
    """A StatefulSet of serving pods (no duration: they run until deleted),
    its pods created all at once (Parallel) unless ``spec`` says otherwise."""
    meta_labels = {QUEUE: queue} if queue else {}
    meta_labels.update(labels or {})
    tmeta: dict[str, Any] = {"labels": {"app": name}}
    if finalizers:
        tmeta["finalizers"] = finalizers
    return obj(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"namespace": "team", "name": name, "labels": meta_labels},
            "spec": {
                "replicas": replicas,
                "serviceName": name,
                "podManagementPolicy": "Parallel",
                "selector": {"matchLabels": {"app": name}},
                "template": {
                    "metadata": tmeta,
                    "spec": {
                        "containers": [
                            {
                                "name": "c",
                                "image": "db:v1",
                                "resources": {
                                    "requests": {"cpu": "1", GPU: str(gpus)},
                                    "limits": {GPU: str(gpus)},
                                },
                            }
                        ]
                    },
                },
                **spec,
            },
        }
    )


def plane(*frameworks: str, **cfg: Any) -> ControlPlane:
    fw = list(frameworks) or ["statefulset"]
    return control_plane(config(integrations={"frameworks": fw}, **cfg))


def pods(cp: ControlPlane, name: str = "db") -> list[Any]:
    return sorted(
        (p for p in cp.store.list(POD, "team").items if p.metadata.name.startswith(name + "-")),
        key=lambda p: p.metadata.name,
    )


def the_workload(cp: ControlPlane, name: str = "db") -> Any:
    sts = cp.store.get(STS, "team", name)
    return cp.store.get(
        WL, "team", owner_workload_name("StatefulSet", "apps/v1", name, sts.metadata.uid)
    )


def edit(cp: ControlPlane, change: Any, name: str = "db") -> Any:
    sts = clone(cp.store.get(STS, "team", name))
    change(sts)
    return cp.store.update(sts)


def scale(cp: ControlPlane, replicas: int) -> Any:
    return edit(cp, lambda s: setattr(s.spec, "replicas", replicas))


def gpus_reserved(cp: ControlPlane) -> int:
    cp.sync_status()
    st = cp.store.get(CQ, "", "cq").status
    for fu in st.flavors_reservation or ():
        for r in fu.resources:
            if fu.name == "a100" and r.name == GPU:
                return int(str(r.total))
    return 0


def test_statefulset_that_does_not_fit_waits_whole_then_starts_whole() -> None:
    cp = plane()
    cp.create(world(gpus=2))
    (sts,) = cp.create([statefulset("db", 3)])
    assert sts.spec.template.metadata.annotations == {PARENT: "statefulset"}
    cp.mgr.run_until_idle()
    # One Workload for the set, built by Kueue (prebuilt), not from the pods.
    (wl,) = workloads(cp)
    name = owner_workload_name("StatefulSet", "apps/v1", "db", sts.metadata.uid)
    assert wl.metadata.name == name and name.startswith("statefulset-db-")
    assert [(ps.name, ps.count) for ps in wl.spec.pod_sets] == [("main", 3)]
    assert wl.spec.pod_sets[0].template.spec.containers[0].image == "db:v1"
    assert wl.spec.queue_name == "main"
    assert wl.metadata.labels == {"kueue.x-k8s.io/job-uid": sts.metadata.uid}
    ann = wl.metadata.annotations
    assert ann["kueue.x-k8s.io/is-group-workload"] == "true"
    assert ann["kueue.x-k8s.io/job-owner-gvk"] == "apps/v1, Kind=StatefulSet"
    assert ann["kueue.x-k8s.io/job-owner-name"] == "db"
    assert ("StatefulSet", "db") in {(r.kind, r.name) for r in wl.metadata.owner_references}
    # Three GPUs asked, two in the queue: every pod waits, gated, on no node.
    members = pods(cp)
    assert [p.metadata.name for p in members] == ["db-0", "db-1", "db-2"]
    for i, p in enumerate(members):
        assert gated(p) and p.spec.node_name is None
        assert p.metadata.labels[MANAGED] == "true" and p.metadata.labels[QUEUE] == "main"
        a = p.metadata.annotations
        assert a[GROUP] == name and a[PREBUILT] == name
        assert a["kueue.x-k8s.io/pod-group-total-count"] == "3"
        assert a["kueue.x-k8s.io/pod-group-fast-admission"] == "true"
        assert a["kueue.x-k8s.io/pod-group-serving"] == "true"
        assert a["kueue.x-k8s.io/role-hash"] == "main"
        assert a["kueue.x-k8s.io/pod-group-pod-index-label"] == "apps.kubernetes.io/pod-index"
        assert p.metadata.labels["apps.kubernetes.io/pod-index"] == str(i)
    assert cond(the_workload(cp), "QuotaReserved").status == "False"
    assert gpus_reserved(cp) == 0
    # Room for three: all start at once, on the flavor's nodes.
    set_gpu_quota(cp, 3)
    cp.mgr.run_until_idle()
    for p in pods(cp):
        assert not gated(p) and p.status.phase == "Running"
        assert p.spec.node_selector == {"gpu": "a100"} and p.spec.node_name == "n-a100"
    assert cond(the_workload(cp), "Admitted").status == "True"
    assert gpus_reserved(cp) == 3


def test_ordered_statefulset_starts_its_pods_one_by_one_under_one_admission() -> None:
    cp = plane()
    cp.create(world(gpus=3))
    cp.create([statefulset("db", 3, podManagementPolicy="OrderedReady")])
    cp.mgr.run_until_idle()
    # Each later pod is created once the one before is ready, and joins the
    # admitted group at once.
    assert [p.metadata.name for p in pods(cp)] == ["db-0", "db-1", "db-2"]
    assert all(not gated(p) and p.status.phase == "Running" for p in pods(cp))
    assert len(workloads(cp)) == 1


def test_preempted_statefulset_loses_all_its_pods_which_come_back_gated() -> None:
    cp = plane("batch/job", "statefulset")
    cp.create(world(gpus=3, preemption=True))
    cp.create([statefulset("db", 3)])
    cp.mgr.run_until_idle()
    first = {p.metadata.name: p.metadata.uid for p in pods(cp)}
    assert all(p.status.phase == "Running" for p in pods(cp))
    # A higher-priority job needs one GPU: the whole set yields.
    watch = cp.store.watch(POD, cp.store.resource_version, namespace="team")
    cp.create([job("team", "urgent", 1, duration="5m", labels=HIGH)])
    cp.mgr.run_until_idle()
    stopped = {
        ev.object.metadata.name: cond(ev.object, "TerminationTarget")
        for ev in watch.poll()
        if ev.object.metadata.name.startswith("db-")
        and cond(ev.object, "TerminationTarget") is not None
    }
    assert sorted(stopped) == ["db-0", "db-1", "db-2"]
    assert {tt.reason for tt in stopped.values()} == {"WorkloadEvictedDueToPreempted"}
    assert cond(the_workload(cp), "Evicted").reason == "Preempted"
    # The StatefulSet controller made them again, gated: none has a node,
    # though two GPUs of quota are free.
    again = pods(cp)
    assert [p.metadata.name for p in again] == ["db-0", "db-1", "db-2"]
    for p in again:
        assert p.metadata.uid != first[p.metadata.name]
        assert gated(p) and p.spec.node_name is None
    assert gpus_reserved(cp) == 1
    # The job ends at 5m: the set is admitted again and all its pods start.
    cp.run(until=T0 + timedelta(minutes=6))
    assert all(not gated(p) and p.status.phase == "Running" for p in pods(cp))
    assert cond(the_workload(cp), "Admitted").status == "True"


def test_scale_to_zero_puts_the_workload_on_hold_and_scale_up_queues_it_again() -> None:
    cp = plane("batch/job", "statefulset")
    cp.create(world(gpus=3))
    cp.create([statefulset("db", 3)])
    cp.mgr.run_until_idle()
    assert gpus_reserved(cp) == 3
    scale(cp, 0)
    cp.mgr.run_until_idle()
    assert pods(cp) == []
    wl = the_workload(cp)  # kept for the set's return
    qr = cond(wl, "QuotaReserved")
    assert (qr.status, qr.reason, qr.message) == (
        "False",
        "OnHold",
        "StatefulSet scaled to zero; workload on hold",
    )
    assert wl.status.admission is None
    assert cond(wl, "Admitted").status == "False"
    assert gpus_reserved(cp) == 0
    # Its quota is free: a job takes all three GPUs.
    cp.create([job("team", "batch", 3, duration="5m")])
    cp.mgr.run_until_idle()
    assert cp.store.list(POD, "team").items[0].metadata.name.startswith("batch-")
    assert cp.store.list(POD, "team").items[0].status.phase == "Running"
    # On hold, it is not queued: nothing of it waits.
    assert cond(the_workload(cp), "QuotaReserved").reason == "OnHold"
    assert cp.workload(f"team/{wl.metadata.name}").state == "unqueued"
    # Scaled up, it is queued again and waits for the job's quota.
    scale(cp, 3)
    cp.mgr.run_until_idle()
    qr = cond(the_workload(cp), "QuotaReserved")
    assert qr.status == "False" and qr.reason != "OnHold"
    assert all(gated(p) and p.spec.node_name is None for p in pods(cp))
    assert cp.workload(f"team/{wl.metadata.name}").state in ("pending", "inadmissible")
    cp.run(until=T0 + timedelta(minutes=6))
    assert len(pods(cp)) == 3
    assert all(not gated(p) and p.status.phase == "Running" for p in pods(cp))
    assert cond(the_workload(cp), "Admitted").status == "True"


def test_scale_up_while_the_scale_down_is_still_in_progress_is_refused() -> None:
    cp = plane()
    cp.create(world(gpus=3))
    cp.create([statefulset("db", 1, finalizers=[HOLD])])
    cp.mgr.run_until_idle()
    scale(cp, 0)
    cp.mgr.run_until_idle()
    (leaving,) = pods(cp)
    assert leaving.metadata.deletion_timestamp is not None
    with pytest.raises(Invalid) as err:
        scale(cp, 1)
    assert str(err.value) == (
        'StatefulSet.apps "db" is invalid: spec.replicas: Forbidden: scaling down is still in progress'
    )
    gone = clone(leaving)
    gone.metadata.finalizers = None
    cp.store.update(gone)
    cp.mgr.run_until_idle()
    assert scale(cp, 1).spec.replicas == 1


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda s: setattr(s.spec, "replicas", 5),
            "spec.replicas: Invalid value: 5: field is immutable",
        ),
        (
            lambda s: s.spec.template.spec.containers[0].resources.requests.pop(GPU),
            "spec.template.spec.containers[0].resources.requests: "
            'Invalid value: "object": field is immutable',
        ),
        (
            lambda s: setattr(s.spec.template.spec, "node_selector", {"gpu": "h100"}),
            'spec.template.spec.nodeSelector: Invalid value: "object": field is immutable',
        ),
    ],
)
def test_webhook_refuses_resizing_or_reshaping_a_managed_statefulset(
    change: Any, message: str
) -> None:
    cp = plane()
    cp.create(world())
    cp.create([statefulset("db", 3)])
    cp.mgr.run_until_idle()
    with pytest.raises(Invalid) as err:
        edit(cp, change)
    assert str(err.value) == f'StatefulSet.apps "db" is invalid: {message}'


def test_a_new_image_rolls_out_and_each_new_pod_starts_under_the_admission() -> None:
    cp = plane()
    cp.create(world(gpus=3))
    cp.create([statefulset("db", 2)])
    cp.mgr.run_until_idle()
    edit(cp, lambda s: setattr(s.spec.template.spec.containers[0], "image", "db:v2"))
    cp.run(until=T0 + timedelta(minutes=1))
    for p in pods(cp):
        assert p.spec.containers[0].image == "db:v2"
        assert not gated(p) and p.status.phase == "Running"
    assert len(workloads(cp)) == 1


def test_pods_of_the_old_revision_are_ungated_without_waiting_during_a_rolling_update() -> None:
    cp = plane()
    cp.create(world(gpus=1))
    partition = {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}
    cp.create([statefulset("db", 2, updateStrategy=partition)])
    cp.mgr.run_until_idle()
    assert all(gated(p) for p in pods(cp))  # two GPUs asked, one in the queue
    # A new image: the rolling update replaces db-1 only; db-0, below the
    # partition, stays at the current revision.
    edit(cp, lambda s: setattr(s.spec.template.spec.containers[0], "image", "db:v2"))
    cp.mgr.run_until_idle()
    sts = cp.store.get(STS, "team", "db")
    current, update = sts.status.current_revision, sts.status.update_revision
    assert current != update
    old, new = pods(cp)
    # db-0, of the current revision, is let go at once, admitted or not...
    assert old.metadata.labels["controller-revision-hash"] == current
    assert not gated(old) and old.status.phase == "Running"
    # ...db-1, of the update revision, waits for the Workload's admission.
    assert new.metadata.labels["controller-revision-hash"] == update
    assert gated(new) and new.spec.node_name is None
    assert cond(the_workload(cp), "QuotaReserved").status == "False"


def test_a_lone_old_revision_pod_of_a_waiting_set_stays_gated() -> None:
    cp = plane()
    cp.create(world(gpus=0))
    partition = {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}
    cp.create([statefulset("db", 1, updateStrategy=partition)])
    cp.mgr.run_until_idle()
    edit(cp, lambda s: setattr(s.spec.template.spec.containers[0], "image", "db:v2"))
    # Nothing else of the group would stay suspended: let go, the pod would be
    # stopped as running without admission, and made again, without end.
    assert cp.mgr.run_until_idle(max_steps=5000)
    sts = cp.store.get(STS, "team", "db")
    assert sts.status.current_revision != sts.status.update_revision
    (p,) = pods(cp)
    assert gated(p) and p.spec.node_name is None


def test_set_preempted_halfway_through_a_rolling_update_waits_gated_then_runs_again() -> None:
    cp = plane("batch/job", "statefulset")
    cp.create(world(gpus=2, preemption=True))
    partition = {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}
    cp.create([statefulset("db", 2, updateStrategy=partition)])
    cp.mgr.run_until_idle()
    edit(cp, lambda s: setattr(s.spec.template.spec.containers[0], "image", "db:v2"))
    cp.mgr.run_until_idle()
    sts = cp.store.get(STS, "team", "db")
    assert sts.status.current_revision != sts.status.update_revision
    assert all(p.status.phase == "Running" for p in pods(cp))
    # Preempted: the old revision's pod is not let go while the Workload is
    # evicted (the pod integration would stop it again, without end).
    cp.create([job("team", "urgent", 2, duration="5m", labels=HIGH)])
    assert cp.mgr.run_until_idle(max_steps=5000)
    assert all(gated(p) and p.spec.node_name is None for p in pods(cp))
    cp.run(until=T0 + timedelta(minutes=6))
    old, new = pods(cp)
    assert old.spec.containers[0].image == "db:v1" and new.spec.containers[0].image == "db:v2"
    assert all(not gated(p) and p.status.phase == "Running" for p in (old, new))
    assert all(p.spec.node_selector == {"gpu": "a100"} for p in (old, new))


def test_deleting_the_statefulset_deletes_its_workload() -> None:
    cp = plane()
    cp.create(world())
    cp.create([statefulset("db", 2)])
    cp.mgr.run_until_idle()
    assert len(workloads(cp)) == 1
    cp.delete("StatefulSet", "team", "db")
    assert pods(cp) == []
    assert workloads(cp) == []
    assert gpus_reserved(cp) == 0


def test_statefulset_without_a_queue_name_is_left_alone() -> None:
    cp = plane()
    cp.create(world())
    (sts,) = cp.create([statefulset("db", 2, queue=None)])
    assert PARENT not in (sts.spec.template.metadata.annotations or {})
    cp.mgr.run_until_idle()
    assert workloads(cp) == []
    assert all(not gated(p) and p.status.phase == "Running" for p in pods(cp))
    assert all(MANAGED not in (p.metadata.labels or {}) for p in pods(cp))


def test_waiting_statefulset_moved_to_another_queue_takes_its_workload_and_pods_along() -> None:
    cp = plane()
    others = [
        cluster_queue("roomy", {"a100": 4, "h100": 0}),
        local_queue("team", "other", "roomy"),
    ]
    cp.create([*world(gpus=0), *others])
    cp.create([statefulset("db", 2)])
    cp.mgr.run_until_idle()
    assert all(gated(p) for p in pods(cp))
    # No replica is ready: the queue may change; the Workload and the pods follow.
    edit(cp, lambda s: s.metadata.labels.update({QUEUE: "other"}))
    cp.mgr.run_until_idle()
    assert the_workload(cp).spec.queue_name == "other"
    assert cond(the_workload(cp), "Admitted").status == "True"
    for p in pods(cp):
        assert p.metadata.labels[QUEUE] == "other"
        assert not gated(p) and p.status.phase == "Running"
    # Now it runs: the queue name is frozen.
    with pytest.raises(Invalid) as err:
        edit(cp, lambda s: s.metadata.labels.update({QUEUE: "main"}))
    assert str(err.value) == (
        'StatefulSet.apps "db" is invalid: '
        f'metadata.labels[{QUEUE}]: Invalid value: "main": field is immutable'
    )


def test_without_queue_names_kueue_manages_the_selected_namespaces_only() -> None:
    cp = plane(
        manageJobsWithoutQueueName=True,
        managedJobsNamespaceSelector={"matchLabels": {"kueue": "on"}},
    )
    managed = namespace("team", {"kueue": "on"})
    cp.create([managed, *world()[1:], namespace("free")])
    (sts,) = cp.create([statefulset("db", 1, queue=None)])
    assert sts.spec.template.metadata.annotations == {PARENT: "statefulset"}
    cp.mgr.run_until_idle()
    (wl,) = workloads(cp)
    assert wl.spec.queue_name is None
    (p,) = pods(cp)
    assert gated(p) and QUEUE not in p.metadata.labels
    # Outside the selector a StatefulSet is left alone.
    other = statefulset("db", 1, queue=None)
    other.metadata.namespace = "free"
    (free,) = cp.create([other])
    assert PARENT not in (free.spec.template.metadata.annotations or {})
    cp.mgr.run_until_idle()
    assert workloads(cp, "free") == []
    (fp,) = cp.store.list(POD, "free").items
    assert not gated(fp) and fp.status.phase == "Running"


def test_created_workload_is_announced_on_the_statefulset() -> None:
    cp = plane()
    cp.create(world())
    cp.create([statefulset("db", 1)])
    cp.mgr.run_until_idle()
    wl = the_workload(cp)
    assert ("Normal", "CreatedWorkload", f"Created Workload: team/{wl.metadata.name}") in events(
        cp, "db"
    )
    # The podSet is the set's pod spec; the template's metadata is not kept.
    assert wl.spec.pod_sets[0].template.metadata.labels is None
