"""A watch of one resource on a real API server, as the store protocol's
``Watch``: a task on the I/O thread streams the API server's watch into a
queue, and ``poll`` (on the manager's thread) drains it without blocking.

The stream resumes from the last resourceVersion it saw when the
connection drops (an API server restarted: client-go's reflector does the
same); a ``410 Gone`` (the version is no longer kept) ends it, and the
next ``poll`` raises ``Gone`` so that the manager lists again.

The store also puts the objects it wrote (and re-read after a conflict)
into the queue at once, so the informers see a write before its echo
comes back over the stream, as they do over the memory store; ``poll``
then drops the echo (the same object at the same resourceVersion, with
nothing of that object in between).

``seen`` is the newest resourceVersion of the stream that ``poll`` has
handed out: every write on this resource up to it has reached the
manager (an injected write does not count: the stream may still carry
older writes of others). A paced controller acknowledges it
(runtime/pacing.py)."""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

from lightkube import ALL_NS, ApiError
from lightkube.types import on_error_raise

from kuota.store.kinds import KindInfo
from kuota.store.kube.kubewire import decode
from kuota.store.protocol import Event, Gone


def _key(obj: Any) -> str:
    m = obj.metadata
    return f"{m.namespace}/{m.name}" if m.namespace else str(m.name)


def _not_older(streamed: str, written: str) -> bool:
    """The stream's version of an object is the written one or a later one.
    resourceVersions are opaque to clients, but every API server issues
    them from one increasing counter (etcd's revision, kuota serve's): they
    are compared only when both are decimal."""
    if streamed.isdigit() and written.isdigit():
        return int(streamed) >= int(written)
    return False


# Backoff between reconnections of a broken stream (client-go's reflector
# backs off from 800 ms; a local API server restarts in about a second).
_FIRST_RETRY = 0.1
_ECHOES = 4096  # written objects kept for their echo (KubeWatch.echoes)
_MAX_RETRY = 1.6


class KubeWatch:
    def __init__(
        self,
        client: Any,
        res: Any,
        info: KindInfo,
        since: str,
        *,
        namespace: str | None,
        bookmarks: bool,
        wake: Callable[[], None],
        on_close: Callable[[KubeWatch], None],
        ignore: str | None = None,
        lane: Any = None,
    ) -> None:
        self.info = info
        self._lane = lane  # (FastLane: the stream over aiohttp; None: lightkube's)
        self.namespace = namespace
        self._client = client
        self._res = res
        self._since = since
        self._bookmarks = bookmarks
        self._wake = wake
        self._on_close = on_close
        self._lock = threading.Lock()
        self._queue: deque[tuple[Event, bool]] = deque()  # (event, from the stream)
        self.seen = int(since) if since.isdigit() else 0
        self.received = self.seen  # (the same, for what the stream has brought so far)
        self._ignore = ignore  # (namespace/name: an object whose writes ``seen`` skips)
        self._gone: str | None = None
        self._closed = False
        # key -> the resourceVersion ``poll`` last handed out for it.
        self._delivered: dict[str, str] = {}
        # resourceVersion -> an object this process wrote (or re-read), until
        # its echo comes over the stream (FastLane.watch takes it from here
        # rather than decoding the line; an echo that came before the write's
        # answer leaves its entry, dropped with the rest past _ECHOES).
        self.echoes: dict[str, Any] = {}
        self.task: Any = None
        self.reconnects = 0

    # ------------------------------------------------------------ the I/O thread
    async def run(self) -> None:
        rv = self._since
        delay = _FIRST_RETRY
        ns = (self.namespace or ALL_NS) if self.info.namespaced else None
        lane = self._lane
        ref = f"watch of {self.info.rtype[2]}"
        while not self._closed:
            try:
                if lane is not None:
                    lane_ns = self.namespace if self.info.namespaced else None
                    async for got in lane.watch(self.info, lane_ns, rv, ref, self.echoes):
                        delay = _FIRST_RETRY
                        rv = got[-1][2] or rv
                        self._push_all(got)
                else:
                    stream = self._client.watch(
                        self._res, namespace=ns, resource_version=rv, on_error=on_error_raise
                    )
                    async for etype, raw in stream:
                        delay = _FIRST_RETRY
                        meta = raw.get("metadata") or {}
                        rv = meta.get("resourceVersion") or rv
                        if etype == "BOOKMARK":
                            self._push(Event("BOOKMARK", None, rv), True)
                            continue
                        self._push(Event(etype, decode(raw, self.info), rv), True)
            except asyncio.CancelledError:
                raise
            except Gone as err:
                self._gone = str(err) or "resourceVersion too old"
                self._wake()
                return
            except ApiError as err:
                if err.status.code == 410:
                    self._gone = err.status.message or "resourceVersion too old"
                    self._wake()
                    return
                await asyncio.sleep(delay)
            except Exception:  # the connection broke: resume from rv
                await asyncio.sleep(delay)
            self.reconnects += 1
            delay = min(delay * 2, _MAX_RETRY)

    def _push_all(self, got: list[tuple[str, Any, str]]) -> None:
        """A chunk's events from the stream, queued together (one wake)."""
        with self._lock:
            queue = self._queue
            for etype, obj, rv in got:
                queue.append((Event(etype, obj, rv), True))  # type: ignore[arg-type]
            last = got[-1][2]
            if last.isdigit():
                self.received = max(self.received, int(last))
        self._wake()

    def _push(self, ev: Event, streamed: bool) -> None:
        with self._lock:
            self._queue.append((ev, streamed))
            if streamed and ev.resource_version.isdigit():
                self.received = max(self.received, int(ev.resource_version))
        self._wake()

    # ------------------------------------------------------------ the manager's thread
    def inject(self, ev: Event) -> None:
        """An object the store has just written or read: delivered before its echo."""
        m = ev.object.metadata
        if self.namespace is not None and m.namespace != self.namespace:
            return
        if ev.type != "DELETED" and ev.resource_version:
            echoes = self.echoes
            if len(echoes) >= _ECHOES:
                echoes.clear()
            echoes[ev.resource_version] = ev.object
        self._push(ev, False)

    @property
    def pending(self) -> bool:
        """Events wait for the next ``poll``."""
        return bool(self._queue)

    def poll(self) -> list[Event]:
        if self._gone is not None:
            raise Gone(f"watch of {self.info.rtype[2]}: {self._gone}")
        with self._lock:
            if not self._queue:
                return []
            events = list(self._queue)
            self._queue.clear()
        out: list[Event] = []
        delivered = self._delivered
        for ev, streamed in events:
            if ev.type == "BOOKMARK":
                self._saw(ev.resource_version)
                if self._bookmarks:
                    out.append(ev)
                continue
            key = _key(ev.object)
            if streamed and key != self._ignore:
                self._saw(ev.resource_version)
            if ev.type == "DELETED":
                delivered.pop(key, None)
            elif (prev := delivered.get(key)) == ev.resource_version:
                continue  # already handed out (written or re-read by this process)
            elif not streamed and prev is not None and _not_older(prev, ev.resource_version):
                # The write's answer came after the stream had brought its echo
                # and what others wrote next (the API server's own reactions):
                # the cache keeps the newer version.
                continue
            else:
                delivered[key] = ev.resource_version
            out.append(ev)
        return out

    def _saw(self, rv: str) -> None:
        if rv.isdigit():
            self.seen = max(self.seen, int(rv))

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self.task is not None:
            self.task.cancel()
        self._on_close(self)
