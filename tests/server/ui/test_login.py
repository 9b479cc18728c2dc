"""The dashboard's token login over HTTP: ``kuota serve`` prints the admin's
login URL; ``/ui/login`` exchanges a token for an HttpOnly, SameSite=Strict
session cookie the API then accepts as that token's identity (RBAC
applies); bad tokens and foreign ``next`` URLs are refused."""

from __future__ import annotations

import http.client
import ssl
from urllib.parse import urlsplit

from tests.server.conftest import Served
from tests.server.ui.conftest import admin_login


def _get(srv: Served, path: str, cookie: str = "") -> http.client.HTTPResponse:
    u = urlsplit(srv.url)
    ctx = ssl.create_default_context(cafile=str(srv.state / "pki" / "ca.crt"))
    ctx.check_hostname = False
    conn = http.client.HTTPSConnection(u.hostname or "", u.port, context=ctx, timeout=30)
    conn.request("GET", path, headers={"Cookie": cookie} if cookie else {})
    resp = conn.getresponse()
    resp.read()
    return resp


def _session(srv: Served, token: str) -> str:
    resp = _get(srv, f"/ui/login?token={token}&next=/ui/%23/nodes")
    assert resp.status == 302, resp.status
    assert resp.headers["Location"] == "/ui/#/nodes"
    cookie = resp.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Secure" in cookie
    return cookie.split(";")[0]


def test_admin_url_printed_and_cookie_is_the_tokens_identity(srv: Served) -> None:
    url = admin_login(srv)
    assert url.startswith(f"{srv.url}/ui/login?token=") and url.endswith("&next=/ui/")
    token = url.split("token=")[1].split("&")[0]
    admin = _session(srv, token)
    assert _get(srv, "/apis/kueue.x-k8s.io/v1beta2/clusterqueues", admin).status == 200
    alice = _session(srv, "alice-token")
    assert (
        _get(srv, "/apis/kueue.x-k8s.io/v1beta2/namespaces/team-a/workloads", alice).status == 200
    )
    # RBAC applies to the cookie's user as to her token.
    assert (
        _get(srv, "/apis/kueue.x-k8s.io/v1beta2/namespaces/team-b/workloads", alice).status == 403
    )
    assert _get(srv, "/apis/kueue.x-k8s.io/v1beta2/clusterqueues", alice).status == 403
    # No cookie: anonymous, refused.
    assert _get(srv, "/apis/kueue.x-k8s.io/v1beta2/clusterqueues").status == 403
    # Signed out: the session no longer works.
    assert _get(srv, "/ui/logout", alice).status == 302
    assert (
        _get(srv, "/apis/kueue.x-k8s.io/v1beta2/namespaces/team-a/workloads", alice).status == 403
    )


def test_bad_token_and_foreign_next_are_refused(srv: Served) -> None:
    resp = _get(srv, "/ui/login?token=nope&next=/ui/")
    assert resp.status == 401 and "Set-Cookie" not in resp.headers
    resp = _get(srv, "/ui/login?token=alice-token&next=//evil.example/")
    assert resp.status == 302 and resp.headers["Location"] == "/ui/"
    assert _get(srv, "/ui/login").status == 200  # the token form
    assert _get(srv, "/ui/nothing.js").status == 404
