"""``kuota controller``'s dashboard: the page set ``kuota serve`` serves at
``/ui`` (server/ui/pages.py), with a same-origin proxy of the API paths the
page reads (``/api/...``, ``/apis/...``) to the API server, and the page's
``/ui/api/whoami`` built from what any API server answers the signed-in user:
a SelfSubjectReview (who) and SelfSubjectAccessReviews (where they may list
Workloads, which cluster-wide kinds they may read), over the namespaces the
controller lists. A browser signs in as on serve (``/ui/login?token=...``): the token
is checked against the API server and kept in memory under a random session
id (an HttpOnly, SameSite=Strict cookie); each proxied request carries that
token as its bearer, so the API server authorizes the signed-in user (RBAC
per user). The controller's own credentials are never used here: the proxy's
HTTP client is built from the kubeconfig's cluster (address, CA) only.
Watches stream through chunk by chunk."""

from __future__ import annotations

import asyncio
import gzip
import json
import secrets
import ssl
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import aiohttp
from aiohttp import web
from lightkube.config.client_adapter import verify_cluster
from lightkube.config.models import User

from kuota.clustermode.visibility_server import Target, forbidden_body, status_body, target
from kuota.controllers import visibility as vis
from kuota.server.ui import pages

# (version, target, query) -> (code, body): the controller's own answer
Pending = Callable[[str, Target, dict[str, str]], tuple[int, Any]]
_SSR = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
_SSAR = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
_BIZRQ = ("kuota.dev", "v1alpha1", "bizgroupresourcequotas")
# Request headers the API server needs to answer as it would the page.
_FORWARD = ("Accept", "Content-Type")
_BACK = ("Content-Type", "Cache-Control", "Retry-After", "Warning")


def _status(code: int, reason: str, message: str) -> web.Response:
    return web.json_response(status_body(code, reason, message), status=code)


async def _json(resp: aiohttp.ClientResponse) -> Any:
    """A JSON answer's document (None if it is not JSON); the proxy's client
    leaves bodies compressed, to pass them on as they came."""
    raw = await resp.read()
    if resp.headers.get("Content-Encoding") == "gzip":
        raw = gzip.decompress(raw)
    try:
        return json.loads(raw)
    except ValueError:
        return None


def _cluster(kubeconfig: Any) -> tuple[str, ssl.SSLContext | None]:
    """The API server's address and a TLS context trusting its CA, with no
    client certificate (the controller's identity stays out of the proxy)."""
    single = kubeconfig.get()
    server = str(single.cluster.server).rstrip("/")
    if not server.startswith("https://"):
        return server, None
    return server, verify_cluster(single.cluster, User(), single.abs_file)


def dashboard_app(
    kubeconfig: Any,
    namespaces: Callable[[], Awaitable[list[str]]] | None = None,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    speed: float = 1.0,
    pending: Pending | None = None,
) -> web.Application:
    """``namespaces``: the namespaces to ask about (the controller lists them);
    ``pending``: the controller's own visibility answers (visibility_server.
    reply), asked only after the user's own access review allows it;
    ``now`` and ``speed``: its clock, which the page's wait times count in."""
    server, tls = _cluster(kubeconfig)
    sessions: dict[str, str] = {}  # session id -> the user's bearer token
    app = web.Application()
    client: dict[str, aiohttp.ClientSession] = {}

    def http() -> aiohttp.ClientSession:
        if "c" not in client:
            client["c"] = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(ssl=tls if tls is not None else False),
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=10),
                auto_decompress=False,
                cookie_jar=aiohttp.DummyCookieJar(),
            )
        return client["c"]

    async def close(_: web.Application) -> None:
        if "c" in client:
            await client["c"].close()

    app.on_cleanup.append(close)

    def session_token(request: web.Request) -> str | None:
        return sessions.get(pages.session_id(request.headers))

    async def valid(token: str) -> bool:
        # Any path a signed-in user may read (system:discovery); the API
        # server answers 401 to a token it does not accept.
        headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
        async with http().get(f"{server}/apis", headers=headers) as resp:
            await resp.read()
            return resp.status != 401

    async def login(request: web.Request) -> web.Response:
        nxt = pages.safe_next(request.query.get("next", "/ui/"))
        token = request.query.get("token", "")
        if not token:
            return pages.login_form(nxt)
        try:
            ok = await valid(token)
        except aiohttp.ClientError as err:
            return _status(502, "ServiceUnavailable", f"the API server {server}: {err}")
        if not ok:
            return pages.login_form(nxt, bad_token=True)
        sid = secrets.token_urlsafe(32)
        sessions[sid] = token
        # Secure when the browser reached us over TLS (an ingress, or
        # 127.0.0.1 through a port-forward, which browsers treat as secure).
        raise pages.signed_in(nxt, sid, secure=request.secure)

    async def logout(request: web.Request) -> web.Response:
        sessions.pop(pages.session_id(request.headers), None)
        raise pages.signed_out()

    async def static(request: web.Request) -> web.Response:
        return pages.static_file(request)

    async def post(token: str, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
        async with http().post(f"{server}{path}", json=body, headers=headers) as resp:
            return resp.status, await _json(resp)

    async def can(
        token: str, group: str, resource: str, namespace: str, verb: str = "list", **more: str
    ) -> bool:
        attrs = {"verb": verb, "group": group, "resource": resource, "namespace": namespace}
        attrs |= more
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": attrs},
        }
        code, got = await post(token, _SSAR, review)
        return code == 201 and bool((got or {}).get("status", {}).get("allowed"))

    async def served(token: str, group: str, version: str, resource: str) -> bool:
        headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
        async with http().get(f"{server}/apis/{group}/{version}", headers=headers) as resp:
            doc = await _json(resp)
            if resp.status != 200 or not isinstance(doc, dict):
                return False
        return any(r.get("name") == resource for r in doc.get("resources", []))

    async def whoami(request: web.Request) -> web.Response:
        body: dict[str, Any] = {
            "user": "",
            "signedIn": False,
            "now": now().isoformat().replace("+00:00", "Z"),
            "speed": speed,
            "clusterWide": False,
            "namespaces": [],
            "resources": {},
        }
        token = session_token(request)
        if token is None:
            return web.json_response(body)  # as serve answers: the page offers the login
        review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
        try:
            code, got = await post(token, _SSR, review)
            if code == 401:
                return _status(401, "Unauthorized", "the API server no longer accepts the token")
            info = (got or {}).get("status", {}).get("userInfo", {}) if code == 201 else {}
            kueue = "kueue.x-k8s.io"
            known = sorted(set(await namespaces())) if namespaces is not None else []
            checks = await asyncio.gather(
                can(token, kueue, "workloads", ""),
                *(can(token, kueue, "workloads", ns) for ns in known),
                *(can(token, g, r, "") for g, r in pages.WATCHED),
                can(token, _BIZRQ[0], _BIZRQ[2], ""),
                served(token, *_BIZRQ),
            )
        except aiohttp.ClientError as err:
            return _status(502, "ServiceUnavailable", f"the API server {server}: {err}")
        body["user"] = info.get("username", "")
        body["signedIn"] = True
        body["clusterWide"] = checks[0]
        body["namespaces"] = [ns for ns, ok in zip(known, checks[1:], strict=False) if ok]
        rest = checks[1 + len(known) :]
        for (_, res), ok in zip(pages.WATCHED, rest, strict=False):
            body["resources"][res] = ok
        body["resources"][_BIZRQ[2]] = rest[-2] and rest[-1]
        return web.json_response(body)

    async def visibility(request: web.Request) -> web.StreamResponse:
        """Kueue's visibility API from the controller's own queues (the API
        server may have no APIService for it: kuota serve, a laptop)."""
        token = session_token(request)
        if token is None:
            return _status(401, "Unauthorized", "sign in at /ui/login first")
        if pending is None:
            return await proxy(request)
        parts = [p for p in request.match_info["tail"].split("/") if p]
        res = target(parts[1:])
        if res is None or res[3] != "pendingworkloads":
            return await proxy(request)  # discovery and the rest: the API server's
        resource, ns, name, sub = res
        try:
            ok = await can(token, vis.GROUP, resource, ns, "get", subresource=sub, name=name)
        except aiohttp.ClientError as err:
            return _status(502, "ServiceUnavailable", f"the API server {server}: {err}")
        if not ok:
            return web.json_response(forbidden_body(res, ""), status=403)
        code, body = pending(parts[0], res, dict(request.query))
        return web.json_response(body, status=code)

    async def proxy(request: web.Request) -> web.StreamResponse:
        token = session_token(request)
        if token is None:
            return _status(401, "Unauthorized", "sign in at /ui/login first")
        headers = {k: request.headers[k] for k in _FORWARD if k in request.headers}
        headers["Authorization"] = f"Bearer {token}"
        body = await request.read() if request.can_read_body else None
        url = f"{server}{request.rel_url}"
        try:
            async with http().request(
                request.method, url, headers=headers, data=body, allow_redirects=False
            ) as resp:
                out = web.StreamResponse(status=resp.status)
                for k in _BACK:
                    if k in resp.headers:
                        out.headers[k] = resp.headers[k]
                if "Content-Encoding" in resp.headers:
                    out.headers["Content-Encoding"] = resp.headers["Content-Encoding"]
                await out.prepare(request)
                try:
                    async for chunk in resp.content.iter_any():
                        await out.write(chunk)
                    await out.write_eof()
                except (ConnectionResetError, aiohttp.ClientError):
                    pass  # either side went away mid-stream (a watch closed)
                return out
        except aiohttp.ClientError as err:
            return _status(502, "ServiceUnavailable", f"the API server {server}: {err}")

    r = app.router
    r.add_get("/ui", pages.redirect_to_root)
    r.add_get("/ui/login", login)
    r.add_get("/ui/logout", logout)
    r.add_get("/ui/api/whoami", whoami)
    r.add_get("/ui/{file:[a-z.]*}", static)
    r.add_get(f"/apis/{vis.GROUP}/" + "{tail:.*}", visibility)  # (before /apis/...)
    for prefix in ("/api", "/apis"):
        r.add_route("GET", prefix + "/{tail:.*}", proxy)
        r.add_route("POST", prefix + "/{tail:.*}", proxy)
    return app
