"""A write the disk refuses (full, quota, file too large, read-only): an error
naming the state and the cause, nothing of it acknowledged, the state on
disk what was acknowledged, and resumed from there once writes work again.
The failure is injected at the store's boundary with the disk (``os.write``
on the state's files); tests/cli/test_state_cli.py makes the disk refuse for
real (RLIMIT_FSIZE) under ``kuota run``."""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from store_testlib import JOB, FakeClock, job, state_of

from kuota.store import JournalWriteError, StoreError, open_readonly, open_store

REAL_WRITE = os.write


class Disk:
    """Refuses writes to the state's files named ``prefix``* once armed,
    after letting ``partial`` bytes of the first refused one through."""

    def __init__(self, state: Path) -> None:
        self.state = state
        self.error: int | None = None
        self.prefix = "segment-"
        self.partial = 0

    def write(self, fd: int, data: bytes) -> int:
        if self.error is not None:
            target = Path(os.readlink(f"/proc/self/fd/{fd}"))
            if target.parent == self.state and target.name.startswith(self.prefix):
                if self.partial:
                    n, self.partial = REAL_WRITE(fd, bytes(data)[: self.partial]), 0
                    return n
                raise OSError(self.error, os.strerror(self.error))
        return REAL_WRITE(fd, data)


@pytest.fixture
def disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Disk]:
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("needs /proc to tell the state's files from others")
    d = Disk(tmp_path / "state")
    monkeypatch.setattr(os, "write", d.write)
    yield d


CAUSES = [
    (errno.ENOSPC, r"No space left on device \(ENOSPC\): the disk is full"),
    (errno.EDQUOT, r"\(EDQUOT\): the disk quota is exceeded"),
    (errno.EFBIG, r"File too large \(EFBIG\): a file would exceed the size limit"),
    (errno.EROFS, r"Read-only file system \(EROFS\): the filesystem is read-only"),
]


@pytest.mark.parametrize(("code", "cause"), CAUSES)
def test_a_refused_write_is_named_not_acknowledged_and_resumed(
    disk: Disk, code: int, cause: str
) -> None:
    store = open_store(disk.state, FakeClock())
    store.create(job("a"))
    store.create(job("b"))
    acknowledged = state_of(store)
    segment = disk.state / "segment-000000000000"
    size = segment.stat().st_size
    disk.error, disk.partial = code, 100  # a batch half written, then refused
    with pytest.raises(JournalWriteError) as err, store.batch():
        store.create(job("c"))
        store.create(job("d"))
    text = str(err.value)
    assert text.startswith(f"the state {disk.state}: cannot write segment-000000000000: ")
    assert re.search(cause, text), text
    assert "\n" not in text and err.value.__cause__ is None
    assert segment.stat().st_size == size  # the half-written batch was taken back
    with pytest.raises(StoreError, match="stopped after a journal write failed"):
        store.create(job("e"))  # memory is ahead of the disk: no more writes
    store.close()  # releases the state; writes nothing
    with open_readonly(disk.state) as ro:  # reads need no write
        assert state_of(ro._store) == acknowledged
    disk.error = None  # space returns
    with open_store(disk.state, FakeClock()) as again:
        assert state_of(again) == acknowledged
        again.create(job("f"))
        after = state_of(again)
    with open_store(disk.state, FakeClock()) as again:
        assert state_of(again) == after
        assert [o.metadata.name for o in again.list(JOB).items] == ["a", "b", "f"]


def test_a_refused_snapshot_leaves_the_state_and_no_temporary(disk: Disk) -> None:
    store = open_store(disk.state, FakeClock(), snapshot_every=3)
    store.create(job("a"))
    store.create(job("b"))
    disk.error, disk.prefix = errno.ENOSPC, "snapshot-"
    with pytest.raises(JournalWriteError, match=r"cannot write snapshot-000000000001: No space"):
        store.create(job("c"))  # durable, then the snapshot it makes due fails
    assert not [p for p in disk.state.iterdir() if p.name.endswith(".tmp")]
    store.close()
    disk.error = None
    with open_store(disk.state, FakeClock()) as again:
        assert [o.metadata.name for o in again.list(JOB).items] == ["a", "b", "c"]


def test_a_refused_first_write_of_a_new_state(disk: Disk) -> None:
    disk.error = errno.ENOSPC
    with pytest.raises(JournalWriteError, match="cannot write segment-000000000000: No space"):
        open_store(disk.state, FakeClock())
    disk.error = None
    with open_store(disk.state, FakeClock()) as store:  # the half-made state is taken up
        store.create(job("a"))
    with open_readonly(disk.state) as ro:
        assert [o.metadata.name for o in ro.list(JOB).items] == ["a"]
