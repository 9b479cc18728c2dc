"""The event loop both processes of cluster mode run their network I/O on:
uvloop's (a dependency), asyncio's when ``KUOTA_UVLOOP=0`` asks for it or
uvloop cannot be imported; on
either, ``kuota serve`` answers and stops cleanly on SIGTERM (its signal
handlers) and ``kuota controller`` leads and stops with its lease released."""

from __future__ import annotations

import json
import os
import signal
import ssl
import urllib.request
from pathlib import Path

import pytest
from tests.clustermode.twoproc import start_controller
from tests.server.conftest import Served, start_server

pytestmark = pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc")


def _on_uvloop(pid: int) -> bool:
    """Whether process ``pid`` has uvloop's extension mapped."""
    return "/uvloop/loop." in Path(f"/proc/{pid}/maps").read_text()


def _create_and_watch(srv: Served) -> list[tuple[str, str]]:
    """Create two ConfigMaps, then watch from the start: the events (type,
    name) as the server sends them over TLS."""
    pki = srv.state / "pki"
    ctx = ssl.create_default_context(cafile=str(pki / "ca.crt"))
    ctx.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
    base = f"{srv.url}/api/v1/namespaces/default/configmaps"
    for name in ("a", "b"):
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
        req = urllib.request.Request(
            base,
            data=json.dumps(body).encode(),
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, context=ctx, timeout=10) as resp:
            assert resp.status == 201
    out = []
    with urllib.request.urlopen(
        f"{base}?watch=1&timeoutSeconds=1", context=ctx, timeout=10
    ) as resp:
        for line in resp:
            ev = json.loads(line)
            out.append((ev["type"], ev["object"]["metadata"]["name"]))
    return out


@pytest.mark.parametrize("loop", ["uvloop", "asyncio", "uvloop-missing"])
def test_serve_and_controller_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loop: str
) -> None:
    uvloop = loop == "uvloop"
    if loop == "asyncio":
        monkeypatch.setenv("KUOTA_UVLOOP", "0")
    elif loop == "uvloop-missing":  # (not installed: its import fails, asyncio's loop serves)
        missing = tmp_path / "missing"
        (missing / "uvloop").mkdir(parents=True)
        (missing / "uvloop" / "__init__.py").write_text("raise ImportError('no uvloop here')\n")
        path = os.environ.get("PYTHONPATH")
        monkeypatch.setenv("PYTHONPATH", f"{missing}{os.pathsep}{path}" if path else str(missing))
    srv = start_server(tmp_path / "state", "--without-kueue", home=tmp_path / "home")
    ctl = None
    try:
        assert _on_uvloop(srv.proc.pid) is uvloop
        assert _create_and_watch(srv) == [("ADDED", "a"), ("ADDED", "b")]
        ctl = start_controller(srv)
        ctl.wait_line("leading", 120)
        assert _on_uvloop(ctl.proc.pid) is uvloop
    finally:
        if ctl is not None:
            assert ctl.stop() == 0  # a clean stop: the lease released
        code = srv.stop(signal.SIGTERM)
    assert code == 0
    assert any("kuota serve: stopped" in line for line in srv.lines)
