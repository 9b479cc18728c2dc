"""``kuota simulate`` at scale (issue 30.1, 24.9): the openb trace on one design,
the dlrm month on every shipped design, and a synthetic year (the dlrm month
tiled with time offsets, SYNTHETIC: no such year was recorded) cut at N jobs
(past 12 months the tiles go on: ``--sizes 1000000`` for issue 24.9's
million rows), each run as a user runs it (a ``kuota simulate`` process) on
each build. ``kuota simulate`` picks the fast replay where it decides the
same (kuota.sim.replay_path); ``--paths fast full`` runs openb and the dlrm
designs on both and checks the two reports are equal but for the path.

Every figure is CPU time (user + system of the process, from wait4) and the
process's peak RSS (its modules' bytecode compiled beforehand, as an
installed kuota has it), with the build that produced it (``kuota --version`` in
the same environment: interpreted, or mypyc from ``make compiled``'s
build/mypyc) and as a ratio to a fixed pure-Python loop timed in this run
(machines differ 2x; the ratio travels). For the year: CPU per 1,000 jobs at
each size (cost should grow linearly with the jobs).

    python bench/sim_replay.py [--traces DIR] [--runs openb dlrm year]
        [--sizes 10000 100000 290000] [--builds interpreted mypyc] [--json FILE]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
COMPILED = REPO / "build" / "mypyc"
_compiled = [COMPILED]  # --compiled: another overlay (e.g. another checkout's)
EXAMPLES = REPO / "examples" / "traces"
MONTH_S = 31 * 24 * 3600  # one tile of the synthetic year: dlrm spans 31 days


def reference_loop() -> float:
    """CPU seconds of a fixed pure-Python loop (dict and attribute work, as a
    replay does): the unit the ratios are stated in."""
    t0 = time.process_time()
    d: dict[int, int] = {}
    for i in range(3_000_000):
        d[i & 4095] = d.get(i & 4095, 0) + i
    return time.process_time() - t0


def env_for(build: str) -> dict[str, str]:
    env = {**os.environ, "KUOTA_PROGRESS_AFTER": "3600"}
    env.pop("PYTHONPATH", None)
    if build == "mypyc":
        env["PYTHONPATH"] = str(_compiled[0])
    return env


def compile_bytecode(builds: list[str]) -> None:
    """Each build's modules compiled to bytecode first, as ``pip install``
    leaves an installed kuota: where PYTHONDONTWRITEBYTECODE is set (as on
    some CI machines) every process would otherwise compile its pure-Python
    modules from source again, a few tenths of a second that no user pays."""
    roots = {REPO / "src" / "kuota"}
    if "mypyc" in builds:
        roots.add(_compiled[0] / "kuota")
    for root in sorted(roots):
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", "-j", "0", str(root)],
            check=True,
            stdout=subprocess.DEVNULL,
        )


def build_name(build: str) -> str:
    """What ``kuota --version`` says in that environment (the figure's build)."""
    out = subprocess.run(
        [sys.executable, "-m", "kuota.cli.main", "--version"],
        capture_output=True,
        text=True,
        env=env_for(build),
        check=True,
    ).stdout.strip()
    return out.removeprefix("kuota, version ")


def run(
    build: str, args: list[str], report: list[dict[str, object]] | None = None
) -> tuple[float, float]:
    """(CPU seconds, peak RSS MiB) of one ``kuota simulate`` process; its
    JSON report appended to ``report``."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "kuota.cli.main", "simulate", "--no-progress", *args]
        cmd += ["--json", str(Path(tmp) / "out.json")]
        p = subprocess.Popen(
            cmd, env=env_for(build), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        assert p.stderr is not None
        err = p.stderr.read()
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            sys.exit(f"kuota simulate {' '.join(args)} failed ({p.returncode}):\n{err[-2000:]!r}")
        if report is not None:
            report.append(json.loads((Path(tmp) / "out.json").read_text()))
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024


def synthetic_year(dlrm: Path, out: Path, jobs: int) -> int:
    """The dlrm month tiled (12x for a year, more for more rows), each copy
    MONTH_S later, job ids suffixed by the copy; the first ``jobs`` rows.
    Returns the rows written."""
    with dlrm.open(newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    i_id, i_submit = header.index("job_id"), header.index("submit_s")
    n = 0
    with out.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        for copy in range(-(-jobs // len(body))):
            for r in body:
                if n >= jobs:
                    return n
                r2 = list(r)
                r2[i_id] = f"{r[i_id]}-m{copy}"
                r2[i_submit] = str(int(r[i_submit]) + copy * MONTH_S)
                w.writerow(r2)
                n += 1
    return n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--traces", type=Path, default=REPO.parent / "shared" / "traces")
    ap.add_argument("--runs", nargs="+", default=["openb", "dlrm", "year"])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 290_000])
    ap.add_argument(
        "--paths",
        nargs="+",
        default=["auto"],
        help="auto (what kuota simulate picks), or fast and full to compare the two",
    )
    ap.add_argument(
        "--builds", nargs="+", default=["interpreted", "mypyc"], choices=["interpreted", "mypyc"]
    )
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--compiled", type=Path, default=COMPILED, help="the mypyc overlay")
    a = ap.parse_args()
    _compiled[0] = a.compiled
    builds = [b for b in a.builds if b != "mypyc" or (a.compiled / ".stamp").exists()]
    for b in set(a.builds) - set(builds):
        print(f"note: no {b} build ({a.compiled} missing: make compiled); skipped")
    compile_bytecode(builds)
    print("bytecode: compiled beforehand (python -m compileall), as an installed kuota has it")
    loop = reference_loop()
    print(f"reference loop: {loop:.3f} s CPU (the ratios below are CPU / this)")
    openb = a.traces / "alibaba-gpu-2023-openb.csv"
    dlrm = a.traces / "alibaba-gpu-2025-dlrm.csv"
    dlrm_designs = sorted((EXAMPLES / "dlrm").glob("*.yaml"))
    dlrm_designs = [d for d in dlrm_designs if d.name != "mapping.yaml"]
    mapping = ["--mapping", str(EXAMPLES / "dlrm" / "mapping.yaml")]
    results: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        cases: list[tuple[str, int, list[list[str]]]] = []
        if "openb" in a.runs:
            design = str(EXAMPLES / "openb" / "qos-cohort.yaml")
            cases.append(("openb, qos-cohort", 7255, [["--trace", str(openb), "--world", design]]))
        if "dlrm" in a.runs:
            runs = [["--trace", str(dlrm), "--world", str(d), *mapping] for d in dlrm_designs]
            cases.append((f"dlrm month, {len(runs)} designs", 23871 * len(runs), runs))
        if "year" in a.runs:
            for size in sorted(a.sizes):
                path = Path(tmp) / f"year-{size}.csv"
                n = synthetic_year(dlrm, path, size)
                design = str(EXAMPLES / "dlrm" / "per-app-quota.yaml")
                run_args = ["--trace", str(path), "--world", design, *mapping]
                cases.append((f"SYNTHETIC year (dlrm x12), {n} jobs", n, [run_args]))
        print(
            f"{'case':42} {'build':44} {'CPU s':>8} {'x loop':>8} {'CPU/1k jobs':>11} {'peak MiB':>9}"
        )
        for build in builds:
            name = build_name(build)
            for what, jobs, runs in cases:
                reports: dict[str, list[dict[str, object]]] = {}
                for path in a.paths:
                    flag = ["--full-replay"] if path == "full" else []
                    cpu, peak = 0.0, 0.0
                    reports[path] = []
                    for r in runs:
                        c, m = run(build, [*r, *flag], reports[path])
                        cpu, peak = cpu + c, max(peak, m)
                    per_k = cpu / jobs * 1000
                    ran = sorted({str(d["replay"]) for d in reports[path]})
                    label = f"{what} [{'+'.join(ran)}]"
                    print(
                        f"{label:42} {name:44} {cpu:8.1f} {cpu / loop:8.0f} {per_k:11.3f} "
                        f"{peak:9.0f}",
                        flush=True,
                    )
                    results.append(
                        {
                            "case": what,
                            "replay": ran,
                            "synthetic": what.startswith("SYNTHETIC"),
                            "build": name,
                            "jobs": jobs,
                            "cpu_s": round(cpu, 2),
                            "loop_ratio": round(cpu / loop, 1),
                            "cpu_per_1000_jobs_s": round(per_k, 4),
                            "peak_rss_mib": round(peak),
                        }
                    )
                if "fast" in reports and "full" in reports:
                    strip = [
                        [{k: v for k, v in d.items() if k != "replay"} for d in reports[p]]
                        for p in ("fast", "full")
                    ]
                    same = strip[0] == strip[1]
                    print(f"  {what}: fast and full reports {'equal' if same else 'DIFFER'}")
                    results.append({"case": what, "build": name, "fast_equals_full": same})
    if a.json is not None:
        a.json.write_text(
            json.dumps({"reference_loop_s": round(loop, 4), "runs": results}, indent=1)
        )


if __name__ == "__main__":
    main()
