"""Queue statuses as Kueue writes them (pkg/cache/scheduler/cache.go getUsage
and filterLocalQueueUsage; apis/kueue/v1beta2 *_types.go): every flavor of
the ClusterQueue's resource groups in their order, every covered resource
(sorted) with 0 when unused, ``borrowed`` beyond the nominal quota for a
ClusterQueue in a cohort, and the workload counts written even when 0 (no
``omitempty``), so a client reading ``status["admittedWorkloads"]`` (Kueue's
Python sample does) finds it."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kuota.cli.main import main

WORLD = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  capacity: {cpu: "32", memory: 128Gi, pods: "110"}
  allocatable: {cpu: "32", memory: 128Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: f1}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: f2}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: a}
spec:
  cohortName: co
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [memory, cpu]
    flavors:
    - name: f2
      resources: [{name: memory, nominalQuota: 1Gi}, {name: cpu, nominalQuota: "1"}]
    - name: f1
      resources: [{name: memory, nominalQuota: 1Gi}, {name: cpu, nominalQuota: "1"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: b}
spec:
  cohortName: co
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: f2
      resources: [{name: cpu, nominalQuota: "4"}, {name: memory, nominalQuota: 4Gi}]
    - name: f1
      resources: [{name: cpu, nominalQuota: "4"}, {name: memory, nominalQuota: 4Gi}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: qa, namespace: default}
spec: {clusterQueue: a}
---
apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: default, labels: {kueue.x-k8s.io/queue-name: qa}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox, command: [sleep, "600"], resources: {requests: {cpu: "2500m", memory: 1536Mi}}}]
"""


def _get(state: Path, kind: str, name: str = "") -> dict:
    r = CliRunner().invoke(
        main, ["get", kind, *([name] if name else []), "--state", str(state), "-o", "json"]
    )
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_queue_status_lists_every_flavor_and_resource_as_kueue_does(tmp_path: Path) -> None:
    world = tmp_path / "world.yaml"
    world.write_text(WORLD)
    state = tmp_path / "state"
    r = CliRunner().invoke(
        main, ["run", str(world), "--state", str(state), "--no-live", "--until", "60s"]
    )
    assert r.exit_code == 0, r.output
    a = _get(state, "clusterqueues", "a")["status"]
    used = [
        {
            "name": "f2",
            "resources": [
                {"name": "cpu", "total": "2500m", "borrowed": "1500m"},
                {"name": "memory", "total": "1536Mi", "borrowed": "512Mi"},
            ],
        },
        {
            "name": "f1",
            "resources": [{"name": "cpu", "total": "0"}, {"name": "memory", "total": "0"}],
        },
    ]
    assert a["flavorsReservation"] == used
    assert a["flavorsUsage"] == used
    assert (a["pendingWorkloads"], a["reservingWorkloads"], a["admittedWorkloads"]) == (0, 1, 1)
    # the other queue of the cohort: nothing used, everything said
    b = _get(state, "clusterqueues", "b")["status"]
    assert (b["pendingWorkloads"], b["reservingWorkloads"], b["admittedWorkloads"]) == (0, 0, 0)
    assert [f["name"] for f in b["flavorsUsage"]] == ["f2", "f1"]
    assert all(
        r == {"name": r["name"], "total": "0"} for f in b["flavorsUsage"] for r in f["resources"]
    )
    (lq,) = _get(state, "localqueues")["items"]
    st = lq["status"]
    assert st["flavorsUsage"] == [
        {
            "name": "f2",
            "resources": [{"name": "cpu", "total": "2500m"}, {"name": "memory", "total": "1536Mi"}],
        },
        {
            "name": "f1",
            "resources": [{"name": "cpu", "total": "0"}, {"name": "memory", "total": "0"}],
        },
    ]
    assert (st["pendingWorkloads"], st["reservingWorkloads"], st["admittedWorkloads"]) == (0, 1, 1)
