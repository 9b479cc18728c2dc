"""The kube store's writes against an API server that frames its answers in
every way HTTP/1.1 allows: a chunked body, a Content-Length body with
``Connection: close``, an HTTP/1.0 answer with no length (ended by the
close), and keep-alive. Each write returns the server's object, and the
next write after a closed connection opens another one. (A stand-in API
server on 127.0.0.1: kuota serve answers one way only.)"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from store_testlib import workload

from kuota.store.kube import KubeStore, load_kubeconfig

_FRAMINGS = ["chunked", "close", "http10", "keepalive", "keepalive"]


def _answer(body: bytes, framing: str) -> bytes:
    if framing == "chunked":
        half = len(body) // 2
        chunks = b"".join(b"%x\r\n%b\r\n" % (len(p), p) for p in (body[:half], body[half:]))
        return (
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n"
        )
    if framing == "close":
        return (
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
            b"Content-Length: %d\r\n\r\n%b" % (len(body), body)
        )
    if framing == "http10":
        return b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + body
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%b" % (
        len(body),
        body,
    )


class _StandIn:
    """Answers each PUT with its body, resourceVersion bumped, framed as
    ``_FRAMINGS`` says in turn; counts the connections it accepted."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.answered = 0
        self.connections = 0
        self.lock = threading.Lock()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._conn, args=(conn,), daemon=True).start()

    def _conn(self, conn: socket.socket) -> None:
        buf = b""
        with conn:
            while True:
                while b"\r\n\r\n" not in buf:
                    got = conn.recv(65536)
                    if not got:
                        return
                    buf += got
                head, _, buf = buf.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                while len(buf) < length:
                    buf += conn.recv(65536)
                body, buf = buf[:length], buf[length:]
                obj: dict[str, Any] = json.loads(body)
                meta = obj["metadata"]
                meta["resourceVersion"] = str(int(meta["resourceVersion"]) + 1)
                with self.lock:
                    framing = _FRAMINGS[self.answered % len(_FRAMINGS)]
                    self.answered += 1
                conn.sendall(_answer(json.dumps(obj).encode(), framing))
                if framing in ("close", "http10"):
                    return

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def stand_in() -> Iterator[_StandIn]:
    s = _StandIn()
    yield s
    s.close()


def test_writes_read_every_framing_of_the_answer(stand_in: _StandIn, tmp_path: Path) -> None:
    kc = tmp_path / "kubeconfig"
    kc.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        f"clusters:\n- name: c\n  cluster: {{server: 'http://127.0.0.1:{stand_in.port}'}}\n"
        "users:\n- name: u\n  user: {token: t}\n"
        "contexts:\n- name: c\n  context: {cluster: c, user: u}\n"
    )
    store = KubeStore(load_kubeconfig(str(kc)), retry_for=5)
    try:
        w = workload("w1")
        w.metadata.resource_version = "10"
        for i in range(len(_FRAMINGS) + 1):
            w = store.update_status(w)
            assert w.metadata.resource_version == str(11 + i)
            assert w.metadata.name == "w1"
        # One write after each closed connection needed a new one.
        assert stand_in.answered == len(_FRAMINGS) + 1
        assert stand_in.connections == 3
    finally:
        store.close()
