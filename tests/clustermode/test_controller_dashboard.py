"""``kuota controller --dashboard-bind-address`` against ``kuota serve
--without-kueue``: the controller serves the dashboard's pages and proxies
the page's API calls to the API server with the signed-in user's token, so
RBAC applies per user (a batch user reads only their namespace; the
controller's own, wider credentials are never lent to a browser); a bad
token and a request without a session are refused; a watch streams through.
In a real headless Chromium, the batch user's page through the controller
shows her Job pending with its reason and nothing of another namespace."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from tests.clustermode.faultproxy import fault_proxy
from tests.clustermode.twoproc import Controller, start_controller
from tests.server.conftest import EXAMPLES, Served, needs_kubectl, start_server
from tests.server.ui.browser import CHROMIUM, Browser
from tests.server.ui.conftest import SETUP

KUEUE = "/apis/kueue.x-k8s.io/v1beta2"
WORKLOAD = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: w-streamed, namespace: team-a}
spec:
  queueName: default
  podSets:
  - name: main
    count: 1
    template:
      spec:
        containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
"""

# A held queue with a LocalQueue in both teams' namespaces, a Job in each.
QUEUES = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: mixed}
spec:
  namespaceSelector: {}
  stopPolicy: Hold
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: a100
      resources: [{name: cpu, nominalQuota: "8"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: mixed, namespace: team-a}
spec: {clusterQueue: mixed}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: mixed, namespace: team-b}
spec: {clusterQueue: mixed}
"""
JOB = """
apiVersion: batch/v1
kind: Job
metadata: {name: NAME, namespace: NS, labels: {kueue.x-k8s.io/queue-name: mixed}}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
"""


def _two_processes(tmp_path: Path) -> tuple[Served, Controller]:
    tokens = tmp_path / "tokens.csv"
    tokens.write_text('alice-token,alice,1,"team-a-users"\nroot-token,root,0,"system:masters"\n')
    served = start_server(
        tmp_path / "state",
        str(EXAMPLES / "quickstart" / "world.yaml"),
        str(EXAMPLES / "quickstart" / "nodes.yaml"),
        "--without-kueue",
        "--token-auth-file",
        str(tokens),
        home=tmp_path / "home",
    )
    try:
        served.ok("apply", "-f", "-", input=SETUP)
        ctl = start_controller(served, "--dashboard-bind-address", "127.0.0.1:0")
        ctl.wait_line("leading", 120)  # (its queues hold what the API server has)
        return served, ctl
    except BaseException:
        served.stop()
        raise


async def _check(base: str, create: threading.Event) -> None:
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as http:

        async def get(path: str, cookie: str = "") -> tuple[int, bytes]:
            headers = {"Cookie": cookie} if cookie else {}
            async with http.get(base + path, headers=headers, allow_redirects=False) as r:
                return r.status, await r.read()

        # No session: the page itself is public (it holds no data), the API is not.
        status, body = await get("/ui/")
        assert status == 200 and b"<script" in body
        status, body = await get("/ui/api/whoami")
        assert status == 200 and json.loads(body)["signedIn"] is False
        status, body = await get(f"{KUEUE}/namespaces/team-a/workloads")
        assert status == 401, body
        # A token the API server does not accept: refused, no cookie.
        async with http.get(base + "/ui/login?token=nope&next=/ui/", allow_redirects=False) as r:
            assert r.status == 401 and "Set-Cookie" not in r.headers
            assert "not valid" in await r.text()
        # Foreign next: back to the dashboard (no open redirect).
        async with http.get(
            base + "/ui/login?token=alice-token&next=//evil.example/", allow_redirects=False
        ) as r:
            assert r.status == 302 and r.headers["Location"] == "/ui/"
        async with http.get(
            base + "/ui/login?token=alice-token&next=/ui/%23/nodes", allow_redirects=False
        ) as r:
            assert r.status == 302 and r.headers["Location"] == "/ui/#/nodes"
            set_cookie = r.headers["Set-Cookie"]
            assert "HttpOnly" in set_cookie and "SameSite=Strict" in set_cookie
            alice = set_cookie.split(";")[0]
        async with http.get(base + "/ui/login?token=root-token", allow_redirects=False) as r:
            root = r.headers["Set-Cookie"].split(";")[0]
        status, _ = await get("/ui/", alice)
        assert status == 200
        status, body = await get("/ui/api/whoami", alice)
        who = json.loads(body)
        assert who["signedIn"] and who["user"] == "alice" and who["namespaces"] == ["team-a"]
        # RBAC per user: her namespace only, never the controller's rights.
        status, body = await get(f"{KUEUE}/namespaces/team-a/workloads", alice)
        assert status == 200, body
        listed = json.loads(body)
        assert listed["kind"] == "WorkloadList"
        status, body = await get(f"{KUEUE}/namespaces/team-b/workloads", alice)
        assert status == 403 and json.loads(body)["reason"] == "Forbidden"
        status, _ = await get(f"{KUEUE}/clusterqueues", alice)
        assert status == 403
        status, _ = await get(f"{KUEUE}/workloads", alice)
        assert status == 403
        # Kueue's visibility API from the controller's queues, per her review.
        vis = "/apis/visibility.kueue.x-k8s.io/v1beta2"
        status, body = await get(f"{vis}/clusterqueues/team-nlp/pendingworkloads", alice)
        assert status == 403, body
        for _ in range(60):  # (until its informers hold the ClusterQueue)
            status, body = await get(f"{vis}/clusterqueues/team-nlp/pendingworkloads", root)
            if status != 404:
                break
            await asyncio.sleep(0.5)
        assert status == 200 and json.loads(body)["kind"] == "PendingWorkloadsSummary", body
        # A watch streams through: a Workload created after it opened arrives.
        rv = listed["metadata"]["resourceVersion"]
        url = f"{base}{KUEUE}/namespaces/team-a/workloads?watch=1&resourceVersion={rv}"
        async with http.get(url, headers={"Cookie": alice}) as r:
            assert r.status == 200
            create.set()
            line = await asyncio.wait_for(r.content.readline(), 30)
            event = json.loads(line)
            assert event["type"] == "ADDED"
            assert event["object"]["metadata"]["name"] == "w-streamed"
        # Signed out: the session no longer reaches the API.
        status, _ = await get("/ui/logout", alice)
        assert status == 302
        status, _ = await get(f"{KUEUE}/namespaces/team-a/workloads", alice)
        assert status == 401


@needs_kubectl
def test_controller_dashboard_proxies_as_the_signed_in_user(tmp_path: Path) -> None:
    served, ctl = _two_processes(tmp_path)
    try:
        base = f"http://127.0.0.1:{ctl.port('dashboard')}"
        create = threading.Event()

        def creator() -> None:
            if create.wait(60):
                served.ok("create", "-f", "-", input=WORKLOAD)

        t = threading.Thread(target=creator, daemon=True)
        t.start()
        asyncio.run(_check(base, create))
        t.join(30)
    finally:
        assert ctl.stop() == 0
        served.stop()


@needs_kubectl
@pytest.mark.skipif(
    CHROMIUM is None,
    reason="Debian's chromium is not installed (apt-get install chromium): no browser test",
)
def test_controller_dashboard_in_chromium_batch_user(tmp_path: Path) -> None:
    served, ctl = _two_processes(tmp_path)
    try:
        served.ok("apply", "-f", "-", input=QUEUES)
        for name, ns in (("alices-job", "team-a"), ("bobs-job", "team-b")):
            served.ok("apply", "-f", "-", input=JOB.replace("NAME", name).replace("NS", ns))
        base = f"http://127.0.0.1:{ctl.port('dashboard')}"
        rows = (
            "[...document.querySelectorAll('[data-queue=\"mixed\"] tr.pending-wl')]"
            ".map(r => [r.dataset.job, r.querySelector('td.reason')?.textContent ?? ''])"
        )

        async def go() -> None:
            async with Browser() as b:
                await b.width(1280)
                await b.goto(f"{base}/ui/login?token=alice-token&next=/ui/")
                await b.wait_for(f"{rows}.some(([w, r]) => r)", 30)
                assert [w for w, _ in await b.js(rows)] == ["team-a/alices-job"]
                text = await b.js("document.body.innerText")
                assert "signed in as alice" in text
                assert "bobs-job" not in text and "team-b" not in text
                # Kueue's visibility API included: the controller answers it
                # from its own queues (serve --without-kueue would say 503).
                assert b.errors == []

        asyncio.run(go())
    finally:
        assert ctl.stop() == 0
        served.stop()


@needs_kubectl
def test_controller_whoami_asks_the_api_server_as_any_would_answer(tmp_path: Path) -> None:
    """whoami through the controller is built from reviews every API server
    answers (a SelfSubjectReview, SelfSubjectAccessReviews with the user's
    token), not from kuota serve's own /ui: between the controller and the
    API server nothing but /api and /apis goes. An admin sees every
    namespace and kind; a batch user only hers."""
    tokens = tmp_path / "tokens.csv"
    tokens.write_text('alice-token,alice,1,"team-a-users"\nroot-token,root,0,"system:masters"\n')
    served = start_server(
        tmp_path / "state",
        "--without-kueue",
        "--token-auth-file",
        str(tokens),
        home=tmp_path / "home",
    )
    try:
        served.ok("apply", "-f", "-", input=SETUP)
        with fault_proxy(served.kubeconfig, "root-token", tmp_path / "kc", share=0.0) as (
            proxy,
            kc,
        ):
            ctl = start_controller(
                served, "--kubeconfig", str(kc), "--dashboard-bind-address", "127.0.0.1:0"
            )
            base = f"http://127.0.0.1:{ctl.port('dashboard')}"

            async def who(token: str) -> dict[str, Any]:
                async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as http:
                    async with http.get(
                        f"{base}/ui/login?token={token}&next=/ui/", allow_redirects=False
                    ) as r:
                        assert r.status == 302, await r.text()
                        cookie = r.headers["Set-Cookie"].split(";")[0]
                    async with http.get(f"{base}/ui/api/whoami", headers={"Cookie": cookie}) as r:
                        assert r.status == 200
                        got: dict[str, Any] = await r.json()
                        return got

            try:
                alice = asyncio.run(who("alice-token"))
                root = asyncio.run(who("root-token"))
                seen = list(proxy.seen)
            finally:  # (before the proxy it reaches the API server through goes)
                assert ctl.stop() == 0
    finally:
        served.stop()
    assert alice["signedIn"] and alice["user"] == "alice"
    assert alice["namespaces"] == ["team-a"] and alice["clusterWide"] is False
    assert not any(alice["resources"].values()), alice["resources"]
    assert root["user"] == "root" and root["clusterWide"] is True
    assert {"team-a", "team-b"} <= set(root["namespaces"])
    assert all(root["resources"][r] for r in ("clusterqueues", "nodes", "pods"))
    assert root["resources"]["bizgroupresourcequotas"] is True  # served by kuota serve
    paths = {path for _, path in seen}
    assert "/apis/authentication.k8s.io/v1/selfsubjectreviews" in paths
    assert "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews" in paths
    assert all(p.startswith(("/api/", "/apis")) for p in paths), sorted(paths)
