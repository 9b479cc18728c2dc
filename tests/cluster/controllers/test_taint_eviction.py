"""Taint-based eviction in virtual time: a NoExecute taint evicts the pods
that do not tolerate it at once and the others exactly after their
tolerationSeconds; a node turning NotReady gets the not-ready taints and
loses its pods after the default 300 s toleration; a Job's evicted pods are
re-created elsewhere."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from kuota.api.core import NodeCondition, Taint, Toleration
from kuota.cluster import install
from kuota.cluster.apiserver.pod_admission import PodAdmission, default_tolerations
from kuota.cluster.controllers.taint_eviction import eviction_delay
from kuota.cluster.podutil import NODE, POD
from kuota.runtime.clock import VirtualClock
from kuota.runtime.manager import Manager
from kuota.store import MemoryStore, clone

from ..conftest import NS, T0, World, job_manifest, node_manifest, pod_manifest

TAINT = {"key": "maintenance", "value": "now", "effect": "NoExecute"}


class AdmittedWorld(World):
    """A World whose store runs the pod admission plugins (priority, default
    tolerations), as the embedded control plane's does."""

    def __init__(self) -> None:
        self.clock = VirtualClock(T0)
        self.store = MemoryStore(self.clock.now, admission=[PodAdmission.over(lambda: self.store)])
        self.mgr = Manager(self.store, self.clock, raise_errors=True)
        self.cluster = install(self.mgr)


def taint_node(world: World, name: str, taint: dict[str, Any]) -> None:
    node = clone(world.node(name))
    node.spec.taints = [*(node.spec.taints or []), Taint(**taint)]
    world.store.update(node)


def evicted_at(world: World, pod: str) -> Any:
    c = world.condition(pod, "DisruptionTarget")
    assert c is not None and c.reason == "DeletionByTaintManager", c
    return c.last_transition_time


def tolerate(seconds: int | None) -> list[dict[str, Any]]:
    t: dict[str, Any] = {"key": "maintenance", "operator": "Exists", "effect": "NoExecute"}
    if seconds is not None:
        t["tolerationSeconds"] = seconds
    return [t]


def test_no_execute_evicts_exactly_after_toleration_seconds() -> None:
    world = World()
    world.apply(
        node_manifest("n1"),
        pod_manifest("intolerant", cpu="100m"),
        pod_manifest("sixty", cpu="100m", tolerations=tolerate(60)),
        pod_manifest("forever", cpu="100m", tolerations=tolerate(None)),
    )
    world.run()
    world.advance(timedelta(seconds=5))
    taint_node(world, "n1", TAINT)
    world.run(until=world.elapsed)
    assert evicted_at(world, "intolerant") == T0 + timedelta(seconds=5)
    world.advance(timedelta(seconds=59))
    assert world.condition("sixty", "DisruptionTarget") is None
    world.advance(timedelta(seconds=1))
    assert evicted_at(world, "sixty") == T0 + timedelta(seconds=65)
    world.advance(timedelta(hours=1))
    assert world.condition("forever", "DisruptionTarget") is None
    assert world.pod("forever").status.phase == "Running"


def test_taint_removed_in_time_cancels_the_eviction() -> None:
    world = World()
    world.apply(node_manifest("n1"), pod_manifest("p", cpu="100m", tolerations=tolerate(60)))
    world.run()
    taint_node(world, "n1", TAINT)
    world.advance(timedelta(seconds=30))
    node = clone(world.node("n1"))
    node.spec.taints = None
    world.store.update(node)
    world.advance(timedelta(seconds=60))
    assert world.condition("p", "DisruptionTarget") is None


def test_a_later_taint_change_does_not_postpone_a_scheduled_eviction() -> None:
    world = World()
    world.apply(node_manifest("n1"), pod_manifest("p", cpu="100m", tolerations=tolerate(60)))
    world.run()
    taint_node(world, "n1", TAINT)
    world.advance(timedelta(seconds=30))
    taint_node(world, "n1", {"key": "maintenance", "value": "later", "effect": "NoExecute"})
    world.advance(timedelta(seconds=30))
    assert evicted_at(world, "p") == T0 + timedelta(seconds=60)


def test_not_ready_node_evicts_after_the_default_300_seconds_and_jobs_recover() -> None:
    world = AdmittedWorld()
    world.apply(node_manifest("n1", cpu="1"), node_manifest("n2", cpu="1"))
    world.run()
    world.apply(job_manifest("train", duration="1h", cpu="1"))
    world.run(until=world.elapsed)
    (first,) = world.pods_of("train")
    assert first.spec.node_name == "n1"
    assert default_tolerations(first.spec.tolerations) is None  # the API server added them
    world.advance(timedelta(seconds=10))
    node = clone(world.node("n1"))
    node.status.conditions = [NodeCondition(type="Ready", status="False")]
    world.store.update_status(node)
    world.run(until=world.elapsed)
    taints = {(t.key, t.effect) for t in world.node("n1").spec.taints}
    assert taints == {
        ("node.kubernetes.io/not-ready", "NoSchedule"),
        ("node.kubernetes.io/not-ready", "NoExecute"),
    }
    world.advance(timedelta(seconds=299))
    assert world.condition(first.metadata.name, "DisruptionTarget") is None
    world.advance(timedelta(seconds=1))
    assert evicted_at(world, first.metadata.name) == T0 + timedelta(seconds=310)
    # The Job replaces its evicted pod on the Ready node, and completes.
    world.run()
    assert world.job_conditions("train")["Complete"].status == "True"
    placed = sorted(
        p.spec.node_name for p in world.pods_of("train") if p.status.phase == "Succeeded"
    )
    assert placed == ["n2"]


def test_unreachable_node_and_back_to_ready() -> None:
    world = AdmittedWorld()
    world.apply(node_manifest("n1"), pod_manifest("p", cpu="100m"))
    world.run()
    node = clone(world.node("n1"))
    node.status.conditions = [NodeCondition(type="Ready", status="Unknown")]
    world.store.update_status(node)
    world.advance(timedelta(seconds=100))
    assert {t.key for t in world.node("n1").spec.taints} == {"node.kubernetes.io/unreachable"}
    node = clone(world.node("n1"))
    node.status.conditions = [NodeCondition(type="Ready", status="True")]
    world.store.update_status(node)
    world.advance(timedelta(seconds=300))
    assert not world.node("n1").spec.taints
    assert world.condition("p", "DisruptionTarget") is None
    assert world.exists(POD, "p", NS) and world.exists(NODE, "n1", "")


def test_eviction_delay_rules() -> None:
    taint = (Taint(key="k", effect="NoExecute"),)
    assert eviction_delay((), []) is None
    assert eviction_delay(taint, []) == timedelta(0)
    assert (
        eviction_delay(taint, [Toleration(key="k", operator="Exists", effect="NoExecute")]) is None
    )
    both = [
        Toleration(key="k", operator="Exists", toleration_seconds=30),
        Toleration(operator="Exists", toleration_seconds=10),
    ]
    assert eviction_delay(taint, both) == timedelta(seconds=10)
    negative = [Toleration(key="k", operator="Exists", toleration_seconds=-5)]
    assert eviction_delay(taint, negative) == timedelta(0)
