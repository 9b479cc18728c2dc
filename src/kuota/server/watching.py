"""Watches: a chunked stream of ``{"type", "object"}`` lines per request, from
a resourceVersion (or from the current state as ADDED events), with the
list's selectors, optional bookmarks, and the API server's 410 Expired
ERROR event for a version older than the store's history."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import msgspec
from aiohttp import web

from kuota.server import status as st
from kuota.server.fieldselectors import parse_field_selector
from kuota.server.hub import Hub
from kuota.server.rest import Request, Resources, parse_bool
from kuota.server.served import encode
from kuota.server.tables import TABLE_TYPE, table
from kuota.store import Gone, StoreError, selector_matcher

_BOOKMARK_EVERY = 10.0  # seconds of quiet between bookmarks, when asked for
_JSON = msgspec.json.Encoder()
# One event's wire form and its encoded lines, shared by every watch of its
# resource and version (100 watchers cost one encoding per event, not 100):
# (id of the stored object, its resourceVersion, served version) ->
# (object, wire, {event type: line}).
_WIRES: dict[tuple[int, str, int], tuple[Any, dict[str, Any], dict[str, bytes]]] = {}
_WIRES_SIZE = 4096


class Counts:
    """How many event lines and wire forms were made (a structural check
    that fan-out and a write's response share them; never reset)."""

    lines_encoded = 0
    wire_forms = 0
    json_bodies = 0  # objects' JSON encodings (a write's response and its events share one)


def _cached(obj: Any, served: Any) -> tuple[Any, dict[str, Any], dict[str, bytes]]:
    key = (id(obj), obj.metadata.resource_version, id(served))
    hit = _WIRES.get(key)
    if hit is not None and hit[0] is obj:
        return hit
    if len(_WIRES) >= _WIRES_SIZE:
        _WIRES.clear()
    entry = (obj, encode(obj, served), {})
    Counts.wire_forms += 1
    _WIRES[key] = entry
    return entry


def wire_json(obj: Any, served: Any) -> bytes:
    """A stored object's wire form as JSON: a write's response body, and the
    ``object`` of each watch event of it (encoded once for both)."""
    return _json_of(_cached(obj, served))


def _json_of(entry: tuple[Any, dict[str, Any], dict[str, bytes]]) -> bytes:
    lines = entry[2]
    body = lines.get("")  # ("": the object alone; else an event type's line)
    if body is None:
        body = lines[""] = _JSON.encode(entry[1])
        Counts.json_bodies += 1
    return body


def _event_line(kind: str, entry: tuple[Any, dict[str, Any], dict[str, bytes]]) -> bytes:
    lines = entry[2]
    line = lines.get(kind)
    if line is None:
        # As _line would encode it (msgspec writes a dict's keys in order,
        # compact), around the object's JSON made once.
        line = lines[kind] = b"".join(
            (b'{"type":', _JSON.encode(kind), b',"object":', _json_of(entry), b"}\n")
        )
        Counts.lines_encoded += 1
    return line


def _line(kind: str, obj: Any) -> bytes:
    return _JSON.encode({"type": kind, "object": obj}) + b"\n"


async def watch(
    request: web.Request, req: Request, res: Resources, hub: Hub, as_table: bool
) -> web.StreamResponse:
    s, q = req.served, req.query
    label = q.get("labelSelector", "")
    fsel = parse_field_selector(q.get("fieldSelector", ""), s.group, s.kind)
    try:
        matcher = selector_matcher(label)
    except ValueError as err:
        raise st.bad_request(str(err)) from None
    bookmarks = parse_bool(q.get("allowWatchBookmarks"))
    initial = parse_bool(q.get("sendInitialEvents"))
    try:
        timeout = float(q.get("timeoutSeconds", "") or 1800)
    except ValueError:
        raise st.bad_request(f"invalid timeoutSeconds {q.get('timeoutSeconds')!r}") from None
    rv = q.get("resourceVersion", "")
    ns = req.namespace if s.namespaced and req.namespace else None
    now = res.now

    def render(kind: str, obj: Any) -> bytes | None:
        if label and not matcher(obj.metadata.labels):
            return None
        entry = _cached(obj, s)
        if fsel is not None and not fsel(entry[1]):
            return None
        if as_table:
            return _line(kind, table(s, [obj], now(), definitions=False))
        return _event_line(kind, entry)

    first: list[bytes] = []
    listed_at: int | None = None
    store = res.store
    try:
        if rv in ("", "0") or initial:
            listed = store.list(s.rtype, ns)
            for obj in listed.items:
                line = render("ADDED", obj)
                if line is not None:
                    first.append(line)
            since = listed.resource_version
            listed_at = int(since)
            if initial and bookmarks:
                first.append(
                    _line(
                        "BOOKMARK",
                        {
                            "kind": s.kind,
                            "apiVersion": s.api_version,
                            "metadata": {
                                "resourceVersion": since,
                                "annotations": {"k8s.io/initial-events-end": "true"},
                            },
                        },
                    )
                )
        else:
            since = rv
        w = store.watch(s.rtype, since, namespace=ns, durable=True)
        expired: str | None = None
    except Gone as err:
        w, expired = None, str(err)
    except StoreError as err:
        raise st.bad_request(str(err)) from None
    resp = web.StreamResponse(
        headers={"Content-Type": TABLE_TYPE if as_table else "application/json"}
    )
    resp.enable_chunked_encoding()
    await resp.prepare(request)
    if w is None:
        await resp.write(_line("ERROR", st.gone(expired or "too old resource version").status()))
        return resp
    if listed_at is not None:
        await hub.until_durable(listed_at)  # (the list shows nothing a crash takes back)
    stream = _Stream(w, render, request.transport, hub.loop.create_future())
    deadline = time.monotonic() + timeout
    try:
        if first:
            await resp.write(b"".join(first))
        hub.add_stream(s.rtype, stream)
        stream.pump()  # (what came between the list and now)
        while not hub.stopping and not stream.closed.done():
            left = deadline - time.monotonic()
            if left <= 0:
                break
            await asyncio.wait([stream.closed], timeout=min(left, _BOOKMARK_EVERY))
            if (
                bookmarks
                and not stream.closed.done()
                and time.monotonic() - stream.last_sent >= _BOOKMARK_EVERY
            ):
                # Caught up first, so the bookmark names the newest durable
                # revision: a quiet resource's watch (pumped only when its
                # resource moves) would otherwise bookmark a revision that
                # ages out of the history and resume from it into a 410.
                stream.pump()
                stream.send(_bookmark(s.kind, s.api_version, w.resource_version))
    except (ConnectionResetError, RuntimeError):
        pass  # the client went away
    finally:
        hub.remove_stream(s.rtype, stream)
        w.close()
    return resp


# A watch whose client reads slower than its events come is closed once this
# much waits unsent (kube-apiserver closes an unresponsive watcher too; the
# client resumes from its last resourceVersion).
_MAX_UNSENT = 16 << 20


class _Stream:
    """One watch's response stream, written by the hub (Hub.add_stream): its
    new events, rendered and framed as HTTP/1.1 chunks straight onto the
    connection's transport, with no task of its own to wake."""

    __slots__ = ("closed", "last_sent", "position", "render", "transport", "w")

    def __init__(
        self,
        w: Any,
        render: Callable[[str, Any], bytes | None],
        transport: asyncio.Transport | None,
        closed: asyncio.Future[None],
    ) -> None:
        self.w = w
        self.render = render
        self.transport = transport
        self.closed = closed  # resolved when the stream ends (the handler returns)
        self.position = int(w.resource_version)
        self.last_sent = time.monotonic()

    def pump(self) -> bool:
        """Write the events since the last pump; True if something was written."""
        if self.closed.done():
            return False
        w = self.w
        try:
            events = w.poll()
        except Gone as err:
            self.send(_line("ERROR", st.gone(str(err)).status()))
            self.close()
            return True
        self.position = int(w.resource_version)
        render = self.render
        out = [
            line
            for ev in events
            if ev.type != "BOOKMARK" and (line := render(ev.type, ev.object)) is not None
        ]
        return self.send(b"".join(out)) if out else False

    def send(self, data: bytes) -> bool:
        tr = self.transport
        if tr is None or tr.is_closing() or tr.get_write_buffer_size() > _MAX_UNSENT:
            self.close()
            return False
        tr.write(b"%x\r\n%b\r\n" % (len(data), data))
        self.last_sent = time.monotonic()
        return True

    def close(self) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


def _bookmark(kind: str, api_version: str, rv: str) -> bytes:
    return _line(
        "BOOKMARK", {"kind": kind, "apiVersion": api_version, "metadata": {"resourceVersion": rv}}
    )
