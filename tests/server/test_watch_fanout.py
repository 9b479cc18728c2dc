"""The API server in-process (plain HTTP on 127.0.0.1): watch fan-out shares
its work, an event seen by N watchers of one resource and version encoded
once, not N times (structural, counted; the speed itself is
bench/serve_api.py's); and the pipelined group commit answers a write whose
fsync failed with an error, never 201."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from kuota.api.kueue.config import load_config
from kuota.embedded.controlplane import ControlPlane
from kuota.runtime.clock import RealClock
from kuota.server import watching
from kuota.server.app import ApiServer
from kuota.server.auth import Authenticator, UserInfo
from kuota.server.auth.authn import MASTERS
from kuota.server.auth.store import rbac_authorizer, reconcile_bootstrap
from kuota.server.hub import Hub
from kuota.store import StoreError, open_readonly
from kuota.store.resources import LIMIT_RANGE

WATCHERS = 12
OBJECTS = 3
AUTH = {"Authorization": "Bearer t0k"}


def _limit_range(i: int) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": f"lr-{i}"},
        "spec": {"limits": [{"type": "Container", "max": {"cpu": f"{i + 1}"}}]},
    }


async def _scenario(state: Path) -> tuple[int, list[list[tuple[str, str]]]]:
    cfg, errs = load_config(
        {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration"}
    )
    assert cfg is not None and not errs
    now = datetime.now(UTC)
    cp = ControlPlane(cfg, now, clock=RealClock(now, 1.0), state_dir=state)
    try:
        hub = Hub(cp)
        reconcile_bootstrap(cp.store)
        tokens = {"t0k": UserInfo("admin", groups=(MASTERS,))}
        api = ApiServer(cp, hub, Authenticator(tokens), rbac_authorizer(cp.store), "127.0.0.1:0")
        async with TestClient(TestServer(api.app(), host="127.0.0.1")) as client:
            ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "w"}}
            r = await client.post("/api/v1/namespaces", json=ns, headers=AUTH)
            assert r.status == 201, await r.text()
            r = await client.get("/api/v1/namespaces/w/limitranges", headers=AUTH)
            rv = (await r.json())["metadata"]["resourceVersion"]
            before = watching.Counts.lines_encoded
            streams = [
                await client.get(
                    "/api/v1/namespaces/w/limitranges",
                    params={"watch": "true", "resourceVersion": rv},
                    headers=AUTH,
                )
                for _ in range(WATCHERS)
            ]

            async def read(stream: object) -> list[tuple[str, str]]:
                got: list[tuple[str, str]] = []
                while len(got) < OBJECTS:
                    line = await stream.content.readline()  # type: ignore[attr-defined]
                    ev = json.loads(line)
                    got.append((ev["type"], ev["object"]["metadata"]["resourceVersion"]))
                return got

            readers = [asyncio.create_task(read(s)) for s in streams]
            for i in range(OBJECTS):
                r = await client.post(
                    "/api/v1/namespaces/w/limitranges", json=_limit_range(i), headers=AUTH
                )
                assert r.status == 201, await r.text()
            seen = await asyncio.wait_for(asyncio.gather(*readers), 30)
            encoded = watching.Counts.lines_encoded - before
            for s in streams:
                s.close()
            hub.stop()
            await hub.drain()
        return encoded, seen
    finally:
        cp.close()


def test_an_event_is_encoded_once_for_all_its_watchers(tmp_path: Path) -> None:
    encoded, seen = asyncio.run(_scenario(tmp_path / "state"))
    assert all(s == seen[0] for s in seen)  # every watcher got the same events, in order
    assert [t for t, _ in seen[0]] == ["ADDED"] * OBJECTS
    assert encoded == len(set(seen[0])) == OBJECTS  # not WATCHERS * OBJECTS


async def _failing_disk(state: Path, monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, str]]:
    cfg, errs = load_config(
        {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration"}
    )
    assert cfg is not None and not errs
    now = datetime.now(UTC)
    cp = ControlPlane(cfg, now, clock=RealClock(now, 1.0), state_dir=state)
    answers: list[tuple[int, str]] = []
    real_write = os.write

    def full_disk(fd: int, data: bytes) -> int:
        if Path(os.readlink(f"/proc/self/fd/{fd}")).name.startswith("segment-"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    try:
        hub = Hub(cp)
        reconcile_bootstrap(cp.store)
        tokens = {"t0k": UserInfo("admin", groups=(MASTERS,))}
        api = ApiServer(cp, hub, Authenticator(tokens), rbac_authorizer(cp.store), "127.0.0.1:0")
        async with TestClient(TestServer(api.app(), host="127.0.0.1")) as client:
            ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "w"}}
            r = await client.post("/api/v1/namespaces", json=ns, headers=AUTH)
            assert r.status == 201, await r.text()
            monkeypatch.setattr(os, "write", full_disk)
            for i in range(2):
                r = await client.post(
                    "/api/v1/namespaces/w/limitranges", json=_limit_range(i), headers=AUTH
                )
                answers.append((r.status, (await r.json())["message"]))
            monkeypatch.setattr(os, "write", real_write)
            hub.stop()
            await hub.drain()
        return answers
    finally:
        with contextlib.suppress(StoreError):  # (its clock cannot be saved either)
            cp.close()


def test_a_write_whose_fsync_fails_is_not_acknowledged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("needs /proc to tell the journal's files from sockets")
    answers = asyncio.run(_failing_disk(tmp_path / "state", monkeypatch))
    (code, message), (code2, message2) = answers
    assert code == 500 and "the write was not stored" in message and "No space" in message
    assert code2 == 500 and "the store stopped after a journal write failed" in message2
    with open_readonly(tmp_path / "state") as store:  # the disk: no refused write on it
        assert store.list(LIMIT_RANGE, "w").items == []
