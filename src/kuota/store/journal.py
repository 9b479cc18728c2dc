"""The durable journal behind the memory store: a write-ahead log plus snapshots.

Layout of the directory::

    LOCK                   flock'ed while a process has the journal open
    snapshot-000000000007  every object, rv, uid counter and meta before segment 7
    segment-000000000007   records written since that snapshot

A record is one line, ``<crc32 of payload, 8 hex> <payload length> <payload>\\n``,
the payload a JSON object: ``{"op": "put"|"delete"|"meta", "rv", "seq", ...}``
(``seq`` is the store's uid counter). JSON never contains a raw newline, so a
record is a line, and the length and checksum catch a record cut short by a
crash. Nothing is acknowledged before it is fsynced, so a damaged tail of the
last segment holds only unacknowledged writes: replay stops there and truncates
it. Damage anywhere else is corruption and stops the open with an error.

A snapshot is written to a temporary file, fsynced, renamed into place and the
directory fsynced; only then does the next segment start and the older files
go. A crash at any point leaves either the old snapshot with its segments or
the new one.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from kuota.api.base import dec_hook, enc_hook
from kuota.store.kinds import kind_named
from kuota.store.protocol import NotFound, ResourceType, StoreError

ObjectKey = tuple[str, str]  # (namespace, name)


class JournalError(StoreError):
    """The journal directory cannot be used."""


class JournalLocked(JournalError):
    pass


class JournalCorrupt(JournalError):
    pass


_NULL = msgspec.Raw(b"null")


class _Record(msgspec.Struct, omit_defaults=True):
    op: str  # put | delete | meta (segments); head | end (snapshots)
    rv: int = 0
    seq: int = 0
    g: str = ""  # group
    k: str = ""  # kind
    ns: str = ""
    n: str = ""  # name (delete)
    key: str = ""  # meta key
    seg: int = 0  # head: the first segment after this snapshot
    count: int = 0  # end: objects in the snapshot
    o: msgspec.Raw = _NULL  # the object (put) or the value (meta; null removes the key)


@dataclass(slots=True)
class Recovered:
    """The state found on disk."""

    objects: dict[ResourceType, dict[ObjectKey, Any]] = field(default_factory=dict)
    rv: int = 0
    seq: int = 0
    meta: dict[str, Any] = field(default_factory=dict)
    records: int = 0  # replayed from segments (not from the snapshot)
    truncated_bytes: int = 0  # a torn tail cut from the last segment


_SNAPSHOT = re.compile(r"^snapshot-(\d{12})$")
_SEGMENT = re.compile(r"^segment-(\d{12})$")
_ENCODER = msgspec.json.Encoder(enc_hook=enc_hook)
_RECORD = msgspec.json.Decoder(_Record)
_DECODERS: dict[type, msgspec.json.Decoder[Any]] = {}


def _frame(payload: bytes) -> bytes:
    return b"%08x %d " % (zlib.crc32(payload), len(payload)) + payload + b"\n"


def _unframe(line: bytes) -> bytes | None:
    """The payload of one complete, intact record line, else None."""
    if not line.endswith(b"\n"):
        return None
    head, _, rest = line.partition(b" ")
    size, _, rest = rest.partition(b" ")
    payload = rest[:-1]
    try:
        if int(size) != len(payload) or int(head, 16) != zlib.crc32(payload):
            return None
    except ValueError:
        return None
    return payload


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# fdatasync is enough for appends (the size change is synced); macOS has only fsync.
_datasync = getattr(os, "fdatasync", os.fsync)


def _write_all(fd: int, data: bytes | bytearray) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class Journal:
    def __init__(
        self, directory: str | Path, snapshot_every: int = 50_000, *, readonly: bool = False
    ) -> None:
        """``readonly``: only ``recover`` (the state as it is, on a shared
        lock, writing nothing: no torn tail cut, no old file removed); the
        directory must exist."""
        self.directory = Path(directory)
        self.snapshot_every = snapshot_every
        self.readonly = readonly
        if self.directory.exists() and not self.directory.is_dir():
            raise NotADirectoryError(
                errno.ENOTDIR, "not a directory (the state is a directory of journal files)"
            )
        if readonly and not self.directory.is_dir():
            raise JournalError(f"{self.directory}: no such state directory")
        if not readonly:
            self.directory.mkdir(parents=True, exist_ok=True)
        self._lock_fd: int | None = self._lock()
        self._buffer = bytearray()
        self._fd: int | None = None
        self._segment = 0
        self._since_snapshot = 0  # records in the segments after the snapshot
        self._recovered = False

    # ------------------------------------------------------------ opening
    def _lock(self) -> int | None:
        path = self.directory / "LOCK"
        if self.readonly and not path.exists():
            return None  # never opened for writing: nobody to wait for
        fd = os.open(path, os.O_RDONLY if self.readonly else os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, (fcntl.LOCK_SH if self.readonly else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise JournalLocked(
                f"the state directory {self.directory} is already open (locked by pid "
                f"{holder}: {path}); stop that process or use another directory"
            ) from None
        if self.readonly:
            return fd
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        return fd

    def recover(self) -> Recovered:
        """Read the latest snapshot and the segments after it; open the last
        segment for appending. Call once, before any write."""
        if self._recovered:
            raise JournalError("recover() was already called")
        self._recovered = True
        snapshots, segments = self._scan()
        state = Recovered()
        first = 0
        if snapshots:
            first = snapshots[-1]
            self._read_snapshot(self._path("snapshot", first), state, first)
        live = [s for s in segments if s >= first]
        for i, seg in enumerate(live):
            self._replay_segment(self._path("segment", seg), state, last=i == len(live) - 1)
        self._since_snapshot = state.records
        if self.readonly:
            return state
        self._remove_older_than(first, snapshots, segments)
        self._segment = live[-1] if live else first
        self._open_segment()
        return state

    def _scan(self) -> tuple[list[int], list[int]]:
        snapshots, segments = [], []
        for p in self.directory.iterdir():
            if p.name.endswith(".tmp"):
                if not self.readonly:
                    p.unlink()  # a snapshot that never got renamed into place
            elif m := _SNAPSHOT.match(p.name):
                snapshots.append(int(m.group(1)))
            elif m := _SEGMENT.match(p.name):
                segments.append(int(m.group(1)))
        return sorted(snapshots), sorted(segments)

    def _path(self, what: str, number: int) -> Path:
        return self.directory / f"{what}-{number:012d}"

    def _remove_older_than(self, first: int, snapshots: list[int], segments: list[int]) -> None:
        for n in snapshots:
            if n < first:
                self._path("snapshot", n).unlink(missing_ok=True)
        for n in segments:
            if n < first:
                self._path("segment", n).unlink(missing_ok=True)

    def _open_segment(self) -> None:
        path = self._path("segment", self._segment)
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        _fsync_dir(self.directory)

    # ------------------------------------------------------------ replay
    def _decode_object(self, rec: _Record, path: Path, lineno: int) -> tuple[ResourceType, Any]:
        try:
            info = kind_named(rec.g, rec.k)
        except NotFound:
            raise JournalError(
                f"{path}: record {lineno} holds a {rec.k} of group {rec.g!r}, a kind this "
                "program does not register (register_kind before opening the store)"
            ) from None
        typ = info.type
        dec = _DECODERS.get(typ)
        if dec is None:
            dec = _DECODERS[typ] = msgspec.json.Decoder(typ, dec_hook=dec_hook)
        try:
            return info.rtype, dec.decode(rec.o)
        except msgspec.ValidationError as err:
            raise JournalCorrupt(f"{path}: record {lineno}: {err}") from None

    def _apply(self, rec: _Record, state: Recovered, path: Path, lineno: int) -> None:
        if rec.op == "put":
            rtype, obj = self._decode_object(rec, path, lineno)
            key = (obj.metadata.namespace, obj.metadata.name)
            state.objects.setdefault(rtype, {})[key] = obj
        elif rec.op == "delete":
            with contextlib.suppress(NotFound):  # (a kind never put has nothing to delete)
                state.objects.get(kind_named(rec.g, rec.k).rtype, {}).pop((rec.ns, rec.n), None)
        elif rec.op == "meta":
            value = msgspec.json.decode(rec.o)
            if value is None:
                state.meta.pop(rec.key, None)
            else:
                state.meta[rec.key] = value
        else:
            raise JournalCorrupt(f"{path}: record {lineno}: unknown operation {rec.op!r}")
        if rec.rv < state.rv:
            raise JournalCorrupt(f"{path}: record {lineno}: resourceVersion {rec.rv} goes back")
        state.rv, state.seq = rec.rv, rec.seq

    def _replay_segment(self, path: Path, state: Recovered, last: bool) -> None:
        offset = 0
        with path.open("rb") as f:
            for lineno, line in enumerate(f, 1):
                payload = _unframe(line)
                if payload is None:
                    size = path.stat().st_size
                    if not last:
                        raise JournalCorrupt(
                            f"{path}: record {lineno} (byte {offset}) is damaged and later "
                            "segments exist; the journal is corrupt"
                        )
                    # A torn tail: written but never fsynced, so never acknowledged.
                    # Intact records after the damage would mean it is not a tail.
                    if any(_unframe(rest) is not None for rest in f):
                        raise JournalCorrupt(
                            f"{path}: record {lineno} (byte {offset}) is damaged but intact "
                            "records follow it; the journal is corrupt"
                        )
                    state.truncated_bytes = size - offset
                    break
                try:
                    rec = _RECORD.decode(payload)
                except msgspec.DecodeError as err:
                    raise JournalCorrupt(f"{path}: record {lineno}: {err}") from None
                self._apply(rec, state, path, lineno)
                state.records += 1
                offset += len(line)
        if state.truncated_bytes and not self.readonly:
            os.truncate(path, offset)
            fd = os.open(path, os.O_WRONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def _read_snapshot(self, path: Path, state: Recovered, number: int) -> None:
        count = 0
        head: _Record | None = None
        with path.open("rb") as f:
            for lineno, line in enumerate(f, 1):
                payload = _unframe(line)
                if payload is None:
                    raise JournalCorrupt(f"{path}: record {lineno} is damaged")
                try:
                    rec = _RECORD.decode(payload)
                except msgspec.DecodeError as err:
                    raise JournalCorrupt(f"{path}: record {lineno}: {err}") from None
                if rec.op == "head":
                    head = rec
                elif rec.op == "end":
                    if head is None or rec.count != count or head.seg != number:
                        break
                    state.rv, state.seq = head.rv, head.seq
                    return
                elif rec.op == "put":
                    rtype, obj = self._decode_object(rec, path, lineno)
                    state.objects.setdefault(rtype, {})[
                        (obj.metadata.namespace, obj.metadata.name)
                    ] = obj
                    count += 1
                elif rec.op == "meta":
                    state.meta[rec.key] = msgspec.json.decode(rec.o)
        raise JournalCorrupt(f"{path}: the snapshot is incomplete")

    # ------------------------------------------------------------ writing
    def put(self, rtype: ResourceType, rv: int, seq: int, obj: Any) -> None:
        rec = _Record("put", rv, seq, rtype[0], obj.kind, o=msgspec.Raw(_ENCODER.encode(obj)))
        self._append(_ENCODER.encode(rec))

    def delete(
        self, rtype: ResourceType, kind: str, rv: int, seq: int, namespace: str, name: str
    ) -> None:
        self._append(_ENCODER.encode(_Record("delete", rv, seq, rtype[0], kind, namespace, name)))

    def meta(self, key: str, value: Any, rv: int, seq: int) -> None:
        raw = _NULL if value is None else msgspec.Raw(_ENCODER.encode(value))
        self._append(_ENCODER.encode(_Record("meta", rv, seq, key=key, o=raw)))

    def _append(self, payload: bytes) -> None:
        if self._fd is None:
            raise JournalError("the journal is closed (or recover() was not called)")
        self._buffer += _frame(payload)
        self._since_snapshot += 1

    @property
    def pending(self) -> bool:
        return bool(self._buffer)

    def flush(self) -> None:
        """Write the buffered records and fsync: they are durable on return."""
        if not self._buffer or self._fd is None:
            return
        _write_all(self._fd, self._buffer)
        _datasync(self._fd)
        self._buffer.clear()

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
        path = self._path("snapshot", number)
        tmp = path.with_name(path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            buf = bytearray(_frame(_ENCODER.encode(_Record("head", rv, seq, seg=number))))
            count = 0
            for rtype, obj in objects:
                o = msgspec.Raw(_ENCODER.encode(obj))
                buf += _frame(_ENCODER.encode(_Record("put", g=rtype[0], k=obj.kind, o=o)))
                count += 1
                if len(buf) > 1 << 20:
                    _write_all(fd, buf)
                    buf.clear()
            for key, value in meta.items():
                o = msgspec.Raw(_ENCODER.encode(value))
                buf += _frame(_ENCODER.encode(_Record("meta", key=key, o=o)))
            buf += _frame(_ENCODER.encode(_Record("end", count=count)))
            _write_all(fd, buf)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(tmp, path)
        _fsync_dir(self.directory)
        old = self._segment
        if self._fd is not None:
            os.close(self._fd)
        self._segment = number
        self._open_segment()
        self._since_snapshot = 0
        for n in range(old, number):
            self._path("segment", n).unlink(missing_ok=True)
            self._path("snapshot", n).unlink(missing_ok=True)

    def close(self) -> None:
        """Flush and release the directory (the store snapshots first)."""
        if self._fd is not None:
            try:
                self.flush()
            finally:
                os.close(self._fd)
                self._fd = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the flock
            self._lock_fd = None
