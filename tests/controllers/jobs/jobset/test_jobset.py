"""JobSet through ``kuota run``: Kueue's JobSet integration (one Workload per
JobSet, a podSet per replicated job) over the JobSet operator's controller
(child Jobs, status, success and failure policies), as Kueue's docs and
JobSet's controller describe them; the JobSet webhook's rules through
``kuota validate``. Kueue's own example manifests are in ``kueue_examples/``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from kuota.cli.main import main

HERE = Path(__file__).parent
EXAMPLES = HERE / "kueue_examples"
CONFIG = """\
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
integrations:
  frameworks: [batch/job, jobset.x-k8s.io/jobset]
"""
NODES = """\
apiVersion: v1
kind: Node
metadata: {name: node-1, labels: {pool: a}}
status: {allocatable: {cpu: "16", memory: 64Gi, pods: "110"}}
"""


def _run(tmp_path: Path, *docs: str, until: str | None = None) -> Path:
    paths = []
    for i, text in enumerate(docs):
        p = tmp_path / f"doc{i}.yaml"
        p.write_text(text)
        paths.append(str(p))
    state = tmp_path / "state"
    args = ["run", *paths, "--state", str(state), "--no-live"]
    r = CliRunner().invoke(main, [*args, *(["--until", until] if until else [])])
    assert r.exit_code == 0, r.output
    return state


def _get(state: Path, kind: str) -> list[dict[str, Any]]:
    r = CliRunner().invoke(main, ["get", kind, "-A", "--state", str(state), "-o", "json"])
    assert r.exit_code == 0, r.output
    items: list[dict[str, Any]] = json.loads(r.output)["items"]
    return items


def _events(state: Path, reason: str) -> list[str]:
    return [
        f"{e['involvedObject']['name']}: {e['message']}"
        for e in _get(state, "events")
        if e["reason"] == reason
    ]


def _cond(obj: dict[str, Any], ctype: str) -> dict[str, Any] | None:
    return next(
        (c for c in obj.get("status", {}).get("conditions", []) if c["type"] == ctype), None
    )


def _with_duration(text: str, duration: str) -> str:
    """The example's pods sleep 100s: the simulated kubelet reads it from
    ``kuota.dev/duration`` on the pod template."""
    return text.replace(
        "          template:\n            spec:\n",
        "          template:\n"
        f"            metadata: {{annotations: {{kuota.dev/duration: {duration}}}}}\n"
        "            spec:\n",
    )


def test_kueues_sample_jobset_is_admitted_whole_and_completes(tmp_path: Path) -> None:
    sample = _with_duration((EXAMPLES / "sample-jobset.yaml").read_text(), "100s")
    setup = (EXAMPLES / "single-clusterqueue-setup.yaml").read_text()
    # Three of them against 9 cpu: each needs 3 (workers 1 + driver 2).
    state = _run(tmp_path, CONFIG, setup, NODES, sample, sample, sample, sample)
    sets = _get(state, "jobsets")
    assert len(sets) == 4
    for js in sets:
        assert js["status"]["terminalState"] == "Completed"
        assert _cond(js, "Completed")["status"] == "True"  # type: ignore[index]
    workloads = _get(state, "workloads")
    assert len(workloads) == 4  # one per JobSet, none per child Job
    for wl in workloads:
        ps = {p["name"]: p["count"] for p in wl["spec"]["podSets"]}
        assert ps == {"workers": 1, "driver": 1}
        assert wl["metadata"]["ownerReferences"][0]["kind"] == "JobSet"
    # 9 cpu hold three: the fourth waited for one to finish.
    waits = sorted((e for e in _events(state, "QuotaReserved")), key=lambda m: "100s" not in m)
    assert sum("wait time since queued was 100s" in w for w in waits) == 1, waits
    jobs = _get(state, "jobs")
    assert len(jobs) == 8 and {j["metadata"]["name"].rsplit("-", 2)[1] for j in jobs} == {
        "workers",
        "driver",
    }
    for job in jobs:
        labels = job["metadata"]["labels"]
        assert labels["jobset.sigs.k8s.io/jobset-name"] in {s["metadata"]["name"] for s in sets}
        assert labels["jobset.sigs.k8s.io/restart-attempt"] == "0"
        assert job["spec"]["completionMode"] == "Indexed"  # the JobSet webhook's default
        # The example turns DNS hostnames off: no subdomain on the pods.
        assert "subdomain" not in job["spec"]["template"]["spec"]


PRIORITIES = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: low}
value: 10
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
  - coveredResources: [cpu]
    flavors: [{name: pool-a, resources: [{name: cpu, nominalQuota: 4}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: default, name: q}
spec: {clusterQueue: cq}
"""


def _jobset(name: str, priority: str, duration: str, *, at: str = "", extra: str = "") -> str:
    created = f"\n  creationTimestamp: '{at}'" if at else ""
    return f"""\
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: {name}
  namespace: default{created}
  labels: {{kueue.x-k8s.io/queue-name: q, kueue.x-k8s.io/priority-class: {priority}}}
spec:{extra}
  replicatedJobs:
  - name: workers
    replicas: 2
    template:
      spec:
        parallelism: 2
        completions: 2
        backoffLimit: 0
        template:
          metadata: {{annotations: {{kuota.dev/duration: {duration}}}}}
          spec:
            containers: [{{name: c, image: busybox, resources: {{requests: {{cpu: 1}}}}}}]
"""


def test_a_preempted_jobset_is_suspended_whole_and_resumes_in_its_flavor(tmp_path: Path) -> None:
    low = _jobset("low", "low", "30m", at="2026-01-01T00:00:00Z")
    high = _jobset("high", "high", "10m", at="2026-01-01T00:05:00Z")
    state = _run(tmp_path, CONFIG, PRIORITIES, NODES, low, high)
    sets = {s["metadata"]["name"]: s for s in _get(state, "jobsets")}
    assert sets["low"]["status"]["terminalState"] == "Completed"
    assert sets["high"]["status"]["terminalState"] == "Completed"
    suspended = _events(state, "SuspendedJobs")
    assert any(m.startswith("low:") for m in suspended), suspended
    preempted = [
        w for w in _get(state, "workloads") if w["metadata"]["name"].startswith("jobset-low")
    ]
    assert _cond(preempted[0], "Preempted") is not None
    # Kueue's admission put the flavor's node labels on the replicated job's
    # template; the JobSet operator carried them to the child Jobs' pods.
    for job in _get(state, "jobs"):
        assert job["spec"]["template"]["spec"]["nodeSelector"] == {"pool": "a"}, job["metadata"]
    # The low one ran 5m, waited out the high one's 10m, then ran 30m anew
    # (its Jobs were suspended: their pods deleted, not paused).
    done = _cond(sets["low"], "Completed")["lastTransitionTime"]  # type: ignore[index]
    assert done == "2026-01-01T00:45:00Z"


def test_failure_policy_recreates_the_jobs_then_fails_at_max_restarts(tmp_path: Path) -> None:
    failing = _jobset("flaky", "low", "1m", extra="\n  failurePolicy: {maxRestarts: 2}").replace(
        "kuota.dev/duration: 1m", 'kuota.dev/duration: 1m, kuota.dev/fail: "true"'
    )
    state = _run(tmp_path, CONFIG, PRIORITIES, NODES, failing)
    (js,) = _get(state, "jobsets")
    st = js["status"]
    assert st["restarts"] == 2 and st["restartsCountTowardsMax"] == 2
    assert st["terminalState"] == "Failed"
    failed = _cond(js, "Failed")
    assert failed is not None and failed["reason"] == "ReachedMaxRestarts"
    assert failed["message"].startswith("jobset failed due to reaching max number of restarts")
    (wl,) = _get(state, "workloads")
    finished = _cond(wl, "Finished")
    assert finished is not None and finished["reason"] == "Failed"
    # The last attempt's Jobs stay, labelled with it.
    attempts = {
        j["metadata"]["labels"]["jobset.sigs.k8s.io/restart-attempt"] for j in _get(state, "jobs")
    }
    assert attempts == {"2"}


def test_success_policy_any_completes_on_the_first_targeted_job(tmp_path: Path) -> None:
    js = (
        _jobset(
            "any",
            "low",
            "5h",
            extra="\n  successPolicy: {operator: Any, targetReplicatedJobs: [driver]}",
        ).replace("replicas: 2", "replicas: 1")
        + """\
  - name: driver
    template:
      spec:
        completions: 1
        template:
          metadata: {annotations: {kuota.dev/duration: 5m}}
          spec:
            containers: [{name: c, image: busybox, resources: {requests: {cpu: 1}}}]
"""
    )
    state = _run(tmp_path, CONFIG, PRIORITIES, NODES, js)
    (obj,) = _get(state, "jobsets")
    done = _cond(obj, "Completed")
    assert done is not None and done["lastTransitionTime"] == "2026-01-01T00:05:00Z"
    # The workers still running were deleted with the JobSet's completion.
    assert [j["metadata"]["name"] for j in _get(state, "jobs")] == ["any-driver-0"]


BAD = """\
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: NAME, namespace: default}
spec:
  successPolicy: {operator: All, targetReplicatedJobs: [nope]}
  failurePolicy:
    rules:
    - {name: "1bad", action: FailJobSet, onJobFailureReasons: [OOM]}
  replicatedJobs:
  - name: a
    dependsOn: [{name: b, status: Ready}]
    template:
      spec:
        template:
          spec:
            containers: [{name: c, image: busybox}]
  - name: b
    replicas: 3
    template:
      spec:
        template:
          spec:
            containers: [{name: c, image: busybox}]
"""


def test_validate_refuses_what_the_jobset_webhook_refuses_with_paths(tmp_path: Path) -> None:
    p = tmp_path / "bad.yaml"
    # The CRD's own rule (CEL) is checked before the webhook is called: a
    # second JobSet breaks it.
    cel = BAD.replace("NAME", "cel").replace(
        "  successPolicy:", "  startupPolicy: {startupPolicyOrder: InOrder}\n  successPolicy:"
    )
    p.write_text(BAD.replace("NAME", "x" * 60) + "---\n" + cel)
    r = CliRunner().invoke(main, ["validate", str(p)])
    assert r.exit_code == 1, r.output
    out = " ".join(r.output.split())
    for expected in (
        'spec: Invalid value: "object": StartupPolicy and DependsOn APIs are mutually exclusive',
        "spec.replicatedJobs[0].dependsOn: Invalid value",
        "DependsOn can't be set for the first ReplicatedJob",
        "spec.replicatedJobs[1].name: Invalid value",
        "JobSet name is too long, job names generated for this JobSet will exceed 63 characters",
        'spec.successPolicy.targetReplicatedJobs[0]: Invalid value: "nope"',
        'spec.failurePolicy.rules[0].name: Invalid value: "1bad"',
        'spec.failurePolicy.rules[0].onJobFailureReasons[0]: Invalid value: "OOM"',
    ):
        assert expected in out, (expected, r.output)
    assert "Traceback" not in r.output


def test_kueues_sample_validates(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["validate", str(EXAMPLES)])
    assert r.exit_code == 0, r.output
