"""``kuota run``, ``kuota get`` and ``kuota describe`` at the command line:
a world runs to the end in virtual time, its state can be read afterwards,
bad input is a clear message naming the file and field, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kuota.cli.main import main

WORLDS = Path(__file__).parent.parent / "fixtures" / "worlds"


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> str:
    d = tmp_path_factory.mktemp("state")
    r = CliRunner().invoke(
        main, ["run", str(WORLDS / "small.yaml"), "--state", str(d), "--no-live"]
    )
    assert r.exit_code == 0, r.output
    return str(d)


def test_run_reports_decisions_waiting_reasons_and_unmanaged_jobs() -> None:
    r = CliRunner().invoke(main, ["run", str(WORLDS / "small.yaml"), "--no-live"])
    assert r.exit_code == 0, r.output
    assert "stopped: idle" in r.output
    assert "1 admission of" in r.output
    assert "LocalQueue default/nope does not exist" in r.output
    assert "default/free" in r.output  # no queue label: ran without Kueue
    assert "Traceback" not in r.output


def test_get_workloads_has_the_oc_columns(state: str) -> None:
    r = CliRunner().invoke(main, ["get", "workloads", "--state", state])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0].split() == ["NAME", "QUEUE", "RESERVED", "IN", "ADMITTED", "FINISHED", "AGE"]
    ok = next(line for line in lines if line.startswith("job-ok-"))
    assert ok.split()[1:5] == ["main", "cq", "True", "True"]


@pytest.mark.parametrize(
    ("alias", "resource"),
    [("kwl", "workloads"), ("wl", "workloads"), ("queue", "localqueues"), ("cq", "clusterqueues")],
)
def test_get_takes_the_registry_short_names(state: str, alias: str, resource: str) -> None:
    """Kueue's own short names (its CRDs': kwl, queue, cq) and kuota's wl name
    the same resource as its plural."""
    by_alias = CliRunner().invoke(main, ["get", alias, "-A", "--state", state])
    by_plural = CliRunner().invoke(main, ["get", resource, "-A", "--state", state])
    assert by_alias.exit_code == 0, by_alias.output
    assert by_alias.output == by_plural.output


def test_get_localqueues_and_json_list(state: str) -> None:
    r = CliRunner().invoke(main, ["get", "localqueues", "--state", state])
    assert r.output.splitlines()[0].split() == [
        "NAME",
        "CLUSTERQUEUE",
        "PENDING",
        "WORKLOADS",
        "ADMITTED",
        "WORKLOADS",
    ]
    r = CliRunner().invoke(main, ["get", "jobs", "-o", "json", "--state", state])
    doc = json.loads(r.output)
    assert doc["apiVersion"] == "v1" and doc["kind"] == "List"
    assert sorted(i["metadata"]["name"] for i in doc["items"]) == ["free", "lost", "ok"]


def test_get_all_namespaces_and_wide_pods(state: str) -> None:
    r = CliRunner().invoke(main, ["get", "pods", "-A", "-o", "wide", "--state", state])
    head = r.output.splitlines()[0].split()
    assert head[0] == "NAMESPACE" and head[-1] == "NODE"
    assert {line.split()[-1] for line in r.output.splitlines()[1:]} == {"n1"}


def test_state_from_the_environment(state: str) -> None:
    r = CliRunner().invoke(main, ["get", "clusterqueues"], env={"KUOTA_STATE": state})
    assert r.exit_code == 0 and r.output.split()[0] == "NAME"


def test_describe_shows_conditions_and_the_pending_reason(state: str) -> None:
    r = CliRunner().invoke(main, ["get", "workloads", "--state", state])
    lost = next(line.split()[0] for line in r.output.splitlines() if line.startswith("job-lost-"))
    r = CliRunner().invoke(main, ["describe", "workload", lost, "--state", state])
    assert r.exit_code == 0, r.output
    assert "Pending:       LocalQueue default/nope does not exist" in r.output
    r = CliRunner().invoke(main, ["describe", "workload", "nope", "--state", state])
    assert r.exit_code == 1 and 'workloads.kueue.x-k8s.io "nope" not found' in r.output


def test_broken_world_names_file_and_field_and_runs_nothing(tmp_path: Path) -> None:
    r = CliRunner().invoke(
        main, ["run", str(WORLDS / "broken.yaml"), "--state", str(tmp_path / "s")]
    )
    assert r.exit_code == 2
    assert "broken.yaml (document 1): ClusterQueue/cq" in r.output
    assert "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota" in r.output
    assert "broken.yaml (document 2): Node/n1" in r.output
    assert "status.allocatable" in r.output
    assert "nothing was run" in r.output
    assert "Traceback" not in r.output


def test_missing_paths_and_state(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["run", str(tmp_path / "nowhere.yaml")])
    assert r.exit_code == 2 and "no such file or directory" in r.output
    r = CliRunner().invoke(main, ["get", "workloads", "--state", str(tmp_path / "none")])
    assert r.exit_code == 2 and "no such state directory" in r.output
    r = CliRunner().invoke(main, ["get", "workloads"], env={"KUOTA_STATE": ""})
    assert r.exit_code == 2 and "KUOTA_STATE" in r.output
    r = CliRunner().invoke(main, ["get", "gizmos", "--state", str(tmp_path)])
    assert r.exit_code == 1 and 'resource type "gizmos"' in r.output


def test_describe_shows_the_workloads_events_and_get_lists_them(state: str) -> None:
    r = CliRunner().invoke(main, ["get", "workloads", "--state", state])
    ok = next(line.split()[0] for line in r.output.splitlines() if line.startswith("job-ok-"))
    r = CliRunner().invoke(main, ["describe", "workload", ok, "--state", state])
    assert r.exit_code == 0, r.output
    events = r.output[r.output.index("Events") :]
    assert "QuotaReserved" in events and "Quota reserved in ClusterQueue cq" in events
    assert "Admitted by ClusterQueue cq" in events and "kueue-admission" in events
    r = CliRunner().invoke(main, ["get", "events", "--state", state])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0].split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert any("CreatedWorkload" in ln and "job/ok" in ln for ln in lines)
    assert any("Started" in ln and "job/ok" in ln for ln in lines)


_QUEUES = """\
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
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: "8"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: main, namespace: team}
spec: {clusterQueue: cq}
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
"""


def _job(
    name: str, *, at: str = "", labels: str = "", annotations: str = "", ns: str = "team"
) -> str:
    return f"""\
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  {f"namespace: {ns}" if ns else ""}
  {f'creationTimestamp: "{at}"' if at else ""}
  labels: {{kueue.x-k8s.io/queue-name: main{labels}}}
  annotations: {{{annotations}}}
spec:
  template:
    metadata: {{annotations: {{kuota.dev/duration: 1m}}}}
    spec:
      restartPolicy: Never
      containers: [{{name: main, image: busybox, resources: {{requests: {{cpu: "1"}}}}}}]
"""


def _world(tmp_path: Path, *jobs: str) -> str:
    (tmp_path / "queues.yaml").write_text(_QUEUES)
    (tmp_path / "jobs.yaml").write_text("---\n".join(jobs))
    return str(tmp_path)


def test_a_refused_job_is_reported_by_file_and_field_and_its_neighbours_still_run(
    tmp_path: Path,
) -> None:
    # The webhook refuses "mx" when it arrives; "after" arrives at the same instant.
    world = _world(
        tmp_path,
        _job("first", at="2026-01-01T00:00:00Z"),
        _job("mx", at="2026-01-01T01:00:00Z", labels=", kueue.x-k8s.io/max-exec-time-seconds: ten"),
        _job("after", at="2026-01-01T01:00:00Z"),
    )
    state = tmp_path / "state"
    r = CliRunner().invoke(main, ["run", world, "--state", str(state), "--no-live"])
    assert r.exit_code == 1, r.output
    out = " ".join(r.output.split())  # rich wraps long lines
    assert "1 object of the world refused" in out
    assert "jobs.yaml (document 2): Job/team/mx:" in out
    assert 'metadata.labels[kueue.x-k8s.io/max-exec-time-seconds]: Invalid value: "ten"' in out
    assert "Traceback" not in r.output
    r = CliRunner().invoke(main, ["get", "jobs", "-n", "team", "--state", str(state)])
    assert sorted(line.split()[0] for line in r.output.splitlines()[1:]) == ["after", "first"]


def test_min_parallelism_is_validated_as_kueues_job_webhook_does(tmp_path: Path) -> None:
    ann = "kueue.x-k8s.io/job-min-parallelism"
    world = _world(
        tmp_path, _job("nan", annotations=f'{ann}: "NaN"'), _job("big", annotations=f'{ann}: "1"')
    )
    r = CliRunner().invoke(main, ["run", world, "--no-live"])
    out = " ".join(r.output.split())
    assert r.exit_code == 1, r.output
    assert (
        f'Job/team/nan: Job.batch "nan" is invalid: metadata.annotations[{ann}]: '
        'Invalid value: "NaN": strconv.Atoi: parsing "NaN": invalid syntax' in out
    )
    # parallelism 1: no minimum can be below it
    assert f"metadata.annotations[{ann}]: Invalid value: 1: should be between 0 and 0" in out


def test_a_duplicate_object_is_a_problem_not_a_silent_loss(tmp_path: Path) -> None:
    world = _world(tmp_path, _job("a"), _job("a"))
    r = CliRunner().invoke(main, ["run", world, "--no-live"])
    out = " ".join(r.output.split())
    assert r.exit_code == 2, r.output
    assert 'jobs.yaml (document 2): Job/team/a: metadata.name: Duplicate value: "a"' in out
    assert "also defined at" in out and "jobs.yaml (document 1)" in out
    assert "nothing was run" in out


def test_a_bad_run_annotation_names_the_field_before_anything_runs(tmp_path: Path) -> None:
    (tmp_path / "queues.yaml").write_text(_QUEUES)
    (tmp_path / "jobs.yaml").write_text(_job("bd").replace("duration: 1m", "duration: forever"))
    r = CliRunner().invoke(main, ["run", str(tmp_path), "--no-live"])
    out = " ".join(r.output.split())
    assert r.exit_code == 2, r.output
    assert (
        "Job/team/bd: spec.template.metadata.annotations[kuota.dev/duration]: "
        'Invalid value: "forever": time: invalid duration "forever"' in out
    )


def test_a_job_without_a_namespace_goes_to_the_default_namespace_as_kubectl_applies_it(
    tmp_path: Path,
) -> None:
    world = _world(tmp_path, _job("nons", ns=""))
    r = CliRunner().invoke(main, ["run", world, "--no-live"])
    out = " ".join(r.output.split())
    assert r.exit_code == 0, r.output
    assert "LocalQueue default/main does not exist" in out


def test_jobs_are_managed_only_when_the_configuration_enables_batch_job(tmp_path: Path) -> None:
    world = _world(tmp_path, _job("j"))
    (tmp_path / "config.yaml").write_text(
        "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
        "featureGates: {SparkApplicationIntegration: true}\n"
        "integrations:\n  frameworks: [sparkoperator.k8s.io/sparkapplication]\n"
    )
    state = tmp_path / "state"
    r = CliRunner().invoke(main, ["run", world, "--state", str(state), "--no-live"])
    out = " ".join(r.output.split())
    assert r.exit_code == 0, r.output
    # (SparkApplication is simulated since issue 31: every built-in framework is)
    assert "is not simulated" not in out
    assert "batch/job is not in the Configuration's integrations.frameworks" in out
    r = CliRunner().invoke(main, ["get", "workloads", "-A", "--state", str(state)])
    assert "No resources found" in r.output


def test_a_state_path_that_is_a_file_is_a_clear_error(tmp_path: Path) -> None:
    f = tmp_path / "state.txt"
    f.write_text("not a journal")
    r = CliRunner().invoke(main, ["run", str(WORLDS / "small.yaml"), "--state", str(f)])
    assert r.exit_code == 2
    assert f"--state {f}: not a directory" in r.output
    assert "Traceback" not in r.output and "Errno" not in r.output
    assert f.read_text() == "not a journal"  # left as it was
