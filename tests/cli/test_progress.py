"""Progress of long commands (issue 25.12): on stderr, never on stdout, as
plain lines one per percent step when piped, and nothing for a short run.
``KUOTA_PROGRESS_AFTER`` (seconds, default 1) says when a run counts as long;
the tests set it to 0 to see the progress of runs that are fast here."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kuota.cli.main import main

ROOT = Path(__file__).parent.parent
SIM = ROOT / "data" / "sim"
WORLDS = ROOT / "fixtures" / "worlds"
NS = "---\napiVersion: v1\nkind: Namespace\nmetadata: {{name: ns-{i}}}\n"


def percents(stderr: str, label: str) -> list[int]:
    return [int(m) for m in re.findall(rf"^{re.escape(label)}: (\d+)%", stderr, re.M)]


def invoke(args: list[str], after: str | None) -> tuple[int, str, str]:
    env = {"KUOTA_PROGRESS_AFTER": after} if after is not None else {}
    r = CliRunner(env=env).invoke(main, args)
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r.exit_code, r.stdout, r.stderr


def test_piped_validate_shows_percent_lines_on_stderr_and_clean_json_on_stdout(
    tmp_path: Path,
) -> None:
    big = tmp_path / "many.yaml"
    big.write_text("".join(NS.format(i=i) for i in range(400)))
    env = {**os.environ, "KUOTA_PROGRESS_AFTER": "0"}
    r = subprocess.run(
        [sys.executable, "-m", "kuota.cli.main", "validate", "--json", str(big)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)  # nothing but the JSON on stdout
    assert (doc["objects"], doc["valid"], len(doc["documents"])) == (400, 400, 400)
    steps = percents(r.stderr, "validate")
    # one line per whole percent step, rising, to the end
    assert steps == sorted(set(steps)) and steps[-1] == 100 and len(steps) >= 50
    assert "validate: 100% 400 objects" in r.stderr
    assert "%" not in r.stdout


def test_a_short_run_shows_no_progress() -> None:
    code, out, err = invoke(["validate", str(SIM / "tiny-pool.yaml")], after=None)
    assert code == 0, out + err
    assert err == "" and "%" not in out


def test_piped_simulate_reports_progress_on_stderr_only(tmp_path: Path) -> None:
    out_json = tmp_path / "r.json"
    args = ["simulate", "--trace", str(SIM / "tiny.csv"), "--world", str(SIM / "tiny-pool.yaml")]
    code, out, err = invoke([*args, "--json", str(out_json)], after="0")
    assert code == 0, out + err
    steps = percents(err, "simulate tiny-pool")
    assert steps and steps == sorted(set(steps)) and steps[-1] == 100
    assert "jobs finished" in err and "simulated" in err
    assert "simulate tiny-pool" not in out
    json.loads(out_json.read_text())
    # --no-progress: none, however long
    code, out, err = invoke([*args, "--no-progress"], after="0")
    assert code == 0 and "%" not in err


def test_piped_run_reports_workloads_finished_on_stderr(tmp_path: Path) -> None:
    code, out, err = invoke(["run", str(WORLDS / "small.yaml"), "--no-live"], after="0")
    assert code == 0, out + err
    assert percents(err, "run"), err
    assert "workloads finished" in err
    assert "run: " not in out and "summary" in out
    # --until: by virtual time
    code, out, err = invoke(
        ["run", str(WORLDS / "small.yaml"), "--no-live", "--until", "1h"], after="0"
    )
    assert code == 0 and re.search(r"^run: \d+% .* of 60\.0m, ", err, re.M), err


@pytest.mark.parametrize("after", ["0"])
def test_piped_bench_reports_workloads_finished_on_stderr(tmp_path: Path, after: str) -> None:
    cfg = tmp_path / "w.yaml"
    cfg.write_text(
        json.dumps(
            {
                "cohorts": [
                    {
                        "className": "co",
                        "count": 1,
                        "queuesSets": [
                            {
                                "className": "cq",
                                "count": 1,
                                "nominalQuota": 2,
                                "workloadsSets": [
                                    {
                                        "count": 4,
                                        "creationIntervalMs": 100,
                                        "workloads": [
                                            {"className": "s", "runtimeMs": 200, "request": 1}
                                        ],
                                    }
                                ],
                            }
                        ],
                    }
                ]
            }
        )
    )
    out_json = tmp_path / "b.json"
    code, out, err = invoke(["bench", str(cfg), "--json", str(out_json)], after=after)
    assert code == 0, out + err
    steps = percents(err, "bench w")
    assert steps and steps[-1] == 100 and "4/4 workloads finished" in err
    assert "bench w:" not in out
