"""Issue 31 §5, in the issue's own words: ``kuota get workloads NAME`` is
accepted, and ``kuota get workloads -o yaml`` shows ``podSets[].name``,
``count`` and ``podSetAssignments[].name``."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from kuota.cli.main import main

WORLD = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: default, resources: [{name: cpu, nominalQuota: 10}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: default, name: q}
spec: {clusterQueue: cq}
---
apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: default, labels: {kueue.x-k8s.io/queue-name: q}}
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
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "8", memory: 8Gi, pods: "110"}}
"""


def _state(tmp_path: Path) -> str:
    world = tmp_path / "world.yaml"
    world.write_text(WORLD)
    state = str(tmp_path / "state")
    r = CliRunner().invoke(
        main, ["run", str(world), "--state", state, "--no-live", "--until", "1m"]
    )
    assert r.exit_code == 0, r.output
    return state


def test_get_workloads_name(tmp_path: Path) -> None:
    state = _state(tmp_path)
    r = CliRunner().invoke(main, ["get", "workloads", "--state", state, "-o", "json"])
    (name,) = [w["metadata"]["name"] for w in json.loads(r.output)["items"]]
    r = CliRunner().invoke(main, ["get", "workloads", name, "--state", state])
    assert r.exit_code == 0, r.output
    header, row = r.output.splitlines()
    assert header.split()[:2] == ["NAME", "QUEUE"]
    assert row.split()[:4] == [name, "q", "cq", "True"]
    missing = CliRunner().invoke(main, ["get", "workloads", "nope", "--state", state])
    assert missing.exit_code != 0
    assert 'workloads.kueue.x-k8s.io "nope" not found' in missing.output


def test_get_workloads_yaml_shows_pod_set_names_counts_and_assignment_names(
    tmp_path: Path,
) -> None:
    state = _state(tmp_path)
    r = CliRunner().invoke(main, ["get", "workloads", "-o", "yaml", "--state", state])
    assert r.exit_code == 0, r.output
    (wl,) = yaml.safe_load(r.output)["items"]
    assert [(p["name"], p["count"]) for p in wl["spec"]["podSets"]] == [("main", 2)]
    (psa,) = wl["status"]["admission"]["podSetAssignments"]
    assert (psa["name"], psa["count"], psa["flavors"]) == ("main", 2, {"cpu": "default"})
