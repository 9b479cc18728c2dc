"""The journal's on-disk format (format 2): records, their framing and chain,
and the names of the state directory's files.

A record is one line, ``<crc32 of payload, 8 hex> <payload length> <payload>\\n``,
the payload a JSON object (JSON never holds a raw newline, so a record is a
line). Every payload carries ``p``, the checksum of the line before it, so
each record's checksum covers its predecessor's: a record removed, repeated,
reordered or spliced in from elsewhere breaks the chain. Segment records are
numbered (``i``) over the life of the state, across segments and snapshots.

A segment starts with a head line naming itself (``seg``) and the position
it continues from: ``i`` the number of the last record before it and ``p``
the checksum of the last line of the chain before it (0, 0 for the first
segment of a state). A snapshot starts with a head holding the same pair for
the position it covers (every record up to ``i``), the resourceVersion and
uid counter there, and ends with a count of its objects.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator
from typing import IO, Any, Final

import msgspec

from kuota.api.base import enc_hook

FORMAT: Final = 2
MARK: Final = "KUOTA-STATE"  # the mark: this directory is a kuota state, of this format
MARK_TEXT: Final = f"kuota state directory\nformat {FORMAT}\n"
OWNER: Final = "OWNER"  # the pid and command of the last writer (the lock is the directory's)

SNAPSHOT: Final = re.compile(r"^snapshot-(\d{12})$")
SEGMENT: Final = re.compile(r"^segment-(\d{12})$")
# The only temporary names kuota writes (and so the only ones it removes).
TEMPORARY: Final = re.compile(r"^(snapshot-\d{12}|KUOTA-STATE)\.tmp$")
# The files of a state written before states were marked (format 1).
FORMAT_1: Final = re.compile(r"^(LOCK|snapshot-\d{12}|segment-\d{12})$")

NULL: Final = msgspec.Raw(b"null")


class Record(msgspec.Struct, omit_defaults=True):
    op: str  # put | delete | meta (segments); head (both) | end (snapshots)
    i: int = 0  # segments: the record's number; heads: the last record before
    p: int = 0  # the checksum of the line before (heads: of the chain before)
    rv: int = 0
    seq: int = 0
    g: str = ""  # group
    k: str = ""  # kind
    ns: str = ""
    n: str = ""  # name (delete)
    key: str = ""  # meta key
    seg: int = 0  # head: the segment this file is (or, in a snapshot, comes before)
    count: int = 0  # end: objects in the snapshot
    o: msgspec.Raw = NULL  # the object (put) or the value (meta; null removes the key)


ENCODER: Final = msgspec.json.Encoder(enc_hook=enc_hook)
RECORD: Final = msgspec.json.Decoder(Record)


def segment_name(number: int) -> str:
    return f"segment-{number:012d}"


def snapshot_name(number: int) -> str:
    return f"snapshot-{number:012d}"


def frame(payload: bytes) -> tuple[bytes, int]:
    """The line for ``payload`` and its checksum."""
    crc = zlib.crc32(payload)
    return b"%08x %d " % (crc, len(payload)) + payload + b"\n", crc


INTACT, TORN, DAMAGED = 0, 1, 2


def unframe(line: bytes) -> tuple[int, bytes, int]:
    """(INTACT, payload, crc), or (TORN, ...) for a line a crash can leave
    (cut short, holes of zeros, its length wrong), or (DAMAGED, ...) for a
    complete line of the right length whose checksum is wrong: a changed
    byte, which no crash writes."""
    if not line.endswith(b"\n") or b"\x00" in line:
        return TORN, b"", 0
    head, _, rest = line.partition(b" ")
    size, _, rest = rest.partition(b" ")
    payload = rest[:-1]
    try:
        crc, length = int(head, 16), int(size)
    except ValueError:
        return TORN, b"", 0
    if length != len(payload) or len(head) != 8:
        return TORN, b"", 0
    if crc != zlib.crc32(payload):
        return DAMAGED, b"", 0
    return INTACT, payload, crc


def lines(f: IO[bytes], limit: int) -> Iterator[bytes]:
    """The lines of the first ``limit`` bytes of ``f``: a writer may append
    while a reader reads, and what it appends after the reader looked is not
    the reader's (a line cut at the limit reads as torn)."""
    offset = 0
    for line in f:
        end = offset + len(line)
        if end > limit:
            if offset < limit:
                yield line[: limit - offset]
            return
        offset = end
        yield line


def encode_value(value: Any) -> msgspec.Raw:
    return msgspec.Raw(ENCODER.encode(value))
