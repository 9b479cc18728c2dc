"""``kuota run``'s summary counts what happened: every admission, every
eviction by its reason, in right plurals, and says what holds a Job that
Kueue could not make a Workload for."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from kuota.cli.main import main

ROOT = Path(__file__).parent.parent.parent
WORLDS = ROOT / "tests" / "fixtures" / "worlds"


def _run(*paths: Path) -> str:
    r = CliRunner().invoke(main, ["run", *map(str, paths), "--no-live"])
    assert r.exit_code == 0, r.output
    return " ".join(r.output.split())  # rich wraps long lines


def test_every_eviction_is_counted_by_its_reason() -> None:
    """The quickstart ends with every Job finished, so each admission beyond
    the first of a workload follows an eviction, whatever its reason
    (preemption or the waitForPodsReady timeout)."""
    out = _run(ROOT / "examples" / "quickstart")
    m = re.search(r"(\d+) admissions of (\d+) workloads; (\d+) evictions \(([^)]*)\)", out)
    assert m, out
    admissions, workloads, evictions = int(m[1]), int(m[2]), int(m[3])
    by_reason = dict(
        (reason, int(n)) for n, reason in (part.split(" ", 1) for part in m[4].split(", "))
    )
    assert admissions == workloads + evictions
    assert sum(by_reason.values()) == evictions
    assert {"Preempted", "PodsReadyTimeout"} <= by_reason.keys()


def test_plurals_and_a_job_held_for_a_missing_workload_priority_class(tmp_path: Path) -> None:
    held = tmp_path / "held.yaml"
    held.write_text(
        """apiVersion: batch/v1
kind: Job
metadata:
  namespace: default
  name: classy
  labels: {kueue.x-k8s.io/queue-name: main, kueue.x-k8s.io/priority-class: gold}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]
"""
    )
    out = _run(WORLDS / "small.yaml", held)
    assert "1 admission of 2 workloads; no evictions" in out
    assert "1 workload still waiting" in out
    assert (
        "1 Job held suspended with no Workload: default/classy: WorkloadPriorityClassNotFound: "
        'WorkloadPriorityClass "gold" not found'
    ) in out
    assert "1 Job not managed by Kueue" in out and "it ran without quota: default/free" in out
    assert "default/classy" not in out.split("without quota")[1]
