"""A client is shown nothing a crash could take back: while a write's group
commit is on its way to disk, no watch delivers it, no list or get shows it;
once it is durable all of them do (kube-apiserver shows only what etcd has
committed). In-process, with the journal's fsync held at a gate."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient
from tests.server.test_create_path import AUTH, LIMIT_RANGES, _limit_range, _serve

from kuota.embedded.controlplane import ControlPlane
from kuota.server.app import ApiServer
from kuota.server.hub import Hub


def _gate(cp: ControlPlane) -> threading.Event:
    """Hold the journal's next write-outs until the returned event is set."""
    journal = cp.store.journal
    assert journal is not None
    release = threading.Event()
    real = journal.write_out

    def held(data: bytes) -> None:
        release.wait(30)
        real(data)

    journal.write_out = held  # type: ignore[method-assign]
    return release


async def _names(client: TestClient) -> list[str]:
    r = await client.get(LIMIT_RANGES, headers=AUTH)
    assert r.status == 200
    return [i["metadata"]["name"] for i in (await r.json())["items"]]


def test_a_write_is_shown_only_once_it_is_durable(tmp_path: Path) -> None:
    async def scenario(client: TestClient, cp: ControlPlane, hub: Hub, api: ApiServer) -> Any:
        r = await client.get(LIMIT_RANGES, headers=AUTH)
        rv = (await r.json())["metadata"]["resourceVersion"]
        stream = await client.get(
            LIMIT_RANGES, params={"watch": "true", "resourceVersion": rv}, headers=AUTH
        )
        event = asyncio.create_task(stream.content.readline())
        release = _gate(cp)
        create = asyncio.create_task(client.post(LIMIT_RANGES, json=_limit_range(0), headers=AUTH))
        for _ in range(100):  # until the write is in memory (its fsync held)
            await asyncio.sleep(0.01)
            if cp.store.resource_version > int(rv):
                break
        # Neither a list, nor a get, nor a watch shows it yet.
        list_task = asyncio.create_task(_names(client))
        get_task = asyncio.create_task(client.get(f"{LIMIT_RANGES}/lr-0", headers=AUTH))
        await asyncio.sleep(0.3)
        assert not create.done() and not event.done()
        assert not list_task.done() and not get_task.done()
        release.set()
        reply = await asyncio.wait_for(create, 30)
        assert reply.status == 201, await reply.text()
        line = json.loads(await asyncio.wait_for(event, 30))
        assert (line["type"], line["object"]["metadata"]["name"]) == ("ADDED", "lr-0")
        assert await asyncio.wait_for(list_task, 30) == ["lr-0"]
        got = await asyncio.wait_for(get_task, 30)
        assert got.status == 200
        stream.close()
        return None

    asyncio.run(_serve(tmp_path, scenario))


def test_a_delete_in_flight_is_not_shown_as_gone(tmp_path: Path) -> None:
    async def scenario(client: TestClient, cp: ControlPlane, hub: Hub, api: ApiServer) -> Any:
        r = await client.post(LIMIT_RANGES, json=_limit_range(0), headers=AUTH)
        assert r.status == 201
        before = cp.store.resource_version
        release = _gate(cp)
        delete = asyncio.create_task(client.delete(f"{LIMIT_RANGES}/lr-0", headers=AUTH))
        for _ in range(100):  # until the delete is in memory (its fsync held)
            await asyncio.sleep(0.01)
            if cp.store.resource_version > before:
                break
        get_task = asyncio.create_task(client.get(f"{LIMIT_RANGES}/lr-0", headers=AUTH))
        await asyncio.sleep(0.3)
        assert not get_task.done()  # a 404 now could be taken back by a crash
        release.set()
        assert (await asyncio.wait_for(delete, 30)).status == 200
        assert (await asyncio.wait_for(get_task, 30)).status == 404
        return None

    asyncio.run(_serve(tmp_path, scenario))


def test_a_quiet_watch_bookmarks_the_newest_durable_revision(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """A bookmark names the store's newest durable revision, not the watch's
    last event: a client resuming from it after other resources' writes has
    missed nothing and is not sent into a 410 once those writes age out."""
    from kuota.server import watching

    monkeypatch.setattr(watching, "_BOOKMARK_EVERY", 0.2)

    async def scenario(client: TestClient, cp: ControlPlane, hub: Hub, api: ApiServer) -> Any:
        r = await client.get(LIMIT_RANGES, headers=AUTH)
        rv = int((await r.json())["metadata"]["resourceVersion"])
        stream = await client.get(
            LIMIT_RANGES,
            params={"watch": "true", "resourceVersion": str(rv), "allowWatchBookmarks": "true"},
            headers=AUTH,
        )
        for i in range(3):  # other resources only
            r = await client.post(
                "/api/v1/namespaces",
                json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"q{i}"}},
                headers=AUTH,
            )
            assert r.status == 201
        after = cp.store.durable_revision
        assert after > rv
        line = json.loads(await asyncio.wait_for(stream.content.readline(), 30))
        stream.close()
        assert line["type"] == "BOOKMARK"
        return int(line["object"]["metadata"]["resourceVersion"]), after

    marked, after = asyncio.run(_serve(tmp_path, scenario))
    assert marked >= after
