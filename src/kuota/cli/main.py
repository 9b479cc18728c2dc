"""``kuota``: Kueue-compatible queueing, quota and gang admission."""

from __future__ import annotations

import json
import sys
from datetime import timedelta
from functools import cache
from pathlib import Path

import click

import kuota
from kuota.cli.lazy_choice import LazyChoice
from kuota.cli.lazy_group import LazyGroup
from kuota.runtime import gcpolicy

EXIT_OK, EXIT_INVALID, EXIT_UNREADABLE = 0, 1, 2

# The commands that live in their own modules, one line each: name ->
# ("module:command", its one-line help for `kuota --help`). Imported only when
# run, so that no command pays for another's imports.
LAZY_COMMANDS: dict[str, tuple[str, str]] = {
    "bench": (
        "kuota.cli.bench_command:bench",
        "Run Kueue scheduler-performance worlds (generator configs) and report.",
    ),
    "capacity": (
        "kuota.cli.capacity:capacity",
        "How many more copies of a pod fit on a world's nodes, and what stops the next one"
        " on each node (OpenShift's cluster-capacity).",
    ),
    "controller": (
        "kuota.cli.controller_command:controller",
        "Run Kueue's controllers and scheduler against a Kubernetes API server.",
    ),
    "manifests": (
        "kuota.cli.manifests_command:manifests",
        "Print what to apply to a cluster to run kuota there in Kueue's place.",
    ),
    "must-gather": (
        "kuota.cli.must_gather:must_gather",
        "Write a diagnostics bundle of a state (objects, Events, Configuration, nodes,"
        " summary.txt); no secrets.",
    ),
    "node": (
        "kuota.cli.node:node_group",
        "oc adm's node operations on a kept state: cordon, uncordon, drain, taint, label.",
    ),
    "predict": (
        "kuota.cli.predict:predict",
        "Would a job be admitted now, in which flavor; if not, why, its queue positions"
        " and its estimated start (a fork of a state run forward).",
    ),
    "recommend": (
        "kuota.cli.recommend_command:recommend",
        "Find the cheapest quota design that meets goals on a job trace.",
    ),
    "serve": (
        "kuota.cli.serve_command:serve",
        "Serve the Kubernetes API over the embedded control plane (WORLD files' objects"
        " created at start); writes STATE/kubeconfig for kubectl.",
    ),
    "simulate": (
        "kuota.cli.simulate_command:simulate",
        "Replay a job trace against quota designs, in virtual time.",
    ),
}


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(f"kuota, version {kuota.version()}")
        ctx.exit()


@click.group(
    cls=LazyGroup,
    lazy_subcommands=LAZY_COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and the build (interpreted or compiled) and exit.",
)
def main() -> None:
    """kuota decides whether a workload may start now, where, and who yields.

    It reads Kueue's manifests (kueue.x-k8s.io v1beta1 and v1beta2) unchanged.
    """
    gcpolicy.tune()


def _validate(paths: list[str], as_json: bool, quiet: bool) -> int:
    from kuota.cli.files import CannotRead, expand
    from kuota.cli.validate_output import validate_files

    try:
        files = expand(paths)
    except CannotRead as err:
        click.echo(f"error: {err}", err=True)
        return EXIT_UNREADABLE
    counts = validate_files(files, as_json, quiet)
    if counts.unreadable:
        return EXIT_UNREADABLE
    return EXIT_INVALID if counts.invalid else EXIT_OK


@main.command()
@click.argument("paths", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="Print only problems and the summary.")
@click.option(
    "--kinds", is_flag=True, help="List the kinds kuota reads (with their apiVersions) and exit."
)
def validate(paths: tuple[str, ...], as_json: bool, quiet: bool, kinds: bool) -> None:
    """Validate manifests and scenario files as Kueue and the API server would.

    PATHS are files or directories (searched recursively for *.yaml). Exit
    status: 0 all valid, 1 something is invalid, 2 a file cannot be read
    (missing, not UTF-8, not YAML).
    """
    if kinds:
        from kuota.cli.validate_output import print_kinds

        print_kinds(as_json)
        return
    if not paths:
        raise click.UsageError("Missing argument 'PATHS...' (or --kinds).")
    sys.exit(_validate(list(paths), as_json, quiet))


def _check_scenarios(paths: list[str], as_json: bool) -> int:
    from kuota.sim.scenario import (
        NotAScenario,
        Scenario,
        ScenarioError,
        default_core_factory,
        load_scenarios,
        run_scenario,
    )

    bad = 0

    def error(*problems: tuple[str, list[str]]) -> None:
        nonlocal bad
        bad += 1  # one per file or path
        for head, details in problems:
            click.echo(f"{click.style('error', fg='red', bold=True)} {head}", err=True)
            for d in details:
                click.echo(f"      {d}", err=True)

    files: list[tuple[Path, bool]] = []  # (file, named directly)
    for p in paths:
        path = Path(p)
        if path.is_dir():
            files += [
                (x, False)
                for x in sorted(path.rglob("*"))
                if x.suffix in (".yaml", ".yml") and x.is_file()
            ]
        elif path.exists():
            files.append((path, True))
        else:
            error((f"{p}: no such file or directory", []))
    scenarios: list[Scenario] = []
    for f, named in files:
        try:
            scenarios += load_scenarios(f)
        except NotAScenario as err:
            if named:
                error(*err.problems)
            else:
                click.echo(
                    f"{click.style('note', fg='cyan')}  {f}: skipped, not a scenario", err=True
                )
        except ScenarioError as err:
            error(*err.problems)
    factory = None
    if scenarios:
        try:
            factory = default_core_factory()
        except Exception as err:  # missing, or broken while it is being written
            error((f"kuota check needs the admission core (kuota.scheduler.admission): {err}", []))
            scenarios = []
    results = [run_scenario(s, factory) for s in scenarios]
    passed = sum(r.passed for r in results)
    failed = len(results) - passed
    if as_json:
        out = {
            "passed": passed,
            "failed": failed,
            "scenarios": [
                {
                    "name": r.name,
                    "file": r.file,
                    "passed": r.passed,
                    "failures": [
                        {
                            "step": x.step,
                            "action": x.action,
                            "subject": x.subject,
                            "expected": x.expected,
                            "actual": x.actual,
                            "message": str(x),
                        }
                        for x in r.failures
                    ],
                }
                for r in results
            ],
        }
        click.echo(json.dumps(out, indent=2))
    else:
        for s in scenarios:
            for w in s.warnings:
                click.echo(f"{click.style('warn', fg='yellow')}  {w}", err=True)
        for r in results:
            mark = (
                click.style("PASS", fg="green")
                if r.passed
                else click.style("FAIL", fg="red", bold=True)
            )
            click.echo(f"{mark} {r.name} ({r.file})")
            for x in r.failures:
                click.echo(f"      {x}")
        summary = f"{passed} passed, {failed} failed"
        if bad:
            summary += f", {bad} {'error' if bad == 1 else 'errors'} (see above)"
        click.echo(summary)
    if bad:
        return EXIT_UNREADABLE
    return EXIT_INVALID if failed else EXIT_OK


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
def check(paths: tuple[str, ...], as_json: bool) -> None:
    """Run scenario files and check their expectations.

    PATHS are scenario files or directories (searched recursively for *.yaml
    and *.yml; files there that are not scenarios are skipped). Exit status:
    0 every expectation holds, 1 some expectation failed, 2 a file cannot be
    read or is not a valid scenario.
    """
    sys.exit(_check_scenarios(list(paths), as_json))


@main.command()
@click.option(
    "--kind",
    "kinds",
    multiple=True,
    help="Only these kinds (default: every Kueue kind; kuota.dev kinds by name).",
)
def crds(kinds: tuple[str, ...]) -> None:
    """Print the CustomResourceDefinitions of Kueue's kinds (v1beta1 and v1beta2
    served, v1beta2 stored), generated from kuota's types."""
    from kuota.api.crd import all_crds, crds_yaml

    try:
        objs = all_crds(list(kinds) or None)
    except KeyError as err:
        click.echo(f"error: unknown kind {err}", err=True)
        sys.exit(EXIT_INVALID)
    click.echo(crds_yaml(objs), nl=False)


@main.command()
@click.argument("directory", default="examples/quickstart", type=click.Path(file_okay=False))
def demo(directory: str) -> None:
    """Run the example world in the embedded control plane, in virtual time."""
    from kuota.cli.demo import run_demo

    sys.exit(run_demo(Path(directory)))


def _duration(ctx: click.Context, param: click.Parameter, value: str | None) -> timedelta | None:
    if value is None:
        return None
    from kuota.api.kueue.config import parse_duration

    try:
        d = parse_duration(value)
    except ValueError as err:
        raise click.BadParameter(str(err)) from None
    if d.total_seconds() < 0:
        raise click.BadParameter(f"{value}: must not be negative")
    return d


STATE_HELP = "State directory (the durable journal); default: $KUOTA_STATE."


@main.command()
@click.argument("paths", nargs=-1)
@click.option("--state", envvar="KUOTA_STATE", default=None, help=STATE_HELP)
@click.option(
    "--until",
    callback=_duration,
    default=None,
    help="Stop after this much more time (e.g. 8h), counted from where the run starts"
    " or, on a kept --state, resumes.",
)
@click.option("--real-time", is_flag=True, help="Run in real time instead of virtual time.")
@click.option("--speed", default=1.0, show_default=True, help="With --real-time: time factor.")
@click.option("--no-live", is_flag=True, help="No live table, only the summary.")
def run(
    paths: tuple[str, ...],
    state: str | None,
    until: timedelta | None,
    real_time: bool,
    speed: float,
    no_live: bool,
) -> None:
    """Run a world (Kueue objects, Namespaces, Nodes, Jobs, ...) in the embedded
    control plane until nothing more can happen.

    With --state DIR of a kept run and no PATHS, resume that run's world.
    Exit status: 0 done, 1 objects of the world refused or invalid, 2 a file
    or the state cannot be read, 3 stopped because the run only repeats
    itself (workloads evicted and re-admitted for ever; it says which and why)."""
    from rich.console import Console

    from kuota.cli.run import run_world

    sys.exit(
        run_world(
            list(paths),
            state=state or None,  # an empty --state (or KUOTA_STATE) is none
            until=until,
            real_time=real_time,
            speed=speed,
            live=not no_live,
            console=Console(highlight=False, width=None if sys.stdout.isatty() else 120),
        )
    )


@main.command()
@click.argument("resource")
@click.argument("names", nargs=-1)
@click.option("--state", envvar="KUOTA_STATE", default=None, help=STATE_HELP)
@click.option("-n", "--namespace", default=None)
@click.option("-A", "--all-namespaces", is_flag=True)
@click.option("-o", "--output", type=click.Choice(["wide", "yaml", "json"]), default=None)
def get(
    resource: str,
    names: tuple[str, ...],
    state: str | None,
    namespace: str | None,
    all_namespaces: bool,
    output: str | None,
) -> None:
    """List a kept run's objects of any kind (workloads, clusterqueues,
    resourceflavors, cohorts, nodes, pods, events, ...), or those NAMES."""
    from rich.console import Console

    from kuota.cli import get as getmod
    from kuota.cli.files import CannotRead

    console = Console(highlight=False, width=200)
    try:
        sys.exit(getmod.get(resource, state, namespace, all_namespaces, output, console, names))
    except CannotRead as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(EXIT_UNREADABLE)


@cache
def _describe_kinds() -> dict[str, str]:
    """describe's kinds by every name `oc describe` takes for them (singular,
    plural, short names: the api registry's): workloads, pods and jobs, and
    the sets each job integration declares a view for; plus kuota's "wl"."""
    from kuota.api import registry
    from kuota.controllers.jobs.integrations import INTEGRATIONS

    kinds = {"wl": "workload"}
    described = list(_BASE_DESCRIBED)
    for i in INTEGRATIONS:
        if i.view is not None:  # a rtype is (group, version, resource)
            described.append((i.view.noun, i.view.rtype[0], i.view.rtype[2]))
    for noun, group, plural in described:
        spec = registry.by_group_resource(group, plural)
        names = (spec.singular, spec.plural, *spec.short_names) if spec else (noun,)
        for name in (noun, *names):
            kinds.setdefault(name, noun)
    return kinds


# (describe's kind, group, plural) of the kinds describe shows besides the sets
_BASE_DESCRIBED = (
    ("workload", "kueue.x-k8s.io", "workloads"),
    ("pod", "", "pods"),
    ("job", "batch", "jobs"),
    ("clusterqueue", "kueue.x-k8s.io", "clusterqueues"),
    ("localqueue", "kueue.x-k8s.io", "localqueues"),
    ("cohort", "kueue.x-k8s.io", "cohorts"),
    ("node", "", "nodes"),
    ("bizgroupresourcequota", "kuota.dev", "bizgroupresourcequotas"),
)


@main.command()
@click.argument("kind", type=LazyChoice(_describe_kinds))
@click.argument("name")
@click.option("--state", envvar="KUOTA_STATE", default=None, help=STATE_HELP)
@click.option("-n", "--namespace", default=None)
def describe(kind: str, name: str, state: str | None, namespace: str | None) -> None:
    """Show one object in detail: why it waits, its quota, its GPUs.

    A workload's, a pod's, a job's or a serving set's (deployment,
    statefulset, leaderworkerset) conditions, their history, the Kueue
    Workloads that hold them and why they wait; a clusterqueue's, localqueue's
    or cohort's quota and usage per flavor; a node's GPUs and their pods."""
    from functools import partial

    from rich.console import Console

    from kuota.cli.appsview import describe_set
    from kuota.cli.bizrq_view import describe_bizrq
    from kuota.cli.describe_node import describe_node
    from kuota.cli.describe_queues import (
        describe_clusterqueue,
        describe_cohort,
        describe_localqueue,
    )
    from kuota.cli.files import CannotRead
    from kuota.cli.get import describe_job, describe_workload
    from kuota.cli.podview import describe_pod

    shows = {"workload": describe_workload, "pod": describe_pod, "job": describe_job}
    shows |= {"clusterqueue": describe_clusterqueue, "localqueue": describe_localqueue}
    shows |= {"cohort": describe_cohort, "node": describe_node}
    shows |= {"bizgroupresourcequota": describe_bizrq}
    what = _describe_kinds()[kind]
    show = shows.get(what) or partial(describe_set, what)
    try:
        sys.exit(show(name, state, namespace, Console(highlight=False, width=200)))
    except CannotRead as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(EXIT_UNREADABLE)


if __name__ == "__main__":  # pragma: no cover
    main()
