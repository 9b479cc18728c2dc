"""``kuota simulate`` with a node smaller than a job (issue 24.8): the
design's waitForPodsReady evicts and re-admits the job for ever. The replay
stops once nothing new has happened for a day of virtual time but these
evictions, prints its report, says which workloads cycle and why, and exits
with status 3 (it used to run silently for ever)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).parent.parent / "data" / "sim"


def test_a_replay_that_only_repeats_itself_stops_and_says_why(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    args = ["--trace", str(DATA / "too-big.csv"), "--world", str(DATA / "too-big-pool.yaml")]
    args += ["--nodes", str(DATA / "too-big-nodes.csv"), "--no-progress"]
    proc = subprocess.run(
        [sys.executable, "-m", "kuota.cli.main", "simulate", *args, "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    text = proc.stdout + proc.stderr
    assert proc.returncode == 3, text
    assert "Traceback" not in text
    assert "too-big-pool: stopped: the replay only repeats itself" in text
    assert "team-a/job-a1-" in text and "PodsReadyTimeout" in text
    assert "its pods cannot be placed" in text and "Insufficient nvidia.com/gpu" in text
    doc = json.loads(out.read_text())
    # b1 (one GPU) ran and finished; a1 (four GPUs, nodes of two) never could.
    assert (doc["stopped"], doc["jobs"], doc["finished"]) == ("repeating", 2, 1)
