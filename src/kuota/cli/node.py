"""``kuota node cordon|uncordon|drain|taint|label NODE --state DIR``: ``oc adm``'s
node operations on a kept state (``kuota run --state DIR``), with oc's output.

They change the stored objects as ``oc`` changes the API server's; what
follows from them (evicted pods ending after their grace period, Jobs
replacing their pods elsewhere) happens when the run resumes (``kuota run
--state DIR``), in virtual time from the instant the state was left at.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

STATE_HELP = "State directory (the durable journal); default: $KUOTA_STATE."
EXIT_OK, EXIT_FAILED, EXIT_UNREADABLE = 0, 1, 2


class _Unreadable(Exception):
    pass


@contextmanager
def _state(state: str | None) -> Iterator[tuple[Any, datetime]]:
    """The kept store, its clock at the state's virtual time."""
    from kuota.embedded.state_meta import CLOCK_META
    from kuota.store import StoreError, open_store

    if not state:
        raise _Unreadable("no state directory: give --state DIR or set KUOTA_STATE")
    if not Path(state).is_dir():
        raise _Unreadable(f"{state}: no such state directory")
    now = [datetime.now(UTC)]
    try:
        store = open_store(state, lambda: now[0])
    except StoreError as err:  # (it names the state: in use, damaged, not kuota's)
        raise _Unreadable(str(err)) from None
    except OSError as err:
        raise _Unreadable(f"{state}: {err.strerror or err}") from None
    try:
        saved = store.get_meta(CLOCK_META)
        if saved:
            now[0] = datetime.fromisoformat(saved)
        with store.batch():
            yield store, now[0]
    finally:
        store.close()


def _run(state: str | None, op: Callable[[Any, datetime], int]) -> None:
    from kuota.cluster.controllers.nodeops import NodeOpError
    from kuota.store import StoreError

    try:
        with _state(state) as (store, now):
            code = op(store, now)
    except _Unreadable as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(EXIT_UNREADABLE)
    except (NodeOpError, StoreError) as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(EXIT_FAILED)
    sys.exit(code)


@click.group("node")
def node_group() -> None:
    """oc adm's node operations on a kept state: cordon, uncordon, drain, taint, label."""


@node_group.command()
@click.argument("name")
@click.option("--state", envvar="KUOTA_STATE", default=None, help=STATE_HELP)
def cordon(name: str, state: str | None) -> None:
    """Mark node NAME unschedulable."""
    from kuota.cluster.controllers.nodeops import cordon as do

    def op(store: Any, now: datetime) -> int:
        click.echo(do(store, name))
        return EXIT_OK

    _run(state, op)


@node_group.command()
@click.argument("name")
@click.option("--state", envvar="KUOTA_STATE", default=None, help=STATE_HELP)
def uncordon(name: str, state: str | None) -> None:
    """Mark node NAME schedulable again."""
    from kuota.cluster.controllers.nodeops import cordon as do

    def op(store: Any, now: datetime) -> int:
        click.echo(do(store, name, unschedulable=False))
        return EXIT_OK

    _run(state, op)


@node_group.command()
@click.argument("name")
@click.option("--state", envvar="KUOTA_STATE", default=None, help=STATE_HELP)
@click.option("--ignore-daemonsets", is_flag=True, help="Leave DaemonSet-managed pods.")
@click.option("--force", is_flag=True, help="Also delete pods no controller manages.")
@click.option("--delete-emptydir-data", is_flag=True, help="Also delete pods with emptyDir data.")
@click.option(
    "--grace-period",
    type=int,
    default=-1,
    show_default=True,
    help="Seconds each pod gets to terminate; -1: its own terminationGracePeriodSeconds.",
)
def drain(
    name: str,
    state: str | None,
    ignore_daemonsets: bool,
    force: bool,
    delete_emptydir_data: bool,
    grace_period: int,
) -> None:
    """Cordon node NAME and evict its pods (as oc adm drain)."""
    from kuota.cluster.controllers.eviction import grace_seconds
    from kuota.cluster.controllers.nodeops import DrainOptions, start_drain, still_there

    if grace_period < -1:
        raise click.BadParameter(
            "must be -1 or greater than or equal to 0", param_hint="--grace-period"
        )
    opts = DrainOptions(ignore_daemonsets, force, delete_emptydir_data, grace_period)

    def op(store: Any, now: datetime) -> int:
        cordoned, plan = start_drain(store, name, opts, now)
        click.echo(cordoned)
        if plan.warnings:
            click.echo(f"Warning: {plan.warning_text()}", err=True)
        if plan.errors:
            text = plan.error_text()
            click.echo(
                f'error: unable to drain node "{name}" due to error: {text}, continuing command...',
                err=True,
            )
            click.echo(f"There are pending nodes to be drained:\n {name}", err=True)
            click.echo(text, err=True)
            return EXIT_FAILED
        refs = [f"{p.metadata.namespace}/{p.metadata.name}" for p in plan.evict]
        left = set(still_there(store, refs))
        for ref in refs:
            click.echo(f"evicting pod {ref}")
        for pod, ref in zip(plan.evict, refs, strict=True):
            if ref in left:
                grace = grace_seconds(pod, grace_period)
                click.echo(f"pod/{pod.metadata.name} terminating (grace period {grace}s)")
            else:
                click.echo(f"pod/{pod.metadata.name} evicted")
        if left:
            n = len(left)
            pods = "1 pod ends" if n == 1 else f"{n} pods end"
            # The command as it works: a kept state resumes its own world.
            click.echo(
                f"node/{name} draining: {pods} within their grace period "
                f"when the run resumes (kuota run --state {shlex.quote(str(state))})"
            )
        else:
            click.echo(f"node/{name} drained")
        return EXIT_OK

    _run(state, op)


@node_group.command()
@click.argument("name")
@click.argument("taints", nargs=-1, required=True)
@click.option("--state", envvar="KUOTA_STATE", default=None, help=STATE_HELP)
@click.option("--overwrite", is_flag=True, help="Allow replacing a taint's value.")
def taint(name: str, taints: tuple[str, ...], state: str | None, overwrite: bool) -> None:
    """Add (key=value:Effect, key:Effect) or remove (key:Effect-, key-) taints of node NAME."""
    from kuota.cluster.controllers.nodeops import taint as do

    def op(store: Any, now: datetime) -> int:
        click.echo(do(store, name, list(taints), overwrite=overwrite))
        return EXIT_OK

    _run(state, op)


@node_group.command()
@click.argument("name")
@click.argument("labels", nargs=-1, required=True)
@click.option("--state", envvar="KUOTA_STATE", default=None, help=STATE_HELP)
@click.option("--overwrite", is_flag=True, help="Allow replacing a label's value.")
def label(name: str, labels: tuple[str, ...], state: str | None, overwrite: bool) -> None:
    """Set (key=value) or remove (key-) labels of node NAME."""
    from kuota.cluster.controllers.nodeops import label as do

    def op(store: Any, now: datetime) -> int:
        msg, warnings = do(store, name, list(labels), overwrite=overwrite)
        for w in warnings:
            click.echo(w, err=True)
        click.echo(msg)
        return EXIT_OK

    _run(state, op)
