"""A run that only repeats itself stops (issue 24.8): a Job whose pod can
never be placed (4 GPUs a pod, nodes of 2), under waitForPodsReady with
Kueue's unlimited requeues, is admitted, evicted at its PodsReady timeout
and re-admitted for ever. The decisions stay Kueue's; once nothing new has
happened for the horizon (a day of virtual time) but these evictions, the
run stops with exit status 3 and says which workloads cycle and why. A run
with a long job still running is not stopped before that job ends."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from kuota.cli.get import open_state
from kuota.store.resources import JOB

WORLD = Path(__file__).parent.parent / "data" / "embedded" / "never-placed.yaml"

LONG_JOB = """
---
apiVersion: batch/v1
kind: Job
metadata:
  namespace: team
  name: three-days
  labels: {kueue.x-k8s.io/queue-name: main}
spec:
  template:
    metadata: {annotations: {kuota.dev/duration: 72h}}
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: busybox
        resources: {requests: {cpu: "1", nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}}
"""


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    # (A subprocess with a timeout: before the fix the run never ended.)
    return subprocess.run(
        [sys.executable, "-m", "kuota.cli.main", "run", *args, "--no-live"],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_run_that_only_repeats_itself_stops_and_says_why() -> None:
    proc = _run(str(WORLD))
    out = proc.stdout
    assert proc.returncode == 3, out + proc.stderr
    assert "Traceback" not in out + proc.stderr
    assert "stopped: the run only repeats itself (nothing new for 24h of virtual time" in out
    assert "stopped: repeating" in out  # the summary's reason
    cycling = [line for line in out.splitlines() if line.startswith("  team/")]
    assert len(cycling) == 1 and cycling[0].startswith("  team/job-too-big-"), out
    assert "(PodsReadyTimeout: Exceeded the PodsReady timeout" in cycling[0]
    assert "its pods cannot be placed (pod too-big-" in out
    assert "0/1 nodes are available: 1 Insufficient nvidia.com/gpu." in out


def test_a_long_job_still_running_is_progress_to_come(tmp_path: Path) -> None:
    world = tmp_path / "world.yaml"
    world.write_text(WORLD.read_text() + LONG_JOB)
    state = tmp_path / "state"
    proc = _run(str(world), "--state", str(state))
    assert proc.returncode == 3, proc.stdout + proc.stderr
    store, now = open_state(str(state))
    try:
        job = store.get(JOB, "team", "three-days")
        done = [c.type for c in job.status.conditions or () if c.status == "True"]
        assert "Complete" in done
        # Stopped a horizon (a day) after the long job's end, not before it.
        assert job.status.completion_time is not None
        assert (now - job.status.completion_time).total_seconds() >= 24 * 3600
    finally:
        store.close()


def test_an_explicit_until_overrides_the_horizon_and_still_says_it_cycles() -> None:
    """Issue 31: "stop at a documented horizon unless --until says
    otherwise": with --until 72h the run goes on to 72h (exit 0), and the
    notice still names the cycling workload."""
    proc = _run(str(WORLD), "--until", "72h")
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert "summary: 72.0h of virtual time, stopped: until" in out
    assert "stopped: repeating" not in out
    assert "note: ran to --until, but the run only repeats itself" in out
    cycling = [line for line in out.splitlines() if line.startswith("  team/")]
    assert len(cycling) == 1 and cycling[0].startswith("  team/job-too-big-"), out
