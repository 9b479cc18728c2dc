"""The manager's HTTP endpoints, as controller-runtime serves them: the
health probes (``/healthz``, ``/readyz``) on the health probe address and
prometheus-client's registry at ``/metrics`` on the metrics address. Both
run on the kube store's I/O loop, so they answer while the manager's
thread is busy (a probe must not fail because a reconcile round is long).

The metrics are served over plain HTTP: Kueue's controller-runtime serves
them over HTTPS with a TokenReview filter (cluster-mode.md §7); that part
belongs with the webhook server's certificates."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest


def split_address(text: str, flag: str) -> tuple[str, int]:
    """``HOST:PORT`` (``:8081`` = every interface) as (host, port); raises
    ValueError naming the flag."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"{flag} {text!r}: expected HOST:PORT (e.g. :8081 or 127.0.0.1:0)")
    host = host.strip("[]") or "0.0.0.0"
    return host, int(port)


async def start_site(app: web.Application, host: str, port: int) -> tuple[web.AppRunner, int]:
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    server = site._server  # (aiohttp exposes the bound port only here)
    sockets = getattr(server, "sockets", None) or []
    bound = sockets[0].getsockname()[1] if sockets else port
    return runner, bound


def health_app(ready: Callable[[], str | None]) -> web.Application:
    """``ready()``: None when ready, else why not (the /readyz body)."""

    async def healthz(_: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def readyz(_: web.Request) -> web.Response:
        why = ready()
        if why is None:
            return web.Response(text="ok")
        return web.Response(status=500, text=f"[-]{why}\nreadyz check failed")

    app = web.Application()
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    return app


def metrics_app(*registries: Any) -> web.Application:
    """prometheus-client's default registry, then ``registries`` (Kueue's,
    kuota.metrics). Collected in a worker thread: Kueue's collectors read the
    store, whose requests run on this loop."""

    def body() -> bytes:
        return b"".join(generate_latest(r) for r in (REGISTRY, *registries))

    async def metrics(_: web.Request) -> web.Response:
        return web.Response(
            body=await asyncio.to_thread(body), headers={"Content-Type": CONTENT_TYPE_LATEST}
        )

    app = web.Application()
    app.router.add_get("/metrics", metrics)
    return app
