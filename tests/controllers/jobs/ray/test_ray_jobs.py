"""KubeRay's kinds through ``kuota run``: Kueue's RayJob, RayCluster and
RayService integrations over the simulated KubeRay operator, with Kueue's
own sample manifests (``kueue_examples/``, site/static/examples/jobs).

Translated from Kueue's tests (kubernetes-sigs/kueue@ff69552e):
``test/integration/singlecluster/controller/jobs/rayjob/rayjob_controller_test.go``
("Should reconcile RayJobs", "Should persist admission constraints on
default submitter pod template", "Should preempt lower priority rayJobs when
resource insufficient", "Should skip reconciliation for RayJobs with
clusterSelector"), ``pkg/controller/jobs/rayjob/rayjob_webhook_test.go`` and
``pkg/controller/jobs/raycluster/raycluster_webhook_test.go`` (the invalid
managed cases), ``pkg/controller/jobs/rayjob/rayjob_controller_test.go``
(TestPodSets: the submitter and the autoscaler)."""

from __future__ import annotations

import copy
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
  frameworks: [ray.io/rayjob, ray.io/raycluster, ray.io/rayservice]
"""
NODES = """\
apiVersion: v1
kind: Node
metadata: {name: node-1, labels: {pool: a}}
status: {allocatable: {cpu: "32", memory: 128Gi, pods: "110"}}
"""
QUEUES = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: pool-a}
spec: {nodeLabels: {pool: a}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
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
  - coveredResources: [cpu, memory]
    flavors: [{name: pool-a, resources: [{name: cpu, nominalQuota: 4}, {name: memory, nominalQuota: 8Gi}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: default, name: user-queue}
spec: {clusterQueue: cq}
"""


def _sample(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((EXAMPLES / f"{name}.yaml").read_text())
    return doc


def _job(name: str = "rayjob-sample", duration: str | None = "10m") -> dict[str, Any]:
    """Kueue's RayJob sample, its entrypoint running for ``duration``."""
    doc = _sample("ray-job-sample")
    doc["metadata"]["name"] = name
    if duration is not None:
        doc["metadata"]["annotations"] = {"kuota.dev/duration": duration}
    return doc


def _run(tmp_path: Path, *docs: str | dict[str, Any], code: int = 0, until: str = "") -> Path:
    paths = []
    for i, doc in enumerate(docs):
        p = tmp_path / f"doc{i}.yaml"
        p.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc))
        paths.append(str(p))
    state = tmp_path / "state"
    args = ["run", *paths, "--state", str(state), "--no-live"]
    r = CliRunner().invoke(main, [*args, "--until", until] if until else args)
    assert r.exit_code == code, r.output
    assert "Traceback" not in r.output
    return state


def _run_output(tmp_path: Path, *docs: str | dict[str, Any]) -> str:
    paths = []
    for i, doc in enumerate(docs):
        p = tmp_path / f"doc{i}.yaml"
        p.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc))
        paths.append(str(p))
    r = CliRunner().invoke(main, ["run", *paths, "--state", str(tmp_path / "s"), "--no-live"])
    assert r.exit_code == 1, r.output
    return " ".join(r.output.split())


def _get(state: Path, kind: str) -> list[dict[str, Any]]:
    r = CliRunner().invoke(main, ["get", kind, "-A", "--state", str(state), "-o", "json"])
    assert r.exit_code == 0, r.output
    items: list[dict[str, Any]] = json.loads(r.output)["items"]
    return items


def _cond(obj: dict[str, Any], ctype: str) -> dict[str, Any] | None:
    return next(
        (c for c in obj.get("status", {}).get("conditions", []) if c["type"] == ctype), None
    )


def _podsets(wl: dict[str, Any]) -> list[tuple[str, int]]:
    return [(p["name"], p["count"]) for p in wl["spec"]["podSets"]]


def test_kueues_sample_rayjob_runs_its_entrypoint_then_its_cluster_goes(tmp_path: Path) -> None:
    """One Workload: the head, the worker group and the default submitter
    (500m CPU, 200Mi); admitted, the job's templates (the default submitter
    too) carry the flavor's node labels; the cluster becomes ready, the
    submitter Job runs the entrypoint's 10 minutes, the RayJob is Complete
    and SUCCEEDED, its Workload Finished, and (shutdownAfterJobFinishes) its
    RayCluster and the cluster's pods are gone."""
    state = _run(tmp_path, CONFIG, QUEUES, NODES, _job())
    (wl,) = _get(state, "workloads")
    assert _podsets(wl) == [("head", 1), ("small-group", 1), ("submitter", 1)]
    submitter = wl["spec"]["podSets"][2]["template"]["spec"]["containers"][0]
    assert submitter["name"] == "ray-job-submitter"
    assert submitter["image"] == "rayproject/ray:2.9.0"
    assert submitter["resources"]["requests"] == {"cpu": "500m", "memory": "200Mi"}
    assert _cond(wl, "Finished")["reason"] == "Succeeded"  # type: ignore[index]
    (job,) = _get(state, "rayjobs")
    st = job["status"]
    assert (st["jobDeploymentStatus"], st["jobStatus"]) == ("Complete", "SUCCEEDED")
    assert st["startTime"] == "2026-01-01T00:00:00Z"
    assert st["endTime"] == "2026-01-01T00:10:00Z"
    assert st["rayClusterName"].startswith("rayjob-sample-")
    spec = job["spec"]
    assert spec["suspend"] is False and spec["submissionMode"] == "K8sJobMode"  # CRD default
    assert spec["submitterPodTemplate"]["spec"]["nodeSelector"] == {"pool": "a"}
    cluster = spec["rayClusterSpec"]
    assert cluster["headGroupSpec"]["template"]["spec"]["nodeSelector"] == {"pool": "a"}
    assert cluster["workerGroupSpecs"][0]["template"]["spec"]["nodeSelector"] == {"pool": "a"}
    assert _get(state, "rayclusters") == []
    (sub,) = _get(state, "jobs")
    assert sub["metadata"]["name"] == "rayjob-sample"
    assert sub["metadata"]["ownerReferences"][0]["kind"] == "RayJob"
    assert _cond(sub, "Complete")["status"] == "True"  # type: ignore[index]
    pods = _get(state, "pods")
    assert [p["metadata"]["labels"]["job-name"] for p in pods] == ["rayjob-sample"]
    # The CRD's printer columns.
    r = CliRunner().invoke(main, ["get", "rayjobs", "--state", str(state)])
    assert r.output.split("\n")[1].split()[:3] == ["rayjob-sample", "SUCCEEDED", "Complete"]


def test_the_cluster_of_a_running_rayjob_is_ready_with_kuberays_pods(tmp_path: Path) -> None:
    state = _run(tmp_path, CONFIG, QUEUES, NODES, _job(duration="1h"), until="5m")
    (job,) = _get(state, "rayjobs")
    assert job["status"]["jobDeploymentStatus"] == "Running"
    assert job["status"]["jobStatus"] == "RUNNING"
    assert job["status"]["rayClusterStatus"]["state"] == "ready"
    (rc,) = _get(state, "rayclusters")
    assert rc["metadata"]["ownerReferences"][0]["kind"] == "RayJob"
    assert rc["metadata"]["labels"]["ray.io/originated-from-crd"] == "RayJob"
    assert rc["status"]["desiredWorkerReplicas"] == 1
    assert rc["status"]["desiredCPU"] == "2"
    pods = {
        p["metadata"]["labels"].get("ray.io/node-type", "submitter"): p for p in _get(state, "pods")
    }
    assert set(pods) == {"head", "worker", "submitter"}
    assert pods["head"]["metadata"]["labels"]["ray.io/cluster"] == rc["metadata"]["name"]
    assert pods["worker"]["metadata"]["labels"]["ray.io/group"] == "small-group"
    assert pods["head"]["metadata"]["labels"]["kueue.x-k8s.io/podset"] == "head"
    for p in pods.values():
        assert p["status"]["phase"] == "Running"
        assert p["spec"]["nodeSelector"] == {"pool": "a"}
    # Kueue made one Workload, the RayJob's: its cluster is the RayJob's.
    (wl,) = _get(state, "workloads")
    assert wl["metadata"]["ownerReferences"][0]["kind"] == "RayJob"


def test_a_preempted_rayjob_is_suspended_its_cluster_deleted_and_it_runs_again(
    tmp_path: Path,
) -> None:
    """Kueue's "Should preempt lower priority rayJobs when resource
    insufficient": the high-priority job (at 00:05) preempts the running one,
    whose RayJob is suspended (Suspending, then Suspended: its RayCluster
    deleted); when the high one is done (00:15) the low one is admitted
    again and runs its whole entrypoint anew (to 00:45)."""
    low = _job("low", "30m")
    low["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    high = _job("high", "10m")
    high["metadata"]["creationTimestamp"] = "2026-01-01T00:05:00Z"
    for c in ("headGroupSpec",):
        high["spec"]["rayClusterSpec"][c]["template"]["spec"]["priorityClassName"] = "high"
    state = _run(tmp_path, CONFIG, QUEUES, NODES, low, high)
    jobs = {j["metadata"]["name"]: j for j in _get(state, "rayjobs")}
    assert jobs["high"]["status"]["endTime"] == "2026-01-01T00:15:00Z"
    assert jobs["low"]["status"]["jobDeploymentStatus"] == "Complete"
    assert jobs["low"]["status"]["startTime"] == "2026-01-01T00:15:00Z"
    assert jobs["low"]["status"]["endTime"] == "2026-01-01T00:45:00Z"
    r = CliRunner().invoke(main, ["get", "events", "-A", "--state", str(state), "-o", "json"])
    events = json.loads(r.output)["items"]
    said = {(e["involvedObject"]["kind"], e["reason"]) for e in events}
    assert {("Workload", "Preempted"), ("RayJob", "Stopped")} <= said, said


def test_kueues_samples_raycluster_rayservice_and_autoscaling_rayjob(tmp_path: Path) -> None:
    """The RayCluster and RayService samples are admitted whole (head and
    worker group) and become ready; the elastic autoscaling RayJob
    (ElasticJobsViaWorkloadSlices, on by default) counts KubeRay's
    autoscaler sidecar (500m CPU, 512Mi) in its head."""
    state = _run(
        tmp_path,
        CONFIG,
        SETUP.read_text(),
        NODES,
        _sample("ray-cluster-sample"),
        _sample("ray-service-sample"),
        _sample("ray-job-autoscaling-sample"),
    )
    wls = {w["metadata"]["ownerReferences"][0]["kind"]: w for w in _get(state, "workloads")}
    assert {k: _podsets(w) for k, w in wls.items()} == {
        "RayCluster": [("head", 1), ("small-group", 1)],
        "RayService": [("head", 1), ("small-group", 1)],
        "RayJob": [("head", 1), ("small-group", 1), ("submitter", 1)],
    }
    head = wls["RayJob"]["spec"]["podSets"][0]["template"]["spec"]["containers"]
    assert [c["name"] for c in head] == ["ray-head", "autoscaler"]
    assert head[1]["resources"]["requests"] == {"cpu": "500m", "memory": "512Mi"}
    for w in wls.values():
        assert _cond(w, "Admitted")["status"] == "True"  # type: ignore[index]
    clusters = {c["metadata"]["name"]: c for c in _get(state, "rayclusters")}
    assert clusters["raycluster-complete"]["status"]["state"] == "ready"
    assert clusters["raycluster-complete"]["spec"]["suspend"] is False
    (svc,) = _get(state, "rayservices")
    assert _cond(svc, "Ready")["reason"] == "NonZeroServeEndpoints"  # type: ignore[index]
    assert svc["status"]["serviceStatus"] == "Running"
    assert svc["status"]["activeServiceStatus"]["rayClusterName"] in clusters
    r = CliRunner().invoke(
        main, ["get", "rayclusters", "raycluster-complete", "--state", str(state)]
    )
    assert r.output.split("\n")[1].split() == [
        "raycluster-complete",
        "1",
        "1",
        "2",
        "3G",
        "0",
        "ready",
        "0s",
    ], r.output


def test_kueue_refuses_what_its_ray_webhooks_refuse(tmp_path: Path) -> None:
    """rayjob_webhook_test "invalid managed - has cluster selector and
    RayClusterSpec", shutdownAfterJobFinishes, "worker group uses head name",
    "invalid managed - too many worker groups"; raycluster_webhook_test's
    autoscaling without workload slicing."""
    both = _job("both")
    both["spec"]["clusterSelector"] = {"ray.io/cluster": "existing"}
    keep = _job("keep")
    keep["spec"]["shutdownAfterJobFinishes"] = False
    groups = keep["spec"]["rayClusterSpec"]["workerGroupSpecs"]
    groups[0]["groupName"] = "head"
    many = _job("many")
    wg = many["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]
    many["spec"]["rayClusterSpec"]["workerGroupSpecs"] = [
        {**copy.deepcopy(wg), "groupName": f"g{i}"} for i in range(8)
    ]
    scaling = _sample("ray-cluster-sample")
    scaling["spec"]["enableInTreeAutoscaling"] = True
    out = _run_output(tmp_path, CONFIG, QUEUES, NODES, both, keep, many, scaling)
    for expected in (
        'RayJob.ray.io "both" is invalid: spec.clusterSelector: Invalid value:',
        "a kueue managed job should not use an existing cluster",
        'RayJob.ray.io "keep" is invalid: spec.shutdownAfterJobFinishes: Invalid value: false: '
        "a kueue managed job should delete the cluster after finishing",
        'spec.rayClusterSpec.workerGroupSpecs[0].groupName: Forbidden: "head" is reserved for '
        "the head group",
        'RayJob.ray.io "many" is invalid: spec.rayClusterSpec.workerGroupSpecs: Too many: 9: '
        "must have at most 8 items",
        'RayCluster.ray.io "raycluster-complete" is invalid: spec.enableInTreeAutoscaling: '
        "Invalid value: true: a kueue-managed RayCluster can use autoscaling only as an elastic "
        "job: enable the ElasticJobsViaWorkloadSlices feature gate and set the "
        '"kueue.x-k8s.io/elastic-job": "true" annotation',
    ):
        assert expected in out, (expected, out)


def test_kuberay_fails_a_rayjob_its_checks_refuse(tmp_path: Path) -> None:
    """KubeRay's ValidateRayJobSpec (run by its controller, not a webhook):
    ValidationFailed with KubeRay's message; Kueue then puts the Workload on
    hold, its quota released ("Should put the workload on hold when RayJob
    validation fails")."""
    bad = _job("bad")
    wg = bad["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]
    wg["minReplicas"], wg["maxReplicas"] = 3, 2
    state = _run(tmp_path, CONFIG, QUEUES, NODES, bad)
    (job,) = _get(state, "rayjobs")
    assert job["status"]["jobDeploymentStatus"] == "ValidationFailed"
    assert job["status"]["reason"] == "ValidationFailed"
    assert job["status"]["message"] == (
        "The RayJob spec is invalid: worker group small-group has minReplicas 3 greater than "
        "maxReplicas 2"
    )
    assert _get(state, "rayclusters") == []
    (wl,) = _get(state, "workloads")
    held = _cond(wl, "QuotaReserved")
    assert held is not None and (held["status"], held["reason"]) == ("False", "OnHold")
    assert held["message"] == "Job is on hold"
    assert "admission" not in wl["status"]


def test_a_rayjob_on_an_existing_cluster_is_not_kueues(tmp_path: Path) -> None:
    """ "Should skip reconciliation for RayJobs with clusterSelector": no
    Workload (KubeRay runs it on the named cluster; kuota does not model that)."""
    job = _job("selector")
    del job["spec"]["rayClusterSpec"]
    job["spec"]["clusterSelector"] = {"ray.io/cluster": "existing-cluster"}
    state = _run(tmp_path, CONFIG, QUEUES, NODES, job)
    assert _get(state, "workloads") == []


def test_validate_accepts_kueues_ray_samples_and_refuses_bad_fields(tmp_path: Path) -> None:
    samples = sorted(str(p) for p in EXAMPLES.glob("*.yaml"))
    r = CliRunner().invoke(main, ["validate", *samples])
    assert r.exit_code == 0, r.output
    assert f"{len(samples)} valid" in r.output
    bad = _job("bad")
    bad["spec"]["submissionMode"] = "ByPigeon"
    bad["spec"]["managedBy"] = "someone/else"
    p = tmp_path / "bad.yaml"
    p.write_text(yaml.safe_dump(bad))
    r = CliRunner().invoke(main, ["validate", str(p)])
    assert r.exit_code == 1, r.output
    out = " ".join(r.output.split())
    assert 'spec.submissionMode: Unsupported value: "ByPigeon"' in out, out
    assert "Traceback" not in r.output
