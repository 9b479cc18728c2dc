"""The dashboard's routes under ``/ui``: its static files (public: they hold
no data), the token login and logout, and ``/ui/api/whoami`` (who the
session is, the namespaces whose workloads RBAC lets them list, the
server's clock). All data the page shows comes from the Kubernetes API with
the session's identity, so RBAC applies as it does to kubectl."""

from __future__ import annotations

from importlib import resources
from typing import Any
from urllib.parse import quote

from aiohttp import web

from kuota.server.auth import Attributes, UserInfo
from kuota.server.rest import Request
from kuota.server.served import lookup
from kuota.server.ui.sessions import COOKIE, SessionAuthenticator

_STATIC = resources.files("kuota.server.ui") / "static"
_TYPES = {
    ".html": "text/html",
    ".css": "text/css",
    ".js": "text/javascript",
    ".svg": "image/svg+xml",
}
_FILES = {
    "": "index.html",
    "index.html": "index.html",
    "app.css": "app.css",
    "app.js": "app.js",
    "whatif.js": "whatif.js",
}
# The page's own code only: no inline script, no other origin.
_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
_LOGIN_FORM = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>kuota: sign in</title><link rel="stylesheet" href="/ui/app.css"></head>
<body><main class="login"><h1>kuota dashboard</h1>{msg}
<form method="get" action="/ui/login"><label for="token">Bearer token</label>
<input id="token" name="token" type="password" autocomplete="off" required>
<input type="hidden" name="next" value="{next}"><button type="submit">Sign in</button>
</form></main></body></html>"""


def is_ui(path: str) -> bool:
    """A dashboard path: served to anyone (the API behind it authorizes)."""
    return path == "/ui" or path.startswith("/ui/")


def _safe_next(raw: str) -> str:
    """Only a path on this server (no open redirect)."""
    if not raw.startswith("/") or raw.startswith("//") or "\\" in raw:
        return "/ui/"
    return raw


def _html(text: str, code: int = 200) -> web.Response:
    return web.Response(
        text=text, status=code, content_type="text/html", headers={"Content-Security-Policy": _CSP}
    )


def install(app: web.Application, api: Any) -> None:
    """Add the dashboard's routes to the API server's application."""
    authn = api.authn
    if not isinstance(authn, SessionAuthenticator):
        return  # served without sessions (tests building ApiServer directly)

    async def static(request: web.Request) -> web.Response:
        name = _FILES.get(request.match_info.get("file", ""))
        if name is None:
            raise web.HTTPNotFound()
        body = (_STATIC / name).read_bytes()
        ext = name[name.rfind(".") :]
        return web.Response(
            body=body,
            content_type=None,
            headers={
                "Content-Type": f"{_TYPES[ext]}; charset=utf-8",
                "Content-Security-Policy": _CSP,
                "Cache-Control": "no-cache",
                "X-Content-Type-Options": "nosniff",
            },
        )

    async def login(request: web.Request) -> web.Response:
        nxt = _safe_next(request.query.get("next", "/ui/"))
        token = request.query.get("token", "")
        if not token:
            return _html(_LOGIN_FORM.format(msg="", next=quote(nxt, safe="/")))
        sid = authn.login(token)
        if sid is None:
            msg = '<p role="alert" class="error">That token is not valid on this server.</p>'
            return _html(_LOGIN_FORM.format(msg=msg, next=quote(nxt, safe="/")), 401)
        out = web.HTTPFound(nxt)
        out.set_cookie(COOKIE, sid, path="/", httponly=True, samesite="Strict", secure=True)
        raise out

    async def logout(request: web.Request) -> web.Response:
        authn.logout(authn.session_of(request.headers))
        out = web.HTTPFound("/ui/login")
        out.del_cookie(COOKIE, path="/")
        raise out

    async def whoami(request: web.Request) -> web.Response:
        user: UserInfo = request["user"]
        anonymous = "system:unauthenticated" in user.groups
        body: dict[str, Any] = {
            "user": user.name,
            "signedIn": not anonymous,
            "now": api.cp.clock.now().isoformat().replace("+00:00", "Z"),
            "speed": float(getattr(api.cp.clock, "speed", 1.0)),
            "clusterWide": False,
            "namespaces": [],
            "resources": {},
        }
        if not anonymous:
            body["clusterWide"] = _can(api, user, "kueue.x-k8s.io", "workloads", "")
            body["namespaces"] = [
                ns for ns in _namespaces(api) if _can(api, user, "kueue.x-k8s.io", "workloads", ns)
            ]
            for group, res in _WATCHED:
                body["resources"][res] = _can(api, user, group, res, "")
            body["resources"]["bizgroupresourcequotas"] = lookup(
                "kuota.dev", "v1alpha1", "bizgroupresourcequotas"
            ) is not None and _can(api, user, "kuota.dev", "bizgroupresourcequotas", "")
        return web.json_response(body)

    r = app.router
    r.add_get("/ui", lambda _r: _redirect("/ui/"))
    r.add_get("/ui/login", login)
    r.add_get("/ui/logout", logout)
    r.add_get("/ui/api/whoami", whoami)
    r.add_get("/ui/{file:[a-z.]*}", static)


async def _redirect(to: str) -> web.Response:
    raise web.HTTPFound(to)


# Cluster-wide kinds the page lists or watches when RBAC allows it.
_WATCHED = [
    ("kueue.x-k8s.io", "clusterqueues"),
    ("kueue.x-k8s.io", "cohorts"),
    ("kueue.x-k8s.io", "resourceflavors"),
    ("kueue.x-k8s.io", "localqueues"),
    ("", "nodes"),
    ("", "pods"),
    ("", "events"),
]


def _can(api: Any, user: UserInfo, group: str, resource: str, namespace: str) -> bool:
    attrs = Attributes(user, "list", True, api_group=group, resource=resource, namespace=namespace)
    return bool(api.authz.authorize(attrs)[0])


def _namespaces(api: Any) -> list[str]:
    """Namespaces the cluster knows: Namespace objects and those of LocalQueues."""
    out: set[str] = set()
    for group, version, res in (
        ("", "v1", "namespaces"),
        ("kueue.x-k8s.io", "v1beta2", "localqueues"),
    ):
        served = lookup(group, version, res)
        if served is None:
            continue
        items = api.res.list_items(Request(served, ""))[0]
        for o in items:
            out.add(o.metadata.name if res == "namespaces" else o.metadata.namespace)
    return sorted(out)
