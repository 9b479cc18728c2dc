"""``kuota simulate``: replay a job trace against one or more quota designs in
the embedded control plane (virtual time) and report what each team would
have waited and how well the GPUs were used (terminal, ``--json``, ``--html``)."""

from __future__ import annotations

import json
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import click

from kuota.cli.build_notice import warn_if_interpreted

EXIT_ERROR = 2  # input and usage errors, as every command


def _duration(ctx: click.Context, param: click.Parameter, value: str | None) -> timedelta | None:
    if value is None:
        return None
    from kuota.api.kueue.config import parse_duration

    try:
        d = parse_duration(value)
    except ValueError as err:
        raise click.BadParameter(str(err)) from None
    if d <= timedelta(0):
        raise click.BadParameter("must be positive")
    return d


def _design_name(paths: list[str], taken: set[str]) -> str:
    p = Path(paths[0])
    base = p.name if p.is_dir() else p.stem
    name, n = base or "design", 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    taken.add(name)
    return name


@click.command("simulate")
@click.option("--trace", "trace_path", required=True, metavar="FILE", help="The job trace (CSV).")
@click.option(
    "--world",
    "worlds",
    multiple=True,
    required=True,
    help="The design: Kueue objects (and optionally Nodes) in YAML files or a directory; "
    "repeat for more files of the same design.",
    metavar="PATH",
)
@click.option(
    "--compare",
    "compare",
    multiple=True,
    help="Another design (a file or directory) run on the same trace; repeatable, and "
    "further designs may follow as arguments.",
    metavar="PATH",
)
@click.argument("more", nargs=-1, metavar="[DESIGN]...")
@click.option(
    "--nodes",
    "nodes_path",
    default=None,
    help="The trace's node list (CSV), for designs without Nodes.",
    metavar="FILE",
)
@click.option(
    "--mapping",
    "mapping_path",
    default=None,
    help="Teams to LocalQueues, GPU models to flavors, fractional-GPU policy (YAML).",
    metavar="FILE",
)
@click.option(
    "-j",
    "--jobs",
    default=1,
    show_default=True,
    type=click.IntRange(1, 256),
    help="Run designs in this many parallel processes.",
)
@click.option(
    "--json",
    "json_path",
    default=None,
    help="Write the report as JSON to FILE (with --compare: an object keyed by design name).",
    metavar="FILE",
)
@click.option(
    "--html", "html_path", default=None, metavar="FILE", help="Write the HTML report to FILE."
)
@click.option(
    "--until",
    callback=_duration,
    default=None,
    help="Stop this long after the trace's first submission (e.g. 720h).",
    metavar="DURATION",
)
@click.option(
    "--full-replay",
    is_flag=True,
    help="Replay every design in the embedded control plane (Jobs, pods, placement), "
    "even where the fast replay on the admission core alone decides the same.",
)
@click.option(
    "-v", "--verbose", is_flag=True, help="Say on stderr which replay each design ran on, and why."
)
@click.option("--no-progress", is_flag=True, help="No progress bar.")
def simulate(
    trace_path: str,
    worlds: tuple[str, ...],
    compare: tuple[str, ...],
    more: tuple[str, ...],
    nodes_path: str | None,
    mapping_path: str | None,
    jobs: int,
    json_path: str | None,
    html_path: str | None,
    until: timedelta | None,
    full_replay: bool,
    verbose: bool,
    no_progress: bool,
) -> None:
    """Replay a job trace against quota designs, in virtual time.

    Each trace row becomes a Job in its team's LocalQueue, arriving at its
    submit time and running for its duration; the design's ClusterQueues,
    cohorts and nodes decide when it starts. With --compare, every design
    runs on the same trace and the report puts them side by side. Exit
    status: 0 done, 2 bad input (the message names file, line and column),
    3 a replay stopped because it only repeated itself (workloads evicted and
    re-admitted for ever: the report says which and why).
    """
    from rich.console import Console

    from kuota.runtime import gcpolicy

    gcpolicy.tune(replay=True)
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
    sys.exit(
        run_simulate(
            trace_path,
            [list(worlds)] + [[c] for c in compare] + [[m] for m in more],
            bool(compare or more),
            bool(more and not compare),
            nodes_path,
            mapping_path,
            jobs,
            json_path,
            html_path,
            until,
            not no_progress,
            console,
            full_replay,
            verbose,
        )
    )


def run_simulate(
    trace_path: str,
    design_paths: list[list[str]],
    compare: bool,
    stray: bool,
    nodes_path: str | None,
    mapping_path: str | None,
    jobs: int,
    json_path: str | None,
    html_path: str | None,
    until: timedelta | None,
    progress: bool,
    console: Any,
    full: bool = False,
    verbose: bool = False,
) -> int:
    from kuota.cli.files import CannotRead
    from kuota.cli.progress import Progress
    from kuota.cli.world import load_world
    from kuota.sim.mapping import Mapping, load_mapping
    from kuota.sim.report import compare_table, report_json, summary_table
    from kuota.sim.simulate import Design
    from kuota.sim.trace import InputError, read_nodes, read_trace

    def error(msg: str) -> int:
        click.echo(f"error: {msg}", err=True)
        return EXIT_ERROR

    if stray:
        return error(
            f"unexpected argument {design_paths[1][0]}: the design's files go after --world, "
            "other designs after --compare"
        )
    try:
        with Progress(enabled=progress) as bar:
            task = bar.add("read trace")
            trace = read_trace(
                trace_path, lambda done, size: bar.update(task, done, size, detail="checked")
            )
        node_rows = read_nodes(nodes_path) if nodes_path else None
        mapping = load_mapping(mapping_path) if mapping_path else Mapping()
    except InputError as err:
        return error(str(err))
    designs: list[Design] = []
    taken: set[str] = set()
    for paths in design_paths:
        try:
            world = load_world(paths)
        except CannotRead as err:
            return error(str(err))
        for w in world.warnings:
            click.echo(f"warning: {w}", err=True)
        if world.problems:
            for p in world.problems:
                click.echo(f"error: {p}", err=True)
            return EXIT_ERROR
        assert world.config is not None
        designs.append(
            Design(
                _design_name(paths, taken),
                " ".join(paths),
                world.objects,
                world.config,
                world.openshift,
                world.scheduler,
                {
                    (o.kind, o.metadata.namespace or "", o.metadata.name): world.source_of(o)
                    for o in world.objects
                },
            )
        )
    for path in (json_path, html_path):
        if path is not None and Path(path).is_dir():
            return error(f"{path}: is a directory")
    try:
        results = _run(trace, designs, mapping, node_rows, until, jobs, progress, full)
    except InputError as err:
        return error(str(err))
    except KeyboardInterrupt:
        return error("interrupted")
    warn_if_interpreted("simulate")
    for r in results:
        if verbose:
            how = r.replay.partition(": ")
            why = (
                "the admission core alone: nothing but quota decides"
                if how[0] == "fast"
                else how[2]
            )
            click.echo(f"design {r.name}: {how[0]} replay ({why})", err=True)
        for w in r.warnings:
            click.echo(f"warning: {w}", err=True)
        console.print(summary_table(r))
        if r.budgets:
            from kuota.sim.budget_burn import budget_table

            console.print(budget_table(r.budgets))
        for e in r.errors:
            console.print(e, markup=False, soft_wrap=True)
    if compare:
        console.print(compare_table(results))
    if json_path is not None:
        doc = report_json(results, compare)
        try:
            Path(json_path).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        except OSError as err:
            return error(f"{json_path}: {err.strerror or err}")
        console.print(f"wrote {json_path}", markup=False)
    if html_path is not None:
        from kuota.sim.html import render_html

        span = float(trace.last_submit_s - trace.first_submit_s)
        try:
            Path(html_path).write_text(render_html(results, trace.count, span), encoding="utf-8")
        except OSError as err:
            return error(f"{html_path}: {err.strerror or err}")
        console.print(f"wrote {html_path}", markup=False)
    # 3: a replay stopped because it only repeated itself (kuota run's code).
    return 3 if any(r.stopped == "repeating" for r in results) else 0


def _run(
    trace: Any,
    designs: list[Any],
    mapping: Any,
    node_rows: Any,
    until: timedelta | None,
    jobs: int,
    show: bool,
    full: bool = False,
) -> list[Any]:
    from kuota.cli.progress import Progress
    from kuota.sim.report import fmt_seconds
    from kuota.sim.simulate import simulate

    # The bar follows virtual time up to the trace's end without waits (the
    # last submission plus run time; jobs that wait end later): long-lived
    # jobs make the count of finished jobs a poor measure of progress.
    horizon = trace.horizon_s or 1.0
    if until is not None:
        horizon = min(horizon, until.total_seconds())
    with Progress(enabled=show) as bar:
        checks = {d.name: bar.add(f"check {d.name}", trace.last_line) for d in designs}
        tasks = {d.name: bar.add(f"simulate {d.name}", horizon) for d in designs}

        def checking(design: str, line: int) -> None:
            bar.update(checks[design], line, detail="trace rows read against the design")

        def update(design: str, done: int, total: int, virtual_s: float) -> None:
            bar.update(
                tasks[design],
                min(virtual_s, horizon),
                detail=f"{fmt_seconds(virtual_s)} of ~{fmt_seconds(horizon)} simulated, "
                f"{done}/{total} jobs finished",
            )

        return simulate(
            trace,
            designs,
            mapping,
            node_rows,
            until=until,
            jobs=jobs,
            progress=update if show else None,
            checking=checking if show else None,
            full=full,
        )
