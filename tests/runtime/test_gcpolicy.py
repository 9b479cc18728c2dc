"""The collector's pace: tuned for a process, slower still inside a bounded
replay, and restored after it."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from kuota.runtime import gcpolicy
from kuota.sim.bench import run_bench
from kuota.sim.benchgen import parse


@pytest.fixture(autouse=True)
def _keep_threshold() -> Any:
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


def test_a_batch_collects_rarely_and_restores_the_pace() -> None:
    gcpolicy.tune()
    with gcpolicy.batch():
        assert gc.get_threshold()[0] == gcpolicy.BATCH_YOUNG
    assert gc.get_threshold() == gcpolicy.THRESHOLDS


def test_a_batch_still_frees_cycles_past_its_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gcpolicy, "BATCH_YOUNG", 1_000)
    freed = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "stop":
            freed.append(info["collected"])

    gc.callbacks.append(seen)
    try:
        with gcpolicy.batch():
            for _ in range(5_000):
                a: list[Any] = []
                a.append(a)  # a cycle only the collector frees
    finally:
        gc.callbacks.remove(seen)
    assert sum(freed) >= 1_000


def test_a_bench_run_leaves_the_pace_as_it_found_it() -> None:
    gc.set_threshold(1234, 5, 6)
    gen = parse(
        {
            "cohorts": [
                {
                    "className": "c",
                    "count": 1,
                    "queuesSets": [
                        {
                            "className": "q",
                            "count": 1,
                            "nominalQuota": 1,
                            "workloadsSets": [
                                {
                                    "count": 2,
                                    "creationIntervalMs": 10,
                                    "workloads": [
                                        {"className": "s", "runtimeMs": 10, "request": 1}
                                    ],
                                }
                            ],
                        }
                    ],
                }
            ]
        }
    )
    r = run_bench(gen, name="tiny")
    assert r.finished == 2
    assert gc.get_threshold() == (1234, 5, 6)
