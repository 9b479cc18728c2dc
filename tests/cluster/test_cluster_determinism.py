"""The same world run twice gives the same store, object for object."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from kuota.api.decode import to_wire
from kuota.cluster.podutil import JOB
from kuota.store.resources import POD

from .conftest import NS, World, job_manifest, node_manifest, pod_manifest


def run_world() -> tuple[int, list[tuple[tuple[str, str], dict[str, Any]]], timedelta]:
    world = World()
    spot = [{"key": "spot", "value": "true", "effect": "NoSchedule"}]
    tolerate = [{"key": "spot", "operator": "Exists"}]
    world.apply(
        node_manifest("cpu-1", cpu="4"),
        node_manifest("cpu-2", cpu="2", pods="3"),
        node_manifest("gpu-1", cpu="8", extra={"nvidia.com/gpu": "4"}, taints=spot),
        job_manifest("train", parallelism=2, completions=5, extra={"nvidia.com/gpu": "2"}),
        job_manifest("gpu-tolerant", parallelism=2, completions=4, tolerations=tolerate),
        job_manifest("flaky", fail=True, backoff_limit=1, duration="20s"),
        job_manifest("idx", parallelism=3, completions=5, indexed=True, duration="45s"),
        job_manifest("deadline", duration=None, active_deadline=200, cpu="500m"),
        pod_manifest("solo-high", duration="90s", priority=10, cpu="2"),
        pod_manifest("solo-low", duration="30s", cpu="2"),
    )
    world.run(until=timedelta(seconds=50))
    world.store.patch(JOB, NS, "idx", {"spec": {"suspend": True}})
    world.run(until=timedelta(seconds=80))
    world.store.patch(JOB, NS, "idx", {"spec": {"suspend": False}})
    world.run()
    return (
        world.store.resource_version,
        [(rt, to_wire(o)) for rt, o in world.store.objects()],
        world.elapsed,
    )


def test_two_runs_store_identical_objects() -> None:
    first, second = run_world(), run_world()
    assert first == second
    writes, objects, _ = first
    assert writes > 100
    kinds = [rt for rt, _ in objects]
    assert kinds.count(JOB) == 5 and kinds.count(POD) > 10
