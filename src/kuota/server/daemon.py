"""``kuota serve``'s process: one asyncio loop running the HTTPS API server
and pumping the embedded control plane; the kubeconfig written before the
first connection is accepted; a clean stop on SIGINT/SIGTERM (every
acknowledged write already durable in the journal, the clock saved, a
snapshot taken)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import ssl
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import structlog
from aiohttp import web

from kuota.metrics import for_control_plane as kueue_metrics
from kuota.server.app import ApiServer
from kuota.server.auth import UserInfo
from kuota.server.auth.store import rbac_authorizer, reconcile_bootstrap
from kuota.server.certs import ensure_pki, write_kubeconfig
from kuota.server.controller_writes import WebhookedWrites
from kuota.server.hub import Hub
from kuota.server.ui.sessions import ADMIN, SessionAuthenticator, admin_token
from kuota.server.webhook_calls import ServeWebhooks

log = structlog.get_logger("kuota.server")
_SWITCH_INTERVAL = 0.0005  # seconds (CPython's default: 0.005)


def _bind(address: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((address, port))
    sock.listen(1024)
    sock.setblocking(False)
    return sock


def _url(address: str, port: int) -> str:
    host = f"[{address}]" if ":" in address else address
    return f"https://{host}:{port}"


def _tls(pki: Any) -> ssl.SSLContext:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(str(pki.server_cert), str(pki.server_key))
    ctx.load_verify_locations(str(pki.ca_cert))
    ctx.verify_mode = ssl.CERT_OPTIONAL  # client certificates or bearer tokens
    return ctx


async def serve(
    cp: Any,
    objects: list[Any],
    *,
    state_dir: Path,
    address: str,
    port: int,
    tokens: dict[str, UserInfo],
    say: Callable[[str], None],
) -> None:
    """Serve until SIGINT or SIGTERM. ``cp``: the embedded control plane
    (``ControlPlane``) on a RealClock; ``objects``: a world's, created at start.
    Raises OSError when the address cannot be bound."""
    # The journal's fsync runs on a thread that needs the GIL for a moment
    # before and after each fsync; at the default 5 ms switch interval a busy
    # loop makes it wait that long each time, and every write with it.
    sys.setswitchinterval(_SWITCH_INTERVAL)
    pki = ensure_pki(state_dir, address)
    sock = _bind(address, port)
    port = sock.getsockname()[1]
    url = _url(address, port)
    hub = Hub(cp)
    metrics = kueue_metrics(cp)  # before the world: its admissions are counted
    cp.submit(objects)
    # The world settles before the first request: a round over thousands of
    # objects would otherwise hold the loop while clients wait.
    cp.mgr.run_until_idle()
    # From now on the controllers' creates and the world's later arrivals
    # pass the registered admission webhooks, as a cluster's do.
    cp.mgr.store = WebhookedWrites(cp.store, lambda: hub.loop.call_soon_threadsafe(hub.written))
    reconcile_bootstrap(cp.store)
    admin = admin_token()  # the dashboard's login for the admin, new at each start
    authn = SessionAuthenticator({**tokens, admin: ADMIN})
    api = ApiServer(cp, hub, authn, rbac_authorizer(cp.store), f"{address}:{port}")
    api.keep_tokens_in(state_dir / "pki")
    runner = web.AppRunner(api.app(), access_log=None, handle_signals=False, shutdown_timeout=2.0)
    api.metrics = metrics
    api.res.webhooks = ServeWebhooks(cp.store)
    api.aggregate()
    await runner.setup()
    kubeconfig = write_kubeconfig(state_dir, pki, url)
    site = web.SockSite(runner, sock, ssl_context=_tls(pki))
    await site.start()
    say(f"kuota serve: listening on {url}; KUBECONFIG={kubeconfig}")
    say(f"kuota serve: dashboard at {url}/ui/login?token={admin}&next=/ui/")
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    timers = asyncio.create_task(hub.run_timers())
    try:
        await stop.wait()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        hub.stop()
        await runner.cleanup()
        await hub.drain()  # every acknowledged write on disk before the store closes
        timers.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await timers
    say("kuota serve: stopped")
