"""API structs as the JSON the API server returns: every field that is set,
defaults included. The structs omit their defaults when encoded (manifests
and the journal stay small), but a served object carries its defaulted
fields, as a stored object does on a cluster: ``kubectl apply`` compares a
file's ``queueingStrategy: BestEffortFIFO`` with the live object and would
patch it back forever if the live object did not show it. Unset (None)
fields and empty lists and maps are left out, as Go's ``omitempty`` does."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec

from kuota.api.base import enc_hook

_FIELDS: dict[type, tuple[tuple[str, str], ...]] = {}


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
        out: dict[str, Any] = {}
        for name, wire in _fields(t):
            v = getattr(value, name)
            if v is None:
                continue
            vt = type(v)
            if (vt is list or vt is dict) and not v:
                continue
            out[wire] = full_builtins(v)
        return out
    if t is list or t is tuple:
        return [full_builtins(v) for v in value]
    if t is dict:
        return {k: full_builtins(v) for k, v in value.items()}
    if t is datetime:
        return msgspec.to_builtins(value)
    return msgspec.to_builtins(value, enc_hook=enc_hook)
