"""The dashboard's pages as files: the static page set (package data), its
Content-Security-Policy, the token login form, the ``next`` check and the
session cookie's reading. No
server state: ``kuota serve`` (routes.py) and ``kuota controller``'s
dashboard (clustermode/dashboard_proxy.py) both serve them, so this module
imports nothing of kuota's (the one import the layers contract lets
clustermode make into server, pyproject.toml)."""

from __future__ import annotations

from collections.abc import Mapping
from http.cookies import CookieError, SimpleCookie
from importlib import resources
from urllib.parse import quote

from aiohttp import web

COOKIE = "kuota-session"
# Cluster-wide kinds the page lists or watches when RBAC allows it (whoami's
# ``resources``; kuota's quota trees are added where the kind is served).
WATCHED = (
    ("kueue.x-k8s.io", "clusterqueues"),
    ("kueue.x-k8s.io", "cohorts"),
    ("kueue.x-k8s.io", "resourceflavors"),
    ("kueue.x-k8s.io", "localqueues"),
    ("", "nodes"),
    ("", "pods"),
    ("", "events"),
)
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
CSP = (
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
_BAD_TOKEN = '<p role="alert" class="error">That token is not valid on this server.</p>'


def is_ui(path: str) -> bool:
    """A dashboard path: served to anyone (the API behind it authorizes)."""
    return path == "/ui" or path.startswith("/ui/")


def session_id(headers: Mapping[str, str]) -> str:
    """The dashboard session id a request's cookies carry, or ""."""
    raw = headers.get("Cookie", "")
    if not raw:
        return ""
    try:
        morsel = SimpleCookie(raw).get(COOKIE)
    except CookieError:
        return ""
    return morsel.value if morsel is not None else ""


def safe_next(raw: str) -> str:
    """Only a path on this server (no open redirect)."""
    if not raw.startswith("/") or raw.startswith("//") or "\\" in raw:
        return "/ui/"
    return raw


def html(text: str, code: int = 200) -> web.Response:
    return web.Response(
        text=text, status=code, content_type="text/html", headers={"Content-Security-Policy": CSP}
    )


def login_form(nxt: str, bad_token: bool = False) -> web.Response:
    """The sign-in form (401 after a refused token)."""
    msg = _BAD_TOKEN if bad_token else ""
    return html(_LOGIN_FORM.format(msg=msg, next=quote(nxt, safe="/")), 401 if bad_token else 200)


def signed_in(nxt: str, sid: str, secure: bool = True) -> web.HTTPFound:
    """The redirect after a login, setting the session cookie."""
    out = web.HTTPFound(nxt)
    out.set_cookie(COOKIE, sid, path="/", httponly=True, samesite="Strict", secure=secure)
    return out


def signed_out() -> web.HTTPFound:
    out = web.HTTPFound("/ui/login")
    out.del_cookie(COOKIE, path="/")
    return out


def static_file(request: web.Request) -> web.Response:
    """``/ui/{file}``: one of the page set's files (they hold no data)."""
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
            "Content-Security-Policy": CSP,
            "Cache-Control": "no-cache",
            "X-Content-Type-Options": "nosniff",
        },
    )


async def redirect_to_root(_: web.Request) -> web.Response:
    raise web.HTTPFound("/ui/")
