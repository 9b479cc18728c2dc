"""Kueue's Deployment integration (integrations.md §3): the webhook marks a
managed Deployment's pod template for the pod integration, so each of its
pods is gated and admitted on its own, as a single-pod Workload; a preempted
pod is deleted and its ReplicaSet makes a new, gated one. The queue name is
frozen once a replica is ready; refusals name the field."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from controllers.jobs.pod.test_pod_integration import (
    MANAGED,
    POD,
    QUEUE,
    WL,
    cond,
    gated,
    workloads,
    world,
)
from embedded.world import GPU, T0, config, control_plane, job, local_queue, obj
from kuota.embedded.controlplane import ControlPlane
from kuota.store import Invalid, clone
from kuota.store.resources import CLUSTER_QUEUE, DEPLOYMENT

CQ = CLUSTER_QUEUE
PARENT = "kueue.x-k8s.io/pod-suspending-parent"
WPC_LABEL = "kueue.x-k8s.io/priority-class"
HIGH = {WPC_LABEL: "high"}


def deployment(
    name: str = "web",
    replicas: int = 3,
    gpus: int = 1,
    *,
    queue: str | None = "main",
    labels: dict[str, str] | None = None,
) -> Any:
    """A Deployment of serving pods (no duration: they run until deleted)."""
    meta_labels = {QUEUE: queue} if queue else {}
    meta_labels.update(labels or {})
    return obj(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"namespace": "team", "name": name, "labels": meta_labels},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": name}},
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {
                        "containers": [
                            {
                                "name": "c",
                                "image": "server:v1",
                                "resources": {
                                    "requests": {"cpu": "1", GPU: str(gpus)},
                                    "limits": {GPU: str(gpus)},
                                },
                            }
                        ]
                    },
                },
            },
        }
    )


def plane(*frameworks: str) -> ControlPlane:
    return control_plane(config(integrations={"frameworks": list(frameworks) or ["deployment"]}))


def pods(cp: ControlPlane, prefix: str = "web-") -> list[Any]:
    return [p for p in cp.store.list(POD, "team").items if p.metadata.name.startswith(prefix)]


def workload_of(cp: ControlPlane, pod: Any) -> Any:
    (wl,) = [
        w
        for w in workloads(cp)
        if any(r.kind == "Pod" and r.uid == pod.metadata.uid for r in w.metadata.owner_references)
    ]
    return wl


def set_gpu_quota(cp: ControlPlane, gpus: int) -> None:
    cq = clone(cp.store.get(CQ, "", "cq"))
    a100 = cq.spec.resource_groups[0].flavors[0]
    gpu = next(r for r in a100.resources if r.name == GPU)
    gpu.nominal_quota = type(gpu.nominal_quota)(str(gpus))
    cp.store.update(cq)


def test_three_replicas_with_room_for_two_run_two_and_the_third_waits_with_its_own_workload() -> (
    None
):
    cp = plane()
    cp.create(world(gpus=2))
    cp.create([deployment("web", 3)])
    cp.mgr.run_until_idle()
    members = pods(cp)
    assert len(members) == 3
    running = [p for p in members if p.status.phase == "Running"]
    waiting = [p for p in members if p not in running]
    assert len(running) == 2 and len(waiting) == 1
    for p in running:
        assert not gated(p) and p.spec.node_selector == {"gpu": "a100"}
    (third,) = waiting
    assert gated(third) and third.spec.node_name is None
    # One Workload per pod, each owned by its pod: the third one's waits.
    assert len(workloads(cp)) == 3
    for p in running:
        assert cond(workload_of(cp, p), "Admitted").status == "True"
    pending = workload_of(cp, third)
    assert pending.metadata.name.startswith(f"pod-{third.metadata.name}-")
    assert [(ps.name, ps.count) for ps in pending.spec.pod_sets] == [("main", 1)]
    assert pending.spec.queue_name == "main"
    assert cond(pending, "QuotaReserved").status == "False"
    # More quota admits it, and only it: the running pods are not touched.
    set_gpu_quota(cp, 3)
    cp.mgr.run_until_idle()
    after = {p.metadata.name: p for p in pods(cp)}
    assert set(after) == {p.metadata.name for p in members}
    third = after[third.metadata.name]
    assert not gated(third) and third.status.phase == "Running"
    assert third.spec.node_selector == {"gpu": "a100"}
    assert cond(workload_of(cp, third), "Admitted").status == "True"


def test_preempted_deployment_pod_is_deleted_and_replaced_by_a_new_gated_pod() -> None:
    cp = plane("batch/job", "deployment")
    cp.create(world(gpus=3, preemption=True))
    cp.create([deployment("web", 3)])
    cp.mgr.run_until_idle()
    before = {p.metadata.name for p in pods(cp)}
    assert len(before) == 3 and all(p.status.phase == "Running" for p in pods(cp))
    # A higher-priority job needs one GPU: one Deployment pod yields.
    watch = cp.store.watch(POD, cp.store.resource_version, namespace="team")
    cp.create([job("team", "urgent", 1, duration="5m", labels=HIGH)])
    cp.mgr.run_until_idle()
    stopped = {
        ev.object.metadata.name: cond(ev.object, "TerminationTarget")
        for ev in watch.poll()
        if cond(ev.object, "TerminationTarget") is not None
    }
    ((victim, tt),) = stopped.items()
    assert victim in before
    assert (tt.status, tt.reason) == ("True", "WorkloadEvictedDueToPreempted")
    now = {p.metadata.name: p for p in pods(cp)}
    assert victim not in now
    (new,) = set(now) - before
    replacement = now[new]
    assert gated(replacement) and replacement.spec.node_name is None
    assert replacement.metadata.labels[MANAGED] == "true"
    assert cond(workload_of(cp, replacement), "QuotaReserved").status == "False"
    # The other two pods kept running all along.
    assert sum(1 for p in now.values() if p.status.phase == "Running") == 2
    # The job ends at 5m: the new pod is admitted and starts.
    cp.run(until=T0 + timedelta(minutes=6))
    replacement = cp.store.get(POD, "team", new)
    assert not gated(replacement) and replacement.status.phase == "Running"


def test_webhook_marks_a_managed_deployments_pod_template() -> None:
    cp = plane()
    cp.create(world())
    (d,) = cp.create([deployment("web", 1, labels=HIGH)])
    tmeta = d.spec.template.metadata
    assert tmeta.annotations == {PARENT: "deployment"}
    assert tmeta.labels == {"app": "web", MANAGED: "true", QUEUE: "main", WPC_LABEL: "high"}
    cp.mgr.run_until_idle()
    (p,) = pods(cp)
    assert p.metadata.annotations[PARENT] == "deployment"
    # The pod's Workload takes the priority class its template carries.
    assert workload_of(cp, p).spec.priority == 1000
    # A Deployment without a queue name is not Kueue's: its pods run ungated.
    (free,) = cp.create([deployment("free", 1, queue=None)])
    assert PARENT not in (free.spec.template.metadata.annotations or {})
    cp.mgr.run_until_idle()
    (fp,) = pods(cp, "free-")
    assert not gated(fp) and fp.status.phase == "Running"
    assert all(
        r.name != fp.metadata.name for w in workloads(cp) for r in w.metadata.owner_references
    )


def test_deployment_gets_the_default_local_queue_and_priority_class() -> None:
    cp = plane()
    default_wpc = obj(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "WorkloadPriorityClass",
            "metadata": {"name": "default"},
            "value": 7,
        }
    )
    cp.create([*world(), local_queue("team", "default", "cq"), default_wpc])
    (d,) = cp.create([deployment("web", 1, queue=None)])
    assert d.metadata.labels[QUEUE] == "default"
    assert d.metadata.labels[WPC_LABEL] == "default"
    assert d.spec.template.metadata.labels[QUEUE] == "default"
    assert d.spec.template.metadata.labels[WPC_LABEL] == "default"
    cp.mgr.run_until_idle()
    (p,) = pods(cp)
    assert p.status.phase == "Running"
    wl = workload_of(cp, p)
    assert (wl.spec.queue_name, wl.spec.priority) == ("default", 7)


def test_queue_name_changes_only_while_no_replica_is_ready() -> None:
    cp = plane()
    cp.create([*world(gpus=0), local_queue("team", "other", "cq")])
    cp.create([deployment("web", 2)])
    cp.mgr.run_until_idle()
    assert all(gated(p) for p in pods(cp))
    # No replica is ready: the Deployment may move to another queue, and its
    # template (its next pods) with it.
    moved = clone(cp.store.get(DEPLOYMENT, "team", "web"))
    moved.metadata.labels[QUEUE] = "other"
    stored = cp.store.update(moved)
    assert stored.spec.template.metadata.labels[QUEUE] == "other"
    cp.mgr.run_until_idle()
    # Once a replica is ready, the queue name is frozen.
    set_gpu_quota(cp, 4)
    cp.mgr.run_until_idle()
    d = cp.store.get(DEPLOYMENT, "team", "web")
    assert d.status.ready_replicas == 2
    moved = clone(d)
    moved.metadata.labels[QUEUE] = "main"
    with pytest.raises(Invalid) as err:
        cp.store.update(moved)
    assert str(err.value) == (
        'Deployment.apps "web" is invalid: '
        f'metadata.labels[{QUEUE}]: Invalid value: "main": field is immutable'
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda d: d.metadata.labels.pop(QUEUE),
            f'metadata.labels[{QUEUE}]: Invalid value: "": field is immutable',
        ),
        (
            lambda d: d.metadata.labels.update({WPC_LABEL: "high"}),
            f'metadata.labels[{WPC_LABEL}]: Invalid value: "high": '
            "WorkloadPriorityClass cannot be added to a non-suspended workload",
        ),
    ],
)
def test_webhook_refuses_dropping_the_queue_or_adding_a_priority_class_when_running(
    change: Any, message: str
) -> None:
    cp = plane()
    cp.create(world())
    cp.create([deployment("web", 1)])
    cp.mgr.run_until_idle()
    d = clone(cp.store.get(DEPLOYMENT, "team", "web"))
    assert d.status.ready_replicas == 1
    change(d)
    with pytest.raises(Invalid) as err:
        cp.store.update(d)
    assert str(err.value) == f'Deployment.apps "web" is invalid: {message}'


def test_webhook_refuses_a_queue_name_that_names_no_object() -> None:
    cp = plane()
    cp.create(world())
    with pytest.raises(Invalid) as err:
        cp.store.create(deployment("web", 1, queue="Main_Queue"))
    assert str(err.value).startswith(
        'Deployment.apps "web" is invalid: '
        f'metadata.labels[{QUEUE}]: Invalid value: "Main_Queue": a lowercase RFC 1123 subdomain'
    )
    assert cp.store.list(DEPLOYMENT, "team").items == []
    assert cp.store.list(WL, "team").items == []
