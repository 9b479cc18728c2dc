"""A Configuration decoded as Kueue's strict universal decoder decodes it: in the
version it names, unknown fields refused, every duration checked."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import msgspec
import msgspec.inspect as mi

from kuota.api import errors as e
from kuota.api.base import dec_hook
from kuota.api.errors import FieldError, child, index, key
from kuota.api.kueue.config.durations import format_duration_ns, parse_duration_ns
from kuota.api.kueue.config.wire import (
    API_VERSIONS,
    DURATION_MARK,
    KIND,
    UNKNOWN_FIELD,
    V1BETA2,
    WIRE_STRUCTS,
    ConfigurationV1Beta1,
    ConfigurationV1Beta2,
)
from kuota.api.schema import validate_raw


# ---------------------------------------------------------------------------- duration walk
def _is_duration(t: mi.Type) -> bool:
    if isinstance(t, mi.UnionType):
        return any(_is_duration(x) for x in t.types)
    return isinstance(t, mi.Metadata) and t.extra == DURATION_MARK


_DURATION_FIELDS: dict[type, tuple[tuple[str, str], ...]] = {}


def _duration_fields(cls: type) -> tuple[tuple[str, str], ...]:
    got = _DURATION_FIELDS.get(cls)
    if got is None:
        info = mi.type_info(cls)
        got = tuple(
            (f.name, f.encode_name)
            for f in info.fields  # type: ignore[attr-defined]
            if _is_duration(f.type)
        )
        _DURATION_FIELDS[cls] = got
    return got


def _durations(obj: Any, path: str = "") -> Iterator[tuple[Any, str, str]]:
    """Every (struct, attribute, field path) holding a set duration under ``obj``."""
    if isinstance(obj, msgspec.Struct):
        for attr, wire in _duration_fields(type(obj)):
            if getattr(obj, attr) is not None:
                yield obj, attr, child(path, wire)
        for f in msgspec.structs.fields(obj):
            v = getattr(obj, f.name)
            if isinstance(v, msgspec.Struct | list | dict):
                yield from _durations(v, child(path, f.encode_name))
    elif isinstance(obj, list):
        for i, x in enumerate(obj):
            yield from _durations(x, index(path, i))
    elif isinstance(obj, dict):
        for k, x in obj.items():
            if isinstance(x, msgspec.Struct | list | dict):
                yield from _durations(x, key(path, str(k)))


def duration_errors(cfg: msgspec.Struct) -> list[FieldError]:
    errs = []
    for obj, attr, path in _durations(cfg):
        text = getattr(obj, attr)
        try:
            parse_duration_ns(text)
        except ValueError as err:
            errs.append(e.invalid(path, text, str(err)))
    return errs


def canonical_durations(cfg: msgspec.Struct) -> None:
    """Rewrite every duration as Go prints it (``5m`` -> ``5m0s``), as Kueue encodes."""
    for obj, attr, _ in _durations(cfg):
        setattr(obj, attr, format_duration_ns(parse_duration_ns(getattr(obj, attr))))


def optional_duration_ns(text: str | None) -> int:
    """A wire duration in nanoseconds; absent is Go's zero Duration."""
    return 0 if text is None else parse_duration_ns(text)


# ============================================================================ decoding
def _strict_decode(raw: dict[str, Any], wire: type) -> tuple[Any, list[FieldError]]:
    """The slow path, after msgspec refused ``raw``: every type error and unknown field.

    Explicit nulls are pruned first, as Go's decoder leaves a field alone on ``null``.
    """
    pruned, errs, warnings = validate_raw(raw, wire)
    out = list(errs)
    for w in warnings:
        m = re.fullmatch(r'unknown field "(.*)"', w, re.S)
        out.append(FieldError(m.group(1) if m else "", UNKNOWN_FIELD, "" if m else w))
    if out:
        return None, out
    try:
        return msgspec.convert(pruned, wire, dec_hook=dec_hook), []
    except msgspec.ValidationError as err:
        return None, [_msgspec_error(err, pruned)]


def _msgspec_error(err: msgspec.ValidationError, raw: Any = None) -> FieldError:
    text = str(err)
    m = re.fullmatch(r"(.*) - at `\$\.?(.*)`", text, re.S)
    if not m:
        return e.invalid("", "object", text)
    detail, path = m.group(1), m.group(2)
    u = re.fullmatch(r"Object contains unknown field `(.*)`", detail, re.S)
    if u:
        return FieldError(child(path, u.group(1)), UNKNOWN_FIELD)
    return e.invalid(path, e.value_at(raw, path), detail)


def decode_config(
    raw: Any,
) -> tuple[ConfigurationV1Beta2 | ConfigurationV1Beta1 | None, list[FieldError]]:
    """Strict decode in the version ``raw`` names (no apiVersion: v1beta2), no defaults."""
    if not isinstance(raw, dict):
        return None, [e.invalid("", type(raw).__name__, "a Configuration must be a mapping")]
    api_version = raw.get("apiVersion") or V1BETA2
    kind = raw.get("kind") or KIND
    errs: list[FieldError] = []
    if not isinstance(api_version, str) or api_version not in WIRE_STRUCTS:
        errs.append(e.not_supported("apiVersion", api_version, API_VERSIONS))
    if kind != KIND:
        errs.append(e.not_supported("kind", kind, [KIND]))
    if errs:
        return None, errs
    wire = WIRE_STRUCTS[api_version]
    try:
        cfg = msgspec.convert(raw, wire, dec_hook=dec_hook)
    except msgspec.ValidationError:
        cfg, errs = _strict_decode(raw, wire)
        if cfg is None:
            return None, errs
    errs = duration_errors(cfg)
    if errs:
        return None, errs
    cfg.api_version, cfg.kind = api_version, KIND
    return cfg, []
