"""``kuota simulate`` end to end: the accounting of tiny traces against waits
and GPU-hours computed by hand, determinism, --compare and --jobs, and bad
input as one clear line (file:line:col) with exit status 1, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kuota.cli.main import main

DATA = Path(__file__).parent.parent / "data" / "sim"
TINY = str(DATA / "tiny.csv")
POOL = str(DATA / "tiny-pool.yaml")
COHORT = str(DATA / "tiny-cohort.yaml")
H = 3600.0


def simulate(tmp_path: Path, *args: str, name: str = "r.json") -> tuple[Any, Any]:
    out = tmp_path / name
    r = CliRunner().invoke(main, ["simulate", *args, "--json", str(out), "--no-progress"])
    assert r.exit_code == 0, r.output
    assert "Traceback" not in r.output
    return json.loads(out.read_text()), r


def waits(mean: float, p50: float, p95: float, mx: float) -> dict[str, float]:
    return {"mean": mean, "p50": p50, "p95": p95, "max": mx}


def test_shared_pool_waits_and_gpu_hours_by_hand(tmp_path: Path) -> None:
    # One ClusterQueue of 2 GPUs. a1 (2 GPUs, 0-100) runs at once; b1 (t=10),
    # a2 (t=20) and b2 (t=30), one GPU each, wait for it. At 100 the queue
    # admits in creation order: b1 and a2 (two GPUs), so b2 waits for a2
    # (100-130). Waits: a1 0, b1 90, a2 80, b2 100.
    doc, r = simulate(tmp_path, "--trace", TINY, "--world", POOL)
    a, b, o = doc["teams"]["team-a"], doc["teams"]["team-b"], doc["overall"]
    assert (doc["jobs"], doc["finished"], a["jobs"], b["jobs"]) == (4, 4, 2, 2)
    # nearest rank over [0, 80]: p50 -> 1st, p95 -> 2nd
    assert a["wait_s"] == waits(40, 0, 80, 80)
    assert b["wait_s"] == waits(95, 90, 100, 100)
    # over [0, 80, 90, 100]: p50 -> 2nd (80), p95 -> 4th (100)
    assert o["wait_s"] == waits(67.5, 80, 100, 100)
    # quota and nodes agree here: every job starts when it is admitted
    assert a["start_wait_s"] == a["wait_s"] and b["start_wait_s"] == b["wait_s"]
    # GPU-hours: a1 2 GPUs x 100 s + a2 1 x 30 s; b1 1 x 50 + b2 1 x 10
    assert a["gpu_hours"] == round(230 / H, 4)
    assert b["gpu_hours"] == round(60 / H, 4)
    assert o["gpu_hours"] == round(290 / H, 4)
    assert (o["preemptions"], o["borrowed_gpu_hours"]) == (0, 0)
    # b2 ends at 140, b1 at 150; 2 GPUs busy 0-140, 1 GPU 140-150: 290 of 300
    assert doc["simulated_s"] == 150
    assert doc["utilization"] == round(290 / 300, 4)
    assert (doc["gpu_capacity"], doc["nominal_gpus"]) == (2, 2)
    # fairness: shares of use (230/290, 60/290) against 1/2 each
    assert a["nominal_share"] == 0.5 and a["use_share"] == round(230 / 290, 4)
    assert a["fairness"] == round((230 / 290) / 0.5, 4)
    assert doc["fractional_gpus"] == "round-up"
    assert "team-a" in r.output and "overall" in r.output


def test_borrowing_and_reclaim_by_preemption_by_hand(tmp_path: Path) -> None:
    # team-a and team-b each have 1 GPU in one cohort. a1 (2 GPUs, 100 s) at 0
    # borrows team-b's GPU; b1 (1 GPU, 50 s) at 10 reclaims it by preempting
    # a1, which requeues and is admitted again when b1 ends (60), running
    # 100 s more (to 160). a1's first admission was at 0: its wait is 0.
    trace = tmp_path / "t.csv"
    trace.write_text("job_id,submit_s,duration_s,team,gpus\na1,0,100,team-a,2\nb1,10,50,team-b,1\n")
    doc, _ = simulate(tmp_path, "--trace", str(trace), "--world", COHORT)
    a, b = doc["teams"]["team-a"], doc["teams"]["team-b"]
    assert (a["preemptions"], b["preemptions"], doc["overall"]["preemptions"]) == (1, 0, 1)
    assert a["wait_s"]["max"] == 0 and b["wait_s"]["max"] == 0
    # a: 2 GPUs for 0-10 and 60-160; b: 1 GPU for 10-60
    assert a["gpu_hours"] == round(220 / H, 4) and b["gpu_hours"] == round(50 / H, 4)
    # a borrowed 1 GPU (2 held, 1 nominal) for 10 s, then for 100 s
    assert a["borrowed_gpu_hours"] == round(110 / H, 4)
    assert a["borrowed_share"] == 0.5 and b["borrowed_share"] == 0
    assert doc["simulated_s"] == 160
    assert doc["utilization"] == round(270 / 320, 4)
    assert doc["admissions"] == 3


def test_fractional_gpus_round_up_against_milli(tmp_path: Path) -> None:
    # x 0.5 GPU (0-100), y 0.46 GPU (0-50), z 0.3 GPU from t=10 for 10 s.
    # round-up on 2 GPUs: x and y take one each, z waits for y (40 s).
    trace = str(DATA / "tiny-shared.csv")
    up, _ = simulate(tmp_path, "--trace", trace, "--world", POOL, name="up.json")
    a = up["teams"]["team-a"]
    assert a["wait_s"] == waits(round(40 / 3, 3), 0, 40, 40)
    assert a["gpu_hours"] == round((100 + 50 + 10) / H, 4)  # whole GPUs charged
    assert up["gpu_resource"] == "nvidia.com/gpu"
    # milli on one GPU: 500 + 460 fit in 1000, 300 more does not until y ends
    milli, r = simulate(
        tmp_path,
        "--trace",
        trace,
        "--world",
        str(DATA / "tiny-milli.yaml"),
        "--mapping",
        str(DATA / "milli.mapping.yaml"),
        name="milli.json",
    )
    a = milli["teams"]["team-a"]
    assert a["wait_s"] == waits(round(40 / 3, 3), 0, 40, 40)
    assert a["gpu_hours"] == round((0.5 * 100 + 0.46 * 50 + 0.3 * 10) / H, 4)
    assert (milli["fractional_gpus"], milli["gpu_resource"]) == ("milli", "kuota.dev/gpu-milli")
    assert milli["gpu_capacity"] == 1 and milli["nominal_gpus"] == 1
    assert "milli-GPUs on kuota.dev/gpu-milli" in r.output


def test_nodes_from_the_node_list_are_what_is_short(tmp_path: Path) -> None:
    # 8 GPUs of quota but one 2-GPU node: every job is admitted at once (wait
    # 0), and starts when the node has room, in pod creation order: the same
    # timeline as the 2-GPU quota above.
    doc, _ = simulate(
        tmp_path,
        "--trace",
        TINY,
        "--world",
        str(DATA / "tiny-big.yaml"),
        "--nodes",
        str(DATA / "tiny-nodes.csv"),
    )
    o = doc["overall"]
    assert o["wait_s"] == waits(0, 0, 0, 0)
    assert o["start_wait_s"] == waits(67.5, 80, 100, 100)
    assert doc["gpu_capacity"] == 2 and doc["nominal_gpus"] == 8
    assert doc["utilization"] == round(290 / 300, 4)
    assert doc["nodes_from"].startswith("the node list (2 nodes")


def test_same_inputs_same_report(tmp_path: Path) -> None:
    args = ["--trace", str(DATA / "openb-slice.csv"), "--world", POOL]
    mapping = tmp_path / "m.yaml"
    mapping.write_text('teams: {"*": team-a/team-a}\n')
    args += ["--mapping", str(mapping)]
    one, _ = simulate(tmp_path, *args, name="1.json")
    simulate(tmp_path, *args, name="2.json")
    assert (tmp_path / "1.json").read_bytes() == (tmp_path / "2.json").read_bytes()
    # the slice's one 8-GPU job never fits the 2-GPU queue: it is still waiting
    assert (one["jobs"], one["finished"], one["pending"]) == (150, 149, 1)
    assert any("1 job still waiting" in w for w in one["warnings"])


def test_compare_in_parallel_gives_the_sequential_report(tmp_path: Path) -> None:
    base = ["--trace", TINY, "--world", POOL, "--compare", COHORT]
    seq, r = simulate(tmp_path, *base, name="seq.json")
    par, _ = simulate(tmp_path, *base, "--jobs", "2", name="par.json")
    assert list(seq) == ["tiny-pool", "tiny-cohort"]  # keyed by design, in order
    assert seq == par
    assert seq["tiny-pool"]["overall"]["wait_s"]["max"] == 100
    assert seq["tiny-cohort"]["jobs"] == 4
    assert "designs compared" in r.output
    # more designs may follow --compare as arguments
    three, _ = simulate(tmp_path, *base, POOL, name="three.json")
    assert list(three) == ["tiny-pool", "tiny-cohort", "tiny-pool-2"]


def test_until_stops_early_and_counts_what_ran(tmp_path: Path) -> None:
    doc, _ = simulate(tmp_path, "--trace", TINY, "--world", POOL, "--until", "120s")
    assert doc["stopped"] == "until" and doc["simulated_s"] == 120
    assert doc["finished"] == 1 and doc["admitted"] == 3 and doc["pending"] == 1
    # a1 2 x 100, then b1 and a2 1 x 20 each up to 120
    assert doc["overall"]["gpu_hours"] == round(240 / H, 4)


def fail(*args: str) -> str:
    r = CliRunner().invoke(main, ["simulate", *args])
    assert r.exit_code == 2, r.output  # every input error exits 2
    assert "Traceback" not in r.output
    lines = [x for x in r.stderr.splitlines() if x]
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    return lines[0]


HEADER = "job_id,submit_s,duration_s,team,user,gpus,gpu_model,cpus,memory_mib,pods,status\n"


@pytest.mark.parametrize(
    ("text", "where", "reason"),
    [
        ("job_id,submit_s,team,gpus\na,0,team-a,1\n", "1:26", "missing column duration_s"),
        (HEADER + "a,0,-5,team-a,,1,,1,1,1,\n", "2:5", "duration_s: -5 must not be negative"),
        (HEADER + "a,0,5,team-a,,x,,1,1,1,\n", "2:15", 'gpus: "x" is not a number'),
        ("", "1:1", "empty file"),
        (HEADER + "a,0,5,team-a,,1,H100,1,1,1,\n", "2:17", 'unknown GPU model: GPU model "H100"'),
        (
            HEADER + "a,0,5,team-a,,1,,1,1,1,\nb,1,5,Team C,,1,,1,1,1,\n",
            "3:7",
            'team "Team C" has no queue',
        ),
    ],
)
def test_bad_trace_is_one_line_naming_line_and_column(
    tmp_path: Path, text: str, where: str, reason: str
) -> None:
    p = tmp_path / "bad.csv"
    p.write_text(text)
    line = fail("--trace", str(p), "--world", POOL)
    assert line.startswith(f"error: {p}:{where}: "), line
    assert reason in line


def test_bad_mapping_and_design_mismatch(tmp_path: Path) -> None:
    m = tmp_path / "m.yaml"
    m.write_text("teams:\n  team-a: {queue: nope}\n")
    line = fail("--trace", TINY, "--world", POOL, "--mapping", str(m))
    assert line.startswith(f"error: {m}:2:3: "), line
    assert "team-a/nope" in line
    m.write_text("fractionalGpus: milli\n")
    line = fail("--trace", TINY, "--world", POOL, "--mapping", str(m))
    # the first row asking for GPUs, at its gpus column
    assert line.startswith(f"error: {TINY}:2:18: gpus: "), line
    assert "asks for kuota.dev/gpu-milli, which ClusterQueue pool" in line
    m.write_text("teams:\n  team-a: {queue: team-a, priorityClass: high}\n")
    line = fail("--trace", TINY, "--world", POOL, "--mapping", str(m))
    assert line.startswith(f"error: {m}:2:3: ") and 'WorkloadPriorityClass "high"' in line
    m.write_text("gpuModels:\n  '': nope\n")
    line = fail("--trace", TINY, "--world", POOL, "--mapping", str(m))
    assert line.startswith(f"error: {m}:2:3: ") and "unknown GPU model" in line


def test_missing_files_and_stray_arguments(tmp_path: Path) -> None:
    assert "cannot read" in fail("--trace", str(tmp_path / "no.csv"), "--world", POOL)
    assert "no such file" in fail("--trace", TINY, "--world", str(tmp_path / "no.yaml"))
    nodes = tmp_path / "n.csv"
    nodes.write_text("node_id,gpus\nn,1\n")
    line = fail("--trace", TINY, "--world", POOL, "--nodes", str(nodes))
    assert line.startswith(f"error: {nodes}:1:13: missing columns cpus, memory_mib")
    assert "after --compare" in fail("--trace", TINY, "--world", POOL, COHORT)


def test_a_design_in_several_files_with_its_own_nodes(tmp_path: Path) -> None:
    # --world twice: the quota from one file, a 2-GPU node from the other;
    # the design's own nodes win over --nodes (with a warning).
    doc, r = simulate(
        tmp_path,
        "--trace",
        TINY,
        "--world",
        str(DATA / "tiny-big.yaml"),
        "--world",
        str(DATA / "tiny-node.yaml"),
        "--nodes",
        str(DATA / "tiny-nodes.csv"),
    )
    assert doc["design"] == "tiny-big"
    assert doc["nodes_from"] == "the design (1 node)"
    assert doc["overall"]["start_wait_s"] == waits(67.5, 80, 100, 100)
    assert "--nodes is not used" in r.stderr


def test_gpu_models_pin_jobs_to_their_flavor(tmp_path: Path) -> None:
    # One T4 and one V100 GPU. t1 (T4, 0-100) takes the T4; t2 (T4, at 10)
    # may not use the free V100 and waits for t1 (90 s); any (no model, at
    # 20) takes the V100 at once.
    trace = tmp_path / "t.csv"
    trace.write_text(
        "job_id,submit_s,duration_s,team,gpus,gpu_model\n"
        "t1,0,100,team-a,1,T4\nt2,10,10,team-a,1,T4\nany,20,10,team-a,1,\n"
    )
    doc, _ = simulate(tmp_path, "--trace", str(trace), "--world", str(DATA / "tiny-models.yaml"))
    assert doc["overall"]["wait_s"] == waits(30, 0, 90, 90)
    assert doc["nodes_from"] == "the quota (2 nodes, one per flavor)"
    trace.write_text("job_id,submit_s,duration_s,team,gpus,gpu_model\nt1,0,100,team-a,1,A100\n")
    line = fail("--trace", str(trace), "--world", str(DATA / "tiny-models.yaml"))
    assert line == (
        f'error: {trace}:2:19: unknown GPU model: GPU model "A100" maps to ResourceFlavor '
        '"a100", which design tiny-models does not have (flavors: t4, v100)'
    )


def test_time_series_by_hand() -> None:
    from kuota.cli.world import load_world
    from kuota.sim.mapping import Mapping
    from kuota.sim.simulate import Design
    from kuota.sim.simulate import simulate as run
    from kuota.sim.trace import read_trace

    world = load_world([POOL])
    assert world.config is not None
    (r,) = run(read_trace(TINY), [Design("pool", POOL, world.objects, world.config)], Mapping())
    # the timeline of test_shared_pool_waits_and_gpu_hours_by_hand
    assert r.util_series == [(0, 2, 2), (140, 1, 2), (150, 0, 2)]
    assert r.team_gpu_series == {
        "team-a": [(0, 2), (100, 1), (130, 0)],
        "team-b": [(100, 1), (130, 2), (140, 1), (150, 0)],
    }
    assert r.pending_series == [(0, 0), (10, 1), (20, 2), (30, 3), (100, 1), (130, 0)]
    assert r.team_pending_series == {
        "team-a": [(0, 0), (20, 1), (100, 0)],  # a1 was pending within instant 0
        "team-b": [(10, 1), (30, 2), (100, 1), (130, 0)],
    }


FIFO_POOL = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: gpu}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: pool}
spec:
  namespaceSelector: {}
  queueingStrategy: BestEffortFIFO
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: gpu
      resources:
      - {name: cpu, nominalQuota: "24"}
      - {name: memory, nominalQuota: 96Gi}
      - {name: nvidia.com/gpu, nominalQuota: "4"}
"""


def _fifo_backfill(path: Path, gpus: int, milli_cpu: int, mib: int) -> dict[str, list[float]]:
    """The waits of one BestEffortFIFO pool without preemption, worked out
    independently of kuota: at every instant (finishes first, then arrivals)
    the pending jobs are tried in submission order and each one that fits is
    admitted (a job that does not fit never blocks the ones behind it)."""
    import csv
    import heapq
    import math
    from decimal import Decimal

    rows = list(csv.DictReader(path.open()))
    jobs = sorted(
        (
            int(r["submit_s"]),
            i,
            float(r["duration_s"]),
            (
                math.ceil(Decimal(r["gpus"])),
                math.ceil(Decimal(r["cpus"]) * 1000),
                int(r["memory_mib"]),
            ),
            r["team"],
        )
        for i, r in enumerate(rows)
    )
    cap, used = (gpus, milli_cpu, mib), [0, 0, 0]
    pending: list[tuple[int, int, float, tuple[int, int, int], str]] = []
    running: list[tuple[float, int, tuple[int, int, int]]] = []
    out: dict[str, list[float]] = {}
    nxt = 0
    while nxt < len(jobs) or running:
        t = min(
            jobs[nxt][0] if nxt < len(jobs) else math.inf,
            running[0][0] if running else math.inf,
        )
        while running and running[0][0] <= t:
            _, _, req = heapq.heappop(running)
            used = [u - q for u, q in zip(used, req, strict=True)]
        while nxt < len(jobs) and jobs[nxt][0] <= t:
            pending.append(jobs[nxt])
            nxt += 1
        left = []
        for job in pending:
            submit, i, duration, req, team = job
            if all(u + q <= c for u, q, c in zip(used, req, cap, strict=True)):
                used = [u + q for u, q in zip(used, req, strict=True)]
                out.setdefault(team, []).append(t - submit)
                heapq.heappush(running, (t + duration, i, req))
            else:
                left.append(job)
        pending = left
    return out


def test_a_fifo_pool_on_a_real_slice_matches_an_independent_replay(tmp_path: Path) -> None:
    # 150 openb pods on 4 GPUs, 24 cpu, 96 Gi: a queue forms (waits of a day),
    # the 8-GPU pod and seven 32-cpu pods never fit, and smaller jobs pass
    # them. Every team's waits are those of a FIFO-with-backfill replay
    # written here.
    design = tmp_path / "pool.yaml"
    lqs = "".join(
        f"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
        f"metadata: {{namespace: {t}, name: {t}}}\nspec: {{clusterQueue: pool}}\n"
        for t in ("ls", "be", "burstable")
    )
    design.write_text(FIFO_POOL + lqs)
    trace = DATA / "openb-slice.csv"
    doc, _ = simulate(tmp_path, "--trace", str(trace), "--world", str(design))
    expected = _fifo_backfill(trace, 4, 24_000, 96 * 1024)
    assert doc["overall"]["pending"] == 8  # never fit: 8 GPUs, or 32 cpu
    assert max(max(w) for w in expected.values()) > 3600  # there is a queue
    for team, ws in expected.items():
        ws.sort()
        got = doc["teams"][team]
        assert got["admitted"] == len(ws), team
        assert got["wait_s"]["mean"] == pytest.approx(sum(ws) / len(ws), abs=1e-3), team
        assert got["wait_s"]["max"] == ws[-1], team
        assert got["wait_s"]["p95"] == ws[max(1, -(-95 * len(ws) // 100)) - 1], team


@pytest.mark.parametrize(
    ("change", "where", "reason"),
    [
        (  # the ClusterQueue names a flavor the design lacks: Kueue's Active=False reason
            ("metadata: {name: gpu}", "metadata: {name: other}"),
            "(document 2): ClusterQueue/pool: inactive (FlavorNotFound): ",
            "references missing ResourceFlavor(s): gpu; team",
        ),
        (
            ('nominalQuota: "2"}', 'nominalQuota: "0"}'),
            "(document 2): ClusterQueue/pool: ",
            "no nominal quota of nvidia.com/gpu in it",
        ),
        (
            ("spec: {clusterQueue: pool}", "spec: {clusterQueue: pool, stopPolicy: Hold}"),
            "(document 3): LocalQueue/team-a/team-a: ",
            "inactive (Stopped)",
        ),
    ],
)
def test_a_design_that_can_admit_nothing_is_an_error_before_anything_runs(
    tmp_path: Path, change: tuple[str, str], where: str, reason: str
) -> None:
    design = tmp_path / "design.yaml"
    design.write_text(Path(POOL).read_text().replace(*change, 1))
    out = tmp_path / "r.json"
    r = CliRunner().invoke(
        main, ["simulate", "--trace", TINY, "--world", str(design), "--json", str(out)]
    )
    assert r.exit_code == 2, r.output
    (line,) = [x for x in r.stderr.splitlines() if x]
    assert line.startswith(f"error: {design} {where}"), line
    assert reason in line
    assert not out.exists()  # nothing ran


def peak_rss_kib(*args: str) -> int:
    """``kuota ARGS`` in a process of its own; its peak memory (RSS, KiB)."""
    code = (
        "import resource, sys\n"
        "from kuota.cli.main import main\n"
        "try:\n    main(sys.argv[1:])\n"
        "except SystemExit:\n    pass\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "KUOTA_PROGRESS_AFTER": "3600"},
    )
    return int(r.stderr.strip().splitlines()[-1])


def test_a_long_trace_is_streamed_not_held(tmp_path: Path) -> None:
    """Issue 24.9: a 1M-row trace reached 2 GB before it ran, every row read
    and made a Job up front. Rows are now checked as they are read and Jobs
    made as they arrive: 16 times the rows (run for their first minute) cost
    no more memory."""

    def trace(rows: int) -> str:
        p = tmp_path / f"t{rows}.csv"
        lines = ["job_id,submit_s,duration_s,team,gpus,cpus,memory_mib"]
        lines += [f"j{i},{i},60,team-{'ab'[i % 2]},1,2,4096" for i in range(rows)]
        p.write_text("\n".join(lines) + "\n")
        return str(p)

    def peak(rows: int) -> int:
        return peak_rss_kib(
            "simulate", "--trace", trace(rows), "--world", POOL, "--until", "60s", "--no-progress"
        )

    base, more = peak(1_000), peak(16_000)
    # Jobs made up front cost about 3 KiB each: 15,000 more were 46 MiB on main.
    assert more - base < 12 * 1024, (base, more)
