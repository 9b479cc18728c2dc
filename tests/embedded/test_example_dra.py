"""``examples/dra`` runs as its README says: devices asked through a
ResourceClaimTemplate are charged, per pod, under the resource name
``deviceClassMappings`` gives their DeviceClass, so the ClusterQueue's quota
of it decides; an unmapped DeviceClass makes the workload Misconfigured with
Kueue's message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from kuota.cli.main import main

EXAMPLE = Path(__file__).parents[2] / "examples" / "dra"


def _workloads(state: Path) -> dict[str, dict[str, Any]]:
    r = CliRunner().invoke(main, ["get", "workloads", "-A", "--state", str(state), "-o", "json"])
    assert r.exit_code == 0, r.output
    return {w["metadata"]["name"].rsplit("-", 1)[0]: w for w in json.loads(r.output)["items"]}


def _cond(wl: dict[str, Any], ctype: str) -> dict[str, Any]:
    return next(c for c in wl["status"]["conditions"] if c["type"] == ctype)


def test_dra_example_charges_claimed_devices(tmp_path: Path) -> None:
    state = tmp_path / "state"
    r = CliRunner().invoke(main, ["run", str(EXAMPLE), "--state", str(state), "--until", "5m"])
    assert r.exit_code == 0, r.output
    wls = _workloads(state)
    admitted = [n for n, w in wls.items() if w["status"].get("admission")]
    assert sorted(admitted) == ["job-sample-dra-rct-job-1", "job-sample-dra-rct-job-2"]
    usage = wls["job-sample-dra-rct-job-1"]["status"]["admission"]["podSetAssignments"][0]
    assert usage["resourceUsage"]["example.com/gpu"] == "4"
    waiting = _cond(wls["job-sample-dra-rct-job-3"], "QuotaReserved")
    assert "insufficient unused quota for example.com/gpu" in waiting["message"]

    fpga = wls["job-fpga-job"]
    msg = (
        "spec.podSets[0].template.spec.resourceClaims[0].resourceClaimTemplateName: "
        'Not found: "DeviceClass fpga.example.com is not mapped in DRA configuration'
        ' for podset main"'
    )
    qr = _cond(fpga, "QuotaReserved")
    assert (qr["status"], qr["reason"], qr["message"]) == ("False", "Misconfigured", msg)
    rq = _cond(fpga, "Requeued")
    assert (rq["status"], rq["reason"], rq["message"]) == ("False", "Inadmissible", msg)

    r = CliRunner().invoke(main, ["run", str(EXAMPLE), "--state", str(state)])
    assert r.exit_code == 0, r.output
    wls = _workloads(state)
    assert _cond(wls["job-sample-dra-rct-job-3"], "Finished")["status"] == "True"
    assert not wls["job-fpga-job"]["status"].get("admission")
