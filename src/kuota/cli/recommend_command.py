"""``kuota recommend``: search quota designs derived from a base design for
the cheapest (fewest GPUs of nominal quota) that meets stated goals on a
job trace; print it as manifests, with the finalists and the Pareto front."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from kuota.cli.build_notice import warn_if_interpreted

EXIT_ERROR = 2  # input and usage errors, as every command
EXIT_NONE = 1  # the search ran, and no design met the goals


@click.command("recommend")
@click.option("--trace", "trace_path", required=True, metavar="FILE", help="The job trace (CSV).")
@click.option(
    "--world",
    "worlds",
    multiple=True,
    required=True,
    metavar="PATH",
    help="The base design (YAML files or a directory; repeat for more files): the designs "
    "searched are variations of its quotas.",
)
@click.option(
    "--goal",
    "goal_texts",
    multiple=True,
    required=True,
    metavar="GOAL",
    help="A goal, repeatable: p95-wait<=2h (any pN-wait, or mean-wait; p95-wait:TEAM<=30m "
    "for one team), utilization>=0.6, fair-share>=0.8.",
)
@click.option("--mapping", "mapping_path", default=None, metavar="FILE", help="As simulate's.")
@click.option("--nodes", "nodes_path", default=None, metavar="FILE", help="As simulate's.")
@click.option(
    "--budget",
    default=8.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Work allowed, in full replays of the trace: the finalists' and the base's full "
    "replays take one each, the slices the rest.",
)
@click.option(
    "--candidates",
    default=16,
    show_default=True,
    type=click.IntRange(1, 4096),
    help="Designs tried on the first slice (the base among them).",
)
@click.option(
    "--finalists",
    default=3,
    show_default=True,
    type=click.IntRange(1, 64),
    help="Designs replayed on the whole trace (and the base beside them).",
)
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the candidates.")
@click.option(
    "-j",
    "--jobs",
    default=1,
    show_default=True,
    type=click.IntRange(1, 256),
    help="Run evaluations in this many local processes.",
)
@click.option(
    "--ray",
    "ray_address",
    default=None,
    metavar="ADDRESS",
    help="Run evaluations on the Ray cluster at ADDRESS (host:port, or auto); needs "
    "kuota[ray] here and kuota on the cluster.",
)
@click.option(
    "--out",
    "out_dir",
    default=None,
    metavar="DIR",
    help="Write recommended.yaml, report.html, pareto.svg and search.json here.",
)
@click.option("--no-progress", is_flag=True, help="No progress bar.")
def recommend(
    trace_path: str,
    worlds: tuple[str, ...],
    goal_texts: tuple[str, ...],
    mapping_path: str | None,
    nodes_path: str | None,
    budget: float,
    candidates: int,
    finalists: int,
    seed: int,
    jobs: int,
    ray_address: str | None,
    out_dir: str | None,
    no_progress: bool,
) -> None:
    """Find the cheapest quota design that meets goals on a job trace.

    The designs tried vary the base design's nominal GPU quotas (per
    ClusterQueue or Cohort and flavor), their borrowing and lending limits,
    fair-sharing weights (when the Configuration enables fair sharing) and
    BizGroupResourceQuota GPU keys. Successive halving replays many designs
    on the trace's first jobs, keeps the better half on twice as many, and
    replays the finalists and the base on the whole trace. The same seed
    gives the same answer, in one process, with --jobs or on Ray. Exit
    status: 0 a design met every goal, 1 none did, 2 bad input.
    """
    from rich.console import Console

    from kuota.runtime import gcpolicy

    gcpolicy.tune(replay=True)
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 200)
    sys.exit(
        _recommend(
            trace_path,
            list(worlds),
            list(goal_texts),
            mapping_path,
            nodes_path,
            budget,
            candidates,
            finalists,
            seed,
            jobs,
            ray_address,
            out_dir,
            not no_progress,
            console,
        )
    )


def _error(msg: str) -> int:
    click.echo(f"error: {msg}", err=True)
    return EXIT_ERROR


def _recommend(
    trace_path: str,
    worlds: list[str],
    goal_texts: list[str],
    mapping_path: str | None,
    nodes_path: str | None,
    budget: float,
    n_candidates: int,
    n_finalists: int,
    seed: int,
    jobs: int,
    ray_address: str | None,
    out_dir: str | None,
    progress: bool,
    console: Any,
) -> int:
    from kuota.api.decode import YamlError, iter_yaml_documents
    from kuota.cli.files import CannotRead, expand, read_bytes
    from kuota.cli.world import load_world
    from kuota.sim.mapping import Mapping, load_mapping
    from kuota.sim.recommend_eval import Context
    from kuota.sim.recommend_goals import GoalError, parse_goal
    from kuota.sim.recommend_search import PlanError, plan_search
    from kuota.sim.recommend_space import base_design, candidates
    from kuota.sim.simulate import Design, prepare
    from kuota.sim.trace import InputError, read_nodes, read_trace

    if jobs > 1 and ray_address is not None:
        return _error("--jobs and --ray: choose one (local processes or a Ray cluster)")
    try:
        goals = [parse_goal(g) for g in goal_texts]
    except GoalError as err:
        return _error(str(err))
    if out_dir is not None and Path(out_dir).exists() and not Path(out_dir).is_dir():
        return _error(f"--out {out_dir}: exists and is not a directory")
    try:
        trace = read_trace(trace_path)
        node_rows = read_nodes(nodes_path) if nodes_path else None
        mapping = load_mapping(mapping_path) if mapping_path else Mapping()
    except InputError as err:
        return _error(str(err))
    try:
        world = load_world(worlds)
        raws: list[Any] = []
        for path in expand(worlds):
            try:
                raws += [r for r in iter_yaml_documents(read_bytes(path)) if r is not None]
            except YamlError as err:
                raise CannotRead(f"{path}: {err}") from None
    except CannotRead as err:
        return _error(str(err))
    for w in world.warnings:
        click.echo(f"warning: {w}", err=True)
    if world.problems:
        for p in world.problems:
            click.echo(f"error: {p}", err=True)
        return EXIT_ERROR
    assert world.config is not None
    base_name = Path(worlds[0]).stem or "base"
    design = Design(
        base_name,
        " ".join(worlds),
        world.objects,
        world.config,
        world.openshift,
        world.scheduler,
        {
            (o.kind, o.metadata.namespace or "", o.metadata.name): world.source_of(o)
            for o in world.objects
        },
    )
    try:
        plan = prepare(trace, design, mapping, node_rows)
    except InputError as err:
        return _error(str(err))
    for g in goals:
        if g.team is not None and g.team not in plan.teams:
            teams = ", ".join(sorted(plan.teams))
            return _error(
                f'--goal "{g.text}": team "{g.team}" is not in {trace_path} (teams: {teams})'
            )
    base = base_design(
        raws, mapping.gpu_resource, mapping.gpu_scale, world.config.fair_sharing is not None
    )
    if not base.slots:
        return _error(
            f"{' '.join(worlds)}: no ClusterQueue or Cohort has a nominal quota of "
            f"{mapping.gpu_resource}: there is nothing to search"
        )
    cands = candidates(base, n_candidates, seed)
    if len(cands) < n_candidates:
        click.echo(
            f"note: only {len(cands)} distinct designs derive from {' '.join(worlds)}: "
            "searching those",
            err=True,
        )
    try:
        splan = plan_search(len(cands), n_finalists, budget, trace.count)
    except PlanError as err:
        return _error(str(err))
    ctx = Context(
        mapping,
        world.config,
        tuple(goals),
        tuple(node_rows) if node_rows is not None else None,
        world.openshift,
        world.scheduler,
    )
    return _run(
        console, trace, trace_path, ctx, cands, splan, jobs, ray_address, out_dir, progress, goals
    )


def _runner(jobs: int, ray_address: str | None) -> Any:
    from kuota.sim.recommend_pool import Local, Processes, RayCluster

    if ray_address is not None:
        return RayCluster(ray_address)
    return Processes(jobs) if jobs > 1 else Local()


def _run(
    console: Any,
    trace: Any,
    trace_path: str,
    ctx: Any,
    cands: list[Any],
    splan: Any,
    jobs: int,
    ray_address: str | None,
    out_dir: str | None,
    progress: bool,
    goals: list[Any],
) -> int:
    from kuota.cli.progress import Progress
    from kuota.sim.recommend_pool import RunnerError
    from kuota.sim.recommend_report import finalists_table, pareto_svg, report_html, search_json
    from kuota.sim.recommend_search import search

    try:
        runner = _runner(jobs, ray_address)
    except RunnerError as err:
        return _error(str(err))
    try:
        with Progress(enabled=progress) as bar:
            current = [-1, 0]

            def started(what: str, n: int) -> None:
                current[0], current[1] = bar.add(what, n), 0

            def done(_score: Any) -> None:
                current[1] += 1
                bar.update(current[0], current[1], detail=f"{current[1]} designs replayed")

            res = search(cands, trace, ctx, runner, splan, started, done)
    except KeyboardInterrupt:
        return _error("interrupted")
    finally:
        runner.close()
    warn_if_interpreted("recommend")
    console.print(finalists_table(res, goals, cands))
    console.print(
        f"{sum(len(r) for r in res.rungs)} slice evaluations, {len(res.finals)} full replays "
        f"({res.plan.cost:.1f} full replays' worth of jobs) on {runner.name}; "
        f"{res.cpu_s:.1f} s of CPU in the evaluations.",
        markup=False,
        soft_wrap=True,
    )
    goals_text = ", ".join(g.text for g in goals)
    w = res.winner
    manifest = None
    if w is not None:
        cand = next(c for c in cands if c.name == w.candidate)
        base_gpus = next(c.gpus for c in cands if c.name == "base")
        header = (
            f"# kuota recommend: design {w.candidate}, {w.gpus:g} GPUs of nominal quota "
            f"(the base has {base_gpus:g}),\n# meets {goals_text} on {trace_path} "
            f"({trace.count:,} jobs).\n# Quotas: {cand.summary}\n"
        )
        manifest = cand.yaml(header)
        console.print(
            f"recommended: {w.candidate}, {w.gpus:g} GPUs (base: {base_gpus:g}), meets {goals_text}",
            markup=False,
            soft_wrap=True,
        )
        click.echo(manifest, nl=False)
    else:
        console.print(
            f"no design met every goal ({goals_text}) on the whole trace",
            markup=False,
            soft_wrap=True,
        )
    if out_dir is not None:
        out = Path(out_dir)
        span = float(trace.last_submit_s - trace.first_submit_s)
        files: dict[str, str] = {
            "report.html": report_html(res, goals, cands, trace_path, trace.count, span),
            "pareto.svg": pareto_svg(res) + "\n",
            "search.json": json.dumps(search_json(res, goals, cands), indent=2) + "\n",
        }
        if manifest is not None:
            files["recommended.yaml"] = manifest
        try:
            out.mkdir(parents=True, exist_ok=True)
            for name, text in files.items():
                (out / name).write_text(text, encoding="utf-8")
        except OSError as err:
            return _error(f"--out {out_dir}: {err.strerror or err}")
        console.print(
            f"wrote {', '.join(str(out / n) for n in files)}", markup=False, soft_wrap=True
        )
    return 0 if w is not None else EXIT_NONE
