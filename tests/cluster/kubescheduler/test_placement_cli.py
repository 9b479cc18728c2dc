"""``kuota run`` of a world with nodes, taints and affinities: unplaced pods
show kube-scheduler's reason in ``kuota get pods`` and ``kuota describe pod``."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from kuota.cli.main import main

WORLD = """
apiVersion: v1
kind: Node
metadata: {name: gpu-1, labels: {pool: gpu}}
status: {allocatable: {cpu: "32", memory: 128Gi, nvidia.com/gpu: "4"}}
---
apiVersion: v1
kind: Node
metadata: {name: spot-1, labels: {pool: gpu}}
spec:
  taints: [{key: spot, value: "true", effect: NoSchedule}]
status: {allocatable: {cpu: "32", memory: 128Gi, nvidia.com/gpu: "8"}}
---
apiVersion: v1
kind: Node
metadata: {name: cpu-1, labels: {pool: cpu}}
status: {allocatable: {cpu: "16", memory: 64Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: train, namespace: default, annotations: {kuota.dev/duration: 1h}}
spec:
  containers:
  - name: main
    image: x
    resources: {requests: {cpu: "4", nvidia.com/gpu: "8"}, limits: {nvidia.com/gpu: "8"}}
---
apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: default, labels: {app: web}, annotations: {kuota.dev/duration: 1h}}
spec:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions: [{key: pool, operator: In, values: [cpu]}]
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - topologyKey: kubernetes.io/hostname
        labelSelector: {matchLabels: {app: web}}
  containers: [{name: main, image: x, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: web-2, namespace: default, labels: {app: web}, annotations: {kuota.dev/duration: 1h}}
spec:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions: [{key: pool, operator: In, values: [cpu]}]
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - topologyKey: kubernetes.io/hostname
        labelSelector: {matchLabels: {app: web}}
  containers: [{name: main, image: x, resources: {requests: {cpu: "1"}}}]
"""

TRAIN_WHY = (
    "0/3 nodes are available: 1 node(s) had untolerated taint {spot: true}, "
    "2 Insufficient nvidia.com/gpu. "
    # 8 GPUs is more than any untainted node has: evicting would not help.
    "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
)
WEB_WHY = (
    "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
    "1 node(s) didn't match pod anti-affinity rules, 1 node(s) had untolerated taint {spot: true}. "
    "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, "
    "2 Preemption is not helpful for scheduling."
)


def test_run_then_get_and_describe_show_why_pods_wait(tmp_path: Path) -> None:
    world = tmp_path / "world.yaml"
    world.write_text(WORLD)
    state = str(tmp_path / "state")
    runner = CliRunner()
    r = runner.invoke(main, ["run", str(world), "--state", state, "--no-live", "--until", "10m"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(main, ["get", "pods", "--state", state, "-o", "wide"])
    assert r.exit_code == 0, r.output
    rows = {line.split()[0]: line.split() for line in r.output.splitlines()[1:4]}
    assert rows["web-1"][-1] == "cpu-1" and rows["train"][2] == "Pending"
    assert "2 pod(s) not placed (PodScheduled=False):" in r.output
    notes = r.output.splitlines()[-2:]
    assert notes == [f"  train: Unschedulable: {TRAIN_WHY}", f"  web-2: Unschedulable: {WEB_WHY}"]
    r = runner.invoke(main, ["describe", "pod", "train", "--state", state])
    assert r.exit_code == 0, r.output
    assert "Node:             <none>" in r.output
    assert f"Not placed:       Unschedulable: {TRAIN_WHY}\n" in r.output
    assert "FailedScheduling" in r.output  # the event, as kube-scheduler records it
    assert "node.kubernetes.io/not-ready:NoExecute op=Exists for 300s" in r.output
    r = runner.invoke(main, ["describe", "pod", "nope", "--state", state])
    assert r.exit_code == 1 and 'pods "nope" not found' in r.output
