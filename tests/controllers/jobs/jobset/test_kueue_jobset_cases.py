"""Cases of Kueue's own JobSet tests (kubernetes-sigs/kueue@ff69552e),
translated to ``kuota run`` / ``kuota validate``: the same JobSet and queues,
only what the Go test asserts. Each test names the Go test and case it
translates; tests/scenarios/INDEX.md lists them."""

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
  frameworks: [batch/job, jobset.x-k8s.io/jobset]
"""
# The integration suite's flavors: spot-untainted (1 cpu) before on-demand (5).
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
    - {name: spot-untainted, resources: [{name: cpu, nominalQuota: 1}]}
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
"""


def _rjob(
    name: str, replicas: int, parallelism: int, completions: int, cpu: str, extra: str = ""
) -> str:
    # replicas is omitempty in JobSet's Go type: a 0 the Go tests set is
    # never sent, and the CRD's default (1) applies.
    rep = f"\n    replicas: {replicas}" if replicas else ""
    return f"""\
  - name: {name}{rep}
    template:
      spec:
        parallelism: {parallelism}
        completions: {completions}
        template:
          metadata: {{annotations: {{kuota.dev/duration: 10m{extra}}}}}
          spec:
            containers: [{{name: c, image: busybox, resources: {{requests: {{cpu: "{cpu}"}}}}}}]
"""


def _jobset(name: str, *rjobs: str, queue: str = "local-queue") -> str:
    return f"""\
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: {name}
  namespace: default
  labels: {{kueue.x-k8s.io/queue-name: {queue}}}
spec:
  replicatedJobs:
{"".join(rjobs)}"""


def _run(tmp_path: Path, *docs: str, until: str = "1m") -> Path:
    world = tmp_path / "world.yaml"
    world.write_text("---\n".join(docs))
    state = tmp_path / "state"
    r = CliRunner().invoke(
        main, ["run", str(world), "--state", str(state), "--no-live", "--until", until]
    )
    assert r.exit_code == 0, r.output
    return state


def _get(state: Path, kind: str) -> list[dict[str, Any]]:
    r = CliRunner().invoke(main, ["get", kind, "-A", "--state", str(state), "-o", "json"])
    assert r.exit_code == 0, r.output
    items: list[dict[str, Any]] = json.loads(r.output)["items"]
    return items


def _refusal(tmp_path: Path, text: str) -> str:
    """What Kueue's JobSet webhook says when the JobSet is created in a run
    (empty when it is accepted)."""
    world = tmp_path / "world.yaml"
    world.write_text("---\n".join([CONFIG, QUEUES, text]))
    r = CliRunner().invoke(
        main,
        ["run", str(world), "--state", str(tmp_path / "st"), "--no-live", "--until", "1s"],
    )
    assert "Traceback" not in r.output, r.output
    _, sep, refused = r.output.partition("refused when created")
    assert r.exit_code == (1 if sep else 0), r.output
    return " ".join(refused.split())


def test_schedule_jobsets_as_they_fit_in_their_cluster_queue(tmp_path: Path) -> None:
    """test/integration/singlecluster/controller/jobs/jobset/jobset_controller_test.go
    "JobSet controller interacting with scheduler" / "Should schedule JobSets as
    they fit in their ClusterQueue": the 1-pod replicated job takes the 1-cpu
    spot-untainted flavor, the 3-pod one moves on to on-demand, and the
    JobSet's templates carry each flavor's node label."""
    js = _jobset(
        "dev-job",
        _rjob("replicated-job-1", 1, 1, 1, "1"),
        _rjob("replicated-job-2", 3, 1, 1, "1"),
    )
    state = _run(tmp_path, CONFIG, QUEUES, js)
    (created,) = _get(state, "jobsets")
    assert created["spec"]["suspend"] is False
    rjobs = created["spec"]["replicatedJobs"]
    sel = [r["template"]["spec"]["template"]["spec"]["nodeSelector"] for r in rjobs]
    assert sel[0]["cloud.provider.com/instance"] == "spot-untainted"
    assert sel[1]["cloud.provider.com/instance"] == "on-demand"
    (wl,) = _get(state, "workloads")
    assert [p["name"] for p in wl["status"]["admission"]["podSetAssignments"]] == [
        "replicated-job-1",
        "replicated-job-2",
    ]


def test_jobset_with_a_replicated_job_of_zero_replicas(tmp_path: Path) -> None:
    """jobset_controller_test.go "JobSet controller" / "Should allow to create
    jobset with one replicated job replica count 0": pod sets
    replicated-job-1 of 4 (2 replicas x parallelism 2) and
    replicated-job-2-empty of 0, with the index labels and sub-group counts
    (the Go test's replicas 0 is omitted on the wire, so the CRD's default 1
    gives sub-group count 1); the workload is admitted and the JobSet
    unsuspended."""
    js = _jobset(
        "mix-jobset",
        _rjob("replicated-job-1", 2, 2, 2, "250m"),
        _rjob("replicated-job-2-empty", 0, 0, 0, "250m"),
    )
    state = _run(tmp_path, CONFIG, QUEUES, js)
    (wl,) = _get(state, "workloads")
    got = {
        p["name"]: (
            p["count"],
            p.get("topologyRequest", {}).get("podIndexLabel"),
            p.get("topologyRequest", {}).get("subGroupIndexLabel"),
            p.get("topologyRequest", {}).get("subGroupCount"),
        )
        for p in wl["spec"]["podSets"]
    }
    assert got == {
        "replicated-job-1": (
            4,
            "batch.kubernetes.io/job-completion-index",
            "jobset.sigs.k8s.io/job-index",
            2,
        ),
        "replicated-job-2-empty": (
            0,
            "batch.kubernetes.io/job-completion-index",
            "jobset.sigs.k8s.io/job-index",
            1,
        ),
    }
    (created,) = _get(state, "jobsets")
    assert created["spec"]["suspend"] is False


def test_pod_sets_count_replicas_times_parallelism_with_topology_request(tmp_path: Path) -> None:
    """pkg/controller/jobs/jobset/jobset_controller_test.go TestPodSets "with
    required topology annotation": job1 (2 x 1) has a required request on
    cloud.com/block, job2 (3 x 2) only the index labels; counts 2 and 6."""
    js = _jobset(
        "jobset",
        _rjob(
            "job1", 2, 1, 1, "100m", ", kueue.x-k8s.io/podset-required-topology: cloud.com/block"
        ),
        _rjob("job2", 3, 2, 3, "100m"),
    )
    state = _run(tmp_path, CONFIG, QUEUES, js, until="1s")
    (wl,) = _get(state, "workloads")
    p1, p2 = wl["spec"]["podSets"]
    assert (p1["name"], p1["count"], p2["name"], p2["count"]) == ("job1", 2, "job2", 6)
    assert p1["topologyRequest"] == {
        "required": "cloud.com/block",
        "podIndexLabel": "batch.kubernetes.io/job-completion-index",
        "subGroupIndexLabel": "jobset.sigs.k8s.io/job-index",
        "subGroupCount": 2,
    }
    assert p2["topologyRequest"] == {
        "podIndexLabel": "batch.kubernetes.io/job-completion-index",
        "subGroupIndexLabel": "jobset.sigs.k8s.io/job-index",
        "subGroupCount": 3,
    }


def test_validate_create_cases_of_kueues_jobset_webhook(tmp_path: Path) -> None:
    """pkg/controller/jobs/jobset/jobset_webhook_test.go TestValidateCreate:
    "invalid queue-name label", "invalid topology request", "invalid slice
    topology request - slice size larger than number of podsets", "invalid
    PodSet grouping request - groups of size other than 2" and "... - no
    leader in group"; "valid PodSet grouping request" passes."""
    ann = "kueue.x-k8s.io/podset-required-topology: cloud.com/block"
    queue = _refusal(tmp_path, _jobset("job", _rjob("w", 1, 1, 1, "1"), queue="queue_name"))
    assert 'metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: "queue_name"' in queue
    both = _refusal(
        tmp_path,
        _jobset(
            "job",
            _rjob("launcher", 1, 1, 1, "1", f", {ann}"),
            _rjob(
                "worker",
                1,
                1,
                1,
                "1",
                f", {ann}, kueue.x-k8s.io/podset-preferred-topology: cloud.com/block",
            ),
        ),
    )
    assert (
        "spec.replicatedJobs[1].template.spec.template.metadata.annotations: Invalid value: "
        'must not contain more than one topology annotation: ["kueue.x-k8s.io/podset-required-topology", '
        '"kueue.x-k8s.io/podset-preferred-topology", "kueue.x-k8s.io/podset-unconstrained-topology"]'
    ) in both, both
    slice_ = _refusal(
        tmp_path,
        _jobset(
            "jobset",
            _rjob(
                "job1",
                2,
                1,
                1,
                "1",
                f", {ann}, kueue.x-k8s.io/podset-slice-required-topology: cloud.com/block,"
                ' kueue.x-k8s.io/podset-slice-size: "20"',
            ),
        ),
    )
    assert (
        "spec.replicatedJobs[0].template.spec.template.metadata.annotations[kueue.x-k8s.io/podset-slice-size]: "
        'Invalid value: "20": must not be greater than pod set count 2'
    ) in slice_, slice_

    def grouped(group: str) -> str:
        return f", {ann}, kueue.x-k8s.io/podset-group-name: {group}"

    sizes = _refusal(
        tmp_path,
        _jobset(
            "jobset",
            _rjob("job1", 1, 1, 1, "1", grouped("1podset")),
            _rjob("job2", 1, 1, 1, "1", grouped("3podsets")),
            _rjob("job3", 2, 1, 1, "1", grouped("3podsets")),
            _rjob("job4", 2, 2, 1, "1", grouped("3podsets")),
        ),
    )
    key = "template.spec.template.metadata.annotations[kueue.x-k8s.io/podset-group-name]"
    assert (
        f'spec.replicatedJobs[0].{key}: Invalid value: "1podset": '
        "can only define groups of exactly 2 pod sets, got: 1 pod set(s)"
    ) in sizes, sizes
    for i in (1, 2, 3):
        assert (
            f'spec.replicatedJobs[{i}].{key}: Invalid value: "3podsets": '
            "can only define groups of exactly 2 pod sets, got: 3 pod set(s)"
        ) in sizes, sizes
    leader = _refusal(
        tmp_path,
        _jobset(
            "jobset",
            _rjob("job1", 2, 1, 1, "1", grouped("groupname")),
            _rjob("job2", 1, 3, 3, "1", grouped("groupname")),
        ),
    )
    for i in (0, 1):
        assert (
            f'spec.replicatedJobs[{i}].{key}: Invalid value: "groupname": can only define groups where '
            "at least one pod set has only 1 replica, got: 2 replica(s) and 3 replica(s) in the group"
        ) in leader, leader
    valid = _refusal(
        tmp_path,
        _jobset(
            "job",
            _rjob("launcher", 1, 1, 1, "1", grouped("groupname")),
            _rjob("worker", 4, 1, 1, "1", grouped("groupname")),
        ),
    )
    assert valid == "", valid
