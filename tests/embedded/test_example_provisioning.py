"""``examples/provisioning`` runs as its README says: every job admitted once
the autoscaler answers, the node group grown (a scale-up lost to a stock-out)
and shrunk back to nothing when the work is done."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from kuota.cli.main import main

EXAMPLE = Path(__file__).parents[2] / "examples" / "provisioning"


def _get(state: Path, kind: str, *args: str) -> list[dict[str, Any]]:
    r = CliRunner().invoke(main, ["get", kind, *args, "--state", str(state), "-o", "json"])
    assert r.exit_code == 0, r.output
    items: list[dict[str, Any]] = json.loads(r.output)["items"]
    return items


def test_provisioning_example_scales_up_admits_and_scales_down(tmp_path: Path) -> None:
    state = tmp_path / "state"
    r = CliRunner().invoke(main, ["run", str(EXAMPLE), "--state", str(state), "--until", "6m"])
    assert r.exit_code == 0, r.output
    # As the README shows at 6m: two requests, the pool at two nodes.
    assert len(_get(state, "provisioningrequests", "-n", "research")) == 2
    (ng,) = _get(state, "nodegroups")
    assert ng["status"]["nodes"] == 2

    # Events live an hour (as kube-apiserver keeps them): gather them as the run goes.
    reasons = [e["reason"] for e in _get(state, "events", "-A")]
    for until in ("50m", None):
        args = ["run", str(EXAMPLE), "--state", str(state)] + (["--until", until] if until else [])
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 0, r.output
        reasons += [e["reason"] for e in _get(state, "events", "-A")]
    wls = _get(state, "workloads", "-n", "research")
    assert len(wls) == 5
    for wl in wls:
        conds = {c["type"]: c["status"] for c in wl["status"]["conditions"]}
        assert conds["Admitted"] == conds["Finished"] == "True"
        (check,) = wl["status"]["admissionChecks"]
        # A scale-up names its group (the class detail the config reads); a
        # request that found room on the nodes there are has no such detail.
        selector = check["podSetUpdates"][0].get("nodeSelector")
        assert selector in (None, {"kuota.dev/node-group": "a100-pool"})
    assert "TriggeredScaleUp" in reasons
    assert "FailedToScaleUpGroup" in reasons  # failurePercent 45: train-1's scale-up
    assert "ScaleDown" in reasons
    assert _get(state, "nodes") == []
    assert _get(state, "provisioningrequests", "-A") == []
