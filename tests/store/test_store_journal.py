"""The durable journal: reopening reproduces the store exactly."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import msgspec
import pytest
from store_testlib import (
    JOB,
    WORKLOAD,
    FakeClock,
    cluster_queue,
    job,
    state_of,
    uid_seq,
    workload,
)

from kuota.api.meta import ObjectMeta
from kuota.store import (
    Journal,
    JournalCorrupt,
    JournalError,
    JournalLocked,
    MemoryStore,
    clone,
    open_store,
    register_kind,
)
from kuota.store import kinds as store_kinds


def exercise(store: MemoryStore, n: int = 30) -> None:
    """A mix of every kind of write."""
    for i in range(n):
        owner = store.create(
            job(f"j{i}", labels={"i": str(i)}, finalizers=["kuota.dev/f"] * (i % 4 == 0))
        )
        store.create(workload(f"w{i}", owners=[owner]))
        if i % 3 == 0:
            changed = clone(owner)
            changed.spec.parallelism = 2
            store.update(changed)
        if i % 3 == 1:
            store.patch(JOB, "team-a", f"j{i}", {"status": {"active": i}}, status=True)
        if i % 5 == 2 and i % 4:
            store.delete(JOB, "team-a", f"j{i}")  # gone, with its workload
        if i % 4 == 0:
            store.delete(JOB, "team-a", f"j{i}")  # deleting: it has a finalizer
        if i % 8 == 0:
            store.patch(JOB, "team-a", f"j{i}", {"metadata": {"finalizers": None}})
        store.set_meta("step", i)
    store.create(job("", generate_name="gen-"))
    store.create(cluster_queue("cq", api_version="v1beta1"))
    store.set_meta("clock", {"now": "2026-01-01T00:00:00Z"})


def files(path: Path) -> list[str]:
    return sorted(p.name for p in path.iterdir())


def test_reopen_gives_identical_state(tmp_path: Path) -> None:
    state = tmp_path / "state"
    store = open_store(state, FakeClock())
    exercise(store)
    plain = MemoryStore(FakeClock())
    exercise(plain)
    before = state_of(store)
    assert before == state_of(plain)  # deterministic: the journal changes nothing
    store.close()
    again = open_store(state, FakeClock())
    assert state_of(again) == before
    # The uid counter survived: the next uid is the one the plain store hands out.
    assert again.create(job("next")).metadata.uid == plain.create(job("next")).metadata.uid
    again.close()


def test_reopen_without_close_replays_segments(tmp_path: Path) -> None:
    state = tmp_path / "state"
    store = open_store(state, FakeClock())
    exercise(store, 10)
    before = state_of(store)
    crashed = tmp_path / "crashed"
    shutil.copytree(state, crashed)  # what the disk holds if the process died now
    store.close()
    assert files(crashed) == ["KUOTA-STATE", "OWNER", "segment-000000000000"]
    with open_store(crashed, FakeClock()) as again:
        assert state_of(again) == before


def test_snapshots_and_segments(tmp_path: Path) -> None:
    state = tmp_path / "state"
    store = open_store(state, FakeClock(), snapshot_every=7)
    plain_clock = FakeClock()
    plain = MemoryStore(plain_clock)
    for s in (store, plain):
        exercise(s, 20)
    assert files(state)[:2] == ["KUOTA-STATE", "OWNER"]
    snaps = [f for f in files(state) if f.startswith("snapshot-")]
    segs = [f for f in files(state) if f.startswith("segment-")]
    assert len(snaps) == 1 and len(segs) == 1  # older files are gone
    assert snaps[0].split("-")[1] == segs[0].split("-")[1]
    assert int(segs[0].split("-")[1]) > 5
    crashed = tmp_path / "crashed"
    shutil.copytree(state, crashed)
    store.close()
    with open_store(crashed, FakeClock(plain_clock.now), snapshot_every=7) as again:
        assert state_of(again) == state_of(plain)
        again.create(job("after"))
        plain.create(job("after"))
    with open_store(crashed, FakeClock()) as again:
        assert state_of(again) == state_of(plain)


def test_leftovers_of_an_interrupted_snapshot_are_ignored(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with open_store(state, FakeClock()) as store:
        exercise(store, 5)
        before = state_of(store)
    (state / "snapshot-000000000009.tmp").write_bytes(b"half a snap")
    (state / "segment-000000000000").write_bytes(b"an old segment, already covered\n")
    with open_store(state, FakeClock()) as again:
        assert state_of(again) == before
    assert not any(f.endswith(".tmp") or f == "segment-000000000000" for f in files(state))


def test_torn_last_record_is_ignored(tmp_path: Path) -> None:
    state = tmp_path / "state"
    store = open_store(state, FakeClock())
    store.create(job("a"))
    before = state_of(store)
    store.create(job("b"))
    crashed = tmp_path / "crashed"
    shutil.copytree(state, crashed)
    store.close()
    segment = crashed / "segment-000000000000"
    size = segment.stat().st_size
    lines = segment.read_bytes().splitlines(keepends=True)
    os.truncate(segment, size - len(lines[-1]) // 2)  # the second record, cut in half
    with open_store(crashed, FakeClock()) as again:
        assert state_of(again) == before
        assert segment.stat().st_size == len(lines[0]) + len(lines[1])  # (head, first record)
        again.create(job("c"))
        after = state_of(again)
    with open_store(crashed, FakeClock()) as again:
        assert state_of(again) == after


@pytest.mark.parametrize(
    "garbage", [b"0000 12 {}\n", b"\x00" * 100, b'ffffffff 5 {"op\n', b"deadbeef 99 {}"]
)
def test_damaged_tail_variants(tmp_path: Path, garbage: bytes) -> None:
    state = tmp_path / "state"
    store = open_store(state, FakeClock())
    store.create(job("a"))
    before = state_of(store)
    crashed = tmp_path / "crashed"
    shutil.copytree(state, crashed)
    store.close()
    with (crashed / "segment-000000000000").open("ab") as f:
        f.write(garbage)
    with open_store(crashed, FakeClock()) as again:
        assert state_of(again) == before


def test_damage_before_valid_records_is_corruption(tmp_path: Path) -> None:
    state = tmp_path / "state"
    store = open_store(state, FakeClock())
    for name in "abc":
        store.create(job(name))
    crashed = tmp_path / "crashed"
    shutil.copytree(state, crashed)
    store.close()
    segment = crashed / "segment-000000000000"
    data = bytearray(segment.read_bytes())
    data[30] ^= 0x01  # a bit flip inside the first record
    segment.write_bytes(bytes(data))
    with pytest.raises(JournalCorrupt, match="segment-000000000000"):
        open_store(crashed, FakeClock())


def test_lock_file(tmp_path: Path) -> None:
    state = tmp_path / "state"
    store = open_store(state, FakeClock())
    with pytest.raises(JournalLocked, match=f"in use: a kuota process \\(pid {os.getpid()}"):
        open_store(state, FakeClock())
    store.close()
    open_store(state, FakeClock()).close()


def test_unregistered_kind_names_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class Gadget(msgspec.Struct, rename="camel", kw_only=True):
        api_version: str = "example.com/v1"
        kind: str = "Gadget"
        metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
        size: int = 0

    gadgets = ("example.com", "v1", "gadgets")
    monkeypatch.setitem(store_kinds._KINDS, gadgets, None)  # restored after
    monkeypatch.setitem(store_kinds._BY_KIND, ("example.com", "Gadget"), None)
    register_kind(gadgets, Gadget, namespaced=False, kind="Gadget")
    state = tmp_path / "state"
    with open_store(state, FakeClock()) as store:
        store.create(Gadget(metadata=ObjectMeta(name="g"), size=3))
        assert store.get(gadgets, "", "g").size == 3
    monkeypatch.delitem(store_kinds._KINDS, gadgets)
    monkeypatch.delitem(store_kinds._BY_KIND, ("example.com", "Gadget"))
    with pytest.raises(JournalError, match=r"snapshot-000000000001.*Gadget.*not register"):
        open_store(state, FakeClock())
    # The failed open released the directory.
    Journal(state).close()


def test_group_commit(tmp_path: Path) -> None:
    state = tmp_path / "state"
    store = open_store(state, FakeClock())
    segment = state / "segment-000000000000"
    store.create(job("a"))
    durable = segment.stat().st_size
    assert durable > 0  # written before create returned
    with store.batch():
        store.create(job("b"))
        with store.batch():
            store.create(workload("w"))
        assert segment.stat().st_size == durable  # nothing written inside the batch
    assert segment.stat().st_size > durable
    store.close()
    with open_store(state, FakeClock()) as again:
        assert [o.metadata.name for o in again.list(JOB).items] == ["a", "b"]
        assert again.get(WORKLOAD, "team-a", "w")


def test_history_after_reopen_starts_at_the_recovered_rv(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with open_store(state, FakeClock()) as store:
        exercise(store, 3)
        rv = store.resource_version
    with open_store(state, FakeClock()) as again:
        assert again.watch(None, rv).poll() == []
        again.create(job("new"))
        assert [e.resource_version for e in again.watch(None, rv).poll()] == [str(rv + 1)]
        with pytest.raises(Exception, match="too old"):
            again.watch(None, rv - 1)
        assert uid_seq(again.get(JOB, "team-a", "new").metadata.uid) > 0


def test_closed_store_refuses_writes(tmp_path: Path) -> None:
    store = open_store(tmp_path / "state", FakeClock())
    store.close()
    store.close()  # idempotent
    with pytest.raises(Exception, match="closed"):
        store.create(job("a"))
