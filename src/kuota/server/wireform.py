"""API structs as the JSON the API server returns: every field that is set,
defaults included. The structs omit their defaults when encoded (manifests
and the journal stay small), but a served object carries its defaulted
fields, as a stored object does on a cluster: ``kubectl apply`` compares a
file's ``queueingStrategy: BestEffortFIFO`` with the live object and would
patch it back forever if the live object did not show it. Unset (None)
fields and empty lists and maps are left out, as Go's ``omitempty`` does."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import msgspec

from kuota.api.base import enc_hook

_FIELDS: dict[type, tuple[tuple[str, str], ...]] = {}
# Struct type -> whether msgspec's own (C) encoding already gives its full
# form: no field, at any depth, has a default other than None or an empty
# list or map. Such values (most of a pod template, conditions, metadata's
# parts) are encoded in one ``to_builtins`` call instead of field by field.
_PLAIN: dict[type, bool] = {}
# Defaults both encodings leave out: None, and the zero values Go's
# ``omitempty`` drops ("" and a count of 0; not False).
_ZERO_OMITTED = frozenset({"generation"})


def _empty(default: Any) -> bool:
    t = type(default)
    return default is None or (t is str and default == "") or (t is int and default == 0)


def _plain_type(t: Any, seen: set[type]) -> bool:
    if isinstance(t, msgspec.inspect.StructType):
        return _plain(t.cls, seen)
    if isinstance(t, msgspec.inspect.UnionType):
        return all(_plain_type(x, seen) for x in t.types)
    if isinstance(t, msgspec.inspect.Metadata):
        return _plain_type(t.type, seen)
    if isinstance(
        t,
        msgspec.inspect.ListType
        | msgspec.inspect.SetType
        | msgspec.inspect.FrozenSetType
        | msgspec.inspect.VarTupleType,
    ):
        return _plain_type(t.item_type, seen)
    if isinstance(t, msgspec.inspect.DictType):
        return _plain_type(t.value_type, seen)
    return True


def _plain(cls: type, seen: set[type] | None = None) -> bool:
    known = _PLAIN.get(cls)
    if known is not None:
        return known
    seen = seen if seen is not None else set()
    if cls in seen:
        return True  # (decided by the first visit)
    seen.add(cls)
    info = msgspec.inspect.type_info(cls)
    ok = isinstance(info, msgspec.inspect.StructType) and cls.__struct_config__.omit_defaults  # type: ignore[attr-defined]
    if ok:
        assert isinstance(info, msgspec.inspect.StructType)
        for f in info.fields:
            if (
                (f.default is not msgspec.NODEFAULT and not _empty(f.default))
                or (
                    f.default_factory is not msgspec.NODEFAULT
                    and f.default_factory not in (list, dict)
                )
                or not _plain_type(f.type, seen)
            ):
                ok = False
            if not ok:
                break
    _PLAIN[cls] = ok
    return ok


def _fields(cls: type) -> tuple[tuple[str, str], ...]:
    f = _FIELDS.get(cls)
    if f is None:
        names: tuple[str, ...] = cls.__struct_fields__  # type: ignore[attr-defined]
        wire: tuple[str, ...] = cls.__struct_encode_fields__  # type: ignore[attr-defined]
        f = _FIELDS[cls] = tuple(zip(names, wire, strict=True))
    return f


def full_builtins(value: Any) -> Any:
    t = type(value)
    if t is str or t is int or t is bool or t is float:
        return value
    if isinstance(value, msgspec.Struct):
        enc = _ENCODERS.get(t)
        if enc is None:
            enc = _encoder(t)
        return enc(value)
    if t is list or t is tuple:
        return [full_builtins(v) for v in value]
    if t is dict:
        return {k: full_builtins(v) for k, v in value.items()}
    if t is datetime:
        return msgspec.to_builtins(value)
    return msgspec.to_builtins(value, enc_hook=enc_hook)


def _to_builtins(value: Any) -> Any:
    return msgspec.to_builtins(value, enc_hook=enc_hook)


# Struct type -> its full encoding, a function generated for the type (the
# rule of each field written out, no loop over a field table): a served
# object is encoded on every response, watch event and list item.
_ENCODERS: dict[type, Callable[[Any], Any]] = {}

# One field: skipped when None, "", an empty list or map (or a 0 of the
# fields in _ZERO_OMITTED); a plain field's value through msgspec's C
# encoding, any other through full_builtins.
_FIELD = """\
    x = v.{name}
    if x is not None:
        t = x.__class__
        if t is str:
            if x:
                out[{wire!r}] = x
        elif t is int or t is bool or t is float:
            {scalar}
        elif t is list or t is dict:
            if x:
                out[{wire!r}] = {conv}(x)
        else:
            out[{wire!r}] = {conv}(x)
"""


def _typed_plain(t: Any) -> bool:
    """Whether any value of the type is fully encoded by msgspec's own
    encoding (an ``Any`` may hold a struct with defaults: no)."""
    if isinstance(t, msgspec.inspect.AnyType):
        return False
    if isinstance(t, msgspec.inspect.StructType):
        return _plain(t.cls)
    if isinstance(t, msgspec.inspect.UnionType):
        return all(_typed_plain(x) for x in t.types)
    if isinstance(t, msgspec.inspect.Metadata):
        return _typed_plain(t.type)
    if isinstance(
        t,
        msgspec.inspect.ListType
        | msgspec.inspect.SetType
        | msgspec.inspect.FrozenSetType
        | msgspec.inspect.VarTupleType,
    ):
        return _typed_plain(t.item_type)
    if isinstance(t, msgspec.inspect.DictType):
        return _typed_plain(t.key_type) and _typed_plain(t.value_type)
    return not isinstance(t, msgspec.inspect.TupleType)


def _encoder(cls: type) -> Callable[[Any], Any]:
    if _PLAIN.get(cls) if cls in _PLAIN else _plain(cls):
        enc: Callable[[Any], Any] = _to_builtins
    else:
        info = msgspec.inspect.type_info(cls)
        assert isinstance(info, msgspec.inspect.StructType)
        types = {f.name: f.type for f in info.fields}
        lines = ["def encode(v):", "    out = {}"]
        for name, wire in _fields(cls):
            if name in _ZERO_OMITTED:
                scalar = f"if x != 0 or t is not int:\n                out[{wire!r}] = x"
            else:
                scalar = f"out[{wire!r}] = x"
            conv = "_to_builtins" if _typed_plain(types[name]) else "full_builtins"
            lines.append(_FIELD.format(name=name, wire=wire, scalar=scalar, conv=conv))
        lines.append("    return out")
        scope: dict[str, Any] = {"_to_builtins": _to_builtins, "full_builtins": full_builtins}
        exec("\n".join(lines), scope)  # (generated from the type's own fields)
        enc = scope["encode"]
    _ENCODERS[cls] = enc
    return enc


_ATTRS: dict[type, dict[str, str]] = {}


def attr_of(cls: type, wire_name: str) -> str | None:
    """The struct field a wire (camelCase) name is encoded from."""
    m = _ATTRS.get(cls)
    if m is None:
        m = _ATTRS[cls] = {w: n for n, w in _fields(cls)}
    return m.get(wire_name)
