"""``kuota serve`` as a process: its PKI and kubeconfig, health and version,
bearer tokens, a clean stop on SIGTERM with every acknowledged write kept,
and usage errors."""

from __future__ import annotations

import json
import signal
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import yaml
from tests.server.conftest import REPO, Served


def _ctx(srv: Served, client_cert: bool = True) -> ssl.SSLContext:
    pki = srv.state / "pki"
    ctx = ssl.create_default_context(cafile=str(pki / "ca.crt"))
    if client_cert:
        ctx.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
    return ctx


def _call(
    srv: Served,
    path: str,
    *,
    method: str = "GET",
    body: Any = None,
    token: str | None = None,
    cert: bool = True,
) -> tuple[int, Any]:
    headers = {"Accept": "application/json"}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(srv.url + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, context=_ctx(srv, cert), timeout=10) as resp:
            raw = resp.read()
            code = resp.status
    except urllib.error.HTTPError as err:
        raw, code = err.read(), err.code
    try:
        return code, json.loads(raw)
    except ValueError:
        return code, raw.decode()


def test_kubeconfig_health_version_and_restart(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    srv = serve()
    cfg = yaml.safe_load(srv.kubeconfig.read_text())
    assert cfg["current-context"] == "kuota"
    assert cfg["clusters"][0]["cluster"]["server"] == srv.url
    ca = cfg["clusters"][0]["cluster"]["certificate-authority-data"]
    for path in ("/healthz", "/livez", "/readyz"):
        assert _call(srv, path) == (200, "ok")
    code, version = _call(srv, "/version")
    assert code == 200 and (version["major"], version["minor"]) == ("1", "32")
    # A write acknowledged before SIGTERM is there after a restart.
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kept"}}
    code, created = _call(srv, "/api/v1/namespaces", method="POST", body=ns)
    assert code == 201 and created["metadata"]["name"] == "kept"
    assert srv.stop(signal.SIGTERM) == 0
    assert any("stopped" in line for line in srv.lines), srv.lines
    again = serve()
    assert (
        yaml.safe_load(again.kubeconfig.read_text())["clusters"][0]["cluster"][
            "certificate-authority-data"
        ]
        == ca
    )  # the same CA: clients keep trusting the server
    code, got = _call(again, "/api/v1/namespaces/kept")
    assert code == 200 and got["metadata"]["uid"] == created["metadata"]["uid"]
    code, dup = _call(again, "/api/v1/namespaces", method="POST", body=ns)
    assert code == 409 and dup["reason"] == "AlreadyExists"
    assert dup["message"] == 'namespaces "kept" already exists'


def test_tokens_authenticate_and_only_masters_may_write(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    tokens = tmp_path / "tokens.csv"
    tokens.write_text('root-token,root,1,"system:masters"\nbob-token,bob,2,"team-a"\n')
    srv = serve("--token-auth-file", str(tokens))
    code, _ = _call(srv, "/api/v1/namespaces", token="root-token", cert=False)
    assert code == 200
    code, status = _call(srv, "/api/v1/namespaces/default/pods", token="bob-token", cert=False)
    assert code == 403 and status["reason"] == "Forbidden"
    assert status["message"] == (
        'pods is forbidden: User "bob" cannot list resource "pods" in API group "" '
        'in the namespace "default"'
    )
    code, _ = _call(srv, "/apis", token="bob-token", cert=False)  # discovery is for everyone
    assert code == 200
    code, status = _call(srv, "/api/v1/namespaces", token="wrong", cert=False)
    assert code == 401 and status["reason"] == "Unauthorized"
    code, status = _call(srv, "/api/v1/namespaces", cert=False)  # anonymous
    assert code == 403


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "tokens.csv"
    bad.write_text("only-a-token\n")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "kuota.cli.main",
            "serve",
            "--state",
            str(tmp_path / "s"),
            "--port",
            "0",
            "--token-auth-file",
            str(bad),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert r.returncode == 2
    assert f"{bad}: line 1: expected token,user,uid" in r.stderr
    assert "Traceback" not in r.stderr
    r = subprocess.run(
        [sys.executable, "-m", "kuota.cli.main", "serve", "--port", "0"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert r.returncode == 2 and "--state" in r.stderr


def test_every_acknowledged_write_survives_sigkill(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    srv = serve()
    acked = []
    for i in range(20):
        ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"k-{i}"}}
        code, body = _call(srv, "/api/v1/namespaces", method="POST", body=ns)
        assert code == 201
        acked.append((body["metadata"]["name"], body["metadata"]["uid"]))
    srv.stop(signal.SIGKILL)
    again = serve()
    for name, uid in acked:
        code, got = _call(again, f"/api/v1/namespaces/{name}")
        assert code == 200 and got["metadata"]["uid"] == uid
