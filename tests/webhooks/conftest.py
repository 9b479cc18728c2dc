"""An HTTPS webhook server in a thread of the test process (own event loop,
127.0.0.1, a free port), stopped when the test ends."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from aiohttp import web

from kuota.webhooks import certs
from kuota.webhooks.server import tls_context


@contextmanager
def https_app(app: web.Application, cert_dir: Path) -> Iterator[tuple[str, bytes]]:
    """(base URL, CA PEM) of ``app`` served over HTTPS with a certificate
    from Kueue's internal certificate management."""
    served = certs.generate(("127.0.0.1", *certs.serving_names()))
    served.write(cert_dir)
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app, shutdown_timeout=1.0)
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=tls_context(cert_dir))
    loop.run_until_complete(site.start())
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{port}", served.ca_crt
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
