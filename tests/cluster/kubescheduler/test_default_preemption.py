"""Pod priority and preemption in the embedded cluster: the fewest, least
important victims on the node kube-scheduler's criteria pick,
``nominatedNodeName``, ``preemptionPolicy: Never``, and the "preemption:"
part of the message."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from kuota.cluster import ClusterSnapshot, KubeScheduler
from kuota.cluster.podutil import POD
from kuota.store import clone

from ..conftest import NS, T0, World, decode, node_manifest, pod_manifest


def low(name: str, node: str, priority: int = 0, cpu: str = "1") -> dict[str, Any]:
    m = pod_manifest(name, cpu=cpu, priority=priority)
    m["spec"]["nodeName"] = node
    return m


def gone_or_failed(world: World, pod: str) -> bool:
    if not world.exists(POD, pod):
        return True
    return world.pod(pod).status.phase == "Failed"


def test_preempts_the_fewest_least_important_pods() -> None:
    world = World()
    world.apply(node_manifest("n1", cpu="2"), low("low-a", "n1"), low("low-b", "n1"))
    world.run()
    world.advance(timedelta(seconds=10))
    world.apply(pod_manifest("high", cpu="1", priority=100))
    world.run(until=world.elapsed)
    high = world.pod("high")
    assert high.spec.node_name is None
    assert high.status.nominated_node_name == "n1"
    assert world.condition("high", "PodScheduled").message == (
        "0/1 nodes are available: 1 Insufficient cpu."
    )
    # One victim is enough; of two equals, the one kube-scheduler would sort last.
    target = world.condition("low-b", "DisruptionTarget")
    assert (target.status, target.reason, target.message) == (
        "True",
        "PreemptionByScheduler",
        "default-scheduler: preempting to accommodate a higher priority pod",
    )
    assert world.condition("low-a", "DisruptionTarget") is None
    # The victim runs out its 30 s grace period, then the pod binds where it was nominated.
    world.run()
    assert gone_or_failed(world, "low-b")
    high = world.pod("high")
    assert high.spec.node_name == "n1"
    assert high.status.start_time == T0 + timedelta(seconds=40)
    assert high.status.nominated_node_name is None
    assert world.pod("low-a").status.phase == "Running"


def test_picks_the_node_with_the_least_important_victims() -> None:
    world = World()
    world.apply(
        node_manifest("n1", cpu="2"),
        node_manifest("n2", cpu="2"),
        node_manifest("n3", cpu="2"),
        low("n1-mid", "n1", priority=50, cpu="2"),
        low("n2-low-a", "n2", priority=1),
        low("n2-low-b", "n2", priority=1),
        low("n3-low", "n3", priority=1, cpu="2"),
    )
    world.run()
    world.apply(pod_manifest("high", cpu="2", priority=100))
    world.run(until=world.elapsed)
    # n1's victim has priority 50; n2 needs two victims, n3 one: n3.
    assert world.pod("high").status.nominated_node_name == "n3"
    assert world.condition("n3-low", "DisruptionTarget") is not None
    assert all(
        world.condition(p, "DisruptionTarget") is None for p in ("n1-mid", "n2-low-a", "n2-low-b")
    )


def test_preemption_policy_never_does_not_preempt() -> None:
    world = World()
    world.apply(node_manifest("n1", cpu="1"), low("low", "n1"))
    world.run()
    m = pod_manifest("polite", cpu="1", priority=100)
    m["spec"]["preemptionPolicy"] = "Never"
    world.apply(m)
    world.run()
    assert world.pod("polite").spec.node_name is None
    assert world.condition("low", "DisruptionTarget") is None
    assert world.condition("polite", "PodScheduled").message == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "preemption: not eligible due to preemptionPolicy=Never."
    )


def test_preemption_message_when_no_node_can_help() -> None:
    world = World()
    world.apply(
        node_manifest("n1", cpu="1", labels={"pool": "a"}),
        node_manifest("n2", cpu="1", labels={"pool": "b"}),
        low("same", "n1", priority=100),
        low("lower", "n2", priority=1),
        pod_manifest("p", cpu="1", priority=100, node_selector={"pool": "a"}),
    )
    world.run()
    # n1's pod is not of lower priority; n2 does not match the selector.
    assert world.condition("p", "PodScheduled").message == (
        "0/2 nodes are available: 1 Insufficient cpu, "
        "1 node(s) didn't match Pod's node affinity/selector. "
        "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, "
        "1 Preemption is not helpful for scheduling."
    )


def test_preemption_part_without_lower_priority_pods(world: World) -> None:
    # Every pod of the same priority: DefaultPreemption still runs and says
    # so, as in "1 Insufficient nvidia.com/gpu. preemption: ... No preemption
    # victims found for incoming pod." on a real cluster.
    world.apply(
        node_manifest("n1", cpu="1"),
        node_manifest("n2", cpu="1", taints=[{"key": "x", "effect": "NoSchedule"}]),
        low("peer", "n1"),
        pod_manifest("p", cpu="1"),
    )
    world.run()
    assert world.condition("p", "PodScheduled").message == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {x: }. "
        "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, "
        "1 Preemption is not helpful for scheduling."
    )


def test_room_of_a_nominated_pod_is_kept_from_lower_priority_pods() -> None:
    snap = ClusterSnapshot()
    snap.set_node(decode(node_manifest("n1", cpu="2")))
    snap.set_node(decode(node_manifest("n2", cpu="1")))
    sched = KubeScheduler()
    nominee = decode(pod_manifest("nominee", cpu="2", priority=100))
    snap.nominate(f"{NS}/nominee", "n1", sched.shape(nominee).info)
    lower = decode(pod_manifest("lower", cpu="1", priority=10))
    higher = decode(pod_manifest("higher", cpu="2", priority=200))
    assert sched.place(lower, snap).node == "n2"  # n1's room is taken
    assert sched.place(higher, snap).node == "n1"  # a higher priority ignores it
    assert sched.place(nominee, snap).node == "n1"
    bound = clone(nominee)
    bound.spec.node_name = "n1"
    snap.set_pod(f"{NS}/nominee", bound)
    assert snap.nominated == {}
