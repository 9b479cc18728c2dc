"""``kuota controller``'s process: Kueue's manager against a real API server.

Start-up follows Kueue's ``main.go``: the Configuration is read first, then
the health probes and metrics endpoints and the webhook server start (they
run on every replica), then the replica waits to lead (the Lease), and
only the leader lists, watches and reconciles. The manager runs on the
main thread as it does embedded, woken by the watches (the kube store's
I/O thread) or by its next timer; a SIGTERM or SIGINT stops it after the
current round, the Lease is released and the process exits 0. A leader
that cannot renew its Lease stops at once and exits 1, as
controller-runtime does, so that a replica that may have lost the lease
never writes again."""

from __future__ import annotations

import contextlib
import signal
import socket
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import structlog

from kuota.api.kueue.config import KueueConfig
from kuota.clustermode import visibility_server as vs
from kuota.clustermode.dashboard_proxy import dashboard_app
from kuota.clustermode.kueue_manager import build
from kuota.clustermode.leader_election import LeaderElector, LeaseConfig
from kuota.clustermode.pace_acks import Acknowledger
from kuota.clustermode.probes import health_app, metrics_app, start_site
from kuota.clustermode.webhook_seam import start_webhook_server
from kuota.metrics import KueueMetrics
from kuota.runtime.clock import Clock
from kuota.runtime.pacing import PacedClock
from kuota.store.kube import KubeStore
from kuota.store.protocol import StoreError
from kuota.store.resources import LOCAL_QUEUE, NAMESPACE

_MAX_SLEEP = 0.25  # the longest the manager waits without looking at its timers
RESYNC_PERIOD = 10 * 3600.0  # controller-runtime's default SyncPeriod


@dataclass
class ControllerOptions:
    kubeconfig: Any  # lightkube KubeConfig
    config: KueueConfig
    clock: Clock
    health_address: tuple[str, int] | None
    metrics_address: tuple[str, int] | None
    webhook_url: str | None = None
    webhook_bind: tuple[str, int] | None = None  # in a cluster: behind the webhook Service
    lease: LeaseConfig | None = None
    resync_period: float = RESYNC_PERIOD
    openshift: bool = False
    dashboard_address: tuple[str, int] | None = None  # /ui and its API proxy
    visibility_address: tuple[str, int] | None = None  # Kueue's visibility server (HTTPS)


def default_identity() -> str:
    """controller-runtime's holder identity: ``<hostname>_<uuid>``."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


def _duration(text: str | None, default: float) -> float:
    from kuota.api.kueue.config.decoding import optional_duration_ns

    ns = optional_duration_ns(text) if text else 0
    return ns / 1e9 if ns else default


def lease_config(config: KueueConfig, identity: str) -> LeaseConfig | None:
    """The Configuration's leaderElection (Kueue's defaults: lease 15 s,
    renew 10 s, retry 2 s, Lease ``c1f6bfd2.kueue.x-k8s.io`` in Kueue's
    namespace); None when ``leaderElect`` is false."""
    le = config.source.leader_election
    if le is None or le.leader_elect is False:
        return None
    return LeaseConfig(
        namespace=le.resource_namespace or config.namespace,
        name=le.resource_name,
        identity=identity,
        lease_duration=_duration(le.lease_duration, 15.0),
        renew_deadline=_duration(le.renew_deadline, 10.0),
        retry_period=_duration(le.retry_period, 2.0),
    )


def run(opts: ControllerOptions, say: Callable[[str], None]) -> int:
    log = structlog.get_logger("kuota.controller")
    stop = threading.Event()
    lost = threading.Event()
    store = KubeStore(opts.kubeconfig)
    io = store.io

    def on_signal(signum: int, _: Any) -> None:
        stop.set()
        store.changed.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, on_signal)

    km = build(opts.config, store, opts.clock, openshift=opts.openshift)
    state = {"ready": "manager not started"}
    runners: list[Any] = []
    kueue_metrics: KueueMetrics | None = None
    if opts.health_address is not None:
        runner, port = io.call(
            start_site(health_app(lambda: state["ready"] or None), *opts.health_address)
        )
        runners.append(runner)
        say(f"kuota controller: health probes on {opts.health_address[0]}:{port}")
    if opts.metrics_address is not None:
        # Kueue's series (kuota.metrics): replica_role "leader" once leading.
        kueue_metrics = KueueMetrics(store, role="follower" if opts.lease else "standalone")
        runner, port = io.call(
            start_site(metrics_app(kueue_metrics.registry), *opts.metrics_address)
        )
        runners.append(runner)
        say(f"kuota controller: metrics on {opts.metrics_address[0]}:{port}")
    if opts.dashboard_address is not None:
        ui = dashboard_app(
            opts.kubeconfig,
            namespaces=_namespaces_of(store),
            now=opts.clock.now,
            speed=float(getattr(opts.clock, "speed", 1.0) or 1.0),
            pending=lambda version, res, query: vs.reply(km.kueue.core, version, res, query),
        )
        runner, port = io.call(start_site(ui, *opts.dashboard_address))
        runners.append(runner)
        say(f"kuota controller: dashboard on {opts.dashboard_address[0]}:{port}")
    if opts.visibility_address is not None and opts.config.gate("VisibilityOnDemand"):
        trust = io.call(vs.read_request_header_auth(store.client))
        host, vport = opts.visibility_address
        ctx = vs.tls_context(host, opts.config.namespace, trust.client_ca if trust else None)
        app = vs.visibility_app(store.client, lambda: km.kueue.core, lambda: trust)
        runner, port = io.call(vs.start(app, host, vport, ctx))
        runners.append(runner)
        say(f"kuota controller: visibility server on {host}:{port}")
    webhooks = start_webhook_server(
        opts.webhook_url,
        km.admission_hooks(),
        opts.config,
        store=store,
        log=log,
        bind=opts.webhook_bind,
    )
    # Webhooks and probes serve on every replica; readiness does not wait for the lease.
    state["ready"] = ""

    elector: LeaderElector | None = None
    code = 0
    try:
        if opts.lease is not None:
            elector = LeaderElector(store.client, opts.lease, log)
            say(
                f"kuota controller: waiting for lease {opts.lease.namespace}/{opts.lease.name} as {opts.lease.identity}"
            )
            acquiring = io.spawn(elector.acquire())
            while not acquiring.done():
                if stop.wait(0.1):
                    acquiring.cancel()
                    return 0
            acquiring.result()

            def on_lost() -> None:
                lost.set()
                store.changed.set()

            io.spawn(elector.keep(on_lost))
        if kueue_metrics is not None and elector is not None:
            kueue_metrics.role = "leader"
        say(
            "kuota controller: leading"
            if elector
            else "kuota controller: running (no leader election)"
        )
        _manage(km.mgr, store, opts, stop, lost, log)
        if lost.is_set():
            code = 1
    finally:
        if elector is not None and not lost.is_set():
            io.call(elector.release(), 10)
        for runner in runners:
            with contextlib.suppress(Exception):
                io.call(runner.cleanup(), 5)
        if webhooks is not None:
            with contextlib.suppress(Exception):
                webhooks.stop()
        store.close()
        say("kuota controller: stopped")
    return code


def _manage(
    mgr: Any,
    store: KubeStore,
    opts: ControllerOptions,
    stop: threading.Event,
    lost: threading.Event,
    log: Any,
) -> None:
    clock = opts.clock
    speed = getattr(clock, "speed", 1.0) or 1.0
    # A kuota serve's paced clock (runtime/pacing.py): read from its Lease,
    # acknowledged after each drained round.
    acker = (
        Acknowledger(store, mgr, clock, opts.lease.identity if opts.lease else default_identity())
        if isinstance(clock, PacedClock)
        else None
    )
    mgr.start()
    if acker is not None:
        acker.open()
    try:
        _rounds(mgr, store, opts, stop, lost, log, acker, speed)
    finally:
        if acker is not None and not lost.is_set():
            with contextlib.suppress(StoreError):
                acker.release()


def _rounds(
    mgr: Any,
    store: KubeStore,
    opts: ControllerOptions,
    stop: threading.Event,
    lost: threading.Event,
    log: Any,
    acker: Acknowledger | None,
    speed: float,
) -> None:
    clock = opts.clock
    resynced = time.monotonic()
    while not stop.is_set() and not lost.is_set():
        at: datetime | None = mgr.next_timer()
        timeout = _MAX_SLEEP
        if at is not None:
            timeout = min(_MAX_SLEEP, max(0.0, (at - clock.now()).total_seconds() / speed))
        if timeout > 0:
            store.wait(timeout)
        if stop.is_set() or lost.is_set():
            break
        try:
            if time.monotonic() - resynced >= opts.resync_period:
                resynced = time.monotonic()
                mgr.resync()
            if acker is not None:
                acker.tick()
                if acker.unsettled:
                    acker.ack_instant(mgr.next_timer())
                    continue
                if not acker.ready or not acker.synced():
                    # (the cluster has not published its instant yet, or
                    # the writes of its instant are still on their way)
                    continue
            if acker is None or acker.settled:
                mgr.fire_due()
            mgr.run_until_idle()
            if acker is not None:
                acker.ack(mgr.next_timer())
        except StoreError as err:
            # The API server is away (longer than the store retries): the
            # informers keep what they have; the next round lists again if
            # a watch lost its place.
            log.warning("round failed", error=str(err))
            stop.wait(0.5)


def _namespaces_of(store: KubeStore) -> Callable[[], Awaitable[list[str]]]:
    """The namespaces the dashboard asks about, per signed-in user: those of
    Namespaces and LocalQueues, listed with the controller's rights (Kueue's
    role reads both) on every replica, leader or not. Only names leave this:
    what the user may read in each is the user's own access review."""

    async def known() -> list[str]:
        out: set[str] = set()
        for rtype in (NAMESPACE, LOCAL_QUEUE):
            with contextlib.suppress(Exception):  # (a kind not served: none of it)
                for ns, name in await store.names(rtype):
                    out.add(name if rtype == NAMESPACE else ns)
        return sorted(out)

    return known
