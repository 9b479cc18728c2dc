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
    assert "1 admissions" in r.output
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
    assert " n1 " in r.output + " "


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
    assert r.exit_code == 1 and 'workloads "nope" not found' in r.output


def test_broken_world_names_file_and_field_and_runs_nothing(tmp_path: Path) -> None:
    r = CliRunner().invoke(
        main, ["run", str(WORLDS / "broken.yaml"), "--state", str(tmp_path / "s")]
    )
    assert r.exit_code == 1
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
