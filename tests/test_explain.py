"""kuota's one-line explanation for a waiting workload carries the numbers."""

from __future__ import annotations

from pathlib import Path

from kuota.sim.scenario import load_scenario, run_scenario

HERE = Path(__file__).parent


def test_waiting_workload_is_explained_with_numbers() -> None:
    captured = {}

    def factory(config, now):  # type: ignore[no-untyped-def]
        from kuota.scheduler.core import AdmissionCore

        core = AdmissionCore(config, now)
        captured["core"] = core
        return core

    result = run_scenario(
        load_scenario(HERE / "scenarios" / "kuota" / "waiting-explained-with-numbers.yaml"),
        core_factory=factory,
    )
    assert result.passed, result.failures
    view = captured["core"].workload("ns/big")
    assert view.explanation == (
        "insufficient unused quota for nvidia.com/gpu in flavor a100: 6 requested, "
        "5 available (nominal 4, borrowing limit 2, the rest of cohort research has 1 "
        "unused)"
    )
