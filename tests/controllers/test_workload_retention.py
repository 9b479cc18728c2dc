"""Kueue's ``objectRetentionPolicies.workloads`` through ``kuota run``:
``afterFinished`` deletes a finished Workload that long after it finished
(its Job stays); ``afterDeactivatedByKueue`` deletes the Job (and so its
Workload and pods) of a Workload Kueue deactivated itself, here for running
beyond its maximum execution time. Unset, everything is kept (as before)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kuota.cli.main import main

CONFIG = """\
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
objectRetentionPolicies:
  workloads: {RETENTION}
---
"""
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
    flavors: [{name: default, resources: [{name: cpu, nominalQuota: 8}]}]
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
apiVersion: batch/v1
kind: Job
metadata:
  name: short
  namespace: default
  labels: {kueue.x-k8s.io/queue-name: q}
spec:
  template:
    metadata: {annotations: {kuota.dev/duration: 5m}}
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox, resources: {requests: {cpu: 1}}}]
---
apiVersion: batch/v1
kind: Job
metadata:
  name: overrun
  namespace: default
  labels: {kueue.x-k8s.io/queue-name: q, kueue.x-k8s.io/max-exec-time-seconds: "60"}
spec:
  template:
    metadata: {annotations: {kuota.dev/duration: 1h}}
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox, resources: {requests: {cpu: 1}}}]
"""


def _run(tmp_path: Path, retention: str | None) -> tuple[set[str], set[str], list[str]]:
    text = WORLD if retention is None else CONFIG.replace("{RETENTION}", retention) + WORLD
    world = tmp_path / "world.yaml"
    world.write_text(text)
    state = tmp_path / "state"
    r = CliRunner().invoke(main, ["run", str(world), "--state", str(state), "--until", "2h"])
    assert r.exit_code == 0, r.output

    def names(kind: str) -> set[str]:
        r = CliRunner().invoke(main, ["get", kind, "-A", "--state", str(state), "-o", "json"])
        assert r.exit_code == 0, r.output
        return {o["metadata"]["name"] for o in json.loads(r.output)["items"]}

    r = CliRunner().invoke(main, ["get", "events", "-A", "--state", str(state), "-o", "json"])
    events = [e["message"] for e in json.loads(r.output)["items"] if e["reason"] == "Deleted"]
    return names("jobs"), {n.split("-")[1] for n in names("workloads")}, events


def test_without_a_policy_everything_is_kept(tmp_path: Path) -> None:
    jobs, workloads, deleted = _run(tmp_path, None)
    assert jobs == {"short", "overrun"} and workloads == {"short", "overrun"}
    assert deleted == []


def test_after_finished_deletes_the_finished_workload_only(tmp_path: Path) -> None:
    jobs, workloads, deleted = _run(tmp_path, "{afterFinished: 10m}")
    assert jobs == {"short", "overrun"}
    # The overrun Job's Workload is deactivated, not finished: it stays.
    assert workloads == {"overrun"}
    assert deleted == ["Deleted finished workload due to elapsed retention"]


def test_after_deactivated_by_kueue_deletes_the_job(tmp_path: Path) -> None:
    jobs, workloads, deleted = _run(tmp_path, "{afterDeactivatedByKueue: 5m}")
    assert jobs == {"short"} and workloads == {"short"}
    assert deleted == ["Deleted job: deactivation retention period expired"]
