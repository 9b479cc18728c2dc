"""Bad input at every command that reads files: file, object, field path and
reason, exit 2 — never a traceback (issue 24 items 7 and 11, issue 25 items 3 and 6)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from kuota.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "quickstart"

NODE = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: "8", memory: 8Gi, pods: "110"}
  capacity: {cpu: "8", memory: 8Gi, pods: "110"}
"""


def pod(resources: str) -> str:
    return f"""\
apiVersion: v1
kind: Pod
metadata: {{name: p, namespace: default}}
spec:
  containers: [{{name: c, image: x, resources: {resources}}}]
"""


def job(duration: str, created: str = "2026-01-01T08:08:00Z") -> str:
    return f"""\
apiVersion: batch/v1
kind: Job
metadata: {{name: j, namespace: vision, creationTimestamp: "{created}"}}
spec:
  template:
    metadata:
      annotations: {{kuota.dev/duration: "{duration}"}}
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: x
        resources:
          requests: {{cpu: "1", nvidia.com/gpu: "1"}}
          limits: {{nvidia.com/gpu: "1"}}
"""


def cli(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args))
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    return r.exit_code, r.output


def write(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


BAD_HEAD = "apiVersion: [v1]\nkind: Pod\nmetadata: {name: p}\n"


def test_api_version_not_a_string_is_an_input_error_in_run(tmp_path: Path) -> None:
    f = write(tmp_path, "w.yaml", BAD_HEAD)
    code, out = cli("run", f, "--no-live")
    assert code == 2, out
    out = " ".join(out.split())  # run's console wraps long lines
    assert "w.yaml (document 1): Pod/p: apiVersion: Invalid value" in out
    assert "must be a string" in out


def test_api_version_not_a_string_is_an_input_error_in_capacity(tmp_path: Path) -> None:
    f = write(tmp_path, "p.yaml", BAD_HEAD)
    code, out = cli("capacity", "--pod", f, write(tmp_path, "n.yaml", NODE))
    assert code == 2, out
    assert f in out and "apiVersion" in out and "must be a string" in out


def test_api_version_not_a_string_is_an_input_error_in_simulate(tmp_path: Path) -> None:
    trace = write(tmp_path, "t.csv", "team,submit,duration,gpus\n")
    f = write(tmp_path, "w.yaml", BAD_HEAD)
    code, out = cli("simulate", "--trace", trace, "--world", f)
    assert code == 2, out
    assert "Traceback" not in out


def test_kind_not_a_string_says_so(tmp_path: Path) -> None:
    f = write(tmp_path, "k.yaml", "apiVersion: v1\nkind: 5\nmetadata: {name: p}\n")
    code, out = cli("validate", f)
    assert code == 1, out
    assert "kind: Invalid value: 5: must be a string" in out
    assert "Required" not in out


@pytest.mark.parametrize("q", ["1e400", "9Ei", "1e18"])
def test_quantities_beyond_int64_are_refused_with_the_path(tmp_path: Path, q: str) -> None:
    f = write(tmp_path, "q.yaml", pod(f'{{limits: {{cpu: "{q}"}}}}'))
    code, out = cli("validate", f)
    assert code == 1, out
    assert "spec.containers[0].resources.limits[cpu]: Invalid value" in out
    assert "int64" in out


@pytest.mark.parametrize("d", ["forever", "-5m", "1e400h"])
def test_validate_refuses_the_durations_run_refuses(tmp_path: Path, d: str) -> None:
    f = write(tmp_path, "j.yaml", job(d))
    code, out = cli("validate", f)
    assert code == 1, out
    assert "spec.template.metadata.annotations[kuota.dev/duration]: Invalid value" in out


def test_duplicate_yaml_keys_are_refused(tmp_path: Path) -> None:
    text = pod('{requests: {cpu: "1"}}') + "  nodeName: a\n  nodeName: b\n"
    f = write(tmp_path, "dup.yaml", text)
    for args in (["validate", f], ["run", f, "--no-live"]):
        code, out = cli(*args)
        assert code == 2, out
        out = " ".join(out.split())  # long lines are wrapped to the terminal
        assert (
            "dup.yaml: invalid YAML at line 7" in out
            and 'key "nodeName" already set in map' in out
            and "line 7" in out
        )


@pytest.mark.parametrize("target", ["nowhere.yaml", "loop.yaml"])
def test_broken_symlinks_in_a_directory_are_errors(tmp_path: Path, target: str) -> None:
    d = tmp_path / "d"
    d.mkdir()
    write(d, "n.yaml", NODE)
    os.symlink(target, d / "loop.yaml" if target == "loop.yaml" else d / "bad.yaml")
    code, out = cli("validate", str(d))
    assert code == 2, out
    assert "broken symbolic link" in out and str(d) in out


def test_capacity_defaults_requests_to_limits(tmp_path: Path) -> None:
    p = write(tmp_path, "p.yaml", pod('{limits: {cpu: "2"}}'))
    code, out = cli("capacity", "--pod", p, write(tmp_path, "n.yaml", NODE))
    assert code == 0, out
    assert "pod requirements: cpu 2" in out
    assert "schedule 4 more instance(s)" in out


def test_negative_until_is_a_usage_error(tmp_path: Path) -> None:
    code, out = cli("run", str(EXAMPLES), "--until", "-5m", "--no-live")
    assert code == 2, out
    assert "must not be negative" in out


def test_an_empty_world_is_an_error_naming_the_path(tmp_path: Path) -> None:
    f = write(tmp_path, "empty.yaml", "# nothing here\n")
    code, out = cli("run", f, "--no-live")
    assert code == 2, out
    out = " ".join(out.split())  # run's console wraps long lines
    assert "empty.yaml: no objects to run (an empty world)" in out


def test_simulate_exits_2_for_a_missing_file(tmp_path: Path) -> None:
    code, out = cli("simulate", "--trace", str(tmp_path / "missing.csv"), "--world", "x")
    assert code == 2, out


def test_a_job_created_at_the_end_of_time_does_not_crash_the_run(tmp_path: Path) -> None:
    f = write(tmp_path, "j.yaml", job("10m", created="9999-12-31T23:59:59Z"))
    world = str(EXAMPLES / "world.yaml")
    nodes = str(EXAMPLES / "nodes.yaml")
    code, out = cli("run", world, nodes, f, "--no-live")
    assert code == 0, out
    assert "reconcile error" not in out and "Overflow" not in out


def bench_config(cohort: str = "cohort", runtime: str = "200", request: str = "1") -> str:
    return f"""\
cohorts:
  - className: {cohort}
    count: 1
    queuesSets:
      - className: cq
        count: 1
        nominalQuota: 20
        workloadsSets:
          - count: 2
            creationIntervalMs: 100
            workloads:
              - {{className: small, runtimeMs: {runtime}, priority: 50, request: {request}}}
"""


WORKLOAD = "cohorts[0].queuesSets[0].workloadsSets[0].workloads[0]"


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (bench_config(request="1e400"), f"{WORKLOAD}.request: Invalid value"),
        (bench_config(runtime="1e20"), f"{WORKLOAD}.runtimeMs: Expected `int`"),
        (bench_config(runtime="100000000000000000000"), f"{WORKLOAD}.runtimeMs: Invalid value"),
        (bench_config(cohort="Bad_Name"), "cohorts[0].className: Invalid value: 'Bad_Name'"),
        (bench_config() + "cohorts: []\n", 'key "cohorts" already set in map'),
    ],
)
def test_bench_config_errors_name_file_and_field(
    tmp_path: Path, config: str, expected: str
) -> None:
    f = write(tmp_path, "b.yaml", config)
    code, out = cli("bench", f)
    assert code == 2, out
    assert f"error: {f}: " in out and expected in out, out


def test_validate_checks_the_shipped_examples_mapping_files_included() -> None:
    code, out = cli("validate", "-q", str(EXAMPLES.parent))
    assert code == 0, out
    assert ", 0 invalid" in out


def test_validate_checks_a_mapping_file_as_simulate_reads_it(tmp_path: Path) -> None:
    f = write(tmp_path, "m.yaml", "requests: [gpus]\nfractionalGpus: sideways\n")
    code, out = cli("validate", f)
    assert code == 1, out
    assert "Mapping/m.yaml" in out
    assert 'fractionalGpus: Invalid value: "sideways" is not one of' in out and "line 2" in out


def test_validate_checks_bench_configs_as_kuota_bench_does(tmp_path: Path) -> None:
    baseline = Path(__file__).resolve().parents[2] / "bench/worlds/kueue-baseline.yaml"
    r = CliRunner().invoke(main, ["validate", str(baseline)])
    assert r.exit_code == 0 and "BenchConfig/kueue-baseline.yaml" in r.output, r.output
    bad = tmp_path / "b.yaml"
    bad.write_text(baseline.read_text().replace("className: cq", "className: Bad_Q", 1))
    r = CliRunner().invoke(main, ["validate", str(bad)])
    assert r.exit_code == 1, r.output
    assert "cohorts[0].queuesSets[0].className: Invalid value: 'Bad_Q'" in r.output


def test_validate_of_a_directory_with_nothing_to_read_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not yaml")
    r = CliRunner().invoke(main, ["validate", str(tmp_path)])
    assert r.exit_code == 2 and "no *.yaml or *.yml file" in r.output, r.output
