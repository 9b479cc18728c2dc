"""Pods created in the same instant are scheduled in the order they were
created (kube-scheduler queues pods in the order they arrive), not in the
name order a listing gives."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from kuota.cli.world import load_world
from kuota.embedded.controlplane import ControlPlane
from kuota.store.resources import POD

_POD = """---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: ml, annotations: {{kuota.dev/duration: 10m}}}}
spec:
  restartPolicy: Never
  containers: [{{name: c, image: x, resources: {{requests: {{cpu: "1"}}}}}}]
"""


def test_same_instant_pods_run_in_creation_order(tmp_path: Path) -> None:
    names = ["p-c", "p-a", "p-b"]  # created in this order, one CPU each, one CPU in all
    world = tmp_path / "world.yaml"
    world.write_text(
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: ml}\n---\n"
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
        'status: {capacity: {cpu: "1", memory: 1Gi, pods: "110"}}\n'
        + "".join(_POD.format(name=n) for n in names)
    )
    w = load_world([str(world)])
    assert w.config is not None and not w.problems
    cp = ControlPlane(w.config, datetime(2026, 1, 1, tzinfo=UTC))
    cp.submit(w.objects)
    cp.run()
    started = {p.metadata.name: p.status.start_time for p in cp.store.list(POD, "ml").items}
    assert sorted(names, key=lambda n: started[n]) == names
