"""``kuota recommend`` end to end on tiny traces: the cheapest design that
meets a goal is the one a hand count says, its manifests replay as found,
the same seed gives the same search in one process and in two, bad goals
are one clear line (exit 2), and a search where nothing meets the goals
says so (exit 1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kuota.cli.main import main

DATA = Path(__file__).parent.parent / "data" / "sim"
POOL = str(DATA / "tiny-pool.yaml")  # one ClusterQueue "pool" of 2 GPUs, team-a and team-b
COHORT = str(DATA / "tiny-cohort.yaml")  # team-a and team-b: 1 GPU each in one cohort


def waves(path: Path, waves: int = 10, width: int = 4) -> str:
    """``width`` one-GPU jobs every 100 s, each running 90 s: with ``width``
    GPUs nobody waits; with one fewer a job waits in every wave."""
    rows = ["job_id,submit_s,duration_s,team,gpus"]
    for w in range(waves):
        for k in range(width):
            rows.append(f"j{w}-{k},{w * 100},90,team-{'ab'[k % 2]},1")
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def eight_gpu_pool(tmp_path: Path) -> str:
    p = tmp_path / "pool8.yaml"
    p.write_text(
        Path(POOL)
        .read_text()
        .replace('nvidia.com/gpu, nominalQuota: "2"', 'nvidia.com/gpu, nominalQuota: "8"')
    )
    return str(p)


def four_gpu_cohort(tmp_path: Path) -> str:
    p = tmp_path / "cohort4.yaml"
    p.write_text(
        Path(COHORT).read_text().replace('gpu, nominalQuota: "1"', 'gpu, nominalQuota: "4"')
    )
    return str(p)


def recommend(*args: str, code: int = 0) -> Any:
    r = CliRunner().invoke(main, ["recommend", *args, "--no-progress"])
    assert r.exit_code == code, r.output
    assert "Traceback" not in r.output
    return r


def quotas(path: Path) -> dict[str, str]:
    out = {}
    for d in yaml.safe_load_all(path.read_text()):
        if d and d["kind"] == "ClusterQueue":
            for g in d["spec"]["resourceGroups"]:
                for f in g["flavors"]:
                    for r in f["resources"]:
                        if r["name"] == "nvidia.com/gpu":
                            out[d["metadata"]["name"]] = r["nominalQuota"]
    return out


def test_the_cheapest_design_meeting_a_wait_goal_is_the_peak_demand(tmp_path: Path) -> None:
    # Four jobs at once, every 100 s: four GPUs is the least for no wait at
    # all; the base has eight. The answer is the pool at four, printed as
    # manifests and written to --out with the report and the plot.
    trace = waves(tmp_path / "t.csv")
    out = tmp_path / "out"
    r = recommend(
        "--trace",
        trace,
        "--world",
        eight_gpu_pool(tmp_path),
        "--goal",
        "p95-wait<=0s",
        "--candidates",
        "8",
        "--finalists",
        "2",
        "--budget",
        "7",
        "--out",
        str(out),
    )
    assert quotas(out / "recommended.yaml") == {"pool": "4"}
    assert "recommended: " in r.output and "4 GPUs (base: 8)" in r.output
    assert "kind: ClusterQueue" in r.output  # the manifests, printed
    doc = json.loads((out / "search.json").read_text())
    finals = {f["design"]: f for f in doc["finals"]}
    assert finals["base"]["gpus"] == 8 and finals["base"]["met"]
    assert finals[doc["recommended"]]["gpus"] == 4
    # every design below four GPUs that was tried missed, on every slice
    tried = [s for rung in doc["rungs"] for s in rung] + doc["finals"]
    assert any(s["gpus"] < 4 for s in tried)
    assert all(not s["met"] for s in tried if s["gpus"] < 4)
    assert all(s["met"] for s in tried if s["gpus"] >= 4)
    # the slices grow: the first rung's jobs are fewer than the next's
    assert doc["rungs"][0][0]["jobs"] < doc["rungs"][1][0]["jobs"] < 40
    html = (out / "report.html").read_text()
    svg = (out / "pareto.svg").read_text()
    assert svg.startswith("<svg") and "<circle" in svg and "Pareto front" in svg
    assert svg.strip() in html and "kuota recommend" in html


def test_the_recommended_manifests_replay_as_the_search_found(tmp_path: Path) -> None:
    # A cohort of two teams (base: 4 GPUs each, borrowing allowed); team-a's
    # p95 wait at most 50 s, and half the quota in use. kuota simulate on the written design gives the
    # figures the search reported for it.
    trace = waves(tmp_path / "t.csv", waves=6, width=3)
    out = tmp_path / "out"
    recommend(
        "--trace",
        trace,
        "--world",
        four_gpu_cohort(tmp_path),
        "--goal",
        "p95-wait:team-a<=50s",
        "--goal",
        "utilization>=0.5",
        "--candidates",
        "6",
        "--finalists",
        "2",
        "--budget",
        "10",
        "--out",
        str(out),
    )
    doc = json.loads((out / "search.json").read_text())
    win = next(f for f in doc["finals"] if f["design"] == doc["recommended"])
    report = tmp_path / "r.json"
    r = CliRunner().invoke(
        main,
        [
            "simulate",
            "--trace",
            trace,
            "--world",
            str(out / "recommended.yaml"),
            "--json",
            str(report),
            "--no-progress",
        ],
    )
    assert r.exit_code == 0, r.output
    sim = json.loads(report.read_text())
    assert sim["teams"]["team-a"]["wait_s"]["p95"] == win["values"][0] <= 50
    assert sim["nominal_gpus"] == win["gpus"]
    assert sim["quota_utilization"] == pytest.approx(win["values"][1], abs=1e-3)
    assert win["values"][1] >= 0.5


def test_same_seed_same_search_in_one_process_and_in_two(tmp_path: Path) -> None:
    trace = waves(tmp_path / "t.csv", waves=5, width=3)
    docs = []
    for extra in ([], ["--jobs", "2"]):
        out = tmp_path / f"out{len(docs)}"
        recommend(
            "--trace",
            trace,
            "--world",
            four_gpu_cohort(tmp_path),
            "--goal",
            "p95-wait<=60s",
            "--candidates",
            "4",
            "--finalists",
            "1",
            "--budget",
            "8",
            "--seed",
            "7",
            "--out",
            str(out),
            *extra,
        )
        docs.append(((out / "search.json").read_text(), (out / "recommended.yaml").read_text()))
    assert docs[0] == docs[1]
    other = tmp_path / "other"
    recommend(
        "--trace",
        trace,
        "--world",
        four_gpu_cohort(tmp_path),
        "--goal",
        "p95-wait<=60s",
        "--candidates",
        "4",
        "--finalists",
        "1",
        "--budget",
        "8",
        "--seed",
        "8",
        "--out",
        str(other),
    )
    assert (
        json.loads((other / "search.json").read_text())["candidates"]
        != json.loads(docs[0][0])["candidates"]
    )


def test_no_design_meeting_the_goals_is_said_with_the_figures(tmp_path: Path) -> None:
    # The designs tried hold at most 1.5 x the base's 8 GPUs: a job asking
    # for 16 is never admitted in any of them, so every design misses.
    trace = tmp_path / "t.csv"
    trace.write_text("job_id,submit_s,duration_s,team,gpus\na,0,100,team-a,1\nb,0,100,team-b,16\n")
    out = tmp_path / "out"
    r = recommend(
        "--trace",
        str(trace),
        "--world",
        eight_gpu_pool(tmp_path),
        "--goal",
        "p95-wait<=1h",
        "--candidates",
        "3",
        "--finalists",
        "2",
        "--budget",
        "6",
        "--out",
        str(out),
        code=1,
    )
    assert "no design met every goal" in r.output
    assert "never admitted" in r.output
    assert not (out / "recommended.yaml").exists()
    assert json.loads((out / "search.json").read_text())["recommended"] is None


@pytest.mark.parametrize(
    ("goal", "reason"),
    [
        ("p95-wait>=2h", '--goal "p95-wait>=2h": a wait is a ceiling: write p95-wait<=2h'),
        ("p95-wait<=soon", "'soon' is not a duration such as 2h or 90m"),
        ("p101-wait<=1h", "percentile 101 is not in (0, 100]"),
        ("latency<=1h", 'unknown metric "latency" (metrics: pN-wait'),
        ("utilization>=1.5", "1.5 is not between 0 and 1"),
        ("utilization<=0.5", "utilization is a floor: write utilization>=0.5"),
        ("fair-share>=x", "'x' is not a number (e.g. 0.6 or 60%)"),
        ("p95-wait:team-z<=1h", 'team "team-z" is not in'),
        ("waits", "expected METRIC<=VALUE or METRIC>=VALUE"),
    ],
)
def test_a_bad_goal_is_one_line_naming_it(goal: str, reason: str) -> None:
    r = recommend("--trace", str(DATA / "tiny.csv"), "--world", POOL, "--goal", goal, code=2)
    assert r.output.startswith("error: ") and reason in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_bad_budget_base_and_runner_choices_are_clear(tmp_path: Path) -> None:
    trace = waves(tmp_path / "t.csv")
    args = ["--trace", trace, "--world", eight_gpu_pool(tmp_path), "--goal", "p95-wait<=1h"]
    r = recommend(*args, "--finalists", "3", "--budget", "3", code=2)
    assert "--budget 3: the 3 finalists' and the base's full replays alone take 4" in r.output
    r = recommend(*args, "--candidates", "64", "--budget", "4.5", code=2)
    assert "the first slice would hold 1 of the trace's 40 jobs" in r.output
    r = recommend(*args, "--jobs", "2", "--ray", "127.0.0.1:1", code=2)
    assert "--jobs and --ray: choose one" in r.output
    flavors_only = tmp_path / "rf.yaml"
    flavors_only.write_text(Path(POOL).read_text().replace("nvidia.com/gpu", "example.com/fpga"))
    r = recommend("--trace", trace, "--world", str(flavors_only), "--goal", "p95-wait<=1h", code=2)
    assert "error: " in r.output and "Traceback" not in r.output


BIZRQ_TREE = """
---
apiVersion: kuota.dev/v1alpha1
kind: BizGroupResourceQuota
metadata: {name: org}
spec:
  hard: {limits.nvidia.com/gpu: "8", "cash/limits.nvidia.com/gpu": "1k", limits.cpu: "64"}
---
apiVersion: kuota.dev/v1alpha1
kind: BizGroupResourceQuota
metadata: {name: team}
spec:
  parentBizGroup: org
  hard: {limits.nvidia.com/gpu: "7", "cash/limits.nvidia.com/gpu": "999", limits.cpu: "64"}
"""


def test_bizrq_gpu_keys_follow_the_quota_and_children_still_fit(tmp_path: Path) -> None:
    # The winner holds 4 of the base's 8 GPUs: the tree's GPU keys are halved,
    # the root rounded up and the child down (3.5 -> 3, 499.5 -> 499), so the
    # child still fits; other keys are left alone.
    base = tmp_path / "base.yaml"
    base.write_text(Path(eight_gpu_pool(tmp_path)).read_text() + BIZRQ_TREE)
    out = tmp_path / "out"
    recommend(
        "--trace", waves(tmp_path / "t.csv"), "--world", str(base), "--goal", "p95-wait<=0s",
        "--candidates", "8", "--finalists", "2", "--budget", "7", "--out", str(out),
    )  # fmt: skip
    assert quotas(out / "recommended.yaml") == {"pool": "4"}
    hard = {
        d["metadata"]["name"]: d["spec"]["hard"]
        for d in yaml.safe_load_all((out / "recommended.yaml").read_text())
        if d and d["kind"] == "BizGroupResourceQuota"
    }
    assert hard == {
        "org": {
            "limits.nvidia.com/gpu": "4",
            "cash/limits.nvidia.com/gpu": "500",
            "limits.cpu": "64",
        },
        "team": {
            "limits.nvidia.com/gpu": "3",
            "cash/limits.nvidia.com/gpu": "499",
            "limits.cpu": "64",
        },
    }
