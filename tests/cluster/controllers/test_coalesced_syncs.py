"""A controller whose sync reads every pod it owns (ReplicaSet, Job,
StatefulSet, DaemonSet) syncs once for a burst of its pods' writes, not once
per pod: a set of N pods starting in one instant costs a few syncs, not N
(the O(N²) that froze ``kuota serve`` on a 10,000-replica Deployment).
Counted at the store: the owner's status writes while its pods start."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from kuota.cluster.podutil import POD, pod_phase
from kuota.store.protocol import ResourceType
from kuota.store.resources import DAEMON_SET, JOB, REPLICA_SET, STATEFUL_SET

from ..conftest import NS, World, job_manifest, node_manifest
from .test_daemonset_controller import daemonset
from .test_replicaset_controller import replicaset
from .test_statefulset_controller import statefulset

N = 300
# Status writes allowed while N pods are created, scheduled, started and
# become Ready: a handful per phase, however large N.
MOST_WRITES = 12


def status_writes(world: World, rtype: ResourceType, start: Any) -> int:
    """MODIFIED events of ``rtype`` since ``start`` whose status changed."""
    watch = world.store.watch(rtype, start)
    seen: dict[str, Any] = {}
    n = 0
    for ev in watch.poll():
        name = ev.object.metadata.name
        if ev.type == "MODIFIED" and ev.object.status != seen.get(name):
            n += 1
        seen[name] = ev.object.status
    return n


def running(world: World) -> int:
    return sum(pod_phase(p) == "Running" for p in world.store.list(POD, NS).items)


@pytest.mark.parametrize(
    ("rtype", "manifest"),
    [
        (REPLICA_SET, lambda: replicaset(replicas=N, cpu="10m")),
        (JOB, lambda: job_manifest("wide", parallelism=N, completions=N, cpu="10m")),
        (STATEFUL_SET, lambda: statefulset(replicas=N, cpu="10m", policy="Parallel")),
    ],
    ids=["replicaset", "job", "statefulset"],
)
def test_a_burst_of_pod_writes_costs_a_few_syncs(
    world: World, rtype: ResourceType, manifest: Any
) -> None:
    world.apply(node_manifest("big", cpu="1000", pods=str(2 * N)))
    start = world.store.resource_version
    world.apply(manifest())
    world.run(until=timedelta(seconds=5))
    assert running(world) == N
    (owner,) = world.store.list(rtype, NS).items
    assert owner.status.ready == N if rtype == JOB else owner.status.ready_replicas == N
    assert status_writes(world, rtype, start) <= MOST_WRITES


def test_a_daemonset_over_many_nodes_costs_a_few_syncs(world: World) -> None:
    nodes = [node_manifest(f"n{i}", cpu="4") for i in range(N)]
    world.apply(*nodes)
    start = world.store.resource_version
    world.apply(daemonset())
    world.run(until=timedelta(seconds=5))
    assert running(world) == N
    (ds,) = world.store.list(DAEMON_SET, NS).items
    assert ds.status.number_ready == N
    assert status_writes(world, DAEMON_SET, start) <= MOST_WRITES
