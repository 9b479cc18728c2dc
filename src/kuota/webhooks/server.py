"""The HTTPS webhook server (aiohttp): Kueue's paths, AdmissionReview v1."""

from __future__ import annotations

import ssl
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path

from aiohttp import web

from kuota.store.protocol import AdmissionHook
from kuota.webhooks.endpoints import endpoints
from kuota.webhooks.review import Endpoint, Reviewer, ReviewError, parse


def webhook_app(hooks: Sequence[AdmissionHook], gates: Mapping[str, bool]) -> web.Application:
    """The application answering every Kueue webhook path with ``hooks``
    (the embedded plane's ``ControlPlane.kueue_webhooks``)."""
    reviewer = Reviewer(hooks, gates)
    app = web.Application(client_max_size=16 * 1024 * 1024)

    def handler(endpoint: Endpoint) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def answer(request: web.Request) -> web.Response:
            try:
                review = reviewer.review(endpoint, parse(await request.read()))
            except ReviewError as err:
                return web.json_response({"error": f"{endpoint.path}: {err}"}, status=400)
            return web.json_response(review)

        return answer

    for ep in endpoints():
        app.router.add_post(ep.path, handler(ep))
    app.router.add_get("/healthz", _ok)
    app.router.add_get("/readyz", _ok)
    return app


async def _ok(request: web.Request) -> web.Response:
    return web.Response(text="ok")


def tls_context(cert_dir: Path) -> ssl.SSLContext:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(str(cert_dir / "tls.crt"), str(cert_dir / "tls.key"))
    return ctx
