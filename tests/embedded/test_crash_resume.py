"""A journaled ``kuota run`` killed with SIGKILL at random points and
restarted reaches the same end as an uninterrupted run: no acknowledged
write is lost (every Job of the world exists and finishes) and the decisions
(which flavor each Job ran on, when it started and finished) are the same."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from kuota.api.kueue import types as kt
from kuota.cli.get import open_state

QUICKSTART = Path(__file__).parent.parent.parent / "examples" / "quickstart"


def _run(world: Path, state: Path, kill_after: float | None = None) -> int | None:
    cmd = [
        sys.executable,
        "-m",
        "kuota.cli.main",
        "run",
        str(world),
        "--state",
        str(state),
        "--no-live",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if kill_after is None:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
        return proc.returncode
    time.sleep(kill_after)
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    return proc.returncode


def _decisions(state: Path) -> dict[str, Any]:
    store, _ = open_state(str(state))
    try:
        out: dict[str, Any] = {}
        for job in store.list(("batch", "Job")).items:
            st = job.status
            out[f"job {job.metadata.namespace}/{job.metadata.name}"] = (
                st.start_time,
                st.completion_time,
                [c.type for c in st.conditions or () if c.status == "True"],
                job.spec.template.spec.node_selector,
            )
        for wl in store.list((kt.GROUP, "Workload")).items:
            adm = wl.status.admission
            out[f"wl {wl.metadata.namespace}/{wl.metadata.name}"] = (
                adm.cluster_queue if adm else None,
                [p.flavors for p in adm.pod_set_assignments] if adm else None,
                wl.status.requeue_state,
            )
        return out
    finally:
        store.close()


def test_killed_runs_resume_to_the_same_decisions(tmp_path: Path) -> None:
    clean = tmp_path / "clean"
    _run(QUICKSTART, clean)
    expected = _decisions(clean)
    assert sum(1 for k in expected if k.startswith("job ")) == 80
    assert all("Complete" in v[2] for k, v in expected.items() if k.startswith("job "))

    rng = random.Random(2026)
    crashed = tmp_path / "crashed"
    killed = 0
    for _ in range(3):
        code = _run(QUICKSTART, crashed, kill_after=rng.uniform(0.6, 1.6))
        killed += code == -signal.SIGKILL
    _run(QUICKSTART, crashed)
    assert killed >= 1, "no run was actually killed: the world finished too fast"
    assert _decisions(crashed) == expected
