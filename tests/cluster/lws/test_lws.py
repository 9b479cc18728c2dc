"""LeaderWorkerSets in a world under ``kuota run``, and the Service kind
their groups use."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner

from kuota.cli.main import main

from ..conftest import NS, decode
from .conftest import (
    errors_of,
)

# ------------------------------------------------------------------ kuota run / get
WORLD = """
apiVersion: v1
kind: Node
metadata: {name: gpu-1, labels: {nvidia.com/gpu.present: "true"}}
status:
  allocatable: {cpu: "32", memory: 128Gi, nvidia.com/gpu: "8"}
---
apiVersion: v1
kind: Node
metadata: {name: gpu-2, labels: {nvidia.com/gpu.present: "true"}}
status:
  allocatable: {cpu: "32", memory: 128Gi, nvidia.com/gpu: "8"}
---
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: vllm, namespace: serving}
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 2
    workerTemplate:
      spec:
        containers:
        - name: vllm
          image: vllm/vllm-openai:v0.8.5
          resources:
            limits: {nvidia.com/gpu: "4"}
"""


def test_a_world_with_a_leader_worker_set_runs_under_kuota_run(tmp_path: Path) -> None:
    world = tmp_path / "world.yaml"
    world.write_text(WORLD)
    state = tmp_path / "state"
    r = CliRunner().invoke(main, ["run", str(world), "--state", str(state), "--no-live"])
    assert r.exit_code == 0, r.output
    assert "Traceback" not in r.output
    r = CliRunner().invoke(main, ["get", "lws", "-n", "serving", "--state", str(state)])
    assert r.exit_code == 0, r.output
    lines = [line.split() for line in r.output.splitlines()]
    assert lines[0] == ["NAME", "READY", "DESIRED", "UP-TO-DATE", "AGE"]
    assert lines[1][:4] == ["vllm", "2", "2", "2"]
    r = CliRunner().invoke(main, ["get", "pods", "-n", "serving", "--state", str(state)])
    running = [line.split()[0] for line in r.output.splitlines() if " Running " in line]
    assert sorted(running) == ["vllm-0", "vllm-0-1", "vllm-1", "vllm-1-1"]


def test_a_bad_leader_worker_set_in_a_world_is_a_clear_error(tmp_path: Path) -> None:
    world = tmp_path / "world.yaml"
    world.write_text(WORLD.replace("size: 2", "size: 0"))
    r = CliRunner().invoke(main, ["run", str(world), "--no-live"])
    assert r.exit_code != 0
    assert (
        "spec.leaderWorkerTemplate.size: Invalid value: 0: size must be equal or greater than 1"
        in r.output
    )
    assert "Traceback" not in r.output


# ------------------------------------------------------------------ Service
def service_manifest(name: str = "vllm", **spec: Any) -> dict[str, Any]:
    body = {"selector": {"app": "vllm"}, "ports": [{"port": 8080}], **spec}
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": NS},
        "spec": body,
    }


def test_services_decode_and_are_validated() -> None:
    svc = decode(service_manifest(clusterIP="None", publishNotReadyAddresses=True))
    assert svc.spec.type == "ClusterIP" and svc.spec.ports[0].protocol == "TCP"  # API defaults
    for manifest, error in [
        (
            service_manifest(ports=[{"port": 0}]),
            "spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
        ),
        (service_manifest(type="Balanced"), 'spec.type: Unsupported value: "Balanced"'),
        (
            service_manifest(type="NodePort", clusterIP="None"),
            "spec.clusterIPs[0]: Invalid value: \"None\": may only be set to 'None' for ClusterIP services",
        ),
        (service_manifest("0svc"), 'metadata.name: Invalid value: "0svc": a DNS-1035 label'),
    ]:
        errs = errors_of(manifest)
        assert any(e.startswith(error) for e in errs), errs
