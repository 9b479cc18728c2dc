"""Pods of equal priority created in the same instant are scheduled in the
order they were created, as kube-scheduler's queue orders them by the time
they entered it: also when the scheduler first sees them in a list (a world's
pods created before it starts, a resumed run), which comes in name order."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kuota.cli.main import main

from ..conftest import T0, World, node_manifest, pod_manifest

CREATED = ("p-z", "p-c", "p-a", "p-b")  # not name order

WORLD = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {capacity: {cpu: "1", memory: 1Gi, pods: "10"}}
""" + "".join(
    f"""---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default, annotations: {{kuota.dev/duration: 10s}}}}
spec: {{containers: [{{name: c, image: x, resources: {{requests: {{cpu: "1"}}}}}}]}}
"""
    for name in CREATED
)


def test_pods_listed_at_start_keep_their_creation_order() -> None:
    world = World()
    # Created before the scheduler runs: it first sees them in a list.
    world.apply(node_manifest("n1", cpu="1"), *(pod_manifest(n, duration="10s") for n in CREATED))
    world.run()
    starts = [(world.pod(n).status.start_time - T0).total_seconds() for n in CREATED]
    assert starts == [0, 10, 20, 30]


def _starts(state: Path) -> list[str]:
    r = CliRunner().invoke(main, ["get", "pods", "--state", str(state), "-o", "json"])
    assert r.exit_code == 0, r.output
    items = json.loads(r.output)["items"]
    return [i["metadata"]["name"] for i in sorted(items, key=lambda i: i["status"]["startTime"])]


def test_a_resumed_run_schedules_as_the_run_that_never_stopped(tmp_path: Path) -> None:
    world = tmp_path / "world.yaml"
    world.write_text(WORLD)
    once, twice = tmp_path / "once", tmp_path / "twice"
    run = ["run", "--no-live"]
    assert CliRunner().invoke(main, [*run, str(world), "--state", str(once)]).exit_code == 0
    # Stopped while three pods wait, then resumed: they are listed by name.
    r = CliRunner().invoke(main, [*run, str(world), "--state", str(twice), "--until", "5s"])
    assert r.exit_code == 0, r.output
    assert CliRunner().invoke(main, [*run, "--state", str(twice)]).exit_code == 0
    assert _starts(once) == list(CREATED)
    assert _starts(twice) == list(CREATED)
