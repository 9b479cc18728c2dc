"""An interpreted kuota says, once, on its heavy commands (simulate, recommend,
bench) how to get the compiled build (issue 30.4): one line on stderr after the
work has run, so that the output (--json included) stays clean and an input
error stays one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIM = ROOT / "data" / "sim"
NOTICE = "kuota: notice: simulate runs on the interpreted build"


def _simulate(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # without PYTHONPATH: the source, interpreted, even under make test-compiled
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, "-m", "kuota.cli.main", "simulate", *args, "--no-progress"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
    )  # fmt: skip


def test_an_interpreted_simulate_says_once_how_to_get_the_compiled_build(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    r = _simulate(
        tmp_path, "--trace", str(SIM / "tiny.csv"), "--world", str(SIM / "tiny-pool.yaml"),
        "--json", str(out),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    notices = [line for line in r.stderr.splitlines() if line.startswith("kuota: notice")]
    assert len(notices) == 1 and notices[0].startswith(NOTICE), r.stderr
    assert "pip install --force-reinstall --no-cache-dir kuota" in notices[0]
    assert "make compiled" in notices[0]
    assert "notice" not in r.stdout
    assert json.loads(out.read_text())  # the JSON report is the report alone


def test_an_input_error_is_one_line_without_the_notice(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("job_id,submit_s,team,gpus\nj1,0,team-a,1\n")
    r = _simulate(tmp_path, "--trace", str(bad), "--world", str(SIM / "tiny-pool.yaml"))
    assert r.returncode != 0
    assert r.stderr.startswith("error: ") and len(r.stderr.splitlines()) == 1, r.stderr
