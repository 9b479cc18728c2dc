"""What an admitted workload's pods carry, as Kueue's
``getPodSetsInfoFromStatus`` writes it: the pod set's label always; under the
TopologyAwareScheduling gate (on by default) the Workload's name as the
``kueue.x-k8s.io/workload`` annotation on every pod, placed on a topology or
not; under AssignQueueLabelsForPods (on by default) the LocalQueue's and
ClusterQueue's names as labels. A Job and a plain pod, each gate on and off."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kuota.api.features import FEATURE_GATE_DEPENDENCIES
from kuota.cli.main import main

WORLD = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team-a}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: default, resources: [{name: cpu, nominalQuota: 8}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: default, name: q}
spec: {clusterQueue: team-a}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "16", memory: 64Gi, pods: "110"}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: default, labels: {kueue.x-k8s.io/queue-name: q}}
spec:
  parallelism: 2
  completions: 2
  template:
    metadata: {annotations: {kuota.dev/duration: 1h}}
    spec:
      restartPolicy: Never
      containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata:
  name: solo
  namespace: default
  labels: {kueue.x-k8s.io/queue-name: q}
  annotations: {kuota.dev/duration: 1h}
spec:
  restartPolicy: Never
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
"""

CONFIG = """\
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
integrations: {frameworks: [batch/job, pod]}
"""

WORKLOAD = "kueue.x-k8s.io/workload"
LQ = "kueue.x-k8s.io/local-queue-name"
CQ = "kueue.x-k8s.io/cluster-queue-name"


def _pods(tmp_path: Path, gates: str) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    (tmp_path / "world.yaml").write_text(WORLD)
    (tmp_path / "config.yaml").write_text(CONFIG + gates)
    state = tmp_path / "state"
    r = CliRunner().invoke(main, ["run", str(tmp_path), "--state", str(state), "--until", "10m"])
    assert r.exit_code == 0, r.output
    got = CliRunner().invoke(main, ["get", "pods", "-A", "--state", str(state), "-o", "json"])
    assert got.exit_code == 0, got.output
    pods = {p["metadata"]["name"]: p["metadata"] for p in json.loads(got.output)["items"]}
    wls = CliRunner().invoke(main, ["get", "workloads", "-A", "--state", str(state), "-o", "json"])
    owners = {
        w["metadata"]["ownerReferences"][0]["name"]: w["metadata"]["name"]
        for w in json.loads(wls.output)["items"]
    }
    return pods, owners


def test_by_default_every_pod_carries_its_workload_and_queues(tmp_path: Path) -> None:
    pods, owners = _pods(tmp_path, "")
    train = [m for name, m in pods.items() if name.startswith("train-")]
    assert len(train) == 2
    for meta in [*train, pods["solo"]]:
        owner = "solo" if meta["name"] == "solo" else "train"
        assert meta["annotations"][WORKLOAD] == owners[owner]
        assert (meta["labels"][LQ], meta["labels"][CQ]) == ("q", "team-a")
        assert meta["labels"]["kueue.x-k8s.io/podset"] == "main"


@pytest.mark.parametrize(
    ("gate", "gone"),
    [("TopologyAwareScheduling", (WORKLOAD,)), ("AssignQueueLabelsForPods", (LQ, CQ))],
)
def test_a_gate_turned_off_takes_its_keys_away(
    tmp_path: Path, gate: str, gone: tuple[str, ...]
) -> None:
    # (the gates that depend on it go off with it, else the file is refused)
    off = [gate, *(g for g, deps in FEATURE_GATE_DEPENDENCIES.items() if gate in deps)]
    pods, _ = _pods(tmp_path, "featureGates: {" + ", ".join(f"{g}: false" for g in off) + "}\n")
    assert len(pods) == 3
    for meta in pods.values():
        keys = {**(meta.get("annotations") or {}), **(meta.get("labels") or {})}
        assert not set(gone) & set(keys), meta
        assert meta["labels"]["kueue.x-k8s.io/podset"] == "main"
