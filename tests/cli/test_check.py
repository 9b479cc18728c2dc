"""``kuota check`` at the command line, against the fake admission core of
sim/scenario_fakes.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import kuota.sim.scenario as sc
from kuota.cli.main import main
from sim.scenario_fakes import A, FakeCore, factory, scenario_text, write


# ============================================================================ kuota check
@pytest.fixture
def fake_core(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sc, "default_core_factory", lambda: FakeCore)


def cli(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args))
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r.exit_code, r.stdout, r.stderr


PASSING = scenario_text(
    "- settle: true\n  expect: {workloads: {ns/a: {state: admitted}}}", A, name="passes"
)
FAILING = scenario_text(
    "- settle: true\n  expect: {workloads: {ns/a: {state: pending}}}", A, name="fails"
)


def test_check_json_shape_and_exit_codes(tmp_path: Path, fake_core: None) -> None:
    good = write(tmp_path, PASSING, "good.yaml")
    bad = write(tmp_path, FAILING, "bad.yaml")
    code, out, _ = cli("check", "--json", str(good))
    assert code == 0
    assert json.loads(out) == {
        "passed": 1,
        "failed": 0,
        "scenarios": [{"name": "passes", "file": str(good), "passed": True, "failures": []}],
    }
    code, out, _ = cli("check", "--json", str(good), str(bad))
    assert code == 1
    data = json.loads(out)
    assert (data["passed"], data["failed"]) == (1, 1)
    assert data["scenarios"][1] == {
        "name": "fails",
        "file": str(bad),
        "passed": False,
        "failures": [
            {
                "step": 0,
                "action": "settle: true",
                "subject": "workload ns/a",
                "expected": "state: pending",
                "actual": "state: admitted",
                "message": "steps[0] (settle: true): workload ns/a: expected state: pending, "
                "got state: admitted",
            }
        ],
    }


def test_check_human_output(tmp_path: Path, fake_core: None) -> None:
    good = write(tmp_path, PASSING, "good.yaml")
    bad = write(tmp_path, FAILING, "bad.yaml")
    code, out, _ = cli("check", str(good), str(bad))
    assert code == 1
    assert out.splitlines() == [
        f"PASS passes ({good})",
        f"FAIL fails ({bad})",
        "      steps[0] (settle: true): workload ns/a: expected state: pending, got state: admitted",
        "1 passed, 1 failed",
    ]


def test_check_directory_skips_manifests(tmp_path: Path, fake_core: None) -> None:
    write(tmp_path, PASSING, "d/sub/good.yml")
    manifest = write(
        tmp_path, "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n", "d/ns.yaml"
    )
    write(tmp_path, "not yaml at all", "d/README.md")
    code, out, err = cli("check", str(tmp_path / "d"))
    assert code == 0, err
    assert out.splitlines()[-1] == "1 passed, 0 failed"
    assert f"{manifest}: skipped, not a scenario" in err
    # Named directly, a manifest is an error.
    code, out, err = cli("check", str(manifest))
    assert code == 2
    assert "not a scenario" in err


def test_check_invalid_scenario_exits_2_with_field_path(tmp_path: Path, fake_core: None) -> None:
    good = write(tmp_path, PASSING, "good.yaml")
    text = PASSING.replace('nominalQuota: "4"', 'nominalQuota: "-4"')
    bad = write(tmp_path, text, "bad.yaml")
    code, out, err = cli("check", str(good), str(bad))
    assert code == 2
    assert f"{bad} (document 1) objects[2]: ClusterQueue/cq" in err
    assert (
        'objects[2].spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: Invalid value: "-4"'
        in err
    )
    assert out.splitlines()[-1] == "1 passed, 0 failed, 1 error (see above)"
    code, out, err = cli("check", "--json", str(bad))
    assert code == 2
    assert json.loads(out) == {"passed": 0, "failed": 0, "scenarios": []}


def test_check_unreadable_exits_2(tmp_path: Path, fake_core: None) -> None:
    code, _, err = cli("check", str(tmp_path / "missing.yaml"))
    assert code == 2
    assert "missing.yaml: no such file or directory" in err
    code, _, err = cli("check", str(write(tmp_path, "a: [b\n", "broken.yaml")))
    assert code == 2
    assert "broken.yaml: invalid YAML at line 2" in err
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"name: \xff\xfe\n")
    code, _, err = cli("check", str(binary))
    assert code == 2
    assert "bin.yaml: invalid YAML" in err


def test_check_without_the_core_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> sc.CoreFactory:
        raise ImportError("No module named 'kuota.scheduler.admission'")

    monkeypatch.setattr(sc, "default_core_factory", missing)
    code, _, err = cli("check", str(write(tmp_path, PASSING)))
    assert code == 2
    assert "needs the admission core" in err


def test_check_core_exception_is_a_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sc, "default_core_factory", lambda: factory(fail_on="cycle"))
    p = write(tmp_path, scenario_text("- cycles: 1", A))
    code, out, _ = cli("check", str(p))
    assert code == 1
    assert (
        "steps[0] (cycles: 1): core: expected no error, got RuntimeError: boom in cycle second line"
        in out
    )
