"""``status.resourceRequests`` (Kueue's PropagateResourceRequests): a workload
left pending says what it asked for, per pod set, in Kueue's quantity format;
once admitted, ``admission.podSetAssignments[].resourceUsage`` supersedes it
and it is cleared."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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
  - coveredResources: [cpu, memory]
    flavors: [{name: default, resources: [{name: cpu, nominalQuota: 4}, {name: memory, nominalQuota: 16Gi}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: default, name: q}
spec: {clusterQueue: cq}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
---
"""


def _job(name: str) -> str:
    return f"""\
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: default
  labels: {{kueue.x-k8s.io/queue-name: q}}
spec:
  parallelism: 2
  completions: 2
  template:
    metadata: {{annotations: {{kuota.dev/duration: 30m}}}}
    spec:
      restartPolicy: Never
      containers: [{{name: c, image: x, resources: {{requests: {{cpu: 1500m, memory: 3Gi}}}}}}]
"""


def _workloads(state: Path) -> dict[str, dict[str, Any]]:
    r = CliRunner().invoke(main, ["get", "workloads", "-A", "--state", str(state), "-o", "json"])
    assert r.exit_code == 0, r.output
    return {w["metadata"]["name"].split("-")[1]: w for w in json.loads(r.output)["items"]}


def test_pending_workload_shows_its_requests_and_admission_clears_them(tmp_path: Path) -> None:
    world = tmp_path / "world.yaml"
    world.write_text(WORLD + _job("first") + "---\n" + _job("second"))
    state = tmp_path / "state"
    r = CliRunner().invoke(main, ["run", str(world), "--state", str(state), "--until", "10m"])
    assert r.exit_code == 0, r.output
    wls = _workloads(state)
    # 2 × 1500m cpu fits the 4 cpus once: the second waits.
    assert "resourceRequests" not in wls["first"]["status"]
    assert wls["second"]["status"]["resourceRequests"] == [
        {"name": "main", "resources": {"cpu": "3", "memory": "6Gi"}}
    ]
    r = CliRunner().invoke(main, ["run", str(world), "--state", str(state), "--until", "45m"])
    assert r.exit_code == 0, r.output
    second = _workloads(state)["second"]
    assert second["status"]["admission"]["clusterQueue"] == "cq"
    assert "resourceRequests" not in second["status"]
