"""The durable journal behind the memory store: a write-ahead log plus snapshots.

Layout of a state directory (docs/state.md)::

    KUOTA-STATE            the mark: a kuota state, journal format 2
    OWNER                  pid and command of the writer (the lock is a flock on the directory)
    snapshot-000000000007  every object, rv, uid counter and meta before segment 7
    segment-000000000007   records written since that snapshot

The records and their chain are ``journal_format.py``'s, reading them back
``journal_replay.py``'s, the mark and the lock ``state_dir.py``'s. Nothing is
acknowledged before it is fsynced, so a torn tail of the last segment holds
only unacknowledged writes: the writer cuts it on recovery. A write that fails
(disk full, file too large) is taken back to the last acknowledged record
before the error is raised, so the state on disk stays what was acknowledged.

A snapshot is written to a temporary file, fsynced, renamed into place (never
over a newer one) and the directory fsynced; only then does the next segment
start and the older files go. A crash at any point leaves either the old
snapshot with its segments or the new one.
"""

from __future__ import annotations

import contextlib
import os
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kuota.store.journal_errors import (
    JournalCorrupt,
    JournalError,
    JournalLocked,
    JournalWriteError,
    write_failed,
)
from kuota.store.journal_format import (
    ENCODER,
    NULL,
    SNAPSHOT,
    TEMPORARY,
    Record,
    encode_value,
    frame,
    segment_name,
    snapshot_name,
)
from kuota.store.journal_replay import Position, Recovered, replay
from kuota.store.protocol import ResourceType
from kuota.store.state_dir import claim, fsync_dir

__all__ = [
    "Journal",
    "JournalCorrupt",
    "JournalError",
    "JournalLocked",
    "JournalWriteError",
    "Recovered",
]

# fdatasync is enough for appends (the size change is synced); macOS has only fsync.
_datasync = getattr(os, "fdatasync", os.fsync)


def _write_all(fd: int, data: bytes | bytearray) -> None:
    # No memoryview: one kept alive by a failed write's traceback would pin
    # the buffer (a bytearray with an export cannot be cleared).
    done = os.write(fd, data)
    while done < len(data):
        done += os.write(fd, data[done:])


class Journal:
    def __init__(self, directory: str | Path, snapshot_every: int = 50_000) -> None:
        """Open ``directory`` for writing (made and marked if new or empty),
        holding it against every other writer until ``close``."""
        if not str(directory):  # (Path("") would be the working directory)
            raise JournalError("an empty state path: give a directory (or no --state for none)")
        self.directory = Path(directory)
        self.snapshot_every = snapshot_every
        self._lock_fd: int | None = claim(self.directory)
        self._buffer = bytearray()
        self._fd: int | None = None
        self._segment = 0
        # The chain after the last buffered record (two ints, not a Position:
        # this is per write), and after the last durable one.
        self._number = 0
        self._crc = 0
        self._acked = Position()
        self._acked_size = 0  # the segment's size then
        self._since_snapshot = 0  # records in the segments after the snapshot
        self._recovered = False
        # The store revision of the last record buffered, of the last one
        # detached for a write_out in flight, and of the last durable one:
        # what readers may be shown (durable_revision).
        self._last_rv = 0
        self._detached_rv = 0
        self._durable_rv = 0
        self._in_flight = False

    def _failed(self, what: str, err: OSError) -> JournalWriteError:
        return write_failed(self.directory, what, err)

    # ------------------------------------------------------------ opening
    def recover(self) -> Recovered:
        """Read the latest snapshot and the segments after it; cut a torn
        tail, remove what the snapshot covers, open the last segment for
        appending. Call once, before any write."""
        if self._recovered:
            raise JournalError("recover() was already called")
        self._recovered = True
        found = replay(self.directory)
        state = found.state
        self._since_snapshot = state.records
        self._segment = found.segment
        self._number, self._crc = found.at.number, found.at.crc
        self._acked = found.at
        self._last_rv = self._detached_rv = self._durable_rv = state.rv
        try:
            # The segment first: a crash before the older files go must find
            # the snapshot's segment (without either, the state reads as damaged).
            self._open_segment(found.segment_end)
            for name in os.listdir(self.directory):
                if TEMPORARY.match(name) and name.startswith("snapshot-"):
                    (self.directory / name).unlink()  # a snapshot never renamed into place
            for name in found.older:
                (self.directory / name).unlink(missing_ok=True)
        except OSError as err:
            raise self._failed(segment_name(self._segment), err) from None
        return state

    def _open_segment(self, intact: int) -> None:
        """Append to the current segment after its ``intact`` bytes; a segment
        without them (new, or its head torn) gets its head first."""
        path = self.directory / segment_name(self._segment)
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        if os.fstat(self._fd).st_size > intact:
            os.ftruncate(self._fd, intact)  # a torn tail: never acknowledged
            os.fsync(self._fd)
        if intact == 0:
            rec = Record("head", self._number, self._crc, seg=self._segment)
            line, crc = frame(ENCODER.encode(rec))
            _write_all(self._fd, line)
            _datasync(self._fd)
            self._crc = crc
            self._acked = Position(self._number, crc)
            intact = len(line)
        self._acked_size = intact
        fsync_dir(self.directory)

    # ------------------------------------------------------------ writing
    def put(self, rtype: ResourceType, rv: int, seq: int, obj: Any) -> None:
        self._last_rv = rv
        n = self._number + 1
        o = encode_value(obj)
        self._append(n, Record("put", n, self._crc, rv, seq, rtype[0], obj.kind, o=o))

    def delete(
        self, rtype: ResourceType, kind: str, rv: int, seq: int, namespace: str, name: str
    ) -> None:
        self._last_rv = rv
        n = self._number + 1
        self._append(n, Record("delete", n, self._crc, rv, seq, rtype[0], kind, namespace, name))

    def meta(self, key: str, value: Any, rv: int, seq: int) -> None:
        raw = NULL if value is None else encode_value(value)
        self._last_rv = max(self._last_rv, rv)
        n = self._number + 1
        self._append(n, Record("meta", n, self._crc, rv, seq, key=key, o=raw))

    def _append(self, number: int, rec: Record) -> None:
        """Buffer record ``number`` (it names the checksum before it: the chain)."""
        if self._fd is None:
            raise JournalError("the journal is closed (or recover() was not called)")
        payload = ENCODER.encode(rec)
        crc = zlib.crc32(payload)
        self._buffer += b"%08x %d %b\n" % (crc, len(payload), payload)
        self._number = number
        self._crc = crc
        self._since_snapshot += 1

    @property
    def pending(self) -> bool:
        return bool(self._buffer)

    def durable_revision(self, current: int) -> int:
        """The newest store revision whose records are all durable, given the
        store's ``current`` one: ``current`` when nothing is buffered or in
        flight (a revision with no record, such as an Event's, is durable
        as soon as everything before it is)."""
        if not self._buffer and not self._in_flight:
            return current
        return self._durable_rv

    def flush(self) -> None:
        """Write the buffered records and fsync: they are durable on return.
        On failure they are taken back (the segment cut to what was durable)
        and a JournalWriteError names the state and the cause."""
        if not self._buffer or self._fd is None:
            return
        data, mark = self.detach()
        try:
            self.write_out(data)
        except OSError as err:
            raise self.lost(err) from None
        self.acknowledge(data, mark)

    # A flush in three steps, so that the slow middle one (write and fsync)
    # can run on another thread while the caller's thread keeps buffering
    # records (the API server's pipelined group commit). At most one
    # write_out at a time, and no flush while one runs.
    def detach(self) -> tuple[bytes, Position]:
        """Take the buffered records (and the chain position after them)."""
        data = bytes(self._buffer)
        self._buffer.clear()
        self._detached_rv = self._last_rv
        self._in_flight = True
        return data, Position(self._number, self._crc)

    def write_out(self, data: bytes) -> None:
        """Append ``data`` and fsync it; touches only the file (thread-safe
        against ``_append``). Raises OSError."""
        if self._fd is None:
            raise OSError("the journal is closed")
        if data:
            _write_all(self._fd, data)
            _datasync(self._fd)

    def acknowledge(self, data: bytes, mark: Position) -> None:
        """``data`` (detached at ``mark``) is durable."""
        self._acked_size += len(data)
        self._acked = mark
        self._durable_rv = self._detached_rv
        self._in_flight = False

    def lost(self, err: OSError) -> JournalWriteError:
        """A write_out failed: take back every record not acknowledged (the
        detached ones and any buffered since) and name the failure."""
        self._take_back()
        return self._failed(segment_name(self._segment), err)

    def _take_back(self) -> None:
        """Forget the records not acknowledged; cut what of them reached the
        file (best effort: if even that fails, they are a torn or an
        unacknowledged tail that recovery handles)."""
        self._buffer.clear()
        self._in_flight = False
        self._last_rv = self._durable_rv
        self._since_snapshot -= self._number - self._acked.number
        self._number, self._crc = self._acked.number, self._acked.crc
        if self._fd is not None:
            try:
                os.ftruncate(self._fd, self._acked_size)
                os.fsync(self._fd)
            except OSError:
                pass

    @property
    def snapshot_due(self) -> bool:
        return self._since_snapshot >= self.snapshot_every

    @property
    def records_since_snapshot(self) -> int:
        return self._since_snapshot

    def snapshot(
        self,
        rv: int,
        seq: int,
        meta: dict[str, Any],
        objects: Iterable[tuple[ResourceType, Any]],
    ) -> None:
        """Write every object; then start the next segment and drop the older files."""
        self.flush()
        number = self._segment + 1
        path = self.directory / snapshot_name(number)
        tmp = path.with_name(path.name + ".tmp")
        try:
            try:
                self._write_snapshot(tmp, number, rv, seq, meta, objects)
                self._refuse_newer(number)
                os.rename(tmp, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    tmp.unlink(missing_ok=True)
                raise
            fsync_dir(self.directory)
        except OSError as err:
            raise self._failed(path.name, err) from None
        old = self._segment
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self._segment = number
        try:
            self._open_segment(0)
            for n in range(old, number):
                (self.directory / segment_name(n)).unlink(missing_ok=True)
                (self.directory / snapshot_name(n)).unlink(missing_ok=True)
        except OSError as err:
            raise self._failed(segment_name(number), err) from None
        self._since_snapshot = 0

    def _write_snapshot(
        self,
        tmp: Path,
        number: int,
        rv: int,
        seq: int,
        meta: dict[str, Any],
        objects: Iterable[tuple[ResourceType, Any]],
    ) -> None:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            head = Record("head", self._number, self._crc, rv, seq, seg=number)
            line, prev = frame(ENCODER.encode(head))
            buf = bytearray(line)
            count = 0
            for rtype, obj in objects:
                rec = Record("put", 0, prev, g=rtype[0], k=obj.kind, o=encode_value(obj))
                line, prev = frame(ENCODER.encode(rec))
                buf += line
                count += 1
                if len(buf) > 1 << 20:
                    _write_all(fd, buf)
                    buf.clear()
            for key, value in meta.items():
                line, prev = frame(
                    ENCODER.encode(Record("meta", 0, prev, key=key, o=encode_value(value)))
                )
                buf += line
            buf += frame(ENCODER.encode(Record("end", 0, prev, count=count)))[0]
            _write_all(fd, buf)
            os.fsync(fd)
        finally:
            os.close(fd)

    def _refuse_newer(self, number: int) -> None:
        """A snapshot never replaces a newer one: only a second writer could
        have made one (the lock keeps it out; this holds if it is bypassed)."""
        for name in os.listdir(self.directory):
            m = SNAPSHOT.match(name)
            if m and int(m.group(1)) >= number:
                raise JournalError(
                    f"{self.directory / name}: a snapshot as new as or newer than the one this "
                    f"process would write ({snapshot_name(number)}): another process wrote "
                    "this state; refusing to replace it"
                )

    def close(self) -> None:
        """Flush and release the directory (the store snapshots first)."""
        try:
            if self._fd is not None:
                try:
                    self.flush()
                finally:
                    os.close(self._fd)
                    self._fd = None
        finally:
            if self._lock_fd is not None:
                os.close(self._lock_fd)  # releases the flock
                self._lock_fd = None
