"""The dashboard's routes under ``/ui``: its static files (public: they hold
no data), the token login and logout, and ``/ui/api/whoami`` (who the
session is, the namespaces whose workloads RBAC lets them list, the
server's clock). All data the page shows comes from the Kubernetes API with
the session's identity, so RBAC applies as it does to kubectl."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from kuota.server.auth import Attributes, UserInfo
from kuota.server.rest import Request
from kuota.server.served import lookup
from kuota.server.ui import pages
from kuota.server.ui.pages import is_ui
from kuota.server.ui.sessions import SessionAuthenticator

__all__ = ["install", "is_ui"]


def install(app: web.Application, api: Any) -> None:
    """Add the dashboard's routes to the API server's application."""
    authn = api.authn
    if not isinstance(authn, SessionAuthenticator):
        return  # served without sessions (tests building ApiServer directly)

    async def static(request: web.Request) -> web.Response:
        return pages.static_file(request)

    async def login(request: web.Request) -> web.Response:
        nxt = pages.safe_next(request.query.get("next", "/ui/"))
        token = request.query.get("token", "")
        if not token:
            return pages.login_form(nxt)
        sid = authn.login(token)
        if sid is None:
            return pages.login_form(nxt, bad_token=True)
        raise pages.signed_in(nxt, sid)

    async def logout(request: web.Request) -> web.Response:
        authn.logout(authn.session_of(request.headers))
        raise pages.signed_out()

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
            for group, res in pages.WATCHED:
                body["resources"][res] = _can(api, user, group, res, "")
            body["resources"]["bizgroupresourcequotas"] = lookup(
                "kuota.dev", "v1alpha1", "bizgroupresourcequotas"
            ) is not None and _can(api, user, "kuota.dev", "bizgroupresourcequotas", "")
        return web.json_response(body)

    r = app.router
    r.add_get("/ui", pages.redirect_to_root)
    r.add_get("/ui/login", login)
    r.add_get("/ui/logout", logout)
    r.add_get("/ui/api/whoami", whoami)
    r.add_get("/ui/{file:[a-z.]*}", static)


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
