"""``kuota predict JOB.yaml --state DIR``: would the job be admitted now, in
which flavor; if not, why, where it stands in its queues and when it would
start (a fork of the state run forward in virtual time)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from kuota.cli.files import CannotRead
from kuota.cli.world import load_world

EXIT_INPUT = 2


def _fail(msg: str) -> None:
    click.echo(f"error: {msg}", err=True)
    sys.exit(EXIT_INPUT)


def _seconds(s: float | None) -> str:
    if s is None:
        return "-"
    return f"{s:.0f}s" if s < 120 else f"{s / 60:.1f}m" if s < 7200 else f"{s / 3600:.1f}h"


@click.command(
    short_help="Would a job be admitted now, in which flavor; if not, why, its queue positions"
    " and its estimated start (a fork of a state run forward).",
)
@click.argument("job_file", metavar="JOB.yaml")
@click.option("--state", envvar="KUOTA_STATE", default=None, help="State directory of a run.")
@click.option(
    "--kubeconfig",
    default=None,
    help="Read the state from this API server instead (a cluster, or a kuota serve).",
)
@click.option(
    "--sim-clock",
    default=None,
    help="With --kubeconfig: a kuota serve's STATE/sim-clock.json, its simulated time as now.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the prediction as JSON.")
def predict(
    job_file: str,
    state: str | None,
    kubeconfig: str | None,
    sim_clock: str | None,
    as_json: bool,
) -> None:
    """Whether JOB.yaml (one job) would be admitted now and in which flavor;
    if not, its one-line reason, its 0-based positions in its ClusterQueue and
    LocalQueue, and an estimated start from a fork of the state run forward in
    virtual time. The state is only read (a live run's too). Exit status: 0
    predicted, 2 bad input."""
    from kuota.cli.get import _stored_config
    from kuota.embedded.fork import fork
    from kuota.server.prediction import CannotPredict
    from kuota.server.prediction import predict as do_predict
    from kuota.store import StoreError, open_readonly
    from kuota.store.readonly import read_state

    if kubeconfig and state:
        _fail("give --state DIR or --kubeconfig K, not both")
    if not state and not kubeconfig:
        _fail("give --state DIR (the state of a `kuota run` or `kuota serve`) or --kubeconfig K")
    if state and not Path(state).is_dir():
        _fail(f"--state {state}: no such state directory")
    if sim_clock and not kubeconfig:
        _fail("--sim-clock goes with --kubeconfig")
    try:
        world = load_world([job_file])
    except CannotRead as err:
        _fail(str(err))
    for p in world.problems:
        click.echo(p, err=True)
    if world.problems:
        sys.exit(EXIT_INPUT)
    jobs = [o for o in world.objects if o.kind != "Namespace"]
    if len(jobs) != 1:
        _fail(f"{job_file}: holds {len(jobs)} objects; give one job")
    if kubeconfig is not None:
        from kuota.cli.cluster_source import memory_store, read_cluster

        try:
            cluster = read_cluster(kubeconfig, sim_clock)
        except CannotRead as err:
            _fail(str(err))
        for note in cluster.skipped:
            click.echo(f"warning: not read: {note}", err=True)
        config = _stored_config(memory_store(cluster))
        recovered = cluster.recovered
    else:
        assert state is not None
        try:
            with open_readonly(state) as store:
                config = _stored_config(store)
            recovered = read_state(state)
        except StoreError as err:
            _fail(f"--state {state}: {err}")
    try:
        result = do_predict(fork(recovered, config), jobs[0])
    except CannotPredict as err:
        _fail(f"{job_file}: {err}")
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2))
        return
    stamp = result.to_json()
    if result.admitted_now:
        click.echo(f"{result.workload}: admitted now ({stamp['now']}) in flavor {result.flavor}")
        return
    click.echo(f"{result.workload}: not admitted now ({stamp['now']}): {result.reason}")
    click.echo(
        f"position in ClusterQueue {result.cluster_queue}: {result.position_in_cluster_queue},"
        f" in LocalQueue {result.local_queue}: {result.position_in_local_queue}"
    )
    if result.estimated_start is None:
        click.echo("estimated start: never (it does not fit before nothing more can happen)")
    else:
        wait = (result.estimated_start - result.now).total_seconds()
        click.echo(f"estimated start: {stamp['estimated_start']} (in {_seconds(wait)})")
    guessed = [e for e in result.ends if e.source != "declared duration"]
    for e in guessed:
        how = f"{e.source} ({e.samples})" if e.samples else e.source
        click.echo(f"  assumed run of {e.workload}: {_seconds(e.seconds)}, {how}")
