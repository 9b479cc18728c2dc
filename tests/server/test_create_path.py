"""The API server in-process (plain HTTP on 127.0.0.1): the work a write
costs, counted (structural; the speed itself is bench/serve_api.py's).

- a create's response and its watchers' events share one wire form;
- a watch is woken by writes to its own resource only;
- ClusterRole aggregation lists the ClusterRoles only after one changed;
- a write is matched against admission webhooks only when a webhook
  configuration is stored;
- a client's write is synced without waiting for the controllers' reaction
  to it, which is made durable in a later group;
- a user's RBAC decisions are made once until an RBAC object changes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

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
from kuota.server.webhook_calls import ServeWebhooks

AUTH = {"Authorization": "Bearer t0k"}
WATCHERS = 8
LIMIT_RANGES = "/api/v1/namespaces/w/limitranges"


def _limit_range(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": f"lr-{i}"},
        "spec": {"limits": [{"type": "Container", "max": {"cpu": f"{i + 1}"}}]},
    }


def _namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def _job(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "suspend": True,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "x"}],
                }
            },
        },
    }


Scenario = Callable[[TestClient, ControlPlane, Hub, ApiServer], Awaitable[Any]]


async def _serve(state: Path, scenario: Scenario) -> Any:
    cfg, errs = load_config(
        {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration"}
    )
    assert cfg is not None and not errs
    now = datetime.now(UTC)
    cp = ControlPlane(cfg, now, clock=RealClock(now, 1.0), state_dir=state)
    try:
        hub = Hub(cp)
        reconcile_bootstrap(cp.store)
        tokens = {
            "t0k": UserInfo("admin", groups=(MASTERS,)),
            "alice": UserInfo("alice", groups=("team-a-users", "system:authenticated")),
        }
        api = ApiServer(cp, hub, Authenticator(tokens), rbac_authorizer(cp.store), "127.0.0.1:0")
        api.aggregate()
        async with TestClient(TestServer(api.app(), host="127.0.0.1")) as client:
            r = await client.post("/api/v1/namespaces", json=_namespace("w"), headers=AUTH)
            assert r.status == 201, await r.text()
            try:
                return await scenario(client, cp, hub, api)
            finally:
                hub.stop()
                await hub.drain()
    finally:
        cp.close()


async def _watch_limit_ranges(client: TestClient) -> list[Any]:
    r = await client.get(LIMIT_RANGES, headers=AUTH)
    rv = (await r.json())["metadata"]["resourceVersion"]
    return [
        await client.get(
            LIMIT_RANGES, params={"watch": "true", "resourceVersion": rv}, headers=AUTH
        )
        for _ in range(WATCHERS)
    ]


async def _read(stream: Any, n: int) -> list[str]:
    names: list[str] = []
    while len(names) < n:
        ev = json.loads(await stream.content.readline())
        names.append(ev["object"]["metadata"]["name"])
    return names


async def _settled(hub: Hub, cp: ControlPlane) -> None:
    """Until the watches are all waiting again."""
    for _ in range(200):
        await asyncio.sleep(0.01)
        if sum(len(w) for _, w in hub._waiting.values()) >= WATCHERS:
            return


def test_a_create_and_its_watch_events_share_one_wire_form(tmp_path: Path) -> None:
    async def scenario(client: TestClient, cp: ControlPlane, hub: Hub, api: ApiServer) -> Any:
        streams = await _watch_limit_ranges(client)
        readers = [asyncio.create_task(_read(s, 3)) for s in streams]
        before = watching.Counts.wire_forms
        bodies = []
        for i in range(3):
            r = await client.post(LIMIT_RANGES, json=_limit_range(i), headers=AUTH)
            assert r.status == 201, await r.text()
            bodies.append(await r.json())
        seen = await asyncio.wait_for(asyncio.gather(*readers), 30)
        made = watching.Counts.wire_forms - before
        for s in streams:
            s.close()
        return bodies, seen, made

    bodies, seen, made = asyncio.run(_serve(tmp_path / "state", scenario))
    assert [b["metadata"]["name"] for b in bodies] == ["lr-0", "lr-1", "lr-2"]
    assert bodies[0]["spec"]["limits"][0]["max"] == {"cpu": "1"}
    assert all(s == ["lr-0", "lr-1", "lr-2"] for s in seen)
    assert made == 3  # one per object: its response and its 8 watchers' events


def test_a_create_and_its_watch_events_share_one_json_encoding(tmp_path: Path) -> None:
    async def scenario(client: TestClient, cp: ControlPlane, hub: Hub, api: ApiServer) -> Any:
        streams = await _watch_limit_ranges(client)
        before = watching.Counts.json_bodies
        bodies = []
        for i in range(3):
            r = await client.post(LIMIT_RANGES, json=_limit_range(i), headers=AUTH)
            assert r.status == 201, await r.text()
            bodies.append(await r.read())
        lines = await asyncio.wait_for(asyncio.gather(*(_lines(s, 3) for s in streams)), 30)
        made = watching.Counts.json_bodies - before
        for s in streams:
            s.close()
        return bodies, lines, made

    bodies, lines, made = asyncio.run(_serve(tmp_path / "state", scenario))
    assert made == 3  # one per object: its response body is its watchers' events' object
    for got in lines:
        assert [json.loads(x) for x in got] == [
            {"type": "ADDED", "object": json.loads(b)} for b in bodies
        ]
        # the same bytes: the response's body is the event's object, verbatim
        assert all(
            x == b'{"type":"ADDED","object":' + b + b"}\n" for x, b in zip(got, bodies, strict=True)
        )


async def _lines(stream: Any, n: int) -> list[bytes]:
    return [await stream.content.readline() for _ in range(n)]


def test_a_watch_is_woken_only_by_writes_to_its_resource(tmp_path: Path) -> None:
    async def scenario(client: TestClient, cp: ControlPlane, hub: Hub, api: ApiServer) -> Any:
        streams = await _watch_limit_ranges(client)
        readers = [asyncio.create_task(_read(s, 1)) for s in streams]
        await _settled(hub, cp)
        before = hub.woken
        for i in range(3):  # other resources: no watch of LimitRanges wakes
            r = await client.post("/api/v1/namespaces", json=_namespace(f"o{i}"), headers=AUTH)
            assert r.status == 201, await r.text()
        await asyncio.sleep(0.1)
        others = hub.woken - before
        r = await client.post(LIMIT_RANGES, json=_limit_range(0), headers=AUTH)
        assert r.status == 201, await r.text()
        seen = await asyncio.wait_for(asyncio.gather(*readers), 30)
        own = hub.woken - before - others
        for s in streams:
            s.close()
        return others, own, seen

    others, own, seen = asyncio.run(_serve(tmp_path / "state", scenario))
    assert others == 0
    assert own == WATCHERS
    assert seen == [["lr-0"]] * WATCHERS


def test_aggregation_lists_cluster_roles_only_after_one_changed(tmp_path: Path) -> None:
    async def scenario(client: TestClient, cp: ControlPlane, hub: Hub, api: ApiServer) -> Any:
        before = api.aggregate.rounds
        for i in range(3):
            r = await client.post(LIMIT_RANGES, json=_limit_range(i), headers=AUTH)
            assert r.status == 201, await r.text()
        unrelated = api.aggregate.rounds - before
        role = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {
                "name": "widgets-view",
                "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"},
            },
            "rules": [{"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get"]}],
        }
        r = await client.post(
            "/apis/rbac.authorization.k8s.io/v1/clusterroles", json=role, headers=AUTH
        )
        assert r.status == 201, await r.text()
        after_role = api.aggregate.rounds - before - unrelated
        r = await client.get("/apis/rbac.authorization.k8s.io/v1/clusterroles/view", headers=AUTH)
        return unrelated, after_role, (await r.json())["rules"]

    unrelated, after_role, view_rules = asyncio.run(_serve(tmp_path / "state", scenario))
    assert unrelated == 0
    assert after_role >= 1
    assert {"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get"]} in view_rules


def test_writes_are_matched_against_webhooks_only_once_one_is_configured(tmp_path: Path) -> None:
    async def scenario(client: TestClient, cp: ControlPlane, hub: Hub, api: ApiServer) -> Any:
        hooks = api.res.webhooks = ServeWebhooks(cp.store)
        plans: list[str] = []
        plan = hooks.caller.plan

        def counting(a: Any, obj: Any, old: Any) -> Any:
            plans.append(a.kind)
            return plan(a, obj, old)

        hooks.caller.plan = counting  # type: ignore[method-assign]
        for i in range(3):
            r = await client.post(LIMIT_RANGES, json=_limit_range(i), headers=AUTH)
            assert r.status == 201, await r.text()
        without = list(plans)
        conf = {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "pods-only"},
            "webhooks": [
                {
                    "name": "pods.example.com",
                    "clientConfig": {"url": "https://127.0.0.1:9/validate"},
                    "rules": [
                        {
                            "apiGroups": [""],
                            "apiVersions": ["v1"],
                            "operations": ["CREATE"],
                            "resources": ["pods"],
                        }
                    ],
                    "sideEffects": "None",
                    "admissionReviewVersions": ["v1"],
                    "failurePolicy": "Ignore",
                }
            ],
        }
        r = await client.post(
            "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
            json=conf,
            headers=AUTH,
        )
        assert r.status == 201, await r.text()
        r = await client.post(LIMIT_RANGES, json=_limit_range(3), headers=AUTH)
        assert r.status == 201, await r.text()
        return without, plans[len(without) :]

    without, with_conf = asyncio.run(_serve(tmp_path / "state", scenario))
    assert without == []
    assert with_conf == ["LimitRange"]  # (matched by no rule: no call made)


def test_a_clients_write_is_synced_before_the_controllers_reaction(tmp_path: Path) -> None:
    async def scenario(client: TestClient, cp: ControlPlane, hub: Hub, api: ApiServer) -> Any:
        journal = cp.store.journal
        assert journal is not None
        groups: list[bytes] = []
        detach = journal.detach

        def recording() -> Any:
            data, mark = detach()
            groups.append(data)
            return data, mark

        journal.detach = recording  # type: ignore[method-assign]
        r = await client.post("/apis/batch/v1/namespaces/w/jobs", json=_job("j"), headers=AUTH)
        assert r.status == 201, await r.text()
        for _ in range(200):  # the reaction: the Job controller's Suspended condition
            if any(b"JobSuspended" in g for g in groups):
                break
            await asyncio.sleep(0.01)
        return groups

    groups = asyncio.run(_serve(tmp_path / "state", scenario))
    created = [i for i, g in enumerate(groups) if b'"name":"j"' in g]
    reacted = [i for i, g in enumerate(groups) if b"JobSuspended" in g]
    assert created and reacted
    assert b"JobSuspended" not in groups[created[0]]  # answered without waiting for it
    assert reacted[0] > created[0]  # and durable after it


def test_rbac_decisions_are_kept_until_an_rbac_object_changes(tmp_path: Path) -> None:
    alice = {"Authorization": "Bearer alice"}
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "alice-batch-user", "namespace": "w"},
        "subjects": [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"}],
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "kueue-batch-user-role",
        },
    }
    bindings = "/apis/rbac.authorization.k8s.io/v1/namespaces/w/rolebindings"

    async def scenario(client: TestClient, cp: ControlPlane, hub: Hub, api: ApiServer) -> Any:
        r = await client.post(bindings, json=binding, headers=AUTH)
        assert r.status == 201, await r.text()
        before = api.authz.evaluations
        codes = []
        for i in range(4):
            r = await client.post(
                "/apis/batch/v1/namespaces/w/jobs", json=_job(f"j{i}"), headers=alice
            )
            codes.append(r.status)
        made = api.authz.evaluations - before
        r = await client.delete(f"{bindings}/alice-batch-user", headers=AUTH)
        assert r.status == 200, await r.text()
        r = await client.post("/apis/batch/v1/namespaces/w/jobs", json=_job("late"), headers=alice)
        return codes, made, r.status, (await r.json())["reason"]

    codes, made, late, reason = asyncio.run(_serve(tmp_path / "state", scenario))
    assert codes == [201] * 4
    assert made == 1  # the first create's decision, kept for the next three
    assert (late, reason) == (403, "Forbidden")  # the binding's deletion is seen at once


def test_a_new_job_is_synced_once_by_the_job_controller(tmp_path: Path) -> None:
    """The Job controller's own status write (the Suspended condition of a
    suspended Job) comes back as a watch event: no second sync for it."""

    async def scenario(client: TestClient, cp: ControlPlane, hub: Hub, api: ApiServer) -> Any:
        ctrl = cp.mgr.controllers["job-controller"]
        synced: list[str] = []
        reconcile = ctrl.reconcile

        def counted(key: str) -> Any:
            synced.append(key)
            return reconcile(key)

        ctrl.reconcile = counted  # type: ignore[method-assign]
        for i in range(5):
            r = await client.post(
                "/apis/batch/v1/namespaces/w/jobs", json=_job(f"j{i}"), headers=AUTH
            )
            assert r.status == 201, await r.text()
        for _ in range(200):  # until the controller has written every status
            jobs = [cp.store.get(("batch", "v1", "jobs"), "w", f"j{i}") for i in range(5)]
            if all(j.status is not None and j.status.conditions for j in jobs):
                break
            await asyncio.sleep(0.01)
        hub._settle()
        return synced, jobs

    synced, jobs = asyncio.run(_serve(tmp_path / "state", scenario))
    assert all(j.status.conditions[0].type == "Suspended" for j in jobs)
    assert sorted(synced) == [f"w/j{i}" for i in range(5)]  # once each, not twice
