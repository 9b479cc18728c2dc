"""ReplicaSets: ``replicas`` active pods from the template, replaced when
deleted or ended, extra ones removed in Kubernetes' order, status counted."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from kuota.api.apps import ReplicaSet
from kuota.api.core import Pod
from kuota.cluster.podutil import POD, is_deleting, is_terminal
from kuota.store import clone

from ..conftest import NS, World, node_manifest

REPLICASET = ("apps", "ReplicaSet")


def replicaset(
    name: str = "web",
    replicas: int = 3,
    *,
    cpu: str = "100m",
    annotations: dict[str, str] | None = None,
    min_ready_seconds: int | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "replicas": replicas,
        "selector": {"matchLabels": {"app": name}},
        "template": {
            "metadata": {
                "labels": {"app": name, "tier": "front"},
                "annotations": annotations or {},
            },
            "spec": {
                "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]
            },
        },
    }
    if min_ready_seconds is not None:
        spec["minReadySeconds"] = min_ready_seconds
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name, "namespace": NS},
        "spec": spec,
    }


def active(world: World, app: str = "web") -> list[Pod]:
    pods: list[Pod] = world.store.list(POD, NS, label_selector=f"app={app}").items
    return [p for p in pods if not is_terminal(p) and not is_deleting(p)]


def scale(world: World, replicas: int, name: str = "web") -> None:
    rs: ReplicaSet = clone(world.store.get(REPLICASET, NS, name))
    assert rs.spec is not None
    rs.spec.replicas = replicas
    world.store.update(rs)


def status(world: World, name: str = "web") -> tuple[int | None, ...]:
    st = world.store.get(REPLICASET, NS, name).status
    return (
        st.replicas,
        st.fully_labeled_replicas,
        st.ready_replicas,
        st.available_replicas,
        st.observed_generation,
    )


def test_keeps_replicas_pods_and_replaces_a_deleted_one(world: World) -> None:
    world.apply(node_manifest("n1"), replicaset())
    world.run(until=timedelta(seconds=1))
    pods = active(world)
    assert len(pods) == 3
    for p in pods:
        assert p.metadata.name.startswith("web-") and len(p.metadata.name) == len("web-") + 5
        assert p.status.phase == "Running" and p.spec.node_name == "n1"
        ref = p.metadata.owner_references[0]
        assert (ref.kind, ref.name, ref.controller) == ("ReplicaSet", "web", True)
        assert p.metadata.labels == {"app": "web", "tier": "front"}
    assert status(world) == (3, 3, 3, 3, 1)
    gone = pods[0].metadata.name
    world.store.delete(POD, NS, gone)
    world.run(until=timedelta(seconds=2))
    now = {p.metadata.name for p in active(world)}
    assert len(now) == 3 and gone not in now
    assert now > {p.metadata.name for p in pods[1:]}


def test_a_pod_that_ends_is_replaced(world: World) -> None:
    world.apply(
        node_manifest("n1"), replicaset(replicas=2, annotations={"kuota.dev/duration": "10s"})
    )
    world.run(until=timedelta(seconds=1))
    first = {p.metadata.name for p in active(world)}
    world.run(until=timedelta(seconds=10))
    now = {p.metadata.name for p in active(world)}
    assert len(now) == 2 and now.isdisjoint(first)
    # The ended pods stay (for the pod garbage collector), not counted.
    ended = {p.metadata.name for p in world.store.list(POD, NS).items if is_terminal(p)}
    assert ended == first
    assert status(world)[0] == 2


def test_scale_up_and_down(world: World) -> None:
    world.apply(node_manifest("n1"), replicaset(replicas=1))
    world.run(until=timedelta(seconds=1))
    scale(world, 4)
    world.run(until=timedelta(seconds=2))
    assert len(active(world)) == 4
    scale(world, 0)
    world.run(until=timedelta(seconds=3))
    assert active(world) == []
    assert status(world) == (0, 0, 0, 0, 3)


def test_scale_down_removes_pending_pods_before_running_ones(world: World) -> None:
    # Room for two 1-cpu pods: two run, two stay Pending.
    world.apply(node_manifest("n1", cpu="2"), replicaset(replicas=4, cpu="1"))
    world.run(until=timedelta(seconds=1))
    running = {p.metadata.name for p in active(world) if p.status.phase == "Running"}
    assert len(running) == 2 and len(active(world)) == 4
    scale(world, 2)
    world.run(until=timedelta(seconds=2))
    assert {p.metadata.name for p in active(world)} == running


def test_scale_down_removes_the_pod_ready_for_the_least_time(world: World) -> None:
    world.apply(node_manifest("n1"), replicaset(replicas=2))
    world.run(until=timedelta(seconds=1))
    old = {p.metadata.name for p in active(world)}
    world.run(until=timedelta(seconds=5))
    scale(world, 3)
    world.run(until=timedelta(seconds=10))
    assert len(active(world)) == 3
    scale(world, 2)
    world.run(until=timedelta(seconds=11))
    assert {p.metadata.name for p in active(world)} == old


def test_scale_down_removes_the_newest_of_equal_pods(world: World) -> None:
    # Pods no node can hold: all Pending, told apart by age alone.
    world.apply(node_manifest("n1"), replicaset(replicas=2, cpu="64"))
    world.run(until=timedelta(seconds=1))
    old = {p.metadata.name for p in active(world)}
    world.run(until=timedelta(seconds=5))
    scale(world, 3)
    world.run(until=timedelta(seconds=10))
    assert len(active(world)) == 3
    scale(world, 2)
    world.run(until=timedelta(seconds=11))
    assert {p.metadata.name for p in active(world)} == old


def test_available_counts_pods_ready_for_min_ready_seconds(world: World) -> None:
    world.apply(node_manifest("n1"), replicaset(min_ready_seconds=10))
    world.run(until=timedelta(seconds=9))
    assert status(world)[2:4] == (3, 0)
    world.run(until=timedelta(seconds=10))
    assert status(world)[2:4] == (3, 3)
