"""Placement and the pod scheduler: first fit in name order, kube-scheduler's
filters and exact messages, retries when capacity appears."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import Any

import pytest

from kuota.api.k8s import Taint, Toleration
from kuota.cluster import FirstFit, NodeTable
from kuota.cluster.kubescheduler.placement import (
    fit_error_message,
    node_selector_requirement_matches,
    pod_matches_node,
    tolerates,
)
from kuota.cluster.kubescheduler.podinfo import PodInfo
from kuota.cluster.nodeutil import node_allocatable
from kuota.cluster.podutil import NODE, POD
from kuota.store import clone

from ..conftest import NS, T0, World, decode, node_manifest, pod_manifest

SPOT = [{"key": "spot", "value": "true", "effect": "NoSchedule"}]


def unschedulable_message(world: World, pod: str) -> str:
    c = world.condition(pod, "PodScheduled")
    assert c is not None and c.status == "False" and c.reason == "Unschedulable"
    assert world.pod(pod).spec.node_name is None
    return str(c.message)


def test_first_fit_binds_in_node_name_order() -> None:
    world = World(FirstFit())  # the default placement scores (test_placement_*.py)
    world.apply(
        node_manifest("n-b", cpu="2"),
        node_manifest("n-a", cpu="2"),
        node_manifest("n-c", cpu="2"),
        *(pod_manifest(f"p{i}") for i in range(5)),
    )
    world.run()
    placed = [world.pod(f"p{i}").spec.node_name for i in range(5)]
    assert placed == ["n-a", "n-a", "n-b", "n-b", "n-c"]
    scheduled = world.condition("p0", "PodScheduled")
    assert (scheduled.status, scheduled.reason, scheduled.last_transition_time) == (
        "True",
        None,
        T0,
    )


def test_message_counts_reasons_like_kube_scheduler(world: World) -> None:
    world.apply(
        node_manifest("gpu-1", extra={"nvidia.com/gpu": "1"}),
        node_manifest("spot-1", extra={"nvidia.com/gpu": "8"}, taints=SPOT),
        node_manifest("spot-2", extra={"nvidia.com/gpu": "8"}, taints=SPOT),
        pod_manifest("train", extra={"nvidia.com/gpu": "2"}),
    )
    world.run()
    assert unschedulable_message(world, "train") == (
        "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, "
        "2 node(s) had untolerated taint {spot: true}. "
        # Preemption's part, as DefaultPreemption adds it to every failure: a
        # node too small for the pod, or tainted, is no place to evict from.
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )


def test_each_filter_reports_its_own_reason(world: World) -> None:
    pool_a = {"pool": "a"}
    world.apply(
        node_manifest("n1", cpu="8", labels=pool_a, unschedulable=True),
        node_manifest("n2", cpu="8", labels={"pool": "b"}),
        node_manifest("n3", cpu="8", labels=pool_a, ready="False"),
        node_manifest("n4", cpu="2", labels=pool_a),
        node_manifest("n5", cpu="8", labels=pool_a, pods="1"),
        node_manifest("n6", cpu="2", labels=pool_a, pods="0"),
    )
    busy = pod_manifest("resident", cpu="100m")
    busy["spec"]["nodeName"] = "n5"
    world.apply(busy, pod_manifest("big", cpu="3", node_selector=pool_a))
    world.run()
    assert unschedulable_message(world, "big") == (
        "0/6 nodes are available: "
        "1 node(s) didn't match Pod's node affinity/selector, "
        "1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }, "
        "1 node(s) were unschedulable, 2 Insufficient cpu, 2 Too many pods. "
        # Only n5 (full of pods, one of them evictable in principle) could be
        # helped by preemption; but its pod is not of lower priority.
        "preemption: 0/6 nodes are available: 1 No preemption victims found for incoming pod, "
        "5 Preemption is not helpful for scheduling."
    )


def test_no_nodes(world: World) -> None:
    world.apply(pod_manifest("lonely"))
    world.run()
    assert unschedulable_message(world, "lonely") == "no nodes available to schedule pods"


def test_pod_retried_and_bound_when_capacity_frees(world: World) -> None:
    world.apply(
        node_manifest("n1", cpu="2"),
        pod_manifest("first", cpu="2", duration="60s"),
        pod_manifest("second", cpu="2", duration="30s"),
    )
    world.run(until=timedelta(seconds=59))
    assert unschedulable_message(world, "second") == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )
    world.run()
    second = world.pod("second")
    assert second.spec.node_name == "n1"
    assert second.status.start_time == T0 + timedelta(seconds=60)
    assert second.status.phase == "Succeeded"
    assert world.elapsed == timedelta(seconds=90)
    scheduled = world.condition("second", "PodScheduled")
    assert (scheduled.status, scheduled.reason, scheduled.message) == ("True", None, None)


def test_pod_retried_when_a_node_is_added(world: World) -> None:
    world.apply(pod_manifest("waiting", cpu="2"))
    world.run()
    world.apply(node_manifest("late", cpu="1"))
    world.run()
    assert unschedulable_message(world, "waiting") == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )
    world.apply(node_manifest("later", cpu="2"))
    world.run()
    assert world.pod("waiting").spec.node_name == "later"


def test_retry_order_is_priority_then_creation(world: World) -> None:
    world.apply(
        node_manifest("n1", cpu="1"),
        pod_manifest("blocker", duration="10s", priority=100),
        pod_manifest("low-1", duration="10s"),
        pod_manifest("low-2", duration="10s"),
        pod_manifest("high", duration="10s", priority=5),
    )
    world.run()
    starts = {n: world.pod(n).status.start_time - T0 for n in ("blocker", "high", "low-1", "low-2")}
    assert starts == {
        "blocker": timedelta(0),
        "high": timedelta(seconds=10),
        "low-1": timedelta(seconds=20),
        "low-2": timedelta(seconds=30),
    }


def test_taints_tolerations_and_node_selector(world: World) -> None:
    world.apply(
        node_manifest("a-spot", cpu="8", labels={"pool": "gpu"}, taints=SPOT),
        node_manifest("b-plain", cpu="8", labels={"pool": "cpu"}),
        node_manifest(
            "c-soft",
            cpu="8",
            labels={"pool": "gpu"},
            taints=[{"key": "soft", "effect": "PreferNoSchedule"}],
        ),
        pod_manifest("plain"),
        pod_manifest(
            "tolerant",
            tolerations=[{"key": "spot", "operator": "Equal", "value": "true"}],
        ),
        pod_manifest("wrong-value", tolerations=[{"key": "spot", "value": "false"}]),
        pod_manifest("everything", tolerations=[{"operator": "Exists"}]),
        pod_manifest("gpu-only", node_selector={"pool": "gpu"}),
    )
    world.run()
    assert world.pod("plain").spec.node_name == "b-plain"
    assert world.pod("tolerant").spec.node_name == "a-spot"
    assert world.pod("wrong-value").spec.node_name == "b-plain"
    # Tried fourth (pods go in creation order), it tolerates every taint and
    # takes the emptiest node: c-soft (a-spot holds "tolerant").
    assert world.pod("everything").spec.node_name == "c-soft"
    # PreferNoSchedule does not filter: the gpu pool's untainted node is c-soft.
    assert world.pod("gpu-only").spec.node_name == "c-soft"


def test_required_node_affinity_and_cordoned_node(world: World) -> None:
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "gen", "operator": "Gt", "values": ["3"]}]},
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["z"]}]},
                ]
            }
        }
    }
    world.apply(
        node_manifest("a", labels={"gen": "3"}),
        node_manifest("b", labels={"gen": "4"}, unschedulable=True),
        node_manifest("c", labels={"gen": "5"}),
        node_manifest("z"),
        pod_manifest("p1", affinity=affinity),
        pod_manifest(
            "p2",
            affinity=affinity,
            tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}],
        ),
    )
    world.run()
    assert world.pod("p1").spec.node_name == "c"
    assert world.pod("p2").spec.node_name == "b"


def test_init_containers_overhead_and_node_capacity() -> None:
    pod = decode(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": NS},
            "spec": {
                "overhead": {"cpu": "500m"},
                "initContainers": [
                    {"name": "init", "image": "x", "resources": {"requests": {"cpu": "3"}}}
                ],
                "containers": [
                    {"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}
                ],
            },
        }
    )
    table = NodeTable()
    table.load(
        [decode(node_manifest("a-small", cpu="3")), decode(node_manifest("b-big", cpu="3500m"))],
        [],
    )
    assert FirstFit().place(pod, table).node == "b-big"  # max(3, 1) + 0.5 = 3.5 cpu
    capacity_only = decode(node_manifest("c", cpu="2", capacity_only=True))
    assert node_allocatable(capacity_only) == {
        "cpu": 2000,
        "memory": 16 * 2**30,
        "pods": 110,
    }


def test_unschedulable_condition_written_only_when_it_changes(world: World) -> None:
    world.apply(node_manifest("n1", cpu="1"), pod_manifest("big", cpu="2"))
    world.run()
    world.apply(node_manifest("n2", cpu="1"))
    world.run()
    assert unschedulable_message(world, "big") == (
        "0/2 nodes are available: 2 Insufficient cpu. "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )
    rv = world.pod("big").metadata.resource_version
    n2 = clone(world.node("n2"))
    n2.metadata.labels = {"relabelled": "yes"}
    world.store.update(n2)  # wakes the pod: it is tried again, fits nowhere again
    world.run()
    assert world.pod("big").metadata.resource_version == rv


def test_deleted_and_finished_pods_free_their_node(world: World) -> None:
    world.apply(node_manifest("n1", cpu="1"), pod_manifest("hog"), pod_manifest("next"))
    world.run()
    assert world.pod("hog").spec.node_name == "n1"
    world.store.delete(POD, NS, "hog")
    world.run()
    assert world.pod("next").spec.node_name == "n1"
    assert world.cluster.scheduler.nodes.get("n1").requested == {"cpu": 1000}
    world.store.delete(NODE, "", "n1")
    world.run()
    assert world.pod("next").status.reason == "NodeLost"
    assert world.cluster.scheduler.nodes.get("n1") is None


# ------------------------------------------------------------------ helpers
@pytest.mark.parametrize(
    ("toleration", "tolerated"),
    [
        ({"key": "spot", "operator": "Equal", "value": "true", "effect": "NoSchedule"}, True),
        ({"key": "spot", "value": "true"}, True),  # empty operator: Equal; empty effect: all
        ({"key": "spot", "operator": "Exists"}, True),
        ({"operator": "Exists"}, True),
        ({"key": "spot", "value": "false"}, False),
        ({"key": "spot", "operator": "Exists", "effect": "NoExecute"}, False),
        ({"key": "other", "operator": "Exists"}, False),
        ({"key": "spot", "operator": "Lt", "value": "5"}, False),
    ],
)
def test_tolerates(toleration: dict[str, Any], tolerated: bool) -> None:
    t = Toleration(**{k: v for k, v in toleration.items()})
    assert tolerates(t, Taint(key="spot", value="true", effect="NoSchedule")) is tolerated


@pytest.mark.parametrize(
    ("op", "values", "labels", "matches"),
    [
        ("In", ["a", "b"], {"k": "b"}, True),
        ("In", ["a"], {}, False),
        ("NotIn", ["a"], {"k": "b"}, True),
        ("NotIn", ["a"], {}, True),
        ("NotIn", ["a"], {"k": "a"}, False),
        ("Exists", None, {"k": ""}, True),
        ("Exists", None, {}, False),
        ("DoesNotExist", None, {}, True),
        ("DoesNotExist", None, {"k": "x"}, False),
        ("Gt", ["3"], {"k": "4"}, True),
        ("Gt", ["3"], {"k": "3"}, False),
        ("Gt", ["3"], {"k": "x4"}, False),
        ("Lt", ["3"], {"k": "-1"}, True),
        ("Lt", ["3"], {}, False),
    ],
)
def test_node_selector_operators(
    op: str, values: list[str] | None, labels: dict[str, str], matches: bool
) -> None:
    from kuota.api.k8s import NodeSelectorRequirement

    req = NodeSelectorRequirement(key="k", operator=op, values=values)  # type: ignore[arg-type]
    assert node_selector_requirement_matches(req, labels) is matches


def test_empty_affinity_term_matches_nothing() -> None:
    pod = decode(pod_manifest("p"))
    pod.spec.affinity = decode(
        {
            **pod_manifest("q"),
            "spec": {
                **pod_manifest("q")["spec"],
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [{"matchExpressions": []}]
                        }
                    }
                },
            },
        }
    ).spec.affinity
    assert not pod_matches_node(pod.spec, "n", {"any": "thing"})


def test_fit_error_sorts_count_and_reason_as_strings() -> None:
    reasons = [["Insufficient cpu"]] * 10 + [["Too many pods"]] * 2
    assert fit_error_message(12, reasons) == (
        "0/12 nodes are available: 10 Insufficient cpu, 2 Too many pods."
    )


def test_bound_to_copies_every_field_but_the_node() -> None:
    values = {f.name: object() for f in dataclasses.fields(PodInfo)}
    info = PodInfo(**values)  # type: ignore[arg-type]
    bound = info.bound_to("n1")
    for name, value in values.items():
        assert getattr(bound, name) is ("n1" if name == "node" else value), name
