"""Kueue's visibility server in ``kuota controller`` (``pkg/visibility``): an
extension API server on its own HTTPS port (``visibilityServer.bindPort``,
8082) answering ``visibility.kueue.x-k8s.io`` v1beta1 and v1beta2
``pendingworkloads`` of ClusterQueues and LocalQueues from the controller's
own queues (controllers/visibility.py, the query ``kuota serve`` answers),
registered with the cluster by the APIServices in ``kuota manifests``.

Delegated authentication and authorization, as a generic API server does:

* requests the aggregator (kube-apiserver) forwards carry the user in
  request headers (``X-Remote-User``, ``X-Remote-Group``), trusted only over
  a client certificate signed by the requestheader CA of ConfigMap
  ``kube-system/extension-apiserver-authentication`` (with its allowed
  names), read with the controller's rights (Kueue's auth-reader binding);
* a bearer token is checked by a TokenReview;
* the user is then authorized by a SubjectAccessReview (``get`` on
  ``clusterqueues/pendingworkloads`` or ``localqueues/pendingworkloads``),
  both with the controller's rights (``system:auth-delegator``).

Only the leader's queues are filled (the others run no Kueue scheduler):
another replica answers 503, and the aggregator's next try may reach the
leader."""

from __future__ import annotations

import contextlib
import json
import ssl
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web
from lightkube.models.authentication_v1 import TokenReviewSpec
from lightkube.models.authorization_v1 import ResourceAttributes, SubjectAccessReviewSpec
from lightkube.resources.authentication_v1 import TokenReview
from lightkube.resources.authorization_v1 import SubjectAccessReview
from lightkube.resources.core_v1 import ConfigMap

from kuota.clustermode.manifests import VISIBILITY_SERVICE
from kuota.controllers import visibility as vis
from kuota.webhooks import certs

_VERSIONS = ("v1beta2", "v1beta1")
AUTH_CONFIGMAP = ("kube-system", "extension-apiserver-authentication")
_RETRIES = 5  # the queues change on the manager's thread while we read them


@dataclass(frozen=True)
class RequestHeaderAuth:
    """The aggregator's front-proxy trust (the auth ConfigMap's keys)."""

    client_ca: str  # PEM
    allowed_names: tuple[str, ...]
    user_headers: tuple[str, ...]
    group_headers: tuple[str, ...]


def _json_list(raw: str | None, default: tuple[str, ...]) -> tuple[str, ...]:
    if not raw:
        return default
    try:
        got = json.loads(raw)
    except ValueError:
        return default
    return tuple(str(x) for x in got) if isinstance(got, list) and got else default


async def read_request_header_auth(client: Any) -> RequestHeaderAuth | None:
    """The requestheader trust the cluster publishes, or None (no aggregator
    configured, or the ConfigMap not readable: only bearer tokens then)."""
    try:
        cm = await client.get(ConfigMap, AUTH_CONFIGMAP[1], namespace=AUTH_CONFIGMAP[0])
    except Exception:  # (absent or forbidden: the API server's answer)
        return None
    data = cm.data or {}
    ca = data.get("requestheader-client-ca-file")
    if not ca:
        return None
    return RequestHeaderAuth(
        ca,
        _json_list(data.get("requestheader-allowed-names"), ()),
        _json_list(data.get("requestheader-username-headers"), ("X-Remote-User",)),
        _json_list(data.get("requestheader-group-headers"), ("X-Remote-Group",)),
    )


def _status(code: int, reason: str, message: str, details: Any = None) -> web.Response:
    return web.json_response(status_body(code, reason, message, details), status=code)


def status_body(code: int, reason: str, message: str, details: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details:
        body["details"] = details
    return body


def _discovery(version: str) -> dict[str, Any]:
    def res(name: str, kind: str, namespaced: bool) -> dict[str, Any]:
        return {"name": name, "namespaced": namespaced, "kind": kind, "verbs": ["get"]}

    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{vis.GROUP}/{version}",
        "resources": [
            res("clusterqueues", "ClusterQueue", False),
            res("clusterqueues/pendingworkloads", "PendingWorkloadsSummary", False),
            res("localqueues", "LocalQueue", True),
            res("localqueues/pendingworkloads", "PendingWorkloadsSummary", True),
        ],
    }


def _group() -> dict[str, Any]:
    versions = [{"groupVersion": f"{vis.GROUP}/{v}", "version": v} for v in _VERSIONS]
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": vis.GROUP,
        "versions": versions,
        "preferredVersion": versions[0],
    }


Target = tuple[str, str, str, str]  # (resource, namespace, name, subresource)


def target(rest: list[str]) -> Target | None:
    """(resource, namespace, name, subresource) of a path under
    ``/apis/<group>/<version>/`` (split), or None."""
    if len(rest) == 3 and rest[0] == "clusterqueues":
        return "clusterqueues", "", rest[1], rest[2]
    if len(rest) == 5 and rest[0] == "namespaces" and rest[2] == "localqueues":
        return "localqueues", rest[1], rest[3], rest[4]
    return None


def reply(core: Any, version: str, res: Target, query: Mapping[str, str]) -> tuple[int, Any]:
    """(HTTP code, body) of the summary the path asks for, from the Kueue
    controller's ``core`` (None on a replica that is not leading: 503)."""
    if core is None:
        return 503, status_body(503, "ServiceUnavailable", "this replica is not the leader")
    resource, ns, name, sub = res
    try:
        for _ in range(_RETRIES - 1):
            with contextlib.suppress(RuntimeError):  # (a dict changed size under us: again)
                return 200, vis.pending_workloads(core, version, resource, ns, name, sub, query)
        return 200, vis.pending_workloads(core, version, resource, ns, name, sub, query)
    except vis.VisibilityError as err:
        return err.code, status_body(err.code, err.reason, err.message, err.details)


def forbidden_body(res: Target, user: str) -> dict[str, Any]:
    """kube-apiserver's Forbidden Status for a user refused ``res``."""
    resource, ns, name, sub = res
    where = f'in the namespace "{ns}"' if ns else "at the cluster scope"
    who = f'User "{user}" cannot' if user else "cannot"
    return status_body(
        403,
        "Forbidden",
        f'{resource}.{vis.GROUP} "{name}" is forbidden: {who} get resource '
        f'"{resource}/{sub}" in API group "{vis.GROUP}" {where}',
        {"name": name, "group": vis.GROUP, "kind": resource},
    )


def visibility_app(
    client: Any,
    core: Callable[[], Any],
    front_proxy: Callable[[], RequestHeaderAuth | None],
) -> web.Application:
    """``client``: the controller's lightkube AsyncClient (reviews);
    ``core``: the Kueue controller's admission core, None when not leading."""

    async def who(request: web.Request) -> tuple[str, str, tuple[str, ...]] | web.Response:
        trust = front_proxy()
        peer = request.transport.get_extra_info("peercert") if request.transport else None
        if trust is not None and peer:
            cn = ""
            for rdn in peer.get("subject", ()):
                for key, value in rdn:
                    if key == "commonName":
                        cn = value
            if not trust.allowed_names or cn in trust.allowed_names:
                user = next(
                    (request.headers[h] for h in trust.user_headers if h in request.headers), ""
                )
                if user:
                    groups = tuple(
                        g for h in trust.group_headers for g in request.headers.getall(h, [])
                    )
                    return user, "", groups
        header = request.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            review = await client.create(TokenReview(spec=TokenReviewSpec(token=token.strip())))
            st = review.status
            if st is not None and st.authenticated and st.user is not None:
                return st.user.username or "", st.user.uid or "", tuple(st.user.groups or ())
        return _status(401, "Unauthorized", "Unauthorized")

    async def allowed(user: tuple[str, str, tuple[str, ...]], res: Target) -> bool:
        resource, ns, name, _ = res
        spec = SubjectAccessReviewSpec(
            user=user[0],
            uid=user[1] or None,
            groups=list(user[2]),
            resourceAttributes=ResourceAttributes(
                verb="get",
                group=vis.GROUP,
                resource=resource,
                subresource="pendingworkloads",
                namespace=ns or None,
                name=name,
            ),
        )
        review = await client.create(SubjectAccessReview(spec=spec))
        return bool(review.status is not None and review.status.allowed)

    async def handle(request: web.Request) -> web.Response:
        try:
            return await serve(request)
        except Exception as err:  # (a review the API server did not answer)
            return _status(500, "InternalError", f"the visibility server: {err}")

    async def serve(request: web.Request) -> web.Response:
        parts = [p for p in request.match_info["tail"].split("/") if p]
        if not parts:
            return web.json_response(_group())
        version, rest = parts[0], parts[1:]
        if version not in _VERSIONS:
            return _status(404, "NotFound", "the server could not find the requested resource")
        if not rest:
            return web.json_response(_discovery(version))
        res = target(rest)
        if res is None:
            return _status(404, "NotFound", "the server could not find the requested resource")
        user = await who(request)
        if isinstance(user, web.Response):
            return user
        if not await allowed(user, res):
            return web.json_response(forbidden_body(res, user[0]), status=403)
        code, body = reply(core(), version, res, dict(request.query))
        return web.json_response(body, status=code)

    async def ok(_: web.Request) -> web.Response:
        return web.Response(text="ok")

    app = web.Application()
    for path in ("/healthz", "/livez", "/readyz"):
        app.router.add_get(path, ok)
    app.router.add_get(f"/apis/{vis.GROUP}" + "{tail:(/.*)?}", handle)
    return app


def tls_context(host: str, namespace: str, client_ca: str | None) -> ssl.SSLContext:
    """Self-signed serving certificates (Kueue's, generated into /visibility;
    its APIServices skip their verification), asking for a client
    certificate the requestheader CA signed when there is one."""
    served = certs.generate((host, *certs.serving_names(VISIBILITY_SERVICE, namespace)))
    cert_dir = Path(tempfile.mkdtemp(prefix="kuota-visibility-certs-"))
    served.write(cert_dir)
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(str(cert_dir / "tls.crt"), str(cert_dir / "tls.key"))
    if client_ca:
        with contextlib.suppress(ssl.SSLError):
            ctx.load_verify_locations(cadata=client_ca)
            ctx.verify_mode = ssl.CERT_OPTIONAL
    return ctx


async def start(
    app: web.Application, host: str, port: int, ctx: ssl.SSLContext
) -> tuple[web.AppRunner, int]:
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, host, port, ssl_context=ctx)
    await site.start()
    sockets = getattr(site._server, "sockets", None) or []  # (the bound port)
    return runner, sockets[0].getsockname()[1] if sockets else port
