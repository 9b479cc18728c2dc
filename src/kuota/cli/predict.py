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
@click.option("--json", "as_json", is_flag=True, help="Print the prediction as JSON.")
def predict(job_file: str, state: str | None, as_json: bool) -> None:
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

    if not state:
        _fail("give --state DIR (the state of a `kuota run` or `kuota serve`)")
    assert state is not None
    if not Path(state).is_dir():
        _fail(f"--state {state}: no such state directory")
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
