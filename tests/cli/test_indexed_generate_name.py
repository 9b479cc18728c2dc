"""An Indexed Job named by ``generateName`` (as Kueue's own sample-job.yaml
is): the API server generates the name before it validates, so the pod
hostname check (``<name>-<completions-1>`` must be a DNS label) sees the
generated name. kuota once checked the empty name and refused the Job with
``metadata.name: Invalid value: ""``."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from kuota.cli.main import main

WORLD = """\
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cluster-queue}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: 9}
      - {name: memory, nominalQuota: 36Gi}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: default, name: user-queue}
spec: {clusterQueue: cluster-queue}
---
apiVersion: v1
kind: Node
metadata: {name: node-1}
status:
  allocatable: {cpu: "16", memory: 64Gi, pods: "110"}
---
apiVersion: batch/v1
kind: Job
metadata:
  generateName: GENERATE
  namespace: default
  labels: {kueue.x-k8s.io/queue-name: user-queue}
spec:
  completionMode: Indexed
  parallelism: 3
  completions: 3
  suspend: true
  template:
    metadata:
      annotations: {kuota.dev/duration: 5m}
    spec:
      containers:
      - name: dummy-job
        image: registry.k8s.io/e2e-test-images/agnhost:2.53
        resources: {requests: {cpu: 1, memory: 200Mi}}
      restartPolicy: Never
"""


def _world(tmp_path: Path, generate: str) -> str:
    p = tmp_path / "world.yaml"
    p.write_text(WORLD.replace("GENERATE", generate))
    return str(p)


def test_validate_and_run_accept_it(tmp_path: Path) -> None:
    world = _world(tmp_path, "sample-job-")
    r = CliRunner().invoke(main, ["validate", world])
    assert r.exit_code == 0, r.output
    state = tmp_path / "state"
    r = CliRunner().invoke(main, ["run", world, "--state", str(state), "--no-live"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["get", "jobs", "-n", "default", "--state", str(state)])
    assert r.exit_code == 0, r.output
    (line,) = [ln for ln in r.output.splitlines() if ln.startswith("sample-job-")]
    assert "3/3" in line, r.output  # completed, all three indexes


def test_a_generated_name_too_long_for_the_last_pod_is_refused(tmp_path: Path) -> None:
    base = "j" * 60 + "-"  # cut to 58, plus 5 generated, plus "-2": 66 > 63
    r = CliRunner().invoke(main, ["validate", _world(tmp_path, base)])
    assert r.exit_code == 1, r.output
    assert "metadata.generateName: Invalid value" in r.output
    assert "will not able to create pod with invalid DNS label" in r.output


def test_get_o_yaml_shows_defaulted_fields_as_a_cluster_does(tmp_path: Path) -> None:
    """``kubectl get workloads -o yaml`` on a cluster shows ``podSets[].name``
    and ``count`` and ``podSetAssignments[].name`` (defaults the API server
    stored); kuota's output once left out every field equal to its default."""
    state = tmp_path / "state"
    world = tmp_path / "one.yaml"  # count 1: the default, once left out
    world.write_text(WORLD.replace("GENERATE", "one-").replace("parallelism: 3", "parallelism: 1"))
    r = CliRunner().invoke(main, ["run", str(world), "--state", str(state), "--no-live"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["get", "workloads", "-A", "--state", str(state), "-o", "json"])
    assert r.exit_code == 0, r.output
    (wl,) = json.loads(r.output)["items"]
    (ps,) = wl["spec"]["podSets"]
    assert (ps["name"], ps["count"]) == ("main", 1)
    (psa,) = wl["status"]["admission"]["podSetAssignments"]
    assert psa["name"] == "main"
    r = CliRunner().invoke(
        main, ["get", "cq", "cluster-queue", "--state", str(state), "-o", "yaml"]
    )
    assert r.exit_code == 0, r.output
    cq = yaml.safe_load(r.output)
    assert cq["spec"]["queueingStrategy"] == "BestEffortFIFO"
    assert cq["spec"]["preemption"]["withinClusterQueue"] == "Never"
