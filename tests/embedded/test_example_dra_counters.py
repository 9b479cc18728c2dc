"""``examples/dra-counters`` runs as its README says: DRA requests of a class
mapped with a counter source are charged, per pod, the largest memory counter
the matching ResourceSlice devices consume (kueue@ff69552e pkg/dra/counters.go),
so the whole-GPU Jobs take 80Gi a pod and the MIG Job 10Gi a pod, and the
second whole-GPU Job waits for the first."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from kuota.cli.main import main

EXAMPLE = Path(__file__).parents[2] / "examples" / "dra-counters"


def _workloads(state: Path) -> dict[str, dict[str, Any]]:
    r = CliRunner().invoke(main, ["get", "workloads", "-A", "--state", str(state), "-o", "json"])
    assert r.exit_code == 0, r.output
    return {w["metadata"]["name"].rsplit("-", 1)[0]: w for w in json.loads(r.output)["items"]}


def _usage(wl: dict[str, Any]) -> str:
    usage: str = wl["status"]["admission"]["podSetAssignments"][0]["resourceUsage"]["gpu.memory"]
    return usage


def test_dra_counters_example_charges_consumed_memory(tmp_path: Path) -> None:
    state = tmp_path / "state"
    r = CliRunner().invoke(main, ["run", str(EXAMPLE), "--state", str(state), "--until", "5m"])
    assert r.exit_code == 0, r.output
    wls = _workloads(state)
    assert _usage(wls["job-sample-dra-counter-job-1"]) == "240Gi"
    assert _usage(wls["job-sample-dra-mig-job"]) == "40Gi"
    waiting = wls["job-sample-dra-counter-job-2"]
    assert not waiting["status"].get("admission")
    qr = next(c for c in waiting["status"]["conditions"] if c["type"] == "QuotaReserved")
    assert "insufficient unused quota for gpu.memory" in qr["message"]

    r = CliRunner().invoke(main, ["run", str(EXAMPLE), "--state", str(state)])
    assert r.exit_code == 0, r.output
    wls = _workloads(state)
    assert _usage(wls["job-sample-dra-counter-job-2"]) == "240Gi"
    assert "3 admissions of 3 workloads; no evictions" in r.output
