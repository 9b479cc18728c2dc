"""The state directory is kuota's: marked when made, refused when it is not,
written by one process at a time (an OS lock on the directory), and never
touched beyond the files kuota wrote."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from store_testlib import JOB, FakeClock, job, state_of

from kuota.store import JournalError, JournalLocked, open_readonly, open_store


def snapshot_of_dir(path: Path) -> dict[str, tuple[bytes, int]]:
    """Every file's bytes and mtime: what "untouched" means."""
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(path.iterdir())}


@pytest.fixture
def foreign(tmp_path: Path) -> Path:
    """A user's directory: some files, some of them named like temporaries."""
    d = tmp_path / "mine"
    d.mkdir()
    (d / "notes.txt").write_text("mine\n")
    (d / "draft.tmp").write_text("an editor's temporary file\n")
    (d / "snapshot-000000000001.tmp").write_text("named like kuota's, but not in a state\n")
    return d


@pytest.mark.parametrize("exists", [False, True])
def test_a_new_or_empty_directory_is_marked_with_the_format(tmp_path: Path, exists: bool) -> None:
    state = tmp_path / "state"
    if exists:
        state.mkdir()
    with open_store(state, FakeClock()) as store:
        store.create(job("a"))
    assert (state / "KUOTA-STATE").read_text() == "kuota state directory\nformat 2\n"
    with open_store(state, FakeClock()) as again:  # a marked state reopens
        assert [o.metadata.name for o in again.list(JOB).items] == ["a"]


def test_a_directory_with_other_files_is_refused_and_left_untouched(foreign: Path) -> None:
    before = snapshot_of_dir(foreign)
    with pytest.raises(JournalError, match=rf"{foreign}: not a kuota state directory") as err:
        open_store(foreign, FakeClock())
    assert "draft.tmp" in str(err.value)  # the files it would not touch, named
    with pytest.raises(JournalError, match="not a kuota state directory"):
        open_readonly(foreign)
    assert snapshot_of_dir(foreign) == before  # no mark, no lock file, no segment, no unlink


def test_only_kuotas_own_temporary_files_are_removed(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with open_store(state, FakeClock()) as store:
        store.create(job("a"))
    (state / "snapshot-000000000007.tmp").write_bytes(b"a snapshot never renamed into place")
    (state / "notes.tmp").write_text("a user's file in the state directory")
    (state / "notes.txt").write_text("another")
    with open_store(state, FakeClock()) as again:
        assert [o.metadata.name for o in again.list(JOB).items] == ["a"]
    names = {p.name for p in state.iterdir()}
    assert "snapshot-000000000007.tmp" not in names
    assert {"notes.tmp", "notes.txt"} <= names
    assert (state / "notes.tmp").read_text() == "a user's file in the state directory"


def test_an_empty_path_is_no_state_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "keep.tmp").write_text("x")
    with pytest.raises(JournalError, match="empty state path"):
        open_store("", FakeClock())
    with pytest.raises(JournalError, match="empty state path"):
        open_readonly("")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.tmp"]


def test_reading_a_state_changes_nothing_and_needs_the_mark(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with open_store(state, FakeClock()) as store:
        store.create(job("a"))
        store.create(job("b"))
    before = snapshot_of_dir(state)
    with open_readonly(state) as ro:
        assert len(ro.list(JOB).items) == 2
    assert snapshot_of_dir(state) == before
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(JournalError, match=f"{empty}: holds no kuota state"):
        open_readonly(empty)
    assert list(empty.iterdir()) == []
    (state / "KUOTA-STATE").unlink()  # a state whose mark was removed is not read as one
    with pytest.raises(JournalError, match=f"{state}: holds kuota's journal files but no"):
        open_readonly(state)


def test_a_state_of_the_older_format_or_another_mark_is_a_clear_error(tmp_path: Path) -> None:
    old = tmp_path / "old"
    old.mkdir()
    for name in ("LOCK", "snapshot-000000000001", "segment-000000000001"):
        (old / name).write_bytes(b"")
    before = snapshot_of_dir(old)
    for opener in (lambda: open_store(old, FakeClock()), lambda: open_readonly(old)):
        with pytest.raises(JournalError, match=f"{old}: a kuota state of journal format 1"):
            opener()
    assert snapshot_of_dir(old) == before
    newer = tmp_path / "newer"
    newer.mkdir()
    (newer / "KUOTA-STATE").write_text("kuota state directory\nformat 3\n")
    with pytest.raises(JournalError, match=r"KUOTA-STATE: a state of journal format 3 \(a newer"):
        open_store(newer, FakeClock())
    (newer / "KUOTA-STATE").write_text("something else\n")
    with pytest.raises(JournalError, match="KUOTA-STATE: not a kuota state mark"):
        open_readonly(newer)


# ------------------------------------------------------------------ one writer
def test_the_lock_holds_when_the_state_files_are_removed(tmp_path: Path) -> None:
    state = tmp_path / "state"
    writer = open_store(state, FakeClock())
    writer.create(job("a"))
    for name in ("OWNER", "LOCK"):  # what a file-presence lock would rest on
        (state / name).unlink(missing_ok=True)
    with pytest.raises(JournalLocked, match="in use: another kuota process holds it"):
        open_store(state, FakeClock())
    with pytest.raises(JournalLocked):
        open_store(state, FakeClock())  # the refused open left the lock in place
    writer.create(job("b"))
    writer.close()
    with open_store(state, FakeClock()) as again:
        assert [o.metadata.name for o in again.list(JOB).items] == ["a", "b"]


def test_the_locked_message_names_the_pid_and_how_to_act(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with open_store(state, FakeClock()), pytest.raises(JournalLocked) as err:
        open_store(state, FakeClock())
    text = str(err.value)
    assert f"the state {state} is in use" in text
    assert f"pid {os.getpid()}" in text
    assert "wait for it to finish" in text and f"kill {os.getpid()}" in text
    assert "\n" not in text


@pytest.mark.interpreted
def test_a_snapshot_never_replaces_a_newer_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the lock (a filesystem that ignores flock): the second writer's
    older snapshot is refused, the first one's result stays."""
    import kuota.store.state_dir as state_dir

    state = tmp_path / "state"
    with open_store(state, FakeClock()) as store:
        store.create(job("a"))
    monkeypatch.setattr(state_dir.fcntl, "flock", lambda fd, op: None)
    run = open_store(state, FakeClock())
    cordon = open_store(state, FakeClock())  # opened while the run is live
    for i in range(5):
        run.create(job(f"run-{i}"))
    run.close()  # snapshot-000000000002: the run's whole result
    result = state_of(open_readonly(state)._store)
    cordon.create(job("cordon"))
    with pytest.raises(JournalError, match="snapshot-000000000002: a snapshot as new as"):
        cordon.close()
    monkeypatch.undo()
    with open_store(state, FakeClock()) as again:
        objects, _, _ = state_of(again)
        assert {k[2] for k in objects} >= {f"run-{i}" for i in range(5)}
        assert objects.items() >= result[0].items()
