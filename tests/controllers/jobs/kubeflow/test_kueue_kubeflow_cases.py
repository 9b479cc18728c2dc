"""Cases of Kueue's own Kubeflow job tests (kubernetes-sigs/kueue@ff69552e,
pkg/controller/jobs/kubeflow/jobs/{pytorchjob,tfjob}/*_controller_test.go and
test/integration/singlecluster/controller/jobs/pytorchjob), translated to
``kuota run``: the same jobs and queues, only what the Go test asserts. Each
test names the Go test and case; tests/scenarios/INDEX.md lists them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from kuota.cli.main import main

CONFIG = """\
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
integrations:
  frameworks: [kubeflow.org/pytorchjob, kubeflow.org/tfjob]
"""
# The integration suite's "interacting with scheduler" queues.
QUEUES = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: on-demand}
spec: {nodeLabels: {cloud.provider.com/instance: on-demand}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: spot-untainted}
spec: {nodeLabels: {cloud.provider.com/instance: spot-untainted}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: dev-clusterqueue}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - {name: spot-untainted, resources: [{name: cpu, nominalQuota: 5}]}
    - {name: on-demand, resources: [{name: cpu, nominalQuota: 5}]}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: default, name: local-queue}
spec: {clusterQueue: dev-clusterqueue}
---
apiVersion: v1
kind: Node
metadata: {name: spot, labels: {cloud.provider.com/instance: spot-untainted}}
status: {allocatable: {cpu: "8", memory: 64Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: on-demand, labels: {cloud.provider.com/instance: on-demand}}
status: {allocatable: {cpu: "8", memory: 64Gi, pods: "110"}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: scheduling-priority}
value: 300
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: master-priority}
value: 200
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: worker-priority}
value: 100
"""


def _replica(rtype: str, replicas: int, cpu: str, *, pc: str = "", ann: str = "") -> str:
    pcl = f"\n          priorityClassName: {pc}" if pc else ""
    return f"""\
    {rtype}:
      replicas: {replicas}
      restartPolicy: Never
      template:
        metadata: {{annotations: {{kuota.dev/duration: 10m{ann}}}}}
        spec:{pcl}
          containers: [{{name: pytorch, image: busybox, resources: {{requests: {{cpu: "{cpu}"}}}}}}]
"""


def _pytorch(name: str, *replicas: str, run_policy: str = "") -> str:
    return f"""\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: {name}
  namespace: default
  labels: {{kueue.x-k8s.io/queue-name: local-queue}}
spec:{run_policy}
  pytorchReplicaSpecs:
{"".join(replicas)}"""


def _run(tmp_path: Path, *docs: str) -> tuple[Path, str]:
    tmp_path.mkdir(exist_ok=True)
    world = tmp_path / "world.yaml"
    world.write_text("---\n".join([CONFIG, QUEUES, *docs]))
    state = tmp_path / "state"
    r = CliRunner().invoke(
        main, ["run", str(world), "--state", str(state), "--no-live", "--until", "1m"]
    )
    assert "Traceback" not in r.output, r.output
    return state, " ".join(r.output.split())


def _get(state: Path, kind: str) -> list[dict[str, Any]]:
    r = CliRunner().invoke(main, ["get", kind, "-A", "--state", str(state), "-o", "json"])
    assert r.exit_code == 0, r.output
    items: list[dict[str, Any]] = json.loads(r.output)["items"]
    return items


def _workload(state: Path, owner: str) -> dict[str, Any]:
    (wl,) = (
        w for w in _get(state, "workloads") if w["metadata"]["ownerReferences"][0]["name"] == owner
    )
    return wl


def test_schedule_jobs_as_they_fit_in_their_cluster_queue(tmp_path: Path) -> None:
    """test/integration/singlecluster/controller/jobs/pytorchjob/pytorchjob_controller_test.go
    "Job controller interacting with scheduler" / "Should schedule jobs as they
    fit in their ClusterQueue" (kubeflowjob.go
    ShouldScheduleJobsAsTheyFitInTheirClusterQueue): Master (3 cpu) takes
    spot-untainted, Worker (4 cpu) no longer fits there and takes on-demand;
    the job runs with each flavor's node label on its replica's template."""
    job = _pytorch("job", _replica("Master", 1, "3"), _replica("Worker", 1, "4"))
    state, _ = _run(tmp_path, job)
    (created,) = _get(state, "pytorchjobs")
    assert created["spec"]["runPolicy"]["suspend"] is False
    specs = created["spec"]["pytorchReplicaSpecs"]
    inst = "cloud.provider.com/instance"
    assert specs["Master"]["template"]["spec"]["nodeSelector"][inst] == "spot-untainted"
    assert specs["Worker"]["template"]["spec"]["nodeSelector"][inst] == "on-demand"


def test_priority_class_from_run_policy_then_replicas_in_kueues_order(tmp_path: Path) -> None:
    """pytorchjob_controller_test.go TestPriorityClass: "priority specified at
    runPolicy and replicas; use priority in runPolicy", "specified on master
    takes precedence over worker", "master present, but without priority;
    fallback to worker", "worker present, but without priority; fallback to
    empty" — the Workload's priorityClassRef and priority."""
    policy = "\n  runPolicy: {schedulingPolicy: {priorityClass: scheduling-priority}}"
    jobs = [
        _pytorch(
            "run-policy",
            _replica("Master", 1, "100m", pc="master-priority"),
            _replica("Worker", 1, "100m", pc="worker-priority"),
            run_policy=policy,
        ),
        _pytorch(
            "master-first",
            _replica("Master", 1, "100m", pc="master-priority"),
            _replica("Worker", 1, "100m", pc="worker-priority"),
        ),
        _pytorch(
            "fallback-worker",
            _replica("Master", 1, "100m"),
            _replica("Worker", 1, "100m", pc="worker-priority"),
        ),
        _pytorch("none", _replica("Master", 1, "100m"), _replica("Worker", 1, "100m")),
    ]
    state, _ = _run(tmp_path, *jobs)

    def prio(owner: str) -> tuple[str | None, int | None]:
        spec = _workload(state, owner)["spec"]
        return (spec.get("priorityClassRef") or {}).get("name"), spec.get("priority")

    assert prio("run-policy") == ("scheduling-priority", 300)
    assert prio("master-first") == ("master-priority", 200)
    assert prio("fallback-worker") == ("worker-priority", 100)
    assert prio("none") in {(None, None), (None, 0)}


def test_pod_sets_in_replica_order_with_topology_requests(tmp_path: Path) -> None:
    """pytorchjob_controller_test.go TestPodSets "with required and preferred
    topology annotation" and TestOrderedReplicaTypes "job has all replicas"
    (Worker written first, Master still first): each pod set carries its
    annotation's request and the replica index as pod index label."""
    job = _pytorch(
        "pytorchjob",
        _replica(
            "Worker", 1, "100m", ann=", kueue.x-k8s.io/podset-preferred-topology: cloud.com/block"
        ),
        _replica(
            "Master", 1, "100m", ann=", kueue.x-k8s.io/podset-required-topology: cloud.com/rack"
        ),
    )
    state, _ = _run(tmp_path, job)
    sets = _workload(state, "pytorchjob")["spec"]["podSets"]
    assert [(p["name"], p["count"]) for p in sets] == [("master", 1), ("worker", 1)]
    assert sets[0]["topologyRequest"] == {
        "required": "cloud.com/rack",
        "podIndexLabel": "training.kubeflow.org/replica-index",
    }
    assert sets[1]["topologyRequest"] == {
        "preferred": "cloud.com/block",
        "podIndexLabel": "training.kubeflow.org/replica-index",
    }


def test_validate_refuses_kueues_invalid_tas_requests(tmp_path: Path) -> None:
    """pytorchjob_controller_test.go TestValidate "invalid TAS request" and
    "invalid slice topology request - slice size larger than number of
    podsets": errors keyed by replica type. The Go test calls Kueue's
    ValidateOnCreate alone; in a cluster the training operator's webhook
    refuses that job first (a Master of 5 replicas), so its Worker half is
    checked on a job whose Master is valid."""
    both = (
        ", kueue.x-k8s.io/podset-required-topology: cloud.com/rack,"
        " kueue.x-k8s.io/podset-preferred-topology: cloud.com/block"
    )
    sliced = (
        ", kueue.x-k8s.io/podset-required-topology: cloud.com/rack,"
        " kueue.x-k8s.io/podset-slice-required-topology: cloud.com/block,"
        ' kueue.x-k8s.io/podset-slice-size: "{n}"'
    )
    two = _pytorch(
        "two", _replica("Master", 1, "100m", ann=both), _replica("Worker", 3, "100m", ann=both)
    )
    big = _pytorch(
        "big",
        _replica("Master", 5, "100m", ann=sliced.format(n=10)),
        _replica("Worker", 10, "100m", ann=sliced.format(n=20)),
    )
    worker = _pytorch(
        "worker",
        _replica("Master", 1, "100m"),
        _replica("Worker", 10, "100m", ann=sliced.format(n=20)),
    )
    _, out = _run(tmp_path, two, worker)
    _, refused = _run(tmp_path / "big", big)
    msg = (
        'must not contain more than one topology annotation: ["kueue.x-k8s.io/podset-required-topology", '
        '"kueue.x-k8s.io/podset-preferred-topology", "kueue.x-k8s.io/podset-unconstrained-topology"]'
    )
    for rtype in ("Master", "Worker"):
        assert (
            f"spec.pytorchReplicaSpecs[{rtype}].template.metadata.annotations: Invalid value: {msg}"
        ) in out, out
    ann = "template.metadata.annotations[kueue.x-k8s.io/podset-slice-size]"
    assert (
        "PyTorchJob/default/big: spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1"
        in (refused)
    )
    assert (
        f'spec.pytorchReplicaSpecs[Worker].{ann}: Invalid value: "20": '
        "must not be greater than pod set count 10"
    ) in out, out
