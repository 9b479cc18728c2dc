"""The hot writes — create, update, status update and merge patch of an object — sent
over keep-alive HTTP/1.1 connections of its own (rawhttp.py) with the body
encoded and the answer decoded by msgspec, and the watch streams (over
aiohttp), each line decoded by msgspec straight into kuota's struct.

Every other request (reads, lists, strategic/JSON patches, deletes, logs)
goes through lightkube's client. This lane exists because of what lightkube's
generic path costs on the I/O thread: measured against ``kuota serve``,
a status update took about 1.1 ms of client CPU (httpx's request
building, httpcore's TLS streams on anyio, lightkube's generic resource
objects), this lane about a quarter of that — and a controller's throughput
is bounded by that thread (bench/cluster_mode.py). A watch event through
lightkube went through httpx's line iterator, a JSON parse to dicts, a copy
and msgspec's conversion; here one decode of the line's bytes makes the
struct (py-spy of the cluster bench's controller: the workloads' watch was
a ninth of its CPU, 15,000 workloads, ~9 events each).

It speaks the same protocol as lightkube does (the same paths, the
``fieldManager`` parameter, the kubeconfig's CA, client certificate and
bearer token), so the API server sees the same requests. A kubeconfig
whose user authenticates otherwise (an exec plugin, an auth provider) gets
no lane: ``for_config`` returns None and lightkube sends everything."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import aiohttp
import msgspec
from lightkube import KubeConfig
from lightkube.config.client_adapter import verify_cluster
from lightkube.config.kubeconfig import SingleConfig

from kuota.store.codec import to_wire
from kuota.store.kinds import KindInfo
from kuota.store.kube.kubewire import api_version, decode_json, status_error
from kuota.store.kube.rawhttp import RawPool
from kuota.store.protocol import Gone, StoreError

_JSON = "application/json"
_MERGE_PATCH = "application/merge-patch+json"

# A write's fixed header lines by its body's type.
_HEADS = {
    t: f"User-Agent: kuota\r\nAccept: {_JSON}\r\nContent-Type: {t}\r\n".encode()
    for t in (_JSON, _MERGE_PATCH)
}


class _Line(msgspec.Struct):
    """A watch event's line; its object decoded once its type is known."""

    type: str
    object: msgspec.Raw = msgspec.Raw(b"null")


class _RvMeta(msgspec.Struct, rename="camel"):
    resource_version: str = ""


class _Partial(msgspec.Struct):
    """A BOOKMARK's object: only its resourceVersion is meant."""

    metadata: _RvMeta = msgspec.field(default_factory=_RvMeta)


class _ErrStatus(msgspec.Struct):
    """An ERROR event's object: a Status."""

    code: int = 0
    reason: str = ""
    message: str = ""


class _HeadMeta(msgspec.Struct, rename="camel"):
    name: str = ""
    namespace: str = ""
    resource_version: str = ""


class _HeadObj(msgspec.Struct):
    metadata: _HeadMeta = msgspec.field(default_factory=_HeadMeta)


class _Head(msgspec.Struct):
    """A watch event's type and its object's identity, the rest skipped."""

    type: str
    object: _HeadObj = msgspec.field(default_factory=_HeadObj)


_LINE = msgspec.json.Decoder(_Line)
_HEAD = msgspec.json.Decoder(_Head)
_RV_KEY = b'"resourceVersion":"'
_PARTIAL = msgspec.json.Decoder(_Partial)
_ERR = msgspec.json.Decoder(_ErrStatus)


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
        self._watch_session: aiohttp.ClientSession | None = None
        self._bearer: str | None = None
        # The writes' connections (rawhttp.py); the watches stay on aiohttp.
        self._raw = RawPool(self._server, ctx, timeout)
        self._query = "?" + RawPool.query(self._params)
        self._basic_line = (
            b"" if basic is None else f"Authorization: {basic.encode()}\r\n".encode("latin-1")
        )

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
    def _open_watches(self) -> aiohttp.ClientSession:
        # Watches hold their connection for as long as they stream: a pool
        # of their own, unbounded, so they never take the writes' connections.
        if self._watch_session is None:
            self._watch_session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(ssl=self._ctx or False, limit=0),
                timeout=aiohttp.ClientTimeout(
                    total=None, sock_connect=self._timeout.total, sock_read=None
                ),
                skip_auto_headers=("User-Agent",),
                headers={"User-Agent": "kuota", "Accept": _JSON},
                auth=self._basic,
            )
        return self._watch_session

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
        if info.namespaced and namespace:  # (none: every namespace's, a watch's)
            out += f"/namespaces/{namespace}"
        out += f"/{plural}"
        if name:
            out += f"/{name}"
        if status:
            out += "/status"
        return out

    async def _send(
        self,
        method: str,
        path: str,
        body: bytes,
        ref: str,
        info: KindInfo | None,
        content_type: str = _JSON,
    ) -> Any:
        """The answer decoded as ``info``'s struct (None: not decoded, an
        Event's, which nothing reads back)."""
        raw = self._raw
        target = path + self._query
        for attempt in (0, 1):
            auth = self._auth(reread=attempt == 1).get("Authorization")
            head = _HEADS[content_type] + (
                self._basic_line if auth is None else f"Authorization: {auth}\r\n".encode("latin-1")
            )
            status, data = await raw.request(method, target, head, body)
            if status < 300:
                return None if info is None else decode_json(data, info)
            if status == 401 and attempt == 0 and self._token_file is not None:
                continue  # (the token rotated: read it again, once)
            raise status_error(status, _status_of(data), ref)
        raise StoreError(f"{ref}: unauthorized")  # (not reached: the second 401 raises)

    @staticmethod
    def _body(info: KindInfo, obj: Any) -> bytes:
        wire = to_wire(obj)
        # (kuota's structs leave their type to the store; the server needs it)
        wire.setdefault("apiVersion", api_version(info))
        wire.setdefault("kind", info.kind)
        return msgspec.json.encode(wire)

    # ------------------------------------------------------------ verbs
    async def create(self, info: KindInfo, obj: Any, ref: str, answer: bool = True) -> Any:
        """The created object (``answer`` False: None)."""
        path = self.path(info, obj.metadata.namespace or "")
        return await self._send("POST", path, self._body(info, obj), ref, info if answer else None)

    async def replace(self, info: KindInfo, obj: Any, ref: str, status: bool) -> Any:
        m = obj.metadata
        path = self.path(info, m.namespace or "", m.name, status)
        return await self._send("PUT", path, self._body(info, obj), ref, info)

    async def merge_patch(
        self,
        info: KindInfo,
        namespace: str,
        name: str,
        patch: Mapping[str, Any],
        ref: str,
        status: bool,
        answer: bool = True,
    ) -> Any:
        """The patched object (``answer`` False: None)."""
        path = self.path(info, namespace, name, status)
        body = msgspec.json.encode(patch)
        return await self._send("PATCH", path, body, ref, info if answer else None, _MERGE_PATCH)

    async def watch(
        self,
        info: KindInfo,
        namespace: str | None,
        rv: str,
        ref: str,
        echoes: dict[str, Any] | None = None,
    ) -> AsyncIterator[list[tuple[str, Any, str]]]:
        """One watch request's events from ``rv``, as lists of (type, object,
        resourceVersion) — a BOOKMARK's object None — one list per chunk
        the stream brought. Ends when the API server ends the stream; raises
        ``Gone`` for a 410 (an ERROR event or the answer), the StoreError of
        another refusal, and the transport's error when the connection breaks.

        ``echoes``: the objects this process wrote, by resourceVersion (the
        watch's, KubeWatch.inject): a line carrying one of them is its echo,
        and the object is taken from there rather than decoded again (a
        controller's own status writes are most of its watch's events).
        Each is taken once."""
        session = self._open_watches()
        params = {"watch": "true"}
        if rv:
            params["resourceVersion"] = rv
        # (a projected token is read again at each connection: it rotates)
        headers = self._auth(reread=self._token_file is not None)
        url = self._server + self.path(info, namespace or "")
        async with session.get(url, params=params, headers=headers) as resp:
            if resp.status >= 300:
                raise status_error(resp.status, _status_of(await resp.read()), ref)
            rest = b""
            async for chunk in resp.content.iter_any():
                if rest:
                    chunk = rest + chunk
                lines = chunk.split(b"\n")
                rest = lines.pop()  # (a line the next chunk ends)
                events = [_event(line, info, ref, echoes) for line in lines if line.strip()]
                if events:
                    yield events

    async def close(self) -> None:
        self._raw.close()
        if self._watch_session is not None:
            await self._watch_session.close()
        await asyncio.sleep(0)  # (lets the connectors close their transports)


def _event(
    line: bytes, info: KindInfo, ref: str, echoes: dict[str, Any] | None = None
) -> tuple[str, Any, str]:
    if echoes:
        echo = _echo(line, echoes)
        if echo is not None:
            return echo
    try:
        ev = _LINE.decode(line)
    except msgspec.DecodeError as err:
        raise StoreError(f"{ref}: a watch event that is not JSON: {err}") from None
    if ev.type == "BOOKMARK":
        return "BOOKMARK", None, _PARTIAL.decode(ev.object).metadata.resource_version
    if ev.type == "ERROR":
        st = _ERR.decode(ev.object)
        if st.code == 410:
            raise Gone(st.message or "resourceVersion too old")
        raise status_error(st.code or 500, {"reason": st.reason, "message": st.message}, ref)
    obj = decode_json(ev.object, info)
    return ev.type, obj, obj.metadata.resource_version


def _echo(line: bytes, echoes: dict[str, Any]) -> tuple[str, Any, str] | None:
    """The event of ``line`` if it carries an object of ``echoes`` (None:
    decode it). The first resourceVersion in the line is a candidate only
    (an object may hold references that name one): the line's own
    metadata, decoded alone, must name the same version and object."""
    at = line.find(_RV_KEY)
    if at < 0:
        return None
    at += len(_RV_KEY)
    rv = line[at : line.find(b'"', at)].decode("ascii", "replace")
    obj = echoes.pop(rv, None)
    if obj is None:
        return None
    try:
        head = _HEAD.decode(line)
    except msgspec.DecodeError:
        return None  # (decoded in full, which names the error)
    m, mine = head.object.metadata, obj.metadata
    if (
        head.type in ("ADDED", "MODIFIED")
        and m.resource_version == rv
        and m.name == mine.name
        and m.namespace == (mine.namespace or "")
    ):
        return head.type, obj, rv
    return None


def _status_of(data: bytes) -> dict[str, Any]:
    """An error answer's Status (an empty one when the body is not JSON)."""
    try:
        out = msgspec.json.decode(data)
    except msgspec.DecodeError:
        return {"message": data[:200].decode("utf-8", "replace")}
    return out if isinstance(out, dict) else {}
