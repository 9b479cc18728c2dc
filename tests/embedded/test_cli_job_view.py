"""``kuota describe job`` and the pod STATUS of ``kuota get pods`` at the
command line, as ``oc`` shows them: a Job's counts, conditions, the Kueue
Workload it owns and why that waits, and its events (a LimitRange's
``FailedCreate`` refusal with the API server's message)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kuota.cli.main import main

WORLDS = Path(__file__).parent.parent / "fixtures" / "worlds"

LIMITED = """\
---
apiVersion: v1
kind: LimitRange
metadata: {namespace: limited, name: limits}
spec:
  limits:
  - type: Container
    max: {cpu: "1"}
---
apiVersion: batch/v1
kind: Job
metadata: {namespace: limited, name: big}
spec:
  template:
    metadata: {annotations: {kuota.dev/duration: 5m}}
    spec:
      restartPolicy: Never
      containers: [{name: c, image: i, resources: {requests: {cpu: "2"}, limits: {cpu: "2"}}}]
---
apiVersion: batch/v1
kind: Job
metadata: {namespace: default, name: crash}
spec:
  backoffLimit: 0
  template:
    metadata: {annotations: {kuota.dev/duration: 1m, kuota.dev/fail: "true"}}
    spec:
      restartPolicy: Never
      containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]
"""


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> str:
    d = tmp_path_factory.mktemp("jobview")
    (d / "world.yaml").write_text((WORLDS / "small.yaml").read_text() + LIMITED)
    r = CliRunner().invoke(
        main, ["run", str(d / "world.yaml"), "--state", str(d / "state"), "--no-live"]
    )
    assert r.exit_code == 0, r.output
    return str(d / "state")


def describe_job(state: str, *args: str) -> str:
    r = CliRunner().invoke(main, ["describe", "job", *args, "--state", state])
    assert r.exit_code == 0, r.output
    return r.output


def test_describe_job_shows_the_limit_range_refusal_of_its_pods(state: str) -> None:
    out = describe_job(state, "big", "-n", "limited")
    assert "Name:             big\n" in out and "Namespace:        limited\n" in out
    assert "Suspend:          false\n" in out
    assert "Pods Statuses:    0 Active (0 Ready) / 0 Succeeded / 0 Failed\n" in out
    assert "Workload:         <none>\n" in out  # no queue label: not Kueue's
    events = " ".join(out[out.index("Events") :].split())
    assert "Warning FailedCreate" in events and "job-controller" in events
    assert (
        'Error creating: pods "big-' in events
        and '" is forbidden: maximum cpu usage per Container is 1, but limit is 2' in events
    )


def test_describe_job_shows_its_workload_and_why_it_waits(state: str) -> None:
    out = describe_job(state, "ok")
    assert "Labels:           kueue.x-k8s.io/queue-name=main\n" in out
    assert "Parallelism:      1\nCompletions:      1\n" in out
    assert "Pods Statuses:    0 Active (0 Ready) / 1 Succeeded / 0 Failed\n" in out
    assert "Completed At:     Thu, 01 Jan 2026" in out and "Duration:         10m" in out
    wl = next(line for line in out.splitlines() if line.startswith("Workload:"))
    assert wl.split()[1].startswith("job-ok-") and wl.endswith(
        "(admitted by ClusterQueue cq, finished)"
    )
    conditions = out[out.index("Conditions") : out.index("Events")]
    assert "Complete" in conditions and "True" in conditions
    assert "CreatedWorkload" in out[out.index("Events") :]

    out = describe_job(state, "lost")
    assert "Suspend:          true\n" in out
    wl = next(line for line in out.splitlines() if line.startswith("Workload:"))
    assert wl.split()[1].startswith("job-lost-")
    assert wl.endswith("(not admitted: LocalQueue default/nope does not exist)")

    r = CliRunner().invoke(main, ["describe", "job", "nope", "--state", state])
    assert r.exit_code == 1 and 'jobs.batch "nope" not found' in r.output


def test_get_pods_says_completed_and_error_as_oc_does(state: str) -> None:
    r = CliRunner().invoke(main, ["get", "pods", "--state", state])
    assert r.exit_code == 0, r.output
    status = {
        line.split()[0].rsplit("-", 1)[0]: line.split()[2] for line in r.output.splitlines()[1:]
    }
    assert status == {"ok": "Completed", "free": "Completed", "crash": "Error"}
    assert "Succeeded" not in r.output and "Failed" not in r.output
