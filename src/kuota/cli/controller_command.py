"""``kuota controller``: Kueue's manager against a Kubernetes API server
(cluster mode), with controller-runtime's flag names."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

KUBECONFIG_HELP = "Kubeconfig of the API server (default: in-cluster, the pod's service account)."
CONFIG_HELP = "Kueue's Configuration file (config.kueue.x-k8s.io v1beta1 or v1beta2)."


def _usage(msg: str) -> None:
    click.echo(f"error: {msg}", err=True)
    sys.exit(2)


def _config(path: str | None) -> tuple[Any, dict[str, Any]]:
    """The Configuration as Kueue reads it (defaults when no file), and the
    file's own fields."""
    import yaml

    from kuota.api.kueue.config import load_config

    raw: Any = {}
    if path is not None:
        try:
            raw = yaml.safe_load(Path(path).read_text())
        except OSError as err:
            _usage(f"--config {path}: {err.strerror or err}")
        except yaml.YAMLError as err:
            _usage(f"--config {path}: not YAML: {err}")
        if not isinstance(raw, dict):
            _usage(f"--config {path}: expected a Configuration object")
        if raw.get("kind") != "Configuration":
            _usage(f"--config {path}: kind: expected Configuration, got {raw.get('kind')!r}")
    else:
        raw = {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration"}
    cfg, errs = load_config(raw)
    if cfg is None:
        for e in errs:
            click.echo(f"{path}: {e}", err=True)
        _usage(f"--config {path}: {len(errs)} problem(s); Kueue would not start with it")
    return cfg, raw


@click.command()
@click.option("--kubeconfig", default=None, help=KUBECONFIG_HELP)
@click.option("--config", "config_path", default=None, help=CONFIG_HELP)
@click.option(
    "--metrics-bind-address",
    default=None,
    help='HOST:PORT of /metrics (default: the Configuration\'s, :8443; "0" disables).',
)
@click.option(
    "--health-probe-bind-address",
    default=None,
    help='HOST:PORT of /healthz and /readyz (default: the Configuration\'s, :8081; "0" disables).',
)
@click.option(
    "--dashboard-bind-address",
    default="0",
    help="HOST:PORT of the dashboard (/ui, signed in with a bearer token; its API "
    'calls go to the API server as the signed-in user). Default "0": not served.',
)
@click.option(
    "--visibility-bind-address",
    default=None,
    help="HOST:PORT of Kueue's visibility server (HTTPS; default: in a cluster, the "
    'Configuration\'s visibilityServer, :8082; outside one, not served; "0" disables).',
)
@click.option(
    "--webhook-url",
    default=None,
    help="Serve the admission webhooks at this URL (outside a cluster) and register them there.",
)
@click.option(
    "--sim-clock",
    default=None,
    help="A kuota serve's STATE/sim-clock.json: run on that simulated cluster's clock "
    "(its world's time and --speed) instead of the wall clock.",
)
@click.option(
    "--leader-elect/--no-leader-elect",
    default=None,
    help="Override the Configuration's leaderElection.leaderElect.",
)
def controller(
    kubeconfig: str | None,
    config_path: str | None,
    metrics_bind_address: str | None,
    health_probe_bind_address: str | None,
    dashboard_bind_address: str,
    visibility_bind_address: str | None,
    webhook_url: str | None,
    sim_clock: str | None,
    leader_elect: bool | None,
) -> None:
    """Run Kueue's controllers and scheduler against a Kubernetes API server.

    The objects come from its watches, decisions go back as status writes;
    replicas elect a leader on a Lease (Kueue's defaults)."""
    from lightkube import ConfigError

    from kuota.clustermode import json_logs
    from kuota.clustermode.controller_daemon import (
        ControllerOptions,
        default_identity,
        lease_config,
        run,
    )
    from kuota.clustermode.probes import split_address
    from kuota.runtime.clock import Clock, RealClock
    from kuota.runtime.simclock import SimClockError, read_sim_clock
    from kuota.store.kube import load_kubeconfig

    cfg, raw = _config(config_path)
    src = cfg.source
    metrics = metrics_bind_address or (src.metrics.bind_address if src.metrics else ":8443")
    health = health_probe_bind_address or (
        src.health.health_probe_bind_address if src.health else ":8081"
    )
    try:
        metrics_addr = None if metrics == "0" else split_address(metrics, "--metrics-bind-address")
        health_addr = (
            None if health == "0" else split_address(health, "--health-probe-bind-address")
        )
        dashboard_addr = (
            None
            if dashboard_bind_address == "0"
            else split_address(dashboard_bind_address, "--dashboard-bind-address")
        )
        visibility_addr = _visibility_address(visibility_bind_address, kubeconfig, src, raw)
    except ValueError as err:
        _usage(str(err))
    if webhook_url is not None and not webhook_url.startswith("https://"):
        _usage(f"--webhook-url {webhook_url!r}: must be an https:// URL")
    # In a cluster (or with a Configuration file naming webhook.port) the
    # webhooks are served at the Configuration's host:port, behind Kueue's
    # Service.
    webhook_bind: tuple[str, int] | None = None
    named_port = isinstance(raw.get("webhook"), dict) and "port" in raw["webhook"]
    if webhook_url is None and (kubeconfig is None or named_port):
        wh = src.webhook
        webhook_bind = ((wh and wh.host) or "0.0.0.0", (wh and wh.port) or 9443)
    try:
        kc = load_kubeconfig(kubeconfig)
    except (ConfigError, OSError, ValueError, KeyError) as err:
        where = f"--kubeconfig {kubeconfig}" if kubeconfig else "in-cluster config"
        _usage(f"{where}: {err}")
    clock: Clock = RealClock()
    if sim_clock is not None:
        try:
            clock = read_sim_clock(Path(sim_clock))
        except SimClockError as err:
            _usage(f"--sim-clock {err}")
    lease = lease_config(cfg, default_identity())
    if leader_elect is False:
        lease = None
    elif leader_elect and lease is None:
        from kuota.clustermode.leader_election import LeaseConfig

        lease = LeaseConfig(cfg.namespace, "c1f6bfd2.kueue.x-k8s.io", default_identity())
    json_logs.configure()

    def say(line: str) -> None:
        click.echo(line)
        sys.stdout.flush()

    opts = ControllerOptions(
        kubeconfig=kc,
        config=cfg,
        clock=clock,
        health_address=health_addr,
        metrics_address=metrics_addr,
        dashboard_address=dashboard_addr,
        visibility_address=visibility_addr,
        webhook_url=webhook_url,
        webhook_bind=webhook_bind,
        lease=lease,
    )
    try:
        code = run(opts, say)
    except OSError as err:
        click.echo(f"error: {err.strerror or err}", err=True)
        code = 1
    # Everything is released (lease, sockets, the I/O thread stopped): exit
    # without the interpreter's teardown, which may run while the I/O
    # thread's last callbacks unwind (a daemon thread inside ssl crashed it).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _visibility_address(
    flag: str | None, kubeconfig: str | None, src: Any, raw: dict[str, Any]
) -> tuple[str, int] | None:
    """Kueue serves its visibility API at the Configuration's address in a
    cluster (where the APIServices' Service points); outside one (a
    kubeconfig) only when asked, as several controllers may share a host."""
    from kuota.clustermode.probes import split_address

    if flag is not None:
        return None if flag == "0" else split_address(flag, "--visibility-bind-address")
    if kubeconfig is not None and "visibilityServer" not in raw:
        return None
    vs = src.visibility_server
    return ((vs and vs.bind_address) or "0.0.0.0", (vs and vs.bind_port) or 8082)
