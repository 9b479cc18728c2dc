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


def test_workload_without_a_queue_name_says_how_to_give_it_one() -> None:
    from core_world import add, make_core

    core = make_core()
    add(
        core,
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: team}\n---\n"
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w, namespace: team}\n"
        "spec: {podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c}]}}}]}\n",
    )
    view = core.workload("team/w")
    assert view is not None
    assert view.explanation.startswith("names no LocalQueue (spec.queueName is empty")
    assert "LocalQueue named default in namespace team" in view.explanation
