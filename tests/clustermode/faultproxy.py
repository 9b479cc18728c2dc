"""An HTTPS proxy in front of ``kuota serve`` that fails a share of the
writes passing through it, as a loaded API server or a lossy network does:
a 409 Conflict (someone else wrote first), a 503 before the write reaches
the server, or a 500 after it was applied (the answer lost). Reads and
watches stream through untouched. Bearer tokens pass through, so the
server authenticates and authorizes the controller behind the proxy."""

from __future__ import annotations

import asyncio
import base64
import random
import ssl
import tempfile
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import aiohttp
import yaml
from aiohttp import web

from kuota.clustermode.visibility_server import status_body
from kuota.webhooks import certs
from kuota.webhooks.server import tls_context

WRITES = ("POST", "PUT", "PATCH", "DELETE")
_HOP = {"content-length", "transfer-encoding", "connection", "content-encoding"}


class FaultProxy:
    def __init__(
        self,
        upstream: str,
        upstream_ca: bytes,
        share: float,
        seed: int,
        plan: list[str | None] | None = None,
    ) -> None:
        self.upstream = upstream.rstrip("/")
        self.share = share
        # The faults of the first writes, in order (None: let it pass); then
        # the random share.
        self.plan = list(plan or ())
        self.seen: list[tuple[str, str]] = []  # (method, path) of every request
        self.rng = random.Random(seed)
        self.injected: Counter[str] = Counter()
        self.writes = 0
        self._ctx = ssl.create_default_context(cadata=upstream_ca.decode())
        self._session: aiohttp.ClientSession | None = None

    def _fault(self, request: web.Request) -> str | None:
        # The Lease is left alone: leader election's own retries are tested
        # by the failover test; here the writes of reconciles are.
        if request.method not in WRITES or "/leases" in request.path:
            return None
        self.writes += 1
        if self.plan:
            return self.plan.pop(0)
        if self.rng.random() >= self.share:
            return None
        return self.rng.choice(("conflict", "unavailable", "lost-answer"))

    async def handle(self, request: web.Request) -> web.StreamResponse:
        if self._session is None:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(ssl=self._ctx, limit=0),
                timeout=aiohttp.ClientTimeout(total=None),
            )
        self.seen.append((request.method, request.path))
        fault = self._fault(request)
        if fault == "conflict":
            self.injected[fault] += 1
            return _status(409, "Conflict", "injected: the object has been modified")
        if fault == "unavailable":
            self.injected[fault] += 1
            return _status(503, "ServiceUnavailable", "injected: try again")
        body = await request.read()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP | {"host"}}
        async with self._session.request(
            request.method,
            self.upstream + request.path_qs,
            data=body or None,
            headers=headers,
        ) as up:
            if fault == "lost-answer":
                answer = await up.read()
                if up.status < 300:  # applied, but the client never hears it
                    self.injected[fault] += 1
                    return _status(500, "InternalError", "injected: the answer was lost")
                return web.Response(
                    body=answer,
                    status=up.status,
                    headers={k: v for k, v in up.headers.items() if k.lower() not in _HOP},
                )
            out = web.StreamResponse(
                status=up.status,
                headers={k: v for k, v in up.headers.items() if k.lower() not in _HOP},
            )
            await out.prepare(request)
            async for chunk in up.content.iter_any():
                await out.write(chunk)
            await out.write_eof()
            return out


def _status(code: int, reason: str, message: str) -> web.Response:
    return web.json_response(status_body(code, reason, message), status=code)


@contextmanager
def fault_proxy(
    kubeconfig: Path,
    token: str,
    out: Path,
    share: float,
    seed: int = 7,
    plan: list[str | None] | None = None,
) -> Iterator[tuple[FaultProxy, Path]]:
    """A proxy to the server of ``kubeconfig`` and a kubeconfig (``out``)
    that reaches it through the proxy with ``token``."""
    kc = yaml.safe_load(kubeconfig.read_text())
    cluster = kc["clusters"][0]["cluster"]
    upstream_ca = base64.b64decode(cluster["certificate-authority-data"])
    proxy = FaultProxy(cluster["server"], upstream_ca, share, seed, plan)
    served = certs.generate(("127.0.0.1",))
    cert_dir = Path(tempfile.mkdtemp(prefix="kuota-faultproxy-"))
    served.write(cert_dir)
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_route("*", "/{tail:.*}", proxy.handle)
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app, shutdown_timeout=1.0, access_log=None)
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=tls_context(cert_dir))
    loop.run_until_complete(site.start())
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    cluster["server"] = f"https://127.0.0.1:{port}"
    cluster["certificate-authority-data"] = base64.b64encode(served.ca_crt).decode()
    for u in kc["users"]:
        u["user"] = {"token": token}
    out.write_text(yaml.safe_dump(kc))
    try:
        yield proxy, out
    finally:

        async def close() -> Any:
            if proxy._session is not None:
                await proxy._session.close()
            await runner.cleanup()

        asyncio.run_coroutine_threadsafe(close(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
