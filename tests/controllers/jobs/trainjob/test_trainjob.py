"""Kubeflow Trainer v2 TrainJobs through ``kuota run``: Kueue's TrainJob
integration over the simulated trainer (a JobSet built from the runtime),
which the JobSet operator runs; with the manifests of Kueue's "Run A
TrainJob" page (``kueue_examples/``, site/content/en/docs/tasks/run/trainjobs.md).

Translated from Kueue's tests (kubernetes-sigs/kueue@ff69552e):
``test/integration/singlecluster/controller/jobs/trainjob/trainjob_controller_test.go``
("Should reconcile Trainjobs", "Should finish the preemption when the
trainjob becomes inactive", "Should schedule TrainJobs as they fit in their
ClusterQueue")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from kuota.cli.main import main

HERE = Path(__file__).parent
EXAMPLES = HERE / "kueue_examples"
CONFIG = """\
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
integrations:
  frameworks: [trainer.kubeflow.org/trainjob, jobset.x-k8s.io/jobset]
"""
WORLD = """\
apiVersion: v1
kind: Node
metadata: {name: gpu-1, labels: {pool: a}}
status: {allocatable: {cpu: "32", memory: 128Gi, pods: "110", nvidia.com/gpu: "8"}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: pool-a}
spec: {nodeLabels: {pool: a}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: pool-a
      resources:
      - {name: cpu, nominalQuota: 8}
      - {name: memory, nominalQuota: 64Gi}
      - {name: nvidia.com/gpu, nominalQuota: 4}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: default, name: user-queue}
spec: {clusterQueue: cq}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: team-a, name: team-a-queue}
spec: {clusterQueue: cq}
"""


def _doc(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((EXAMPLES / f"{name}.yaml").read_text())
    return doc


def _with_duration(job: dict[str, Any], duration: str) -> dict[str, Any]:
    """The TrainJob's trainer pods running for ``duration``, said by a
    runtime patch of the user's own (their annotation)."""
    pod = {"metadata": {"annotations": {"kuota.dev/duration": duration}}}
    job["spec"]["runtimePatches"] = [
        {
            "manager": "example.com/user",
            "trainingRuntimeSpec": {
                "template": {
                    "spec": {
                        "replicatedJobs": [
                            {"name": "node", "template": {"spec": {"template": pod}}}
                        ]
                    }
                }
            },
        }
    ]
    return job


def _run(tmp_path: Path, *docs: str | dict[str, Any]) -> tuple[Path, str]:
    paths = []
    for i, doc in enumerate(docs):
        p = tmp_path / f"doc{i}.yaml"
        p.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc))
        paths.append(str(p))
    state = tmp_path / "state"
    r = CliRunner().invoke(main, ["run", *paths, "--state", str(state), "--no-live"])
    assert r.exit_code == 0, r.output
    assert "not managed by Kueue" not in r.output, r.output
    return state, r.output


def _get(state: Path, kind: str) -> list[dict[str, Any]]:
    r = CliRunner().invoke(main, ["get", kind, "-A", "--state", str(state), "-o", "json"])
    assert r.exit_code == 0, r.output
    items: list[dict[str, Any]] = json.loads(r.output)["items"]
    return items


def _cond(obj: dict[str, Any], ctype: str) -> dict[str, Any] | None:
    return next(
        (c for c in obj.get("status", {}).get("conditions", []) if c["type"] == ctype), None
    )


def test_kueues_trainjobs_run_as_their_runtimes_jobsets(tmp_path: Path) -> None:
    """Both runtimes of the page: one Workload per TrainJob, its podSets the
    runtime JobSet's (``node`` x numNodes); admitted, Kueue's runtime patch
    carries the flavor's node selector, the trainer's JobSet (owned by the
    TrainJob) runs its pods with it, the TrainJob's image and resourcesPerNode."""
    state, _ = _run(
        tmp_path,
        CONFIG,
        WORLD.replace("{name: cpu, nominalQuota: 8}", "{name: cpu, nominalQuota: 10}"),
        _doc("cluster-training-runtime"),
        _doc("training-runtime"),
        _doc("trainjob-cluster-runtime"),
        _doc("trainjob-namespaced-runtime"),
    )
    podsets = {
        w["metadata"]["ownerReferences"][0]["name"]: [
            (p["name"], p["count"]) for p in w["spec"]["podSets"]
        ]
        for w in _get(state, "workloads")
    }
    assert podsets == {"pytorch-distributed": [("node", 2)], "pytorch-custom": [("node", 1)]}
    jobs = {j["metadata"]["name"]: j for j in _get(state, "trainjobs")}
    patch = next(
        p
        for p in jobs["pytorch-distributed"]["spec"]["runtimePatches"]
        if p["manager"] == "kueue.x-k8s.io/manager"
    )
    (rjob,) = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    assert rjob["template"]["spec"]["template"]["spec"]["nodeSelector"] == {"pool": "a"}
    sets = {s["metadata"]["name"]: s for s in _get(state, "jobsets")}
    assert sets["pytorch-distributed"]["metadata"]["ownerReferences"][0]["kind"] == "TrainJob"
    assert sets["pytorch-distributed"]["spec"]["suspend"] is False
    pods: dict[str, list[dict[str, Any]]] = {"default": [], "team-a": []}
    for p in _get(state, "pods"):
        pods[p["metadata"]["namespace"]].append(p)
    assert len(pods["default"]) == 2 and len(pods["team-a"]) == 1
    for p in pods["default"]:
        c = p["spec"]["containers"][0]
        assert p["spec"]["nodeSelector"] == {"pool": "a"}
        assert c["resources"]["requests"] == {"cpu": "4", "memory": "8Gi", "nvidia.com/gpu": "1"}
    assert pods["team-a"][0]["spec"]["containers"][0]["image"] == (
        "docker.io/team-a/custom-training:latest"
    )
    st = jobs["pytorch-distributed"]["status"]
    assert st["jobsStatus"][0]["name"] == "node" and st["jobsStatus"][0]["active"] == 1


def test_a_preempted_trainjob_is_suspended_then_resumes_and_completes(tmp_path: Path) -> None:
    """Two TrainJobs that each take the whole quota (2 nodes x 4 CPU): the
    high-priority one (at 00:05) preempts the running one, whose JobSet is
    suspended and Kueue's patch cleared; it resumes when the high one
    completes (00:15) and completes at 00:45; both Workloads Finished."""
    low = _with_duration(_doc("trainjob-cluster-runtime"), "30m")
    low["metadata"]["name"] = "low"
    low["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    high = _with_duration(_doc("trainjob-cluster-runtime"), "10m")
    high["metadata"]["name"] = "high"
    high["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "high"
    high["metadata"]["creationTimestamp"] = "2026-01-01T00:05:00Z"
    state, _ = _run(tmp_path, CONFIG, WORLD, _doc("cluster-training-runtime"), low, high)
    jobs = {j["metadata"]["name"]: j for j in _get(state, "trainjobs")}
    for name, at in (("high", "2026-01-01T00:15:00Z"), ("low", "2026-01-01T00:45:00Z")):
        done = _cond(jobs[name], "Complete")
        assert done is not None and done["status"] == "True", (name, jobs[name]["status"])
        assert done["lastTransitionTime"] == at, (name, done)
    resumed = _cond(jobs["low"], "Suspended")
    assert resumed is not None and resumed["reason"] == "Resumed"
    assert resumed["lastTransitionTime"] == "2026-01-01T00:15:00Z"
    for w in _get(state, "workloads"):
        assert _cond(w, "Finished")["reason"] == "Succeeded"  # type: ignore[index]


def test_a_trainjob_without_its_runtime_gets_no_workload(tmp_path: Path) -> None:
    state, _ = _run(tmp_path, CONFIG, WORLD, _doc("trainjob-cluster-runtime"))
    assert _get(state, "workloads") == []
    (job,) = _get(state, "trainjobs")
    assert job["spec"]["suspend"] is True
    r = CliRunner().invoke(main, ["get", "events", "-A", "--state", str(state), "-o", "json"])
    reasons = {e["reason"] for e in json.loads(r.output)["items"]}
    assert "TrainingRuntimeNotFound" in reasons, reasons


def test_validate_accepts_the_pages_manifests() -> None:
    docs = sorted(str(p) for p in EXAMPLES.glob("*.yaml"))
    r = CliRunner().invoke(main, ["validate", *docs])
    assert r.exit_code == 0, r.output
    assert f"{len(docs)} valid" in r.output
