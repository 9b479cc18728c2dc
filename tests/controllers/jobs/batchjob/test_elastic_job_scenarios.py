"""Kueue's elastic-job cases at the Job level, as scenario files under
``elastic/`` (each names its Kueue source): the Job reconciler makes, rescales
and finishes the Workload slices. They run through the control plane only:
the admission core alone has no Job reconciler."""

from __future__ import annotations

from pathlib import Path

import pytest

from kuota.sim.scenario import default_core_factory, load_scenarios, run_scenario

FILES = sorted((Path(__file__).parent / "elastic").glob("*.yaml"))


def test_the_cases_are_there() -> None:
    assert len(FILES) >= 4


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_elastic_job_scenario(path: Path) -> None:
    for scenario in load_scenarios(path):
        result = run_scenario(scenario, default_core_factory())
        assert result.passed, f"{scenario.name} ({path}):\n" + "\n".join(
            f"  {f}" for f in result.failures
        )
