"""Every scenario under tests/scenarios passes through the embedded control
plane (store, manager, Kueue's controllers: what ``kuota check`` and ``kuota
run`` use) and on the admission core alone (the same decisions without the
store in between)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kuota.sim.scenario import (
    CoreFactory,
    default_core_factory,
    direct_core_factory,
    load_scenarios,
    run_scenario,
)

SCENARIOS = Path(__file__).parent.parent / "scenarios"
FILES = sorted(SCENARIOS.rglob("*.yaml"))
IDS = [str(p.relative_to(SCENARIOS)) for p in FILES]


def test_scenarios_found() -> None:
    assert len(FILES) > 50


def _passes(path: Path, factory: CoreFactory) -> None:
    for scenario in load_scenarios(path):
        result = run_scenario(scenario, factory)
        assert result.passed, f"{scenario.name} ({path}):\n" + "\n".join(
            f"  {f}" for f in result.failures
        )


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_scenario_passes_through_the_control_plane(path: Path) -> None:
    _passes(path, default_core_factory())


# kuota's quota trees are webhooks of the store and a controller: the admission
# core alone has neither.
STORE_ONLY = ("bizrq",)


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_scenario_passes_on_the_core_alone(path: Path) -> None:
    if path.relative_to(SCENARIOS).parts[0] in STORE_ONLY:
        pytest.skip("needs the control plane's store")
    _passes(path, direct_core_factory())
