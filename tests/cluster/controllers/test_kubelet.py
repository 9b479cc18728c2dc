"""The simulated kubelet: runs, failures, bad annotations, lost nodes, deletion."""

from __future__ import annotations

from datetime import timedelta

import pytest

from kuota.api.core import NodeCondition, Pod
from kuota.cluster import PodRun
from kuota.cluster.podutil import NODE, POD
from kuota.store import clone

from ..conftest import NS, T0, World, node_manifest, pod_manifest


@pytest.mark.parametrize(
    ("duration", "expected"),
    [
        ("90s", timedelta(seconds=90)),
        ("1h30m", timedelta(hours=1, minutes=30)),
        ("1500ms", timedelta(milliseconds=1500)),
        ("0s", timedelta(0)),
    ],
)
def test_pod_runs_for_its_duration(world: World, duration: str, expected: timedelta) -> None:
    world.apply(node_manifest("n1"), pod_manifest("p", duration=duration))
    if expected:
        world.run(until=expected - timedelta(milliseconds=1))
        running = world.pod("p")
        assert running.status.phase == "Running"
        assert running.status.start_time == T0
        ready = {c.type: c.status for c in running.status.conditions}
        assert ready == {
            "PodScheduled": "True",
            "PodReadyToStartContainers": "True",
            "Initialized": "True",
            "Ready": "True",
            "ContainersReady": "True",
        }
    assert world.run() == "idle"
    done = world.pod("p")
    assert done.status.phase == "Succeeded"
    assert world.elapsed == expected
    ready = world.condition("p", "Ready")
    assert (ready.status, ready.reason, ready.last_transition_time) == (
        "False",
        "PodCompleted",
        T0 + expected,
    )


def test_pod_told_to_fail(world: World) -> None:
    world.apply(node_manifest("n1"), pod_manifest("p", duration="30s", fail=True))
    world.run()
    st = world.pod("p").status
    assert (st.phase, st.reason) == ("Failed", "Error")
    assert world.elapsed == timedelta(seconds=30)
    ready = world.condition("p", "Ready")
    assert (ready.reason, ready.message) == (
        "ContainersNotReady",
        "containers with unready status: [main]",
    )


def test_pod_without_duration_runs_until_deleted(world: World) -> None:
    world.apply(node_manifest("n1"), pod_manifest("p"))
    assert world.run() == "idle"
    assert world.pod("p").status.phase == "Running"
    assert world.elapsed == timedelta(0)
    world.store.delete(POD, NS, "p")
    world.run()
    assert not world.exists(POD, "p")


@pytest.mark.parametrize(
    ("annotations", "message"),
    [
        (
            {"kuota.dev/duration": "soon"},
            'annotation kuota.dev/duration="soon": time: invalid duration "soon"',
        ),
        (
            {"kuota.dev/duration": "10"},
            'annotation kuota.dev/duration="10": time: missing unit in duration "10"',
        ),
        (
            {"kuota.dev/duration": "-5s"},
            'annotation kuota.dev/duration="-5s": must not be negative',
        ),
        (
            {"kuota.dev/duration": "5s", "kuota.dev/fail": "yes"},
            'annotation kuota.dev/fail="yes": must be "true" or "false"',
        ),
    ],
)
def test_bad_annotations_fail_the_pod_with_a_message(
    world: World, annotations: dict[str, str], message: str
) -> None:
    manifest = pod_manifest("p")
    manifest["metadata"]["annotations"] = annotations
    world.apply(node_manifest("n1"), manifest)
    world.run()
    st = world.pod("p").status
    assert (st.phase, st.reason, st.message) == ("Failed", "InvalidRunAnnotation", message)
    assert world.mgr.stats.errors == []


def test_pod_fails_when_its_node_disappears_or_turns_not_ready(world: World) -> None:
    world.apply(
        node_manifest("n1", cpu="1"),
        node_manifest("n2", cpu="1"),
        pod_manifest("a"),
        pod_manifest("b"),
    )
    world.run()
    assert (world.pod("a").spec.node_name, world.pod("b").spec.node_name) == ("n1", "n2")
    world.advance(timedelta(seconds=5))
    world.store.delete(NODE, "", "n1")
    n2 = clone(world.node("n2"))
    n2.status.conditions = [NodeCondition(type="Ready", status="False")]
    world.store.update_status(n2)
    world.run()
    st = world.pod("a").status
    assert (st.phase, st.reason, st.message) == (
        "Failed",
        "NodeLost",
        "Node n1 which was running pod a is unresponsive",
    )
    # A NotReady node gets the not-ready NoExecute taint; b (created without the
    # default 300 s toleration the API server would add) is evicted at once.
    b = world.pod("b")
    assert b.status.phase == "Failed"
    target = world.condition("b", "DisruptionTarget")
    assert (target.status, target.reason) == ("True", "DeletionByTaintManager")


def test_deleted_pod_is_finished_and_kept_until_its_finalizers_go(world: World) -> None:
    manifest = pod_manifest("p")
    manifest["metadata"]["finalizers"] = ["example.com/keep"]
    world.apply(node_manifest("n1"), manifest)
    world.run()
    world.store.delete(POD, NS, "p")
    world.run()
    pod = world.pod("p")
    assert pod.status.phase == "Failed"
    assert pod.metadata.deletion_timestamp == T0
    world.store.patch(POD, NS, "p", {"metadata": {"finalizers": None}})
    world.run()
    assert not world.exists(POD, "p")


def test_pod_active_deadline(world: World) -> None:
    manifest = pod_manifest("p", duration="10m")
    manifest["spec"]["activeDeadlineSeconds"] = 120
    world.apply(node_manifest("n1"), manifest)
    world.run()
    st = world.pod("p").status
    assert (st.phase, st.reason, st.message) == (
        "Failed",
        "DeadlineExceeded",
        "Pod was active on the node longer than the specified deadline",
    )
    assert world.elapsed == timedelta(seconds=120)


def test_runs_from_a_trace() -> None:
    def trace(pod: Pod) -> PodRun:
        if pod.metadata.name == "bad":
            raise ValueError("no trace record for pod bad")
        return PodRun(timedelta(minutes=int(pod.metadata.name[1:])), fail=pod.metadata.name == "p3")

    world = World(runs=trace)
    world.apply(
        node_manifest("n1", cpu="8"),
        *(pod_manifest(n) for n in ("p1", "p2", "p3", "bad")),
    )
    world.run()
    phases = {n: world.pod(n).status.phase for n in ("p1", "p2", "p3", "bad")}
    assert phases == {"p1": "Succeeded", "p2": "Succeeded", "p3": "Failed", "bad": "Failed"}
    assert world.pod("bad").status.message == "no trace record for pod bad"
    assert world.elapsed == timedelta(minutes=3)
