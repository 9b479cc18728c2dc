"""Every oracle scenario reads as valid: its world and its applied objects."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kuota.cli.main import main

SCENARIOS = Path(__file__).parent.parent / "scenarios"


def test_every_scenario_valid() -> None:
    result = CliRunner().invoke(main, ["validate", "--json", str(SCENARIOS)])
    assert result.exit_code == 0, result.output[-3000:]
    out = json.loads(result.stdout)  # progress goes to stderr
    assert out["files"] == len(list(SCENARIOS.rglob("*.yaml")))
    scenarios = [d for d in out["documents"] if d["object"].startswith("Scenario/")]
    assert len(scenarios) == out["files"]
    # Every scenario brings a world: more objects than files.
    assert out["objects"] > 3 * out["files"]
    assert all(not d["warnings"] for d in out["documents"]), [
        (d["file"], d["warnings"]) for d in out["documents"] if d["warnings"]
    ]
