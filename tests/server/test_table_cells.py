"""``kubectl get``'s Table over the API, in-process: the printer columns of
Kueue's kinds read from the stored structs by compiled getters (none through
the general JSONPath selection, counted) give the cells the general
selection gives (``tables.struct_path``, the oracle) on the same objects."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient, TestServer

from kuota.cli.world import load_world
from kuota.embedded.controlplane import ControlPlane
from kuota.runtime.clock import RealClock
from kuota.server import tables
from kuota.server.app import ApiServer
from kuota.server.auth import Authenticator, UserInfo
from kuota.server.auth.authn import MASTERS
from kuota.server.auth.store import rbac_authorizer, reconcile_bootstrap
from kuota.server.hub import Hub
from kuota.server.served import lookup

REPO = Path(__file__).resolve().parents[2]
AUTH = {"Authorization": "Bearer t0k"}
TABLE = {**AUTH, "Accept": tables.TABLE_TYPE}
KINDS = ("workloads", "clusterqueues", "localqueues", "resourceflavors")


async def _tables() -> tuple[dict[str, tuple[list[Any], list[Any]]], int]:
    world = load_world([str(REPO / "examples" / "quickstart")])
    assert world.config is not None and not world.problems
    now = datetime.now(UTC)
    cp = ControlPlane(world.config, now, clock=RealClock(now, 1.0))
    try:
        cp.submit(world.objects)
        cp.mgr.run_until_idle()
        hub = Hub(cp)
        reconcile_bootstrap(cp.store)
        tokens = {"t0k": UserInfo("admin", groups=(MASTERS,))}
        api = ApiServer(cp, hub, Authenticator(tokens), rbac_authorizer(cp.store), "127.0.0.1:0")
        out: dict[str, tuple[list[Any], list[Any]]] = {}
        general = 0
        async with TestClient(TestServer(api.app(), host="127.0.0.1")) as client:
            for plural in KINDS:
                path = f"/apis/kueue.x-k8s.io/v1beta2/{plural}"
                before = tables.Counts.general
                r = await client.get(path, headers=TABLE)
                assert r.status == 200, await r.text()
                table = await r.json()
                general += tables.Counts.general - before
                served = lookup("kueue.x-k8s.io", "v1beta2", plural)
                assert served is not None
                objs = cp.store.list(served.rtype).items
                out[plural] = (table["rows"], [served.version.from_internal(o) for o in objs])
            hub.stop()
        return out, general
    finally:
        cp.close()


def _expected(obj: Any, path: str) -> Any:
    values = tables.struct_path(obj, path)
    if not values:
        return None
    return values[0] if len(values) == 1 else ",".join(str(x) for x in values)


def test_printer_columns_match_the_jsonpath_on_the_served_objects() -> None:
    got, general = asyncio.run(_tables())
    assert general == 0
    assert got["workloads"][0], "the quickstart world has Workloads"
    for plural, (rows, items) in got.items():
        served = lookup("kueue.x-k8s.io", "v1beta2", plural)
        assert served is not None
        cols = tables.columns_of(served)
        assert [r["cells"][0] for r in rows] == [o.metadata.name for o in items]
        for row, item in zip(rows, items, strict=True):
            for col, cell in zip(cols, row["cells"][1:], strict=True):
                if col.type == "date":
                    assert isinstance(cell, str) and cell  # an age: "5s"
                else:
                    assert cell == _expected(item, col.json_path), (plural, col.name)
