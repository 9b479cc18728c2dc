"""The hot writes — create, update, status update and merge patch of an object — sent
over aiohttp with the body encoded and the answer decoded by msgspec.

Every other request (reads, lists, watches, patches, deletes, logs) goes
through lightkube's client. This lane exists because of what lightkube's
generic path costs on the I/O thread: measured against ``kuota serve``,
a status update took about 1.1 ms of client CPU (httpx's request
building, httpcore's TLS streams on anyio, lightkube's generic resource
objects), this lane about a quarter of that — and a controller's throughput
is bounded by that thread (bench/cluster_mode.py).

It speaks the same protocol as lightkube does (the same paths, the
``fieldManager`` parameter, the kubeconfig's CA, client certificate and
bearer token), so the API server sees the same requests. A kubeconfig
whose user authenticates otherwise (an exec plugin, an auth provider) gets
no lane: ``for_config`` returns None and lightkube sends everything."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import aiohttp
import msgspec
from lightkube import KubeConfig
from lightkube.config.client_adapter import verify_cluster
from lightkube.config.kubeconfig import SingleConfig

from kuota.store.codec import to_wire
from kuota.store.kinds import KindInfo
from kuota.store.kube.kubewire import api_version, status_error
from kuota.store.protocol import StoreError

_JSON = "application/json"
_MERGE_PATCH = "application/merge-patch+json"
_POOL = 32  # connections kept alive (update_status_all sends 8 at once)


class FastLane:
    def __init__(
        self,
        server: str,
        ctx: ssl.SSLContext | None,
        *,
        token: str | None,
        token_file: str | None,
        basic: aiohttp.BasicAuth | None,
        field_manager: str,
        timeout: float,
    ) -> None:
        self._server = server.rstrip("/")
        self._ctx = ctx
        self._token = token
        self._token_file = token_file
        self._basic = basic
        self._params = {"fieldManager": field_manager}
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self._session: aiohttp.ClientSession | None = None
        self._bearer: str | None = None

    @classmethod
    def for_config(
        cls, config: KubeConfig | SingleConfig, *, field_manager: str, timeout: float
    ) -> FastLane | None:
        """The lane for a kubeconfig's current context, or None when its
        user authenticates in a way only lightkube knows."""
        single = config.get() if isinstance(config, KubeConfig) else config
        if single is None:
            return None
        user = single.user
        if user is None or user.exec is not None or user.auth_provider is not None:
            return None
        server = single.cluster.server
        ctx = (
            verify_cluster(single.cluster, user, single.abs_file)
            if server.startswith("https")
            else None
        )
        basic = (
            aiohttp.BasicAuth(user.username, user.password)
            if user.username and user.password
            else None
        )
        return cls(
            server,
            ctx,
            token=user.token,
            token_file=user.token_file,
            basic=basic,
            field_manager=field_manager,
            timeout=timeout,
        )

    # ------------------------------------------------------------ plumbing
    def _open(self) -> aiohttp.ClientSession:
        # (made on the I/O loop, where aiohttp's session must live)
        if self._session is None:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(ssl=self._ctx or False, limit=_POOL),
                timeout=self._timeout,
                skip_auto_headers=("User-Agent",),
                headers={"User-Agent": "kuota", "Accept": _JSON},
                auth=self._basic,
            )
        return self._session

    def _auth(self, reread: bool = False) -> dict[str, str]:
        if self._token_file is not None and (self._bearer is None or reread):
            # (a projected service-account token: the kubelet rotates it)
            self._bearer = "Bearer " + Path(self._token_file).read_text().strip()
        elif self._bearer is None and self._token is not None:
            self._bearer = "Bearer " + self._token
        return {} if self._bearer is None else {"Authorization": self._bearer}

    @staticmethod
    def path(info: KindInfo, namespace: str, name: str = "", status: bool = False) -> str:
        group, version, plural = info.rtype
        out = f"/apis/{group}/{version}" if group else f"/api/{version}"
        if info.namespaced:
            out += f"/namespaces/{namespace}"
        out += f"/{plural}"
        if name:
            out += f"/{name}"
        if status:
            out += "/status"
        return out

    async def _send(
        self, method: str, path: str, body: bytes, ref: str, content_type: str = _JSON
    ) -> dict[str, Any]:
        session = self._open()
        for attempt in (0, 1):
            headers = {"Content-Type": content_type, **self._auth(reread=attempt == 1)}
            async with session.request(
                method, self._server + path, data=body, headers=headers, params=self._params
            ) as resp:
                data = await resp.read()
                if resp.status < 300:
                    out: dict[str, Any] = msgspec.json.decode(data)
                    return out
                if resp.status == 401 and attempt == 0 and self._token_file is not None:
                    continue  # (the token rotated: read it again, once)
                raise status_error(resp.status, _status_of(data), ref)
        raise StoreError(f"{ref}: unauthorized")  # (not reached: the second 401 raises)

    @staticmethod
    def _body(info: KindInfo, obj: Any) -> bytes:
        wire = to_wire(obj)
        # (kuota's structs leave their type to the store; the server needs it)
        wire.setdefault("apiVersion", api_version(info))
        wire.setdefault("kind", info.kind)
        return msgspec.json.encode(wire)

    # ------------------------------------------------------------ verbs
    async def create(self, info: KindInfo, obj: Any, ref: str) -> dict[str, Any]:
        path = self.path(info, obj.metadata.namespace or "")
        return await self._send("POST", path, self._body(info, obj), ref)

    async def replace(self, info: KindInfo, obj: Any, ref: str, status: bool) -> dict[str, Any]:
        m = obj.metadata
        path = self.path(info, m.namespace or "", m.name, status)
        return await self._send("PUT", path, self._body(info, obj), ref)

    async def merge_patch(
        self,
        info: KindInfo,
        namespace: str,
        name: str,
        patch: Mapping[str, Any],
        ref: str,
        status: bool,
    ) -> dict[str, Any]:
        path = self.path(info, namespace, name, status)
        body = msgspec.json.encode(patch)
        return await self._send("PATCH", path, body, ref, _MERGE_PATCH)

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            await asyncio.sleep(0)  # (lets the connector close its transports)


def _status_of(data: bytes) -> dict[str, Any]:
    """An error answer's Status (an empty one when the body is not JSON)."""
    try:
        out = msgspec.json.decode(data)
    except msgspec.DecodeError:
        return {"message": data[:200].decode("utf-8", "replace")}
    return out if isinstance(out, dict) else {}
