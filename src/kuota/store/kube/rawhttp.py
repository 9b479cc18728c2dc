"""A minimal HTTP/1.1 keep-alive client for the fast lane's writes: one
request at a time per connection, the request's bytes made in one join and
written in one ``transport.write``, the answer parsed from the bytes the
protocol receives (status line, Content-Length or chunked body).

Why not aiohttp's client for these: py-spy of the cluster bench's
controller put about four fifths of a write's client CPU in aiohttp's
request machinery (URL objects, ClientRequest/ClientResponse, multidicts,
its stream reader and timers) rather than in TLS or the socket; a write is
a small JSON body to one known server, which needs none of it. Why not h11
(the sans-I/O HTTP/1.1 parser httpx uses) for the framing: measured in the
same cluster bench, it cost the controller 463 us per request against 336
for this parser (compiled build). Watches keep aiohttp's streaming
(fastlane.py); tests/store/test_kube_store_framing.py holds this parser to
every framing of an answer."""

from __future__ import annotations

import asyncio
import ssl
from urllib.parse import quote, urlsplit

_MAX_IDLE = 32  # idle connections kept (update_status_all sends 8 at once)


class _Answer:
    __slots__ = ("body", "close", "status")

    def __init__(self, status: int, body: bytes, close: bool) -> None:
        self.status = status
        self.body = body
        self.close = close


class _Conn(asyncio.Protocol):
    """One connection: its answer parsed as its bytes arrive."""

    def __init__(self, pool: RawPool) -> None:
        self.pool = pool
        self.transport: asyncio.Transport | None = None
        self.waiter: asyncio.Future[_Answer] | None = None
        self.buf = bytearray()
        self.closed = False

    # ------------------------------------------------------------ protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.pool.forget(self)
        w = self.waiter
        if w is not None and not w.done():
            w.set_exception(ConnectionResetError(f"the API server closed the connection: {exc!r}"))

    def eof_received(self) -> bool | None:
        self.closed = True
        w = self.waiter
        if w is not None and not w.done():
            # (an answer without a length ends with the connection)
            got = _parse(bytes(self.buf), at_eof=True)
            if got is not None:
                w.set_result(got)
            else:
                w.set_exception(ConnectionResetError("the API server closed the connection"))
        return None

    def data_received(self, data: bytes) -> None:
        w = self.waiter
        if w is None or w.done():
            # Bytes nobody asked for (a late answer of a timed-out request):
            # the connection's framing is lost.
            self.abort()
            return
        buf = self.buf
        buf += data
        try:
            got = _parse(bytes(buf) if len(buf) != len(data) else data, at_eof=False)
        except ValueError as err:
            self.abort()
            w.set_exception(ConnectionResetError(f"a malformed answer: {err}"))
            return
        if got is not None:
            buf.clear()
            w.set_result(got)

    def abort(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.abort()


def _parse(data: bytes, at_eof: bool) -> _Answer | None:
    """The answer in ``data`` once it is whole (None: more to come)."""
    end = data.find(b"\r\n\r\n")
    if end < 0:
        return None
    head = data[:end].decode("latin-1").split("\r\n")
    parts = head[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/"):
        raise ValueError(f"status line {head[0]!r}")
    status = int(parts[1])
    close = parts[0] == "HTTP/1.0"
    length = -1
    chunked = False
    for line in head[1:]:
        name, _, value = line.partition(":")
        name = name.strip().lower()
        if name == "content-length":
            length = int(value.strip())
        elif name == "transfer-encoding":
            chunked = "chunked" in value.lower()
        elif name == "connection":
            v = value.strip().lower()
            close = v == "close" or (close and v != "keep-alive")
    body_at = end + 4
    if chunked:
        body = _dechunk(data, body_at)
        return None if body is None else _Answer(status, body, close)
    if length >= 0:
        if len(data) - body_at < length:
            return None
        return _Answer(status, data[body_at : body_at + length], close)
    if status in (204, 304) or 100 <= status < 200:
        return _Answer(status, b"", close)
    # No length: the body ends with the connection.
    return _Answer(status, data[body_at:], True) if at_eof else None


def _dechunk(data: bytes, at: int) -> bytes | None:
    out: list[bytes] = []
    while True:
        eol = data.find(b"\r\n", at)
        if eol < 0:
            return None
        size = int(data[at:eol].split(b";", 1)[0].strip() or b"0", 16)
        if size == 0:
            # (trailers, if any, then the empty line that ends the message)
            return b"".join(out) if data.find(b"\r\n\r\n", eol) >= 0 else None
        start = eol + 2
        if len(data) < start + size + 2:
            return None
        out.append(data[start : start + size])
        at = start + size + 2


class RawPool:
    """Keep-alive connections to one API server, for requests whose answers
    are read whole (no streaming)."""

    def __init__(self, server: str, ctx: ssl.SSLContext | None, timeout: float) -> None:
        url = urlsplit(server)
        self.host = url.hostname or "localhost"
        tls = url.scheme == "https"
        self.port = url.port or (443 if tls else 80)
        self.ssl: ssl.SSLContext | None = (ctx or ssl.create_default_context()) if tls else None
        self.base = url.path.rstrip("/")
        default = 443 if tls else 80
        host = f"[{self.host}]" if ":" in self.host else self.host
        self._host_line = (
            f"Host: {host}\r\n" if self.port == default else f"Host: {host}:{self.port}\r\n"
        ).encode("latin-1")
        self.timeout = timeout
        self._idle: list[_Conn] = []
        self._all: set[_Conn] = set()

    def forget(self, conn: _Conn) -> None:
        self._all.discard(conn)
        if conn in self._idle:
            self._idle.remove(conn)

    async def _conn(self) -> _Conn:
        idle = self._idle
        while idle:
            c = idle.pop()
            if not c.closed and c.transport is not None and not c.transport.is_closing():
                return c
        loop = asyncio.get_running_loop()
        _, proto = await loop.create_connection(
            lambda: _Conn(self),
            self.host,
            self.port,
            ssl=self.ssl,
            server_hostname=self.host if self.ssl is not None else None,
        )
        self._all.add(proto)
        return proto

    @staticmethod
    def query(params: dict[str, str]) -> str:
        return "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in params.items())

    async def request(
        self, method: str, path_query: str, headers: bytes, body: bytes
    ) -> tuple[int, bytes]:
        """(status, body) of one request; ``headers``: the extra header
        lines, each ending in CRLF. Raises ConnectionError when the
        connection fails, TimeoutError after the pool's timeout."""
        conn = await self._conn()
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[_Answer] = loop.create_future()
        conn.waiter = waiter
        assert conn.transport is not None
        conn.transport.write(
            b"".join(
                (
                    f"{method} {self.base}{path_query} HTTP/1.1\r\n".encode(),
                    self._host_line,
                    headers,
                    b"Content-Length: %d\r\n\r\n" % len(body),
                    body,
                )
            )
        )
        timer = loop.call_later(self.timeout, _expire, waiter)
        try:
            got = await waiter
        except BaseException:
            conn.abort()  # (what the connection carries next is unknown)
            raise
        finally:
            timer.cancel()
            conn.waiter = None
        if got.close or conn.closed:
            conn.transport.close()
        elif len(self._idle) < _MAX_IDLE:
            self._idle.append(conn)
        else:
            conn.transport.close()
        return got.status, got.body

    def close(self) -> None:
        for c in list(self._all):
            if c.transport is not None:
                c.transport.close()
        self._all.clear()
        self._idle.clear()


def _expire(waiter: asyncio.Future[_Answer]) -> None:
    if not waiter.done():
        waiter.set_exception(TimeoutError("no answer from the API server in time"))
