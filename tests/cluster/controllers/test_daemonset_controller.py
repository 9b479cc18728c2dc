"""DaemonSets: one pod per matching node, following nodes as they come, go,
change labels or get tainted or cordoned."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from kuota.api.core import DaemonSet, Pod, Taint
from kuota.cluster.podutil import NODE
from kuota.store import clone

from ..conftest import NS, World, node_manifest

DAEMONSET = ("apps", "DaemonSet")


def daemonset(
    name: str = "agent",
    *,
    node_selector: dict[str, str] | None = None,
    tolerations: list[dict[str, Any]] | None = None,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "agent", "image": "x", "resources": {"requests": {"cpu": "100m"}}}]
    }
    if node_selector:
        spec["nodeSelector"] = node_selector
    if tolerations:
        spec["tolerations"] = tolerations
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}, "annotations": annotations or {}},
                "spec": spec,
            },
        },
    }


def placed(world: World, ds: str = "agent") -> dict[str, str]:
    """node -> phase of the daemon pods not being deleted."""
    pods: list[Pod] = world.store.list(("", "Pod"), NS, label_selector=f"app={ds}").items
    out = {}
    for p in pods:
        if p.metadata.deletion_timestamp is None:
            assert p.spec.node_name is not None, p.metadata.name
            assert p.spec.node_name not in out, "two daemon pods on one node"
            out[p.spec.node_name] = p.status.phase
    return out


def status(world: World, ds: str = "agent") -> tuple[int, int, int, int]:
    obj: DaemonSet = world.store.get(DAEMONSET, NS, ds)
    st = obj.status
    return (
        st.desired_number_scheduled,
        st.current_number_scheduled,
        st.number_ready,
        st.number_misscheduled,
    )


def gpu(name: str, **kw: Any) -> dict[str, Any]:
    return node_manifest(name, labels={"gpu": "true"}, **kw)


def test_one_pod_per_matching_node(world: World) -> None:
    world.apply(
        gpu("g1"), gpu("g2"), node_manifest("cpu1"), daemonset(node_selector={"gpu": "true"})
    )
    world.run(until=timedelta(seconds=1))
    assert placed(world) == {"g1": "Running", "g2": "Running"}
    assert status(world) == (2, 2, 2, 0)
    p = world.store.list(("", "Pod"), NS, label_selector="app=agent").items[0]
    # Pinned to its node; tolerates what every daemon pod tolerates.
    terms = p.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution
    assert terms.node_selector_terms[0].match_fields[0].key == "metadata.name"
    keys = {(t.key, t.effect) for t in p.spec.tolerations}
    assert ("node.kubernetes.io/unschedulable", "NoSchedule") in keys
    assert ("node.kubernetes.io/not-ready", "NoExecute") in keys
    ref = p.metadata.owner_references[0]
    assert (ref.kind, ref.name, ref.controller) == ("DaemonSet", "agent", True)


def test_a_new_node_gets_its_pod_and_a_removed_one_loses_it(world: World) -> None:
    world.apply(gpu("g1"), daemonset(node_selector={"gpu": "true"}))
    world.run(until=timedelta(seconds=1))
    world.apply(gpu("g2"))
    world.run(until=timedelta(seconds=2))
    assert placed(world) == {"g1": "Running", "g2": "Running"}
    world.store.delete(NODE, "", "g1")
    world.run(until=timedelta(seconds=3))
    assert placed(world) == {"g2": "Running"}
    assert status(world) == (1, 1, 1, 0)


def test_relabelled_node_loses_its_pod(world: World) -> None:
    world.apply(gpu("g1"), gpu("g2"), daemonset(node_selector={"gpu": "true"}))
    world.run(until=timedelta(seconds=1))
    node = clone(world.node("g2"))
    node.metadata.labels = {}
    world.store.update(node)
    world.run(until=timedelta(seconds=2))
    assert placed(world) == {"g1": "Running"}
    assert status(world) == (1, 1, 1, 0)


def test_taints_keep_pods_off_unless_tolerated_and_cordoned_nodes_keep_theirs(
    world: World,
) -> None:
    taint = [{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}]
    world.apply(
        node_manifest("plain"),
        node_manifest("tainted", taints=taint),
        node_manifest("cordoned", unschedulable=True),
        daemonset("agent"),
        daemonset(
            "tolerant",
            tolerations=[{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}],
        ),
    )
    world.run(until=timedelta(seconds=1))
    assert placed(world, "agent") == {"plain": "Running", "cordoned": "Running"}
    assert placed(world, "tolerant") == {
        "plain": "Running",
        "tainted": "Running",
        "cordoned": "Running",
    }


def test_a_daemon_pod_that_ends_is_replaced_after_a_backoff(world: World) -> None:
    world.apply(node_manifest("n1"), daemonset(annotations={"kuota.dev/duration": "10s"}))
    world.run(until=timedelta(seconds=10))
    first = {p.metadata.name for p in world.store.list(("", "Pod"), NS).items}
    world.run(until=timedelta(seconds=10, milliseconds=999))
    assert placed(world) == {}  # the ended pod is gone, the new one waits 1 s
    world.run(until=timedelta(seconds=11))
    now = {p.metadata.name for p in world.store.list(("", "Pod"), NS).items}
    assert placed(world) == {"n1": "Running"}
    assert now.isdisjoint(first)


def test_a_new_noschedule_taint_keeps_the_pod_a_noexecute_one_removes_it(world: World) -> None:
    world.apply(node_manifest("n1"), node_manifest("n2"), daemonset())
    world.run(until=timedelta(seconds=1))
    for name, effect in (("n1", "NoSchedule"), ("n2", "NoExecute")):
        node = clone(world.node(name))
        node.spec.taints = [Taint(key="maintenance", effect=effect)]
        world.store.update(node)
    world.run(until=timedelta(seconds=2))
    assert placed(world) == {"n1": "Running"}
    assert status(world) == (0, 0, 0, 1)  # n1's pod may stay but is not wanted there
