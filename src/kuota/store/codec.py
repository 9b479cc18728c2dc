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
import typing
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
    return _through_builtins(obj, type(obj))  # type: ignore[no-any-return]


def _through_builtins(value: Any, typ: Any) -> Any:
    """``value`` converted to builtins and back into ``typ`` (checked against it)."""
    return msgspec.convert(
        msgspec.to_builtins(value, enc_hook=enc_hook, builtin_types=_BUILTIN),
        typ,
        dec_hook=dec_hook,
    )


def clone_over(new: T, old: T | None) -> T:
    """``clone(new)`` for a struct replacing ``old``, a stored struct of the same
    type (never written to): the fields equal to old's are old's own values, and
    only the others are copied, and checked. A status write mostly changes a
    condition or two; copying its admission too, quantities and all, was most
    of the cost of a Workload status write."""
    cls = type(new)
    fields: tuple[str, ...] | None = getattr(cls, "__struct_fields__", None)
    if old is None or fields is None or type(old) is not cls:
        return clone(new)
    changes: dict[str, Any] = {}
    for i, f in enumerate(fields):
        v = getattr(new, f)
        ov = getattr(old, f)
        if v is ov or v == ov:
            continue
        try:
            box = _through_builtins({"v": v}, _field_box(cls, f))
        except msgspec.ValidationError as err:
            # Name the field as the whole struct's conversion would have.
            wire: str = getattr(cls, "__struct_encode_fields__", ())[i]
            raise msgspec.ValidationError(
                str(err).replace("- at `$.v", f"- at `$.{wire}", 1)
            ) from None
        changes[f] = box.v
    if not changes:
        return old
    out: T = msgspec.structs.replace(old, **changes)  # type: ignore[type-var]
    return out


_FIELD_BOXES: dict[tuple[type, str], Any] = {}


def _field_box(cls: type, name: str) -> Any:
    """A struct of one field, ``v``, with a struct field's annotation
    (constraints included): msgspec keeps what it learns of a struct type, but
    works out a bare annotation again at every conversion."""
    key = (cls, name)
    box = _FIELD_BOXES.get(key)
    if box is None:
        hint = typing.get_type_hints(cls, include_extras=True)[name]
        box = _FIELD_BOXES[key] = msgspec.defstruct(f"{cls.__name__}_{name}", [("v", hint)])
    return box


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
