"""Copies and wire forms of API structs.

``clone`` goes through builtins (``to_builtins`` + ``convert``), which runs in
C: 15 µs for a full GPU training Job, 7.5 µs for a Workload, ten times faster
than ``copy.deepcopy``; a msgpack or JSON round trip costs the same but would
turn datetimes into UTC or text on the way. Datetimes are immutable and pass
through as they are; quantities go through their text (decoded from a cache).
Converting checks the schema's type and constraint annotations, so a struct
that breaks them cannot be copied (the store reports that as Invalid).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, TypeVar

import msgspec

from kuota.api import errors as e
from kuota.api.base import dec_hook, enc_hook
from kuota.api.errors import FieldError

T = TypeVar("T")

_BUILTIN = (datetime,)


def clone(obj: T) -> T:
    """A deep copy of an API struct (or any struct built from API types)."""
    if obj is None or isinstance(obj, str | int | float | bool):
        return obj
    if isinstance(obj, list):
        return [clone(x) for x in obj]  # type: ignore[return-value]
    if isinstance(obj, dict):
        return {k: clone(v) for k, v in obj.items()}  # type: ignore[return-value]
    return msgspec.convert(  # type: ignore[no-any-return]
        msgspec.to_builtins(obj, enc_hook=enc_hook, builtin_types=_BUILTIN),
        type(obj),
        dec_hook=dec_hook,
    )


def to_wire(obj: Any) -> dict[str, Any]:
    """The object as JSON-compatible builtins with camelCase keys (the form a
    merge patch applies to)."""
    out: dict[str, Any] = msgspec.to_builtins(obj, enc_hook=enc_hook)
    return out


def from_wire(data: Any, typ: type[T]) -> T:
    """Raises msgspec.ValidationError (see ``validation_error``)."""
    return msgspec.convert(data, typ, dec_hook=dec_hook)


_AT = re.compile(r"^(.*) - at `\$(.*)`$", re.S)
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")
_MISSING = object()


def _value_at(data: Any, path: str) -> Any:
    for m in _STEP.finditer(path):
        if m.group(1) is not None and isinstance(data, dict):
            data = data.get(m.group(1), _MISSING)
        elif m.group(2) is not None and isinstance(data, list) and int(m.group(2)) < len(data):
            data = data[int(m.group(2))]
        else:
            return _MISSING
    return data


def validation_error(err: Exception, prefix: str = "", data: Any = _MISSING) -> FieldError:
    """A msgspec ValidationError as a FieldError at the path it names
    (``$.spec.podSets[0].count`` -> ``spec.podSets[0].count``), showing the
    offending value when ``data`` (what was converted) is given."""
    text = str(err)
    m = _AT.match(text)
    if not m:
        return e.invalid(prefix, "object", text)
    detail, at = m.group(1), m.group(2)
    path = at.lstrip(".")
    if prefix:
        path = f"{prefix}.{path}" if path and not path.startswith("[") else prefix + path
    value = _value_at(data, at) if data is not _MISSING else _MISSING
    if value is _MISSING:
        return FieldError(path, e.INVALID, detail)
    return e.invalid(path, value, detail)
