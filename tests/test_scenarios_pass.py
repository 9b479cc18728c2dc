"""Every scenario under tests/scenarios passes on the real admission core.

Skipped while ``kuota.scheduler.core`` cannot be imported (the core is written
separately from the runner); the runner itself is tested in test_check.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kuota.sim.scenario import load_scenarios, run_scenario

SCENARIOS = Path(__file__).parent / "scenarios"
FILES = sorted(SCENARIOS.rglob("*.yaml"))


def test_scenarios_found() -> None:
    assert len(FILES) > 50


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(SCENARIOS)) for p in FILES])
def test_scenario_passes(path: Path) -> None:
    core = pytest.importorskip("kuota.scheduler.core")
    for scenario in load_scenarios(path):
        result = run_scenario(scenario, core.AdmissionCore)
        assert result.passed, f"{scenario.name} ({path}):\n" + "\n".join(
            f"  {f}" for f in result.failures
        )
