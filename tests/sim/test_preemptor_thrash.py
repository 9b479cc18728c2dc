"""Fair sharing with preemption, a replay that spun at one instant (issue 30,
found by a random design): team-b's j29 preempts team-a's j12 (fair sharing,
rule S2-b: its share after, 500, is below cq-a's 1000), then team-b's older
j17 preempts j29 in their ClusterQueue; while those evictions complete, j12,
first in the fair-sharing tournament (equal shares, higher priority), takes
the freed quota back, and so on for ever. Kueue decides exactly so with its
default feature gates (kueue#13662); its fix is the PrioritizePreemptorWorkloads
gate (alpha), which keeps a preemptor ahead of others until its victims are
gone. So the replay stops, names who preempts whom and that gate; with the
gate on, the same trace runs to its end. The full replay (--full-replay)
stops the same way at the same per-instant limit (it spun for ever before)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).parent.parent / "data" / "sim"
GATE = "featureGates: {PrioritizePreemptorWorkloads: true}"


def _simulate(world: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    args = ["--trace", str(DATA / "preemptor-thrash.csv"), "--world", str(world), *extra]
    args += ["--mapping", str(DATA / "preemptor-thrash.mapping.yaml"), "--no-progress"]
    return subprocess.run(
        [sys.executable, "-m", "kuota.cli.main", "simulate", *args, "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_preemptors_losing_their_quota_stop_the_replay_with_kueues_fix_named(
    tmp_path: Path,
) -> None:
    out = tmp_path / "r.json"
    proc = _simulate(DATA / "preemptor-thrash.yaml", out)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 3, text
    assert "Traceback" not in text
    assert "preemptor-thrash: stopped: the replay only repeats itself" in text
    assert "team-a/job-j12-13d21: preempted by team-b/job-j29-49c2e (InCohortFairSharing)" in text
    assert "team-b/job-j29-49c2e: preempted by team-b/job-j17-d7bdf (InClusterQueue)" in text
    assert GATE in text
    doc = json.loads(out.read_text())
    assert (doc["stopped"], doc["replay"]) == ("repeating", "fast")


def test_the_full_replay_stops_at_the_same_per_instant_limit(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    proc = _simulate(DATA / "preemptor-thrash.yaml", out, "--full-replay")
    text = proc.stdout + proc.stderr
    assert proc.returncode == 3, text
    assert "Traceback" not in text
    assert (
        "preemptor-thrash: stopped: the replay only repeats itself (more than 10000 "
        "scheduling cycles at 500s, workloads preempting each other)" in text
    )
    # (the full replay's Job names carry other suffixes than the fast one's)
    pairs = re.findall(
        r"(team-\w/job-j\d+)-\w+: preempted by (team-\w/job-j\d+)-\w+ \((\w+)\)", text
    )
    assert ("team-a/job-j12", "team-b/job-j29", "InCohortFairSharing") in pairs
    assert ("team-b/job-j29", "team-b/job-j17", "InClusterQueue") in pairs
    assert GATE in text
    doc = json.loads(out.read_text())
    assert (doc["stopped"], doc["replay"]) == ("repeating", "full")


def test_with_kueues_gate_on_the_same_trace_runs_to_its_end(tmp_path: Path) -> None:
    world = tmp_path / "gated.yaml"
    text = (DATA / "preemptor-thrash.yaml").read_text()
    world.write_text(
        text.replace("fairSharing: {enable: true}", f"fairSharing: {{enable: true}}\n{GATE}")
    )
    out = tmp_path / "r.json"
    proc = _simulate(world, out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(out.read_text())
    assert doc["stopped"] != "repeating"
    assert doc["finished"] == doc["jobs"] == 4
