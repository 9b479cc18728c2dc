"""Request bodies in Kubernetes' protobuf encoding, read into the JSON form
every other request has. kubectl's imperative ``create`` subcommands send
built-in kinds this way (``create namespace``, ``deployment``, ``job``,
``cronjob``, ``role``, ``service clusterip``, ...), and so may any client-go
program.

Table-driven: protoschema (generated from Kubernetes' Go types by
tools/gen_k8s_protoschema.py) gives each message's fields as (number, JSON
name, type, flags); the JSON built is what Go's encoder writes for the struct
protobuf fills, as kube-apiserver would see it: a value field absent or
zero is left out when it is ``omitempty``, a struct is always written
(``resources: {}``, a zero Time as null), a pointer only when sent. So
``kubectl create deployment`` stores what ``kubectl create deployment
--dry-run=client -o yaml | kubectl apply -f -`` stores. A kind kuota does not
serve as built-in (its own and Kueue's are CRDs: JSON only, as on a cluster)
is refused with 415 and a way round it."""

from __future__ import annotations

import base64
import datetime as dt
import struct
from typing import Any

import msgspec

from kuota.server.auth import protowire as pw

# protoschema's field flags (tools/gen_k8s_protoschema.py).
REPEATED, MAP, POINTER, OMITEMPTY, INLINE = 1, 2, 4, 8, 16
SCALARS = frozenset("sbifyqtTdorF")
# Go's zero value of each non-message type, as its JSON encoder writes it.
ZERO: dict[str, Any] = {
    "s": "",
    "b": False,
    "i": 0,
    "f": 0.0,
    "y": None,
    "q": "0",
    "t": None,
    "T": None,
    "d": "0s",
    "o": 0,
    "r": None,
    "F": None,
}
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
# protoschema's tables, imported with the first protobuf body (most clients
# send none, and the tables take a while to import).
_MESSAGES: dict[str, tuple[tuple[int, str, str, int], ...]] = {}
_KINDS: dict[tuple[str, str], str] = {}


class UnsupportedProtobuf(ValueError):
    """A kind kuota does not read in protobuf (the message says which)."""


def _signed(v: int) -> int:
    # int32/int64 are plain varints: a negative one is 64-bit two's complement.
    return v - (1 << 64) if v >= 1 << 63 else v


def _time(buf: bytes, micro: bool) -> str | None:
    if not buf:  # a zero Time is sent empty and encodes as null
        return None
    f = pw.fields(buf)
    seconds = _signed(_int(f, 1))
    t = _EPOCH + dt.timedelta(seconds=seconds)
    if micro:
        micros = _int(f, 2) // 1000
        return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{micros:06d}Z"
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _duration(ns: int) -> str:
    """Go's time.Duration.String(): 1h0m0s, 1.5s, 500ms."""
    if ns == 0:
        return "0s"
    sign, ns = ("-", -ns) if ns < 0 else ("", ns)
    if ns < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if ns >= size:
                return sign + _frac(ns, size) + unit
    h, rest = divmod(ns, 3_600_000_000_000)
    m, rest = divmod(rest, 60_000_000_000)
    s = _frac(rest, 1_000_000_000) + "s"
    if h:
        return f"{sign}{h}h{m}m{s}"
    return f"{sign}{m}m{s}" if m else sign + s


def _frac(n: int, size: int) -> str:
    whole, part = divmod(n, size)
    if not part:
        return str(whole)
    digits = len(str(size)) - 1
    return f"{whole}.{part:0{digits}d}".rstrip("0")


def _int(f: pw.Fields, number: int) -> int:
    values = f.get(number)
    v = values[-1] if values else 0
    return v if isinstance(v, int) else 0


def _raw_json(buf: bytes) -> Any:
    raw = pw.fields(buf).get(1, [b""])[-1] if buf else b""
    if not isinstance(raw, bytes) or not raw:
        return None
    try:
        return msgspec.json.decode(raw)
    except msgspec.DecodeError as err:
        raise pw.ProtoError(f"embedded object is not JSON: {err}") from None


def _value(code: str, v: bytes | int) -> Any:
    """One wire value of a field of type ``code``."""
    if code not in SCALARS:
        if not isinstance(v, bytes):
            raise pw.ProtoError(f"{code}: expected a message")
        return _message(code, v)
    if code == "i":
        return _signed(v) if isinstance(v, int) else _packed_error(code)
    if code == "b":
        return bool(v) if isinstance(v, int) else _packed_error(code)
    if code == "f":
        return struct.unpack("<d", v.to_bytes(8, "little"))[0] if isinstance(v, int) else 0.0
    if code == "d":
        return _duration(_signed(_int(pw.fields(v), 1))) if isinstance(v, bytes) else "0s"
    if not isinstance(v, bytes):
        raise pw.ProtoError(f"expected bytes for a {code} field, got a number")
    if code == "s":
        return v.decode("utf-8", "replace")
    if code == "y":
        return base64.b64encode(v).decode()
    if code == "q":
        return pw.string(pw.fields(v), 1) or "0"
    if code in "tT":
        return _time(v, micro=code == "T")
    if code == "o":
        f = pw.fields(v)
        return pw.string(f, 3) if _int(f, 1) == 1 else _signed(_int(f, 2))
    return _raw_json(v)  # r, F


def _packed_error(code: str) -> Any:
    raise pw.ProtoError(f"a {code} field sent as bytes")


def _values(code: str, values: list[bytes | int]) -> list[Any]:
    out: list[Any] = []
    for v in values:
        if code in "ib" and isinstance(v, bytes):  # packed repeated scalars
            i, n = 0, len(v)
            while i < n:
                x, i = pw.varint(v, i)
                out.append(_signed(x) if code == "i" else bool(x))
        else:
            out.append(_value(code, v))
    return out


def _entries(code: str, values: list[bytes | int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for entry in values:
        if not isinstance(entry, bytes):
            raise pw.ProtoError("a map entry is not a message")
        kv = pw.fields(entry)
        raw = kv.get(2)
        out[pw.string(kv, 1)] = _value(code, raw[-1]) if raw else _zero(code)
    return out


def _zero(code: str) -> Any:
    return ZERO[code] if code in SCALARS else _message(code, b"")


def _message(name: str, buf: bytes) -> dict[str, Any]:
    wire = pw.fields(buf) if buf else {}
    out: dict[str, Any] = {}
    for number, key, code, flags in _MESSAGES[name]:
        values = wire.get(number)
        if flags & INLINE:
            v = values[-1] if values else b""
            out.update(_message(code, v if isinstance(v, bytes) else b""))
        elif flags & (REPEATED | MAP):
            if values:
                out[key] = _entries(code, values) if flags & MAP else _values(code, values)
            elif not flags & OMITEMPTY:
                out[key] = None  # Go writes a nil slice or map as null
        elif values:
            value = _value(code, values[-1])
            empty = code in "sbify" and value in ("", 0, False)
            if not (empty and flags & OMITEMPTY and not flags & POINTER):
                out[key] = value
        elif flags & POINTER:
            if not flags & OMITEMPTY:
                out[key] = None
        elif not (flags & OMITEMPTY and code in "sbif"):
            out[key] = _zero(code)
    return out


def decode(body: bytes) -> dict[str, Any]:
    """The object a protobuf body holds, as JSON would give it. Raises
    pw.ProtoError (a malformed body) or UnsupportedProtobuf."""
    if not _KINDS:
        from kuota.server import protoschema

        _MESSAGES.update(protoschema.MESSAGES)
        _KINDS.update(protoschema.KINDS)
    api_version, kind, raw = pw.unwrap(body)
    name = _KINDS.get((api_version, kind))
    if name is None:
        raise UnsupportedProtobuf(
            f"kuota reads {kind or 'this kind'} ({api_version or '?'}) only as JSON or YAML, "
            "not in protobuf: write it to a file (kubectl create ... --dry-run=client -o yaml) "
            "and kubectl apply -f it"
        )
    return {"kind": kind, "apiVersion": api_version, **_message(name, raw)}
