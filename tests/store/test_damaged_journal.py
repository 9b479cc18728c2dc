"""The damaged-journal suite: every damage a crash cannot cause is reported
with the file and the record, by the writer's open and by a reader's, and
the state is left as it was found. What cannot be detected is listed in
docs/state.md, and tested here as what it is (an earlier state, resumed)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from store_testlib import FakeClock, job, state_of

from kuota.store import JournalCorrupt, MemoryStore, open_readonly, open_store

SEG0, SEG1, SEG2, SEG3 = (f"segment-00000000000{i}" for i in range(4))
SNAP1 = "snapshot-000000000001"


def write_some(store: MemoryStore, prefix: str, n: int) -> None:
    for i in range(n):
        store.create(job(f"{prefix}-{i}"))


@pytest.fixture
def crashed(tmp_path: Path) -> Path:
    """A state as a crash leaves it: segment-0 with a head and 6 records."""
    state = tmp_path / "state"
    store = open_store(state, FakeClock())
    write_some(store, "a", 6)
    crashed = tmp_path / "crashed"
    shutil.copytree(state, crashed)
    store.close()
    return crashed


@pytest.fixture
def chained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A state of snapshot-1 and segments 1, 2, 3 (the later snapshots taken
    but removed), each segment with records: as valid as one segment."""
    state = tmp_path / "chained"
    kept = Path.unlink

    def keep_journal_files(self: Path, missing_ok: bool = False) -> None:
        if self.name.startswith(("segment-", "snapshot-")) and not self.name.endswith(".tmp"):
            return
        kept(self, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", keep_journal_files)
    store = open_store(state, FakeClock(), snapshot_every=4)
    write_some(store, "b", 14)  # snapshots after records 4, 8, 12: segments 1, 2, 3
    copy = tmp_path / "copy"
    shutil.copytree(state, copy)  # (a crash now: segment-3 holds the last records)
    store.close()
    monkeypatch.undo()
    for name in ("snapshot-000000000002", "snapshot-000000000003", SEG0):
        (copy / name).unlink()
    assert sorted(p.name for p in copy.iterdir() if "-0" in p.name) == [SEG1, SEG2, SEG3, SNAP1]
    return copy


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def rewrite(path: Path, change: Callable[[list[bytes]], list[bytes]]) -> None:
    path.write_bytes(b"".join(change(lines_of(path))))


def files_of(state: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in state.iterdir() if p.name != "OWNER"}


def expect_corrupt(state: Path, pattern: str) -> None:
    """Both opens refuse it, naming the file; neither changes a byte of it."""
    before = files_of(state)
    with pytest.raises(JournalCorrupt, match=pattern):
        open_readonly(state)
    with pytest.raises(JournalCorrupt, match=pattern):
        open_store(state, FakeClock())
    assert files_of(state) == before


def test_the_undamaged_states_read_back(crashed: Path, chained: Path) -> None:
    with open_readonly(crashed) as ro:
        assert len(ro._store.list(("batch", "v1", "jobs")).items) == 6
    with open_store(chained, FakeClock()) as store:
        assert sorted(o.metadata.name for o in store.list(("batch", "v1", "jobs")).items) == sorted(
            f"b-{i}" for i in range(14)
        )


# ------------------------------------------------------------------ inside a segment
def test_a_record_removed_mid_segment(crashed: Path) -> None:
    rewrite(crashed / SEG0, lambda ls: ls[:3] + ls[4:])  # the head, records 1, 2, then 4...
    expect_corrupt(crashed, rf"{SEG0}: line 4: holds record 4 after record 2: record 3 is missing")


def test_a_record_duplicated_mid_segment(crashed: Path) -> None:
    rewrite(crashed / SEG0, lambda ls: ls[:4] + ls[3:])
    expect_corrupt(crashed, rf"{SEG0}: line 5: holds record 3 again after record 3")


def test_two_records_swapped(crashed: Path) -> None:
    rewrite(crashed / SEG0, lambda ls: [*ls[:2], ls[3], ls[2], *ls[4:]])
    expect_corrupt(crashed, rf"{SEG0}: line 3: holds record 3 after record 1")


def test_a_record_of_another_state_spliced_in(crashed: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    with open_store(other, FakeClock(), snapshot_every=10**6) as store:
        write_some(store, "z", 3)
        stranger = lines_of(other / SEG0)[3]  # record 3 there: well framed, another chain
    rewrite(crashed / SEG0, lambda ls: [*ls[:3], stranger, *ls[4:]])
    expect_corrupt(crashed, rf"{SEG0}: record 3 \(line 4\): does not follow record 2")


def test_a_changed_byte_in_the_last_record(crashed: Path) -> None:
    """A complete line of the right length whose checksum fails is no crash's tail."""

    def flip(ls: list[bytes]) -> list[bytes]:
        last = bytearray(ls[-1])
        last[-10] ^= 0x01
        return [*ls[:-1], bytes(last)]

    rewrite(crashed / SEG0, flip)
    expect_corrupt(crashed, rf"{SEG0}: record 6 \(line 7\), byte \d+: damaged \(checksum wrong\)")


def test_a_changed_byte_mid_segment(crashed: Path) -> None:
    def flip(ls: list[bytes]) -> list[bytes]:
        rec = bytearray(ls[2])
        rec[-10] ^= 0x01
        return [*ls[:2], bytes(rec), *ls[3:]]

    rewrite(crashed / SEG0, flip)
    expect_corrupt(crashed, rf"{SEG0}: record 2 \(line 3\), byte \d+: damaged")


# ------------------------------------------------------------------ segments and snapshots
def test_a_middle_segment_deleted(chained: Path) -> None:
    (chained / SEG2).unlink()
    expect_corrupt(chained, rf"{SEG2} is missing between {SNAP1} and {SEG3}")


def test_a_middle_segment_cut_to_half(chained: Path) -> None:
    path = chained / SEG2
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    expect_corrupt(chained, rf"{SEG2}: record \d+ \(line \d\), byte \d+: damaged and later")


def test_a_middle_segment_cut_at_a_record(chained: Path) -> None:
    rewrite(chained / SEG2, lambda ls: ls[:-1])
    expect_corrupt(
        chained,
        rf"{SEG3}: continues from record 12, but {SEG2} ends at record 11: record 12 is missing",
    )


def test_a_middle_segment_emptied(chained: Path) -> None:
    (chained / SEG2).write_bytes(b"")
    expect_corrupt(chained, rf"{SEG2}: empty \(no head\), and later segments exist")


def test_segments_renamed(chained: Path) -> None:
    (chained / SEG2).rename(chained / "x")
    (chained / SEG3).rename(chained / SEG2)
    (chained / "x").rename(chained / SEG3)
    expect_corrupt(chained, rf"{SEG2}: line 1: the head names {SEG3}, not this file")


def test_the_snapshot_deleted_while_later_segments_remain(chained: Path) -> None:
    (chained / SNAP1).unlink()
    expect_corrupt(chained, rf"{SEG1}: continues from record 4, but the start of the state")


def test_the_only_snapshot_deleted_after_a_clean_close(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with open_store(state, FakeClock()) as store:
        write_some(store, "c", 3)  # closed: snapshot-1 and an empty segment-1 (its head)
    (state / SNAP1).unlink()
    expect_corrupt(state, rf"{SEG1}: continues from record 3, but the start of the state")


def test_the_snapshots_segment_deleted(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with open_store(state, FakeClock()) as store:
        write_some(store, "c", 3)
    (state / SEG1).unlink()
    expect_corrupt(state, rf"{SEG1} is missing after {SNAP1}")


def test_a_snapshot_line_removed_or_the_snapshot_cut(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with open_store(state, FakeClock()) as store:
        write_some(store, "c", 3)
    good = (state / SNAP1).read_bytes()
    rewrite(state / SNAP1, lambda ls: ls[:2] + ls[3:])
    expect_corrupt(state, rf"{SNAP1}: line 3: does not follow line 2")
    (state / SNAP1).write_bytes(good[: len(good) - 20])
    expect_corrupt(state, rf"{SNAP1}: line \d: damaged")
    (state / SNAP1).write_bytes(b"".join(good.splitlines(keepends=True)[:-1]))
    expect_corrupt(state, rf"{SNAP1}: the snapshot is incomplete")


# ------------------------------------------------------------------ undetectable
def test_the_last_segment_cut_resumes_the_records_before_the_cut(crashed: Path) -> None:
    """Undetectable (docs/state.md): a crash before those records were
    durable leaves the same bytes; they were never acknowledged then."""
    path = crashed / SEG0
    whole = lines_of(path)
    path.write_bytes(b"".join(whole[:4]) + whole[4][: len(whole[4]) // 2])
    with open_store(crashed, FakeClock()) as store:
        names = sorted(o.metadata.name for o in store.list(("batch", "v1", "jobs")).items)
        assert names == ["a-0", "a-1", "a-2"]
        before = state_of(store)
    with open_readonly(crashed) as ro:
        assert state_of(ro._store) == before
