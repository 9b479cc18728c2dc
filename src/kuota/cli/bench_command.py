"""``kuota bench CONFIG``: a Kueue scheduler-performance world in the
embedded control plane, with Kueue's published figures beside kuota's."""

from __future__ import annotations

import json
import multiprocessing
import queue as queue_mod
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

import kuota
from kuota.cli.build_notice import warn_if_interpreted
from kuota.cli.progress import Progress
from kuota.runtime import gcpolicy
from kuota.sim.bench import BenchResult, run_bench
from kuota.sim.benchgen import BenchConfigError, GeneratorConfig, load

# Kueue's published figures (minimalkueue on envtest, mean of its calibration
# runs; ../shared/bench/README.md), by config file name.
KUEUE_FIGURES: dict[str, dict[str, Any]] = {
    "kueue-baseline": {
        "wall_s": 351.0,
        "mean_cq_usage": 0.559,
        "time_to_admission_ms": {"small": 215_000, "medium": 77_000, "large": 16_500},
    },
    "kueue-large-scale": {
        "wall_s": 1179.0,
        "mean_cq_usage": 0.386,
        "time_to_admission_ms": {"small": 700_000, "medium": 256_000, "large": 106_000},
    },
}


def _secs(ms: float) -> str:
    return f"{ms / 1000:.2f} s"


def _lost(by_reason: dict[str, float]) -> str:
    """The total, then each eviction reason's share (the largest first)."""
    total = sum(by_reason.values())
    parts = ", ".join(
        f"{k} {v:.2f}" for k, v in sorted(by_reason.items(), key=lambda kv: (-kv[1], kv[0]))
    )
    return f"{total:.2f} s" + (f" ({parts})" if parts else "")


def render(results: list[BenchResult], console: Console) -> None:
    for r in results:
        kueue = KUEUE_FIGURES.get(r.config, {})
        t = Table(
            title=f"{r.config} ({r.mode} time, {kuota.build()}, {kuota.interpreter()})",
            title_justify="left",
        )
        t.add_column("figure")
        t.add_column("kuota", justify="right")
        t.add_column("Kueue", justify="right")
        kw = kueue.get("wall_s")
        rows: list[tuple[str, str, str]] = [
            ("workloads (finished)", f"{r.workloads} ({r.finished})", ""),
            (
                "makespan, first creation to last finish",
                f"{r.wall_s:.2f} s",
                f"{kw:.0f} s" if kw else "",
            ),
            ("lower bound (work / quota, ≥ last creation)", f"{r.lower_bound_s:.2f} s", ""),
            (
                "ratio to the lower bound",
                f"{r.ratio_to_bound:.2f}",
                f"{kw / r.lower_bound_s:.2f}" if kw else "",
            ),
            (
                "lower bound counting arrivals (per cohort)",
                f"{r.lower_bound_with_arrivals_s:.2f} s",
                "",
            ),
            ("real time taken", f"{r.elapsed_s:.2f} s", ""),
            ("CPU time", f"{r.cpu_s:.2f} s", ""),
            (
                "mean ClusterQueue usage",
                f"{100 * r.mean_cq_usage:.1f} %",
                f"{100 * kueue['mean_cq_usage']:.1f} %" if "mean_cq_usage" in kueue else "",
            ),
            ("admissions (evictions)", f"{r.admissions} ({r.evictions})", ""),
            ("work lost to evictions (s of all quota)", _lost(r.work_lost_s), ""),
            ("  by the evicted workload's class", _lost(r.work_lost_by_class_s), ""),
            (
                "that bound with the lost work",
                f"{r.lower_bound_with_lost_work_s:.2f} s",
                "",
            ),
            ("admissions per second of real time", f"{r.admissions_per_s:.0f}", ""),
            ("scheduling cycles", str(r.cycles), ""),
            ("cycle time p50 / p99", f"{r.cycle_ms['p50']:.2f} / {r.cycle_ms['p99']:.2f} ms", ""),
        ]
        for cls, d in r.time_to_admission_ms.items():
            k = kueue.get("time_to_admission_ms", {}).get(cls)
            rows.append(
                (
                    f"time to admission, {cls}: mean / p95",
                    f"{_secs(d['mean'])} / {_secs(d['p95'])}",
                    f"{_secs(k)} (mean)" if k else "",
                )
            )
        rows.append(("peak memory (RSS)", f"{r.peak_rss_mib:.0f} MiB", ""))
        for row in rows:
            t.add_row(*row)
        console.print(t)


@click.command()
@click.argument("configs", nargs=-1, required=True, type=click.Path())
@click.option("--real-time", is_flag=True, help="Run workloads for their runtimeMs of real time.")
@click.option(
    "--json", "json_path", type=click.Path(dir_okay=False), help="Write the figures as JSON."
)
def bench(configs: tuple[str, ...], real_time: bool, json_path: str | None) -> None:
    """Run Kueue scheduler-performance worlds (generator configs) and report."""
    gcpolicy.tune(replay=True)
    console = Console()
    results: list[BenchResult] = []
    gens: list[GeneratorConfig] = []
    for path in configs:  # every config is checked before any runs
        try:
            gens.append(load(path))
        except BenchConfigError as err:
            click.echo(f"error: {err}", err=True)
            raise SystemExit(2) from None  # input errors exit 2, as every command
    with Progress() as bar:  # on stderr: the table and --json are the output
        for path, gen in zip(configs, gens, strict=True):
            name = Path(path).stem
            task = bar.add(f"bench {name}")

            def progress(done: int, total: int, task: int = task) -> None:
                bar.update(task, done, total, detail=f"{done}/{total} workloads finished")

            if len(configs) == 1:
                results.append(run_bench(gen, name=name, real_time=real_time, on_progress=progress))
            else:
                results.append(_isolated(gen, name, real_time, progress))
    warn_if_interpreted("bench")
    render(results, console)
    if json_path:
        doc: Any = results[0].to_json() if len(results) == 1 else [r.to_json() for r in results]
        Path(json_path).write_text(json.dumps(doc, indent=2) + "\n")


_PROGRESS: Any = None


def _init_worker(q: Any) -> None:
    global _PROGRESS
    _PROGRESS = q
    gcpolicy.tune(replay=True)  # a spawned worker starts with the default pace


def _run_in_worker(gen: GeneratorConfig, name: str, real_time: bool) -> BenchResult:
    def progress(done: int, total: int) -> None:
        _PROGRESS.put_nowait((done, total))

    return run_bench(gen, name=name, real_time=real_time, on_progress=progress)


def _isolated(
    gen: GeneratorConfig, name: str, real_time: bool, progress: Callable[[int, int], None]
) -> BenchResult:
    """One world in a process of its own: its CPU time and peak memory are
    its own, not grown by the worlds run before it in the same process."""
    ctx = multiprocessing.get_context("spawn")
    q = ctx.Queue()
    with ProcessPoolExecutor(1, mp_context=ctx, initializer=_init_worker, initargs=(q,)) as pool:
        fut = pool.submit(_run_in_worker, gen, name, real_time)
        while not fut.done():
            try:
                progress(*q.get(timeout=0.1))
            except queue_mod.Empty:
                continue
        return fut.result()
