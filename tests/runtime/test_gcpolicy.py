"""The collector's pace: tuned for a kuota process, slower still for a
replay process, which still frees cycles past its threshold."""

from __future__ import annotations

import gc
from typing import Any

import pytest
from click.testing import CliRunner

from kuota.cli.main import main
from kuota.runtime import gcpolicy


@pytest.fixture(autouse=True)
def _keep_threshold() -> Any:
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


def test_a_replay_process_collects_rarely() -> None:
    gcpolicy.tune()
    assert gc.get_threshold() == gcpolicy.THRESHOLDS
    gcpolicy.tune(replay=True)
    assert gc.get_threshold() == (gcpolicy.REPLAY_YOUNG, *gcpolicy.THRESHOLDS[1:])


def test_the_replay_pace_still_frees_cycles_past_its_threshold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(gcpolicy, "REPLAY_YOUNG", 1_000)
    gcpolicy.tune(replay=True)
    freed = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "stop":
            freed.append(info["collected"])

    gc.callbacks.append(seen)
    try:
        for _ in range(5_000):
            a: list[Any] = []
            a.append(a)  # a cycle only the collector frees
    finally:
        gc.callbacks.remove(seen)
    assert sum(freed) >= 1_000


@pytest.mark.parametrize("command", ["bench", "simulate"])
def test_bench_and_simulate_run_at_the_replay_pace(command: str) -> None:
    gcpolicy.tune()
    # A missing input: the command sets its pace, then reports the error.
    args = ["missing.yaml"] if command == "bench" else ["--trace", "t.csv", "--world", "w.yaml"]
    result = CliRunner().invoke(main, [command, *args])
    assert result.exit_code == 2, result.output
    assert gc.get_threshold()[0] == gcpolicy.REPLAY_YOUNG
