"""Reading a state back: the latest snapshot and the segments after it, every
link of the chain checked. Reads only: what to cut or remove is the writer's
decision (``journal.py``); readers of a live state call this too.

Nothing is acknowledged before it is fsynced, so the only damage a crash can
leave is a torn last record of the last segment (never acknowledged): it is
reported in ``torn_bytes`` and left out. Anything else (a damaged or missing
record, a repeated one, a segment or snapshot missing or out of place) is
corruption, raised with the file and the record.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from kuota.api.apiextensions import CustomResourceDefinition, register_crd
from kuota.api.base import dec_hook
from kuota.store.journal_errors import JournalCorrupt, JournalError
from kuota.store.journal_format import (
    DAMAGED,
    INTACT,
    RECORD,
    SEGMENT,
    SNAPSHOT,
    Record,
    lines,
    segment_name,
    snapshot_name,
    unframe,
)
from kuota.store.kinds import kind_named
from kuota.store.protocol import NotFound, ResourceType

ObjectKey = tuple[str, str]  # (namespace, name)
_DECODERS: dict[type, msgspec.json.Decoder[Any]] = {}


@dataclass(slots=True)
class Recovered:
    """The state found on disk."""

    objects: dict[ResourceType, dict[ObjectKey, Any]] = field(default_factory=dict)
    rv: int = 0
    seq: int = 0
    meta: dict[str, Any] = field(default_factory=dict)
    records: int = 0  # replayed from segments (not from the snapshot)
    truncated_bytes: int = 0  # a torn tail of the last segment, left out


@dataclass(slots=True)
class Position:
    """Where the chain stands: the last record's number and the checksum of
    the last line of the chain (a head or a record)."""

    number: int = 0
    crc: int = 0


@dataclass(slots=True)
class Replayed:
    """A state read back, and what its writer needs to go on."""

    state: Recovered
    at: Position  # after the last intact record
    segment: int  # the segment to append to (it may not exist yet)
    segment_end: int  # bytes of it that are intact (0: it needs its head written)
    snapshot: int | None  # the latest snapshot's number
    older: list[str] = field(default_factory=list)  # files the latest snapshot covers


# Where a line is: (file, record number or None, line number); made into
# text only for an error (formatting it for every line costs replay time).
Where = tuple[Path, int | None, int]


def _text(where: Where) -> str:
    return _where(*where)


def _where(path: Path, number: int | None, lineno: int) -> str:
    if number is None:
        return f"{path}: line {lineno}"
    return f"{path}: record {number} (line {lineno})"


def _decode(rec: Record, path: Path, where: Where) -> tuple[ResourceType, Any]:
    try:
        info = kind_named(rec.g, rec.k)
    except NotFound:
        raise JournalError(
            f"{_text(where)} holds a {rec.k} of group {rec.g!r}, a kind this program does not "
            "register (register_kind before opening the store)"
        ) from None
    typ = info.type
    dec = _DECODERS.get(typ)
    if dec is None:
        dec = _DECODERS[typ] = msgspec.json.Decoder(typ, dec_hook=dec_hook)
    try:
        obj = dec.decode(rec.o)
    except msgspec.ValidationError as err:
        raise JournalCorrupt(f"{_text(where)}: {err}") from None
    if isinstance(obj, CustomResourceDefinition):
        register_crd(obj)  # the kind it defines is read in the records after it
    return info.rtype, obj


def _record(payload: bytes, where: Where) -> Record:
    try:
        return RECORD.decode(payload)
    except msgspec.DecodeError as err:
        raise JournalCorrupt(f"{_text(where)}: {err}") from None


def _apply(rec: Record, state: Recovered, path: Path, where: Where) -> None:
    if rec.op == "put":
        rtype, obj = _decode(rec, path, where)
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
        raise JournalCorrupt(f"{_text(where)}: unknown operation {rec.op!r}")
    if rec.rv < state.rv:
        raise JournalCorrupt(f"{_text(where)}: resourceVersion {rec.rv} goes back")
    state.rv, state.seq = rec.rv, rec.seq


def _read_snapshot(path: Path, number: int, state: Recovered) -> Position:
    """Load a snapshot into ``state``; the position it covers."""
    count = 0
    head: Record | None = None
    prev = 0
    with path.open("rb") as f:
        for lineno, line in enumerate(lines(f, os.fstat(f.fileno()).st_size), 1):
            kind, payload, crc = unframe(line)
            where: Where = (path, None, lineno)
            if kind != INTACT:
                # A snapshot is renamed into place only once complete and fsynced.
                raise JournalCorrupt(f"{_text(where)}: damaged (checksum or length wrong)")
            rec = _record(payload, where)
            if lineno > 1 and rec.p != prev:
                raise JournalCorrupt(
                    f"{_text(where)}: does not follow line {lineno - 1} (the chain of checksums "
                    "breaks: a line was removed, repeated or replaced)"
                )
            prev = crc
            if rec.op == "head" and lineno == 1:
                head = rec
                if rec.seg != number:
                    raise JournalCorrupt(
                        f"{_text(where)}: the head names {snapshot_name(rec.seg)}, not this file "
                        "(renamed or copied from elsewhere)"
                    )
            elif head is None:
                break
            elif rec.op == "end":
                if rec.count != count:
                    raise JournalCorrupt(
                        f"{_text(where)}: the snapshot ends with {rec.count} objects but holds {count}"
                    )
                state.rv, state.seq = head.rv, head.seq
                return Position(head.i, head.p)
            elif rec.op == "put":
                rtype, obj = _decode(rec, path, where)
                state.objects.setdefault(rtype, {})[(obj.metadata.namespace, obj.metadata.name)] = (
                    obj
                )
                count += 1
            elif rec.op == "meta":
                state.meta[rec.key] = msgspec.json.decode(rec.o)
            else:
                raise JournalCorrupt(f"{_text(where)}: unexpected {rec.op!r} line in a snapshot")
    raise JournalCorrupt(f"{path}: the snapshot is incomplete (no head or no end)")


def _tail_is_torn(f: Any, first: bytes) -> bool:
    """After a torn line, only more torn lines (a crash's tail) may follow."""
    return unframe(first)[0] != DAMAGED and all(
        unframe(rest)[0] not in (INTACT, DAMAGED) for rest in f
    )


def _replay_segment(
    path: Path, number: int, at: Position, state: Recovered, last: bool, before: str
) -> tuple[Position, int]:
    """Apply a segment's records after ``at``; the position after them and
    the bytes of the segment that are intact."""
    offset = 0
    with path.open("rb") as f:
        size = os.fstat(f.fileno()).st_size
        it = lines(f, size)
        for lineno, line in enumerate(it, 1):
            kind, payload, crc = unframe(line)
            expected = at.number + 1 if lineno > 1 else None
            where: Where = (path, expected, lineno)
            if kind != INTACT:
                if last and _tail_is_torn(it, line):
                    # Written but never fsynced, so never acknowledged.
                    state.truncated_bytes = size - offset
                    break
                what = "damaged (checksum wrong)" if kind == DAMAGED else "damaged"
                after = "later segments exist" if not last else "intact records follow it"
                raise JournalCorrupt(
                    f"{_text(where)}, byte {offset}: {what} and {after}; the journal is corrupt"
                )
            rec = _record(payload, where)
            if lineno == 1:
                if rec.op != "head":
                    raise JournalCorrupt(f"{_text(where)}: the segment has no head")
                if rec.seg != number:
                    raise JournalCorrupt(
                        f"{_text(where)}: the head names {segment_name(rec.seg)}, not this file "
                        "(renamed or copied from elsewhere)"
                    )
                if (rec.i, rec.p) != (at.number, at.crc):
                    raise JournalCorrupt(_gap(path, rec.i, at, before))
                at = Position(at.number, crc)
            else:
                if rec.i != at.number + 1:
                    line_at = _where(path, None, lineno)
                    raise JournalCorrupt(_out_of_order(line_at, rec.i, at.number))
                if rec.p != at.crc:
                    raise JournalCorrupt(
                        f"{_text(where)}: does not follow record {at.number} (the chain of "
                        "checksums breaks: a record was replaced or spliced in)"
                    )
                _apply(rec, state, path, where)
                state.records += 1
                at = Position(rec.i, crc)
            offset += len(line)
        else:
            if not offset and not last:
                raise JournalCorrupt(f"{path}: empty (no head), and later segments exist")
    return at, offset


def _gap(path: Path, starts_after: int, at: Position, before: str) -> str:
    if starts_after > at.number:
        n = at.number + 1
        missing = f"record {n} is" if n == starts_after else f"records {n}..{starts_after} are"
        return (
            f"{path}: continues from record {starts_after}, but {before} ends at record "
            f"{at.number}: {missing} missing (a segment or the snapshot holding them "
            "was removed or cut)"
        )
    return (
        f"{path}: continues from record {starts_after}, which does not end {before} "
        f"(record {at.number}: a segment was removed, cut or replaced)"
    )


def _out_of_order(where: str, got: int, last: int) -> str:
    if got <= last:
        return f"{where}: holds record {got} again after record {last} (a repeated record)"
    missing = f"record {last + 1} is" if got == last + 2 else f"records {last + 1}..{got - 1} are"
    return f"{where}: holds record {got} after record {last}: {missing} missing"


def replay(directory: Path, names: list[str] | None = None) -> Replayed:
    """Read the state in ``directory`` (marked, checked by the caller), whose
    files are ``names`` (default: listed now)."""
    snapshots, segments = [], []
    for name in os.listdir(directory) if names is None else names:
        if m := SNAPSHOT.match(name):
            snapshots.append(int(m.group(1)))
        elif m := SEGMENT.match(name):
            segments.append(int(m.group(1)))
    snapshots.sort()
    segments.sort()
    state = Recovered()
    at = Position()
    first = 0
    if snapshots:
        first = snapshots[-1]
        at = _read_snapshot(directory / snapshot_name(first), first, state)
    elif segments:
        first = segments[0]  # (its head says whether a snapshot went missing)
    live = [s for s in segments if s >= first]
    older = [snapshot_name(n) for n in snapshots if n < first]
    older += [segment_name(n) for n in segments if n < first]
    if live and live != list(range(first, first + len(live))):
        missing = sorted(set(range(first, live[-1] + 1)) - set(live))
        raise JournalCorrupt(
            f"{directory}: {segment_name(missing[0])} is missing between "
            f"{snapshot_name(first) if snapshots else segment_name(first)} and "
            f"{segment_name(live[-1])} (removed?)"
        )
    if not live and snapshots and first - 1 not in segments:
        # A snapshot's segment is made right after it, before the older files
        # go: without it, and without them, it was removed.
        raise JournalCorrupt(
            f"{directory}: {segment_name(first)} is missing after {snapshot_name(first)} (removed?)"
        )
    end = 0
    before = snapshot_name(first) if snapshots else "the start of the state"
    for k, seg in enumerate(live):
        at, end = _replay_segment(
            directory / segment_name(seg), seg, at, state, k == len(live) - 1, before
        )
        before = segment_name(seg)
    return Replayed(
        state, at, live[-1] if live else first, end, first if snapshots else None, older
    )
