"""Kubeflow's training jobs through ``kuota run``: Kueue's integrations (one
Workload per job, a podSet per replica type in Kueue's order) over the
training operator's controller (pods per replica, Running, Succeeded,
Suspended, clean-pod policy), with Kueue's own sample manifests
(``kueue_examples/``); the operator's webhooks through ``kuota validate``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from kuota.cli.main import main

HERE = Path(__file__).parent
EXAMPLES = HERE / "kueue_examples"
SETUP = HERE.parent / "jobset" / "kueue_examples" / "single-clusterqueue-setup.yaml"
CONFIG = """\
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
integrations:
  frameworks: [kubeflow.org/pytorchjob, kubeflow.org/tfjob, kubeflow.org/paddlejob,
               kubeflow.org/xgboostjob, kubeflow.org/jaxjob]
"""
NODES = """\
apiVersion: v1
kind: Node
metadata: {name: node-1, labels: {pool: a}}
status: {allocatable: {cpu: "32", memory: 128Gi, pods: "110"}}
"""
FIELDS = {
    "PyTorchJob": "pytorchReplicaSpecs",
    "TFJob": "tfReplicaSpecs",
    "PaddleJob": "paddleReplicaSpecs",
    "XGBoostJob": "xgbReplicaSpecs",
    "JAXJob": "jaxReplicaSpecs",
}


def _with_durations(doc: dict[str, Any], durations: dict[str, str]) -> str:
    """The sample with each replica's pods running for a given time
    (``kuota.dev/duration``; "10m" where not named)."""
    for rtype, spec in doc["spec"][FIELDS[doc["kind"]]].items():
        meta = spec["template"].setdefault("metadata", {})
        meta.setdefault("annotations", {})["kuota.dev/duration"] = durations.get(rtype, "10m")
    return yaml.safe_dump(doc)


def _run(tmp_path: Path, *docs: str) -> Path:
    paths = []
    for i, text in enumerate(docs):
        p = tmp_path / f"doc{i}.yaml"
        p.write_text(text)
        paths.append(str(p))
    state = tmp_path / "state"
    r = CliRunner().invoke(main, ["run", *paths, "--state", str(state), "--no-live"])
    assert r.exit_code == 0, r.output
    assert "not managed by Kueue" not in r.output, r.output
    return state


def _get(state: Path, kind: str) -> list[dict[str, Any]]:
    r = CliRunner().invoke(main, ["get", kind, "-A", "--state", str(state), "-o", "json"])
    assert r.exit_code == 0, r.output
    items: list[dict[str, Any]] = json.loads(r.output)["items"]
    return items


def _cond(obj: dict[str, Any], ctype: str) -> dict[str, Any] | None:
    return next(
        (c for c in obj.get("status", {}).get("conditions", []) if c["type"] == ctype), None
    )


def _sample(kind: str) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((EXAMPLES / f"sample-{kind.lower()}.yaml").read_text())
    return doc


def test_kueues_samples_are_admitted_whole_and_succeed(tmp_path: Path) -> None:
    docs = [_with_durations(_sample(k), {"PS": "10h"} if k == "TFJob" else {}) for k in FIELDS]
    state = _run(tmp_path, CONFIG, SETUP.read_text(), NODES, *docs)
    podsets = {
        w["metadata"]["ownerReferences"][0]["kind"]: [
            (p["name"], p["count"]) for p in w["spec"]["podSets"]
        ]
        for w in _get(state, "workloads")
    }
    assert podsets == {
        "PyTorchJob": [("master", 1), ("worker", 1)],
        "TFJob": [("ps", 1), ("worker", 2)],
        "PaddleJob": [("master", 1), ("worker", 2)]
        if "Master" in _sample("PaddleJob")["spec"]["paddleReplicaSpecs"]
        else [("worker", 2)],
        "XGBoostJob": [("master", 1), ("worker", 2)],
        "JAXJob": [("worker", 2)],
    }
    for kind in FIELDS:
        (job,) = _get(state, kind.lower() + "s")
        done = _cond(job, "Succeeded")
        assert done is not None and done["status"] == "True", (kind, job["status"])
        assert done["reason"] == f"{kind}Succeeded"
        assert _cond(job, "Running")["status"] == "False"  # type: ignore[index]
    # The TFJob succeeded with worker 0 (its default success policy) while
    # its parameter server ran on: cleanPodPolicy Running (TFJob's default)
    # deleted that pod; the others keep theirs (None).
    pods = {p["metadata"]["name"] for p in _get(state, "pods")}
    assert "tensorflow-dist-mnist-ps-0" not in pods
    assert {
        "tensorflow-dist-mnist-worker-0",
        "pytorch-simple-master-0",
        "jax-simple-worker-1",
    } <= pods
    for w in _get(state, "workloads"):
        assert _cond(w, "Finished")["reason"] == "Succeeded"  # type: ignore[index]
    # The CRD's State column: the last condition's type (``conditions[-1:]``).
    r = CliRunner().invoke(main, ["get", "pytorchjobs", "--state", str(state)])
    assert r.output.split("\n")[1].split()[:2] == ["pytorch-simple", "Succeeded"], r.output


def test_pod_labels_and_restart_policy(tmp_path: Path) -> None:
    state = _run(
        tmp_path, CONFIG, SETUP.read_text(), NODES, _with_durations(_sample("PyTorchJob"), {})
    )
    pods = {p["metadata"]["name"]: p for p in _get(state, "pods")}
    master = pods["pytorch-simple-master-0"]
    labels = master["metadata"]["labels"]
    assert labels["training.kubeflow.org/job-name"] == "pytorch-simple"
    assert labels["training.kubeflow.org/replica-type"] == "master"
    assert labels["training.kubeflow.org/replica-index"] == "0"
    assert labels["training.kubeflow.org/job-role"] == "master"
    assert (
        "training.kubeflow.org/job-role"
        not in pods["pytorch-simple-worker-0"]["metadata"]["labels"]
    )
    assert master["spec"]["restartPolicy"] == "OnFailure"
    assert master["metadata"]["ownerReferences"][0]["kind"] == "PyTorchJob"


QUEUES = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: pool-a}
spec: {nodeLabels: {pool: a}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors: [{name: pool-a, resources: [{name: cpu, nominalQuota: 2}, {name: memory, nominalQuota: 8Gi}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: default, name: user-queue}
spec: {clusterQueue: cq}
"""


def test_a_preempted_job_is_suspended_its_pods_deleted_and_it_resumes(tmp_path: Path) -> None:
    low = _sample("PyTorchJob")
    low["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    high = _sample("PyTorchJob")
    high["metadata"]["name"] = "urgent"
    high["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "high"
    high["metadata"]["creationTimestamp"] = "2026-01-01T00:05:00Z"
    state = _run(
        tmp_path,
        CONFIG,
        QUEUES,
        NODES,
        _with_durations(low, {"Master": "30m", "Worker": "30m"}),
        _with_durations(high, {}),
    )
    jobs = {j["metadata"]["name"]: j for j in _get(state, "pytorchjobs")}
    low_job = jobs["pytorch-simple"]
    suspended = _cond(low_job, "Suspended")
    # Suspended at 00:05 (its pods deleted), resumed at 00:15, done at 00:45.
    assert suspended is not None and suspended["status"] == "False"
    assert suspended["reason"] == "PyTorchJobResumed"
    assert suspended["lastTransitionTime"] == "2026-01-01T00:15:00Z"
    assert _cond(low_job, "Succeeded")["lastTransitionTime"] == "2026-01-01T00:45:00Z"  # type: ignore[index]
    for pod in _get(state, "pods"):
        assert pod["spec"]["nodeSelector"] == {"pool": "a"}, pod["metadata"]["name"]


BAD = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: 9bad, namespace: default}
spec:
  runPolicy: {managedBy: someone/else}
  pytorchReplicaSpecs:
    Master:
      replicas: 2
      template:
        spec:
          containers: [{name: main, image: ""}]
    Chief:
      template:
        spec:
          containers: [{name: pytorch, image: busybox}]
"""


def test_validate_refuses_what_the_operators_webhook_refuses(tmp_path: Path) -> None:
    p = tmp_path / "bad.yaml"
    p.write_text(BAD)
    r = CliRunner().invoke(main, ["validate", str(p)])
    assert r.exit_code == 1, r.output
    out = " ".join(r.output.split())
    for expected in (
        'metadata.name: Invalid value: "9bad": should match:',
        'spec.runPolicy.managedBy: Unsupported value: "someone/else"',
        'spec.pytorchReplicaSpecs[Chief]: Unsupported value: "Chief"',
        "spec.pytorchReplicaSpecs[Master].template.spec.containers[0].image: Required value",
        "spec.pytorchReplicaSpecs[Master].template.spec.containers: Required value: must have at "
        "least one container with name pytorch",
        "spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1",
    ):
        assert expected in out, (expected, r.output)
    assert "Traceback" not in r.output


def test_kueues_sample_mpijob_runs_then_its_ttl_deletes_it(tmp_path: Path) -> None:
    """mpi-operator v2beta1: podSets launcher and worker (Kueue's order); the
    job succeeds with its launcher, cleanPodPolicy Running removes the
    workers still running (sshd), and ttlSecondsAfterFinished: 60 removes
    the job a minute later."""
    doc = yaml.safe_load((EXAMPLES / "sample-mpijob.yaml").read_text())
    for rtype, duration in (("Launcher", "5m"), ("Worker", "10h")):
        meta = doc["spec"]["mpiReplicaSpecs"][rtype]["template"].setdefault("metadata", {})
        meta["annotations"] = {"kuota.dev/duration": duration}
    config = CONFIG.replace("kubeflow.org/jaxjob]", "kubeflow.org/jaxjob, kubeflow.org/mpijob]")
    files = [config, SETUP.read_text(), NODES, yaml.safe_dump(doc)]
    paths = []
    for i, text in enumerate(files):
        p = tmp_path / f"doc{i}.yaml"
        p.write_text(text)
        paths.append(str(p))
    state = tmp_path / "state"
    args = ["run", *paths, "--state", str(state), "--no-live"]
    r = CliRunner().invoke(main, [*args, "--until", "5m30s"])
    assert r.exit_code == 0, r.output
    (wl,) = _get(state, "workloads")
    assert [(p["name"], p["count"]) for p in wl["spec"]["podSets"]] == [
        ("launcher", 1),
        ("worker", 2),
    ]
    assert _cond(wl, "Finished")["reason"] == "Succeeded"  # type: ignore[index]
    (job,) = _get(state, "mpijobs")
    assert _cond(job, "Succeeded")["reason"] == "MPIJobSucceeded"  # type: ignore[index]
    assert job["spec"]["slotsPerWorker"] == 1 and job["spec"]["mpiImplementation"] == "OpenMPI"
    names = {p["metadata"]["name"] for p in _get(state, "pods")}
    assert names == {"pi-launcher"}  # the workers, still running, were cleaned
    r = CliRunner().invoke(main, ["run", "--state", str(state), "--no-live"])
    assert r.exit_code == 0, r.output
    assert _get(state, "mpijobs") == []


def test_validate_refuses_what_mpi_operator_refuses(tmp_path: Path) -> None:
    p = tmp_path / "bad.yaml"
    p.write_text(
        "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: m, namespace: default}\n"
        "spec:\n  mpiImplementation: LAM\n  mpiReplicaSpecs:\n    Launcher:\n      replicas: 2\n"
        "      restartPolicy: Always\n      template: {spec: {containers: [{name: l, image: x}]}}\n"
    )
    r = CliRunner().invoke(main, ["validate", str(p)])
    assert r.exit_code == 1, r.output
    out = " ".join(r.output.split())
    assert "spec.mpiReplicaSpecs[Launcher].replicas: Invalid value: 2: must be 1" in out, out
    assert 'spec.mpiReplicaSpecs[Launcher].restartPolicy: Unsupported value: "Always"' in out
    assert 'spec.mpiImplementation: Unsupported value: "LAM"' in out
