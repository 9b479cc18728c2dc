"""The kube store (the store protocol over a real API server) against
``kuota serve --without-kueue`` on 127.0.0.1: the protocol's reads, writes,
compare-and-set, subresources, finalizers and watches, and a watch and a
write that live through the API server's restart."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from store_testlib import JOB, WORKLOAD, job, workload
from tests.server.conftest import Served, start_server

from kuota.api.kueue.types import WorkloadStatus
from kuota.api.meta import Condition
from kuota.store import AlreadyExists, Conflict, NotFound, clone
from kuota.store.kube import KubeStore, load_kubeconfig
from kuota.store.resources import NAMESPACE

T = "2026-01-01T00:00:00Z"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    ns = tmp_path / "ns.yaml"
    ns.write_text("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n")
    s = start_server(tmp_path / "state", str(ns), "--without-kueue", home=tmp_path / "home")
    yield s
    s.stop()


@pytest.fixture
def store(served: Served) -> Iterator[KubeStore]:
    st = KubeStore(load_kubeconfig(str(served.kubeconfig)), retry_for=20)
    yield st
    st.close()


def _drain(w: Any, want: int, timeout: float = 10) -> list[Any]:
    out: list[Any] = []
    deadline = time.monotonic() + timeout
    while len(out) < want and time.monotonic() < deadline:
        out += w.poll()
        time.sleep(0.02)
    return out


def test_reads_and_writes_through_the_protocol(store: KubeStore) -> None:
    j = store.create(job("train"))
    assert j.metadata.uid and j.metadata.resource_version and j.metadata.generation == 1
    with pytest.raises(AlreadyExists):
        store.create(job("train"))
    assert store.get(JOB, "team-a", "train").metadata.uid == j.metadata.uid
    with pytest.raises(NotFound):
        store.get(JOB, "team-a", "nope")
    listed = store.list(JOB, "team-a", "app!=other")
    assert [o.metadata.name for o in listed.items] == ["train"] and listed.resource_version
    assert store.list(NAMESPACE).items  # cluster-scoped, every namespace


def test_compare_and_set_and_status_subresource(store: KubeStore) -> None:
    w = store.create(workload("w1"))
    newer = clone(w)
    newer.metadata.labels = {"app": "train", "v": "2"}
    stored = store.update(newer)
    assert stored.metadata.resource_version != w.metadata.resource_version
    stale = clone(w)
    stale.metadata.labels = {"v": "stale"}
    with pytest.raises(Conflict):
        store.update(stale)  # a stale resourceVersion never overwrites
    unconditional = clone(stale)
    unconditional.metadata.resource_version = ""
    assert store.update(unconditional).metadata.labels == {"v": "stale"}
    cond = Condition(
        type="PodsReady", status="False", reason="WaitForStart", message="m", last_transition_time=T
    )
    st = clone(store.get(WORKLOAD, "team-a", "w1"))
    st.status = WorkloadStatus(conditions=[cond])
    st.spec.queue_name = "ignored-by-status-write"
    written = store.update_status(st)
    assert written.status.conditions[0].type == "PodsReady"
    assert written.spec.queue_name == "main"  # a status write changes only the status
    patched = store.patch(WORKLOAD, "team-a", "w1", {"metadata": {"annotations": {"a": "b"}}})
    assert patched.metadata.annotations == {"a": "b"} and patched.status.conditions


def test_delete_with_and_without_finalizers(store: KubeStore) -> None:
    store.create(job("plain"))
    assert store.delete(JOB, "team-a", "plain") is None
    with pytest.raises(NotFound):
        store.get(JOB, "team-a", "plain")
    held = store.create(job("held", finalizers=["kuota.dev/test"]))
    left = store.delete(JOB, "team-a", "held")
    assert left is not None and left.metadata.deletion_timestamp is not None
    with pytest.raises(Conflict):
        store.delete(JOB, "team-a", "held", resource_version=held.metadata.resource_version)
    gone = clone(left)
    gone.metadata.finalizers = None
    store.update(gone)
    with pytest.raises(NotFound):
        store.get(JOB, "team-a", "held")


def test_watch_sees_writes_once_and_in_order(store: KubeStore) -> None:
    listed = store.list(WORKLOAD)
    w = store.watch(WORKLOAD, listed.resource_version)
    a = store.create(workload("a"))
    b = store.create(workload("b"))
    a2 = clone(a)
    a2.metadata.labels = {"x": "1"}
    a2 = store.update(a2)
    store.delete(WORKLOAD, "team-a", "b")
    evs = _drain(w, 4)
    time.sleep(0.3)
    evs += w.poll()  # the echoes of writes already handed out are dropped
    assert [(e.type, e.object.metadata.name) for e in evs] == [
        ("ADDED", "a"),
        ("ADDED", "b"),
        ("MODIFIED", "a"),
        ("DELETED", "b"),
    ]
    assert evs[2].resource_version == a2.metadata.resource_version
    assert b.metadata.uid == evs[1].object.metadata.uid
    w.close()


def test_a_conflict_hands_the_current_object_to_the_watch(store: KubeStore) -> None:
    j = store.create(workload("c"))
    w = store.watch(WORKLOAD, j.metadata.resource_version)
    other = clone(j)
    other.metadata.labels = {"by": "someone-else"}
    # Another client's write, straight to the API server (not through this store's watch).
    other_store = KubeStore(store.client.config, retry_for=5)  # type: ignore[arg-type]
    try:
        current = other_store.update(other)
    finally:
        other_store.close()
    mine = clone(j)
    mine.metadata.labels = {"by": "me"}
    with pytest.raises(Conflict):
        store.update(mine)
    evs = w.poll()  # at once: the re-read object is there, before the retry
    assert [e.object.metadata.resource_version for e in evs][-1:] == [
        current.metadata.resource_version
    ]
    w.close()


def test_watch_and_writes_survive_an_api_server_restart(tmp_path: Path) -> None:
    port = _free_port()
    state = tmp_path / "state"
    ns = tmp_path / "ns.yaml"
    ns.write_text("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n")
    s = start_server(state, str(ns), "--without-kueue", "--port", str(port), home=tmp_path / "home")
    back: list[Served] = []
    store = KubeStore(load_kubeconfig(str(s.kubeconfig)), retry_for=30)
    try:
        w = store.watch(WORKLOAD, store.list(WORKLOAD).resource_version)
        store.create(workload("before"))
        assert [e.object.metadata.name for e in _drain(w, 1)] == ["before"]
        s.stop()
        # The API server comes back on its kept state a second later; a write
        # made while it is away is retried until it answers.
        back: list[Served] = []
        timer = threading.Timer(
            1.0,
            lambda: back.append(
                start_server(state, "--without-kueue", "--port", str(port), home=tmp_path / "home")
            ),
        )
        timer.start()
        retries = store.retries
        store.create(workload("after"))
        timer.join()
        assert store.retries > retries
        names = [e.object.metadata.name for e in _drain(w, 1, timeout=20)]
        assert names == ["after"] and w.reconnects >= 1
    finally:
        store.close()
        s.stop()
        for b in back:
            b.stop()
