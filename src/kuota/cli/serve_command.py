"""``kuota serve``: the embedded control plane in real time behind the
Kubernetes API, for kubectl and every Kubernetes client."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

import click

STATE_HELP = "Directory of the server's state: journal, certificates, kubeconfig."
# How far resourceVersions and uids jump at a restart: more writes than a
# group commit ever holds unfsynced (MemoryStore.skip_ahead).
RESTART_GAP = 1 << 20


def _err(msg: str) -> None:
    click.echo(f"error: {msg}", err=True)


@click.command()
@click.argument("paths", nargs=-1)
@click.option("--state", "state", required=True, help=STATE_HELP)
@click.option("--address", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    default=6443,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port (0: a free one, printed).",
)
@click.option(
    "--speed",
    default=1.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Simulated durations run this many times faster.",
)
@click.option(
    "--token-auth-file",
    default=None,
    help='kube-apiserver\'s static token CSV: token,user,uid,"group1,group2".',
)
@click.option(
    "--without-kueue",
    is_flag=True,
    help="Run only what a cluster provides (API server, nodes, kube-scheduler, kubelet, "
    "Job/apps/LWS/JobSet controllers): Kueue runs elsewhere (kuota controller).",
)
@click.option(
    "--paced",
    is_flag=True,
    help="With --without-kueue: the simulated clock waits at the world's start for a "
    "kuota controller run with --sim-clock STATE/sim-clock.json, then steps only once "
    "that controller has handled each instant (--speed: at most this fast).",
)
def serve(
    paths: tuple[str, ...],
    state: str,
    address: str,
    port: int,
    speed: float,
    token_auth_file: str | None,
    without_kueue: bool,
    paced: bool,
) -> None:
    """Serve the Kubernetes API over the embedded control plane (WORLD files'
    objects created at start); writes STATE/kubeconfig for kubectl."""
    from kuota.cli.files import CannotRead
    from kuota.cli.run import _start_of
    from kuota.cli.world import load_world
    from kuota.embedded.controlplane import ControlPlane
    from kuota.runtime.clock import RealClock
    from kuota.runtime.pacing import PacedClock
    from kuota.runtime.simclock import write_sim_clock
    from kuota.server.auth import TokenFileError, load_token_file
    from kuota.server.daemon import serve as run_server
    from kuota.store import StoreError
    from kuota.store.event_loop import run as run_loop

    if paced and not without_kueue:
        _err("--paced goes with --without-kueue (it paces the clock on another process's Kueue)")
        sys.exit(2)
    try:
        tokens = load_token_file(token_auth_file) if token_auth_file else {}
    except TokenFileError as err:
        _err(f"--token-auth-file {err}")
        sys.exit(2)
    try:
        world = load_world(list(paths))
    except CannotRead as err:
        _err(str(err))
        sys.exit(2)
    for w in world.warnings:
        click.echo(f"warning: {w}", err=True)
    if world.problems:
        for p in world.problems:
            click.echo(p, err=True)
        _err(f"{len(world.problems)} problem(s) in the world; nothing was served")
        sys.exit(1)
    assert world.config is not None
    start = _start_of(world) if world.objects else datetime.now(UTC)
    state_dir = Path(state)
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        cp = ControlPlane(
            world.config,
            start,
            # Paced: the clock steps as the controller acknowledges (runtime/pacing.py).
            clock=PacedClock(start, speed, held=True) if paced else RealClock(start, speed),
            state_dir=state_dir,
            openshift=world.openshift,
            scheduler=world.scheduler,
            kueue=not without_kueue,
        )
        if int(cp.store.resource_version) > 0:
            # A restart: clients may have seen writes the journal lost.
            cp.store.skip_ahead(RESTART_GAP)
        write_sim_clock(state_dir, cp.clock.now(), speed, paced=paced)
    except StoreError as err:
        _err(f"--state {state}: {err}")
        sys.exit(2)
    except OSError as err:
        _err(f"--state {state}: {err.strerror or err}")
        sys.exit(2)

    def say(line: str) -> None:
        click.echo(line)
        sys.stdout.flush()

    try:
        run_loop(
            run_server(
                cp,
                world.objects,
                state_dir=state_dir,
                address=address,
                port=port,
                tokens=tokens,
                say=say,
            )
        )
    except OSError as err:
        _err(f"--address {address} --port {port}: {err.strerror or err}")
        sys.exit(2)
    finally:
        cp.close()
