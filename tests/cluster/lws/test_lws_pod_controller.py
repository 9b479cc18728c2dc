"""The LWS pod controller's restart policies (integrations.md §5.4): a
restarted, failed or deleted group pod recreates its group, or only itself."""

from __future__ import annotations

from datetime import timedelta

import pytest

from kuota.cluster.lws.lws_objects import LWS, SERVICE, STATEFULSET
from kuota.cluster.podutil import NODE, POD
from kuota.store import clone

from ..conftest import NS, node_manifest
from .conftest import (
    LwsWorld,
    container,
    group_pods,
    lws_manifest,
    restart_container,
)


# ------------------------------------------------------------------ failures
@pytest.mark.parametrize("how", ["restart", "delete"])
def test_recreate_group_on_pod_restart_recreates_the_whole_group(world: LwsWorld, how: str) -> None:
    world.apply(lws_manifest())
    world.run(until=timedelta(seconds=5))
    before = world.uids()
    if how == "restart":
        restart_container(world, "vllm-1-2")
    else:
        world.store.delete(POD, NS, "vllm-1-2")
    world.run(until=timedelta(seconds=10))
    after = world.uids()
    assert sorted(after) == sorted(before)
    assert all(after[n] != before[n] for n in group_pods(1))  # all of group 1 is new
    assert all(after[n] == before[n] for n in group_pods(0))  # group 0 untouched
    assert all(p == "Running" for p in world.phases().values())
    assert world.events("RecreateGroup") == [
        "Worker pod vllm-1-2 failed, deleted leader pod vllm-1 to recreate group 1"
    ]
    assert world.lws().status.ready_replicas == 2


def test_a_failed_worker_recreates_its_group(world: LwsWorld) -> None:
    # A worker that exits: its StatefulSet deletes and recreates it, which
    # recreates its group.
    spec = {"containers": [container()]}
    world.apply(lws_manifest(replicas=1, worker_spec=spec))
    world.run(until=timedelta(seconds=5))
    before = world.uids()
    pod = clone(world.pod("vllm-0-1"))
    pod.status.phase = "Failed"
    world.store.update_status(pod)
    world.run(until=timedelta(seconds=10))
    after = world.uids()
    assert all(after[n] != before[n] for n in group_pods(0))
    assert len(world.events("RecreateGroup")) == 1


def test_restart_policy_none_restarts_only_the_pod(world: LwsWorld) -> None:
    world.apply(lws_manifest(restartPolicy="None"))
    world.run(until=timedelta(seconds=5))
    before = world.uids()
    restart_container(world, "vllm-1-1")
    world.store.delete(POD, NS, "vllm-1-2")
    world.run(until=timedelta(seconds=10))
    after = world.uids()
    assert sorted(after) == sorted(before)
    changed = {n for n in after if after[n] != before[n]}
    assert changed == {"vllm-1-2"}  # recreated by its StatefulSet, nothing else
    assert world.events("RecreateGroup") == []


def test_recreate_after_start_waits_while_a_group_pod_is_pending(world: LwsWorld) -> None:
    # Worker 2 cannot be placed: the group has not started, a restart changes nothing.
    big = {"containers": [container(cpu="1")]}
    world.apply(lws_manifest(replicas=1, worker_spec=big, restartPolicy="RecreateGroupAfterStart"))
    world.store.delete(NODE, "", "n1")
    world.apply(node_manifest("small", cpu="2"))
    world.run(until=timedelta(seconds=5))
    assert sorted(world.phases().values()) == ["Pending", "Running", "Running"]
    running = sorted(n for n, p in world.phases().items() if p == "Running")
    before = world.uids()
    restart_container(world, running[-1])
    world.run(until=timedelta(seconds=10))
    assert world.uids() == before and world.events("RecreateGroup") == []
    # Nor does deleting a running worker: only that pod comes back.
    worker = next(n for n in running if n != "vllm-0")
    world.store.delete(POD, NS, worker)
    world.run(until=timedelta(seconds=12))
    assert world.events("RecreateGroup") == []
    assert {n for n in before if world.uids()[n] != before[n]} == {worker}
    # Once every pod runs, a restart recreates the group.
    world.apply(node_manifest("more", cpu="2"))
    world.run(until=timedelta(seconds=15))
    assert set(world.phases().values()) == {"Running"}
    before = world.uids()
    restart_container(world, "vllm-0-1")
    world.run(until=timedelta(seconds=20))
    assert all(world.uids()[n] != before[n] for n in group_pods(0))


def test_deleting_a_leader_takes_its_group_and_the_group_comes_back(world: LwsWorld) -> None:
    world.apply(lws_manifest(restartPolicy="None"))
    world.run(until=timedelta(seconds=5))
    before = world.uids()
    world.store.delete(POD, NS, "vllm-0")
    # The worker StatefulSet and its pods went with the leader (garbage collection).
    assert not world.exists(STATEFULSET, "vllm-0")
    assert not world.exists(POD, "vllm-0-1") and not world.exists(POD, "vllm-0-2")
    world.run(until=timedelta(seconds=10))
    after = world.uids()
    assert all(after[n] != before[n] for n in group_pods(0))
    assert all(after[n] == before[n] for n in group_pods(1))


def test_deleting_the_set_deletes_everything_it_made(world: LwsWorld) -> None:
    world.apply(lws_manifest())
    world.run(until=timedelta(seconds=5))
    world.store.delete(LWS, NS, "vllm")
    world.run(until=timedelta(seconds=10))
    assert world.store.list(POD, NS).items == []
    assert world.store.list(STATEFULSET, NS).items == []
    assert world.store.list(SERVICE, NS).items == []
    assert world.store.list(("apps", "ControllerRevision"), NS).items == []
