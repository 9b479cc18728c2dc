"""``kuota bench``: Kueue's generator config read and expanded as Kueue's
generator does, the lower bound's arithmetic, a small world run end to end
through the control plane with every JSON key, the same figures for the same
inputs, and bad configs named with their field."""

from __future__ import annotations

import json
import platform
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import kuota
from kuota.cli.main import main
from kuota.sim.bench import nearest_rank, run_bench
from kuota.sim.benchgen import BenchConfigError, generate, load, parse

WORLDS = Path(__file__).parent.parent.parent / "bench" / "worlds"
T0 = datetime(2026, 1, 1, tzinfo=UTC)

TINY = {
    "cohorts": [
        {
            "className": "co",
            "count": 1,
            "queuesSets": [
                {
                    "className": "cq",
                    "count": 2,
                    "nominalQuota": 2,
                    "borrowingLimit": 2,
                    "reclaimWithinCohort": "Any",
                    "withinClusterQueue": "LowerPriority",
                    "workloadsSets": [
                        {
                            "count": 3,
                            "creationIntervalMs": 100,
                            "workloads": [
                                {
                                    "className": "small",
                                    "runtimeMs": 400,
                                    "priority": 50,
                                    "request": 1,
                                }
                            ],
                        },
                        {
                            "count": 1,
                            "creationIntervalMs": 250,
                            "workloads": [
                                {
                                    "className": "big",
                                    "runtimeMs": 1000,
                                    "priority": 200,
                                    "request": 2,
                                }
                            ],
                        },
                    ],
                }
            ],
        }
    ]
}


def test_the_shipped_worlds_expand_as_kueues_generator_does() -> None:
    base = generate(load(WORLDS / "kueue-baseline.yaml"), T0)
    assert len(base.arrivals) == 15_000
    assert sum(1 for o in base.objects if o.kind == "ClusterQueue") == 30
    names = {a.namespace for a in base.arrivals}
    assert "cq-0-5-cohort-4" in names and len(names) == 30
    first = [a for a in base.arrivals if a.namespace == "cq-0-0-cohort-0"]
    # Three sets in parallel: small every 100 ms, medium every 500, large every 1200.
    assert [(a.name, a.at_ms) for a in first[:2]] == [("small-0-0-0", 100), ("small-0-1-0", 200)]
    assert max(a.at_ms for a in first if a.class_name == "large") == 50 * 1200
    large = generate(load(WORLDS / "kueue-large-scale.yaml"), T0)
    assert len(large.arrivals) == 50_000
    assert sum(1 for o in large.objects if o.kind == "ClusterQueue") == 1000


def test_lower_bound_is_work_over_quota_but_not_before_the_last_creation() -> None:
    # Baseline, per ClusterQueue: 350x1x0.2 + 100x5x0.5 + 50x20x1.0 = 1320 cpu-s
    # on 20 cpu = 66 s; the last creation is at 60 s.
    assert generate(load(WORLDS / "kueue-baseline.yaml"), T0).lower_bound_s() == 66.0
    # Large scale: 35x1x0.15 + 11x5x0.35 + 4x20x0.7 = 80.5 cpu-s on 20 = 4.025 s,
    # after the last creation at 3.3 s.
    assert generate(load(WORLDS / "kueue-large-scale.yaml"), T0).lower_bound_s() == 4.025
    # Tiny: per queue 3x1x0.4 + 1x2x1.0 = 3.2 cpu-s on 2 cpu = 1.6 s > 0.3 s.
    assert generate(parse(TINY), T0).lower_bound_s() == pytest.approx(1.6)
    slow = json.loads(json.dumps(TINY))
    slow["cohorts"][0]["queuesSets"][0]["workloadsSets"][1]["creationIntervalMs"] = 5000
    assert generate(parse(slow), T0).lower_bound_s() == 5.0  # the last creation


def test_nearest_rank_percentiles() -> None:
    assert nearest_rank([], 95) == 0.0
    assert nearest_rank([5.0, 1.0, 3.0, 2.0, 4.0], 50) == 3.0
    assert nearest_rank([float(i) for i in range(1, 21)], 95) == 19.0


def test_a_tiny_world_runs_and_every_workload_finishes() -> None:
    r = run_bench(parse(TINY), name="tiny")
    assert (r.workloads, r.finished) == (8, 8)
    # Two queues of 2 cpu: at least the bound; the big ones (priority 200, 2 cpu)
    # come at 250 ms and take a whole queue's nominal quota.
    assert r.wall_s >= r.lower_bound_s
    assert r.admissions >= 8 and 0 < r.mean_cq_usage <= 1
    assert set(r.time_to_admission_ms) == {"small", "big"}
    again = run_bench(parse(TINY), name="tiny")
    same = ("wall_s", "admissions", "evictions", "mean_cq_usage", "time_to_admission_ms")
    assert {k: r.to_json()[k] for k in same} == {k: again.to_json()[k] for k in same}


def test_cli_prints_the_table_and_writes_every_json_key(tmp_path: Path) -> None:
    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(json.dumps(TINY))
    out = tmp_path / "r.json"
    r = CliRunner().invoke(main, ["bench", str(cfg), "--json", str(out)])
    assert r.exit_code == 0, r.output
    assert "makespan" in r.output and "lower bound" in r.output
    doc = json.loads(out.read_text())
    for key in (
        "workloads",
        "finished",
        "wall_s",
        "cpu_s",
        "mean_cq_usage",
        "lower_bound_s",
        "ratio_to_bound",
        "admissions_per_s",
        "peak_rss_mib",
    ):
        assert key in doc, key
    assert set(doc["cycle_ms"]) == {"p50", "p99"}
    assert set(doc["time_to_admission_ms"]["small"]) >= {"mean", "p95"}
    assert doc["workloads"] == doc["finished"] == 8
    # The build is named in the figures and the table: interpreted here, mypyc
    # under `make test-compiled`, which checks kuota.build() first.
    assert doc["build"] == kuota.build() in ("interpreted", "mypyc")
    # And the interpreter, whose own build moves the figures by a fifth.
    assert doc["python"] == kuota.interpreter()
    assert doc["python"].startswith(f"CPython {platform.python_version()} (")
    assert f"time, {doc['build']}, {doc['python']})" in r.output


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda c: c["cohorts"][0].update(count=0), "cohorts[0].count: must be at least 1"),
        (
            lambda c: c["cohorts"][0]["queuesSets"][0].update(nominalQuota="lots"),
            "cohorts[0].queuesSets[0].nominalQuota",
        ),
        (
            lambda c: c["cohorts"][0]["queuesSets"][0].update(withinClusterQueue="Sometimes"),
            "withinClusterQueue: Unsupported value: 'Sometimes'",
        ),
        (lambda c: c["cohorts"][0].update(colour="red"), "cohorts[0]"),
        (lambda c: c.update(cohorts=[]), "at least one cohort"),
        # Counts that multiply beyond what a run can hold are refused up front,
        # with the count that crossed the limit and the limit (issue 24.9).
        (
            lambda c: c["cohorts"][0]["queuesSets"][0]["workloadsSets"][0].update(count=10**12),
            "cohorts[0].queuesSets[0].workloadsSets[0].count: the config makes "
            "2,000,000,000,000 workloads (1 cohorts x 2 queues x 1,000,000,000,000 rounds x "
            "1 templates here, with those before); kuota bench runs at most 1,000,000",
        ),
        (
            lambda c: c["cohorts"][0].update(count=10**6),
            "cohorts[0].queuesSets[0].count: the config makes 2,000,000 ClusterQueues",
        ),
    ],
)
def test_bad_configs_name_the_field(mutate: object, expected: str, tmp_path: Path) -> None:
    cfg = json.loads(json.dumps(TINY))
    mutate(cfg)  # type: ignore[operator]
    with pytest.raises(BenchConfigError, match=None) as err:
        parse(cfg, "w.yaml")
    assert expected in str(err.value) and str(err.value).startswith("w.yaml: ")
    path = tmp_path / "bad.yaml"
    path.write_text(json.dumps(cfg))
    r = CliRunner().invoke(main, ["bench", str(path)])
    assert r.exit_code == 2 and "Traceback" not in r.output


def test_real_time_mode_runs_the_workloads_for_their_runtime_and_ends() -> None:
    r = run_bench(parse(TINY), name="tiny", real_time=True)
    assert (r.mode, r.workloads, r.finished) == ("real-time", 8, 8)
    # Real seconds: at least the bound (work cannot finish sooner), and the
    # run ends with the last workload (no timer left waiting for nothing).
    assert r.wall_s >= r.lower_bound_s
    assert r.elapsed_s < r.wall_s + 5


def _one_queue(
    sets: list[dict[str, object]], quota: int = 2, within: str = "Never"
) -> dict[str, object]:
    return {
        "cohorts": [
            {
                "className": "co",
                "count": 1,
                "queuesSets": [
                    {
                        "className": "cq",
                        "count": 1,
                        "nominalQuota": quota,
                        "borrowingLimit": 0,
                        "reclaimWithinCohort": "Never",
                        "withinClusterQueue": within,
                        "workloadsSets": sets,
                    }
                ],
            }
        ]
    }


def test_figures_of_a_hand_computed_world() -> None:
    # One queue of 2 cpu. Three 1-cpu workloads of 1 s created at 100, 200 and
    # 300 ms: the first two are admitted at once (100 -> 1100, 200 -> 1200),
    # the third waits for the first to finish (admitted at 1100, ends at 2100).
    # Makespan 2100 - 100 = 2.0 s; used 3 cpu-s of 2 cpu x 2.0 s = 75 %;
    # time to admission 0, 0 and 800 ms: mean 266.7 ms, p95 800 ms.
    # Lower bound: 3 cpu-s / 2 cpu = 1.5 s (the last creation, 0.3 s, is sooner).
    world = _one_queue(
        [
            {
                "count": 3,
                "creationIntervalMs": 100,
                "workloads": [{"className": "w", "runtimeMs": 1000, "priority": 1, "request": 1}],
            }
        ]
    )
    r = run_bench(parse(world), name="hand")
    assert (r.workloads, r.finished, r.admissions, r.evictions) == (3, 3, 3, 0)
    assert r.wall_s == pytest.approx(2.0)
    assert r.mean_cq_usage == pytest.approx(0.75)
    assert r.lower_bound_s == pytest.approx(1.5)
    assert r.ratio_to_bound == pytest.approx(2.0 / 1.5)
    tta = r.time_to_admission_ms["w"]
    assert tta["mean"] == pytest.approx(800 / 3) and tta["p95"] == pytest.approx(800)


def test_several_worlds_run_each_in_a_process_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each world's figures are its own: the same as when it runs alone, and
    # its CPU time and peak memory not grown by the worlds before it.
    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(json.dumps(TINY))
    both, alone = tmp_path / "both.json", tmp_path / "alone.json"
    r = CliRunner().invoke(main, ["bench", str(cfg), "--json", str(alone)])
    assert r.exit_code == 0, r.output

    def not_here(*args: object, **kwargs: object) -> None:
        raise AssertionError("ran in the calling process")

    monkeypatch.setattr("kuota.cli.bench_command.run_bench", not_here)
    r = CliRunner().invoke(main, ["bench", str(cfg), str(cfg), "--json", str(both)])
    assert r.exit_code == 0, r.output
    first, second = json.loads(both.read_text())
    single = json.loads(alone.read_text())
    keys = ("wall_s", "admissions", "evictions", "mean_cq_usage", "time_to_admission_ms")
    assert [{k: d[k] for k in keys} for d in (first, second)] == [{k: single[k] for k in keys}] * 2
    assert first["peak_rss_mib"] > 0 and second["peak_rss_mib"] > 0


def test_work_lost_to_a_preemption_is_counted_by_its_reason() -> None:
    """One queue of 1 cpu: a low-priority workload admitted at 0.1 s is
    preempted by a higher one at 0.6 s (withinClusterQueue LowerPriority), and
    runs again from 1.6 s: 0.5 s of the whole quota lost, so no schedule with
    that eviction ends before 2.0 + 0.5 s of work, and this one takes exactly
    that (first creation 0.1 s, last finish 2.6 s)."""

    def wset(interval: int, cls: str, prio: int) -> dict[str, Any]:
        w = {"className": cls, "runtimeMs": 1000, "priority": prio, "request": 1}
        return {"count": 1, "creationIntervalMs": interval, "workloads": [w]}

    one = _one_queue([wset(100, "low", 50), wset(600, "high", 200)], 1, "LowerPriority")
    r = run_bench(parse(one), name="one")
    assert (r.finished, r.evictions) == (2, 1)
    assert r.work_lost_s == {"InClusterQueue": pytest.approx(0.5)}
    assert r.lower_bound_s == pytest.approx(2.0)
    assert r.lower_bound_with_lost_work_s == pytest.approx(2.5)
    assert r.wall_s == pytest.approx(2.5)
    doc = r.to_json()
    assert doc["work_lost_to_evictions_s"] == {"InClusterQueue": 0.5}
    assert doc["lower_bound_with_lost_work_s"] == 2.5


def _wset(interval: int, cls: str, request: int, runtime: int = 1000) -> dict[str, Any]:
    w = {"className": cls, "runtimeMs": runtime, "priority": 1, "request": request}
    return {"count": 1, "creationIntervalMs": interval, "workloads": [w]}


def test_the_bound_with_arrivals_counts_work_not_yet_created_at_its_width() -> None:
    """One queue of 2 cpu: a 1-cpu workload of 1 s created at 0.1 s and a
    2-cpu one of 1 s at 0.6 s. Work over quota is 3 cpu-s / 2 = 1.5 s. But by
    0.6 s the first can have run only 0.5 cpu-s (it runs at its request, one
    cpu), so 2.5 cpu-s remain for the 2 cpu after 0.6 s: no schedule ends
    before 0.5 + 1.25 = 1.75 s from the first creation. This one waits for
    the first to end (no preemption) and takes 2.0 s."""
    r = run_bench(parse(_one_queue([_wset(100, "one", 1), _wset(600, "two", 2)])), name="w")
    assert r.lower_bound_s == pytest.approx(1.5)
    assert r.lower_bound_with_arrivals_s == pytest.approx(1.75)
    assert r.lower_bound_with_lost_work_s == pytest.approx(1.75)  # nothing evicted
    assert r.wall_s == pytest.approx(2.0)
    assert r.to_json()["lower_bound_with_arrivals_s"] == 1.75


def test_the_bound_with_arrivals_gives_each_cohort_only_its_own_quota() -> None:
    # Two cohorts of one 2-cpu queue each; all the work (two 2-cpu workloads
    # of 1 s, at 0.1 and 0.2 s) is in the first. All quota: 4 cpu-s / 4 cpu
    # = 1 s; the first cohort's own: 4 cpu-s / 2 cpu = 2 s.
    busy = _one_queue([{**_wset(100, "w", 2), "count": 2}])
    idle = _one_queue([])
    world = {"cohorts": [*busy["cohorts"], {**idle["cohorts"][0], "className": "idle"}]}  # type: ignore[index, dict-item]
    g = generate(parse(world), T0)
    assert g.lower_bound_s() == pytest.approx(1.0)
    assert g.arrival_bound_s() == pytest.approx(2.0)
    assert run_bench(parse(world), name="two").wall_s == pytest.approx(2.0)


def test_lost_work_counts_in_the_bound_only_when_done_after_the_instant() -> None:
    """One queue of 1 cpu, two 1-cpu workloads of 1 s created at 0.1 and
    2.0 s. Work not yet done at 2.0 s: the second's 1 cpu-s, so the bound is
    1.9 + 1.0 = 2.9 s from the first creation (all work on all quota: 2 s).
    0.5 cpu-s lost from 0.1 to 0.6 s was done before 2.0 s, in the idle time
    before it, and moves nothing; the same lost from 2.1 to 2.6 s must be
    done again after 2.0 s: 3.4 s."""
    g = generate(parse(_one_queue([_wset(100, "a", 1), _wset(2000, "b", 1)], 1)), T0)
    assert g.lower_bound_s() == pytest.approx(2.0)
    assert g.arrival_bound_s() == pytest.approx(2.9)
    assert g.arrival_bound_s([("cq-0-0-co-0", 100, 600, 1000)]) == pytest.approx(2.9)
    assert g.arrival_bound_s([("cq-0-0-co-0", 2100, 2600, 1000)]) == pytest.approx(3.4)
    # Lost work in another cohort's queue is not this queue's to redo.
    assert g.arrival_bound_s([("elsewhere", 2100, 2600, 1000)]) == pytest.approx(2.9)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(50, 800),  # creation interval
            st.integers(1, 3),  # count
            st.integers(1, 4),  # request (at most the quota, to fit at all)
            st.integers(50, 900),  # runtime
            st.sampled_from([1, 100, 200]),  # priority
        ),
        min_size=1,
        max_size=4,
    ),
    st.integers(2, 4),
)
def test_no_run_ends_before_its_bounds(sets: list[tuple[int, ...]], quota: int) -> None:
    # Whatever the world and Kueue's preemptions in it, the makespan is never
    # below a bound: each is a claim about every schedule.
    ws = [
        {
            "count": n,
            "creationIntervalMs": iv,
            "workloads": [
                {"className": "w", "runtimeMs": rt, "priority": p, "request": min(rq, quota)}
            ],
        }
        for iv, n, rq, rt, p in sets
    ]
    world = parse(_one_queue(ws, quota, "LowerPriority"))
    r = run_bench(world, name="any")
    assert r.finished == r.workloads
    eps = 1e-6
    assert r.wall_s + eps >= r.lower_bound_with_lost_work_s >= r.lower_bound_with_arrivals_s - eps
    # And it is never looser than all the work on all the quota.
    g = generate(world, T0)
    assert r.lower_bound_with_arrivals_s + eps >= g.total_work_milli_ms / g.capacity_milli / 1000
