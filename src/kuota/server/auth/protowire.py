"""The least of the protobuf wire format kubectl's review requests need:
the ``k8s\\0`` envelope (runtime.Unknown) and length-delimited/varint fields.
A hand decoder for two small messages, not a protobuf dependency: the
messages are fixed (authorization/v1 generated.proto) and only read."""

from __future__ import annotations

MAGIC = b"k8s\x00"

Fields = dict[int, list[bytes | int]]


class ProtoError(ValueError):
    pass


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if i >= len(buf) or shift > 63:
            raise ProtoError("truncated varint")
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, i
        shift += 7


def varint(buf: bytes, i: int) -> tuple[int, int]:
    """(value, next offset) of the varint at ``buf[i]``."""
    return _varint(buf, i)


def fields(buf: bytes) -> dict[int, list[bytes | int]]:
    """field number -> values (bytes for length-delimited, int for varints)."""
    out: dict[int, list[bytes | int]] = {}
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        number, wire = key >> 3, key & 7
        value: bytes | int
        if wire == 0:
            value, i = _varint(buf, i)
        elif wire == 2:
            n, i = _varint(buf, i)
            if i + n > len(buf):
                raise ProtoError(f"field {number}: truncated")
            value, i = buf[i : i + n], i + n
        elif wire == 1:
            value, i = int.from_bytes(buf[i : i + 8], "little"), i + 8
        elif wire == 5:
            value, i = int.from_bytes(buf[i : i + 4], "little"), i + 4
        else:
            raise ProtoError(f"field {number}: unsupported wire type {wire}")
        out.setdefault(number, []).append(value)
    return out


def message(f: dict[int, list[bytes | int]], number: int) -> dict[int, list[bytes | int]] | None:
    values = f.get(number)
    if not values or not isinstance(values[-1], bytes):
        return None
    return fields(values[-1])


def string(f: dict[int, list[bytes | int]], number: int) -> str:
    values = f.get(number)
    if not values or not isinstance(values[-1], bytes):
        return ""
    return values[-1].decode("utf-8", "replace")


def unwrap(body: bytes) -> tuple[str, str, bytes]:
    """(apiVersion, kind, raw) of a ``k8s\\0``-prefixed runtime.Unknown."""
    if not body.startswith(MAGIC):
        raise ProtoError("missing the k8s protobuf envelope")
    unknown = fields(body[len(MAGIC) :])
    type_meta = message(unknown, 1) or {}
    raw = unknown.get(2, [b""])[-1]
    if not isinstance(raw, bytes):
        raise ProtoError("raw is not bytes")
    return string(type_meta, 1), string(type_meta, 2), raw
