"""The kill test over the API: clients create objects and watch them while
``kuota serve`` is killed with SIGKILL at random moments and restarted on the
same state directory. Every create that got a 2xx is there afterwards, none is
there twice, and each watch, reconnecting after every kill, resumes from the
last resourceVersion it saw or gets 410 Gone and lists again; between them
the watches see every acknowledged object, and a resumed watch never delivers
an object it had already seen as new."""

from __future__ import annotations

import http.client
import json
import os
import random
import signal
import ssl
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from tests.server.conftest import Served

PATH = "/api/v1/namespaces"
LABEL = "kill-test"
KILLS = 5


class Server:
    """The running server's address, as the test restarts it on new ports."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.netloc: str | None = None
        self.ctx: ssl.SSLContext | None = None

    def set(self, srv: Served | None) -> None:
        with self.lock:
            self.netloc = urlsplit(srv.url).netloc if srv is not None else None
            if srv is not None and self.ctx is None:
                pki = srv.state / "pki"
                ctx = ssl.create_default_context(cafile=str(pki / "ca.crt"))
                ctx.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
                self.ctx = ctx

    def connect(self, timeout: float) -> http.client.HTTPSConnection:
        with self.lock:
            netloc, ctx = self.netloc, self.ctx
        if netloc is None:
            raise ConnectionRefusedError("the server is down")
        host, port = netloc.rsplit(":", 1)
        return http.client.HTTPSConnection(host, int(port), context=ctx, timeout=timeout)


def _request(server: Server, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    conn = server.connect(timeout=10)
    try:
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()


@dataclass
class Writer:
    server: Server
    prefix: str
    acked: dict[str, str] = field(default_factory=dict)  # seq -> uid
    unknown: int = 0  # requests whose answer the kill took away

    def run(self, stop: threading.Event) -> None:
        seq = 0
        while not stop.is_set():
            seq += 1
            key = f"{self.prefix}-{seq}"
            ns = {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"generateName": "k-", "labels": {LABEL: key}},
            }
            try:
                code, obj = _request(self.server, "POST", PATH, ns)
            except ConnectionRefusedError:
                time.sleep(0.05)  # nothing was sent: the server is down
                continue
            except (OSError, http.client.HTTPException, ValueError):
                self.unknown += 1  # sent; maybe stored, never acknowledged
                continue
            assert code == 201, (code, obj)
            self.acked[key] = obj["metadata"]["uid"]


@dataclass
class Watcher:
    server: Server
    seen: dict[str, str] = field(default_factory=dict)  # uid -> seq label
    rv: str = ""
    from_list: bool = False  # rv is a list's, not the last event's
    resumed: int = 0  # reconnections from the last resourceVersion seen
    relisted: int = 0  # 410 Gone answered: listed again
    redelivered: list[str] = field(default_factory=list)

    def _list(self) -> None:
        code, got = _request(self.server, "GET", f"{PATH}?labelSelector={LABEL}")
        assert code == 200, got
        for item in got["items"]:
            self.seen[item["metadata"]["uid"]] = item["metadata"]["labels"][LABEL]
        self.rv = got["metadata"]["resourceVersion"]
        self.from_list = True

    def _stream(self) -> None:
        conn = self.server.connect(timeout=3)
        try:
            conn.request(
                "GET",
                f"{PATH}?watch=true&labelSelector={LABEL}&allowWatchBookmarks=true"
                f"&resourceVersion={self.rv}",
                headers={"Accept": "application/json"},
            )
            resp = conn.getresponse()
            if resp.status == 410:
                self.rv = ""
                return
            assert resp.status == 200, resp.read()
            self.resumed += not self.from_list
            self.from_list = False
            while True:
                line = resp.readline()
                if not line:
                    return
                event = json.loads(line)
                obj = event["object"]
                if event["type"] == "ERROR":
                    assert obj["code"] == 410, obj
                    self.rv = ""  # expired: list again
                    return
                if event["type"] == "ADDED":
                    uid = obj["metadata"]["uid"]
                    if uid in self.seen:
                        self.redelivered.append(uid)
                    self.seen[uid] = obj["metadata"]["labels"][LABEL]
                self.rv = obj["metadata"]["resourceVersion"]
        finally:
            conn.close()

    def run(self, stop: threading.Event) -> None:
        first = True
        while not stop.is_set():
            try:
                if not self.rv:
                    self._list()
                    self.relisted += not first
                    first = False
                self._stream()
            except (OSError, http.client.HTTPException, ValueError):
                time.sleep(0.05)


def test_sigkill_at_random_moments_loses_and_doubles_nothing(serve) -> None:  # type: ignore[no-untyped-def]
    seed = int.from_bytes(os.urandom(4), "big")
    rnd = random.Random(seed)
    server = Server()
    srv = serve()
    server.set(srv)
    stop, stop_watch = threading.Event(), threading.Event()
    writers = [Writer(server, f"w{i}") for i in range(2)]
    watchers = [Watcher(server) for _ in range(2)]
    threads = [threading.Thread(target=w.run, args=(stop,), daemon=True) for w in writers]
    threads += [threading.Thread(target=w.run, args=(stop_watch,), daemon=True) for w in watchers]
    for t in threads:
        t.start()
    kills = []
    try:
        for _ in range(KILLS):
            up = rnd.uniform(0.2, 2.0)
            time.sleep(up)
            kills.append(round(up, 2))
            srv.stop(signal.SIGKILL)
            server.set(None)
            srv = serve(state=srv.state)
            server.set(srv)
        time.sleep(1.0)  # writes against the last server too
    finally:
        stop.set()
        for t in threads[: len(writers)]:
            t.join(15)
    acked = {k: uid for w in writers for k, uid in w.acked.items()}
    where = f"seed {seed}, killed after {kills} s"

    # Every acknowledged write is there, none twice.
    code, listed = _request(server, "GET", f"{PATH}?labelSelector={LABEL}")
    assert code == 200
    stored: dict[str, list[str]] = {}
    for item in listed["items"]:
        stored.setdefault(item["metadata"]["labels"][LABEL], []).append(item["metadata"]["uid"])
    assert sorted(k for k, uids in stored.items() if len(uids) > 1) == [], where
    assert {k: uid for k, uid in acked.items() if stored.get(k) != [uid]} == {}, where
    assert len(acked) > 20, (len(acked), where)

    # Each watch saw every acknowledged object, resuming or listing again.
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(set(acked.values()) - set(w.seen) for w in watchers):
        time.sleep(0.2)
    stop_watch.set()
    kept = {uid for uids in stored.values() for uid in uids}
    for w in watchers:
        # A watch only ever shows what is durable: nothing it saw was lost.
        assert sorted(set(w.seen) - kept) == [], where
        assert sorted(set(acked.values()) - set(w.seen)) == [], where
        assert w.resumed + w.relisted >= KILLS, (w.resumed, w.relisted, where)
        assert w.redelivered == [], where
    print(
        f"{where}: {len(acked)} acknowledged creates, "
        f"{sum(w.unknown for w in writers)} unanswered; watches resumed "
        f"{[w.resumed for w in watchers]} times, listed again {[w.relisted for w in watchers]}"
    )
