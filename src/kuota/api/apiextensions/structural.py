"""A custom resource read as kube-apiserver reads it against its CRD's
structural schema (apiextensions-apiserver: structural defaulting, pruning,
then the OpenAPI schema validation of kube-openapi): defaults of absent (or
null) fields applied, unknown fields pruned unless
``x-kubernetes-preserve-unknown-fields``, then types, required, enum,
pattern, formats, bounds, sizes and the list types checked, with
kube-apiserver's messages and field paths; then the
``x-kubernetes-validations`` (CEL) rules (``cel_rules``; transition rules
on updates, in ``kuota.controllers.crd_updates``).

Pure: no I/O.
"""

from __future__ import annotations

import copy
import json
from datetime import datetime
from typing import Any, Final

import msgspec

from kuota.api import errors as e
from kuota.api.apiextensions.cel_rules import BLOCKED, has_rules, validate_rules
from kuota.api.base import compiled_pattern
from kuota.api.errors import FieldError, child, index, key
from kuota.api.quantity import Quantity, QuantityError
from kuota.api.rawwalk import TooLarge, Walk, json_type, list_duplicates, shown

__all__ = ["MAX_NODES", "validate_custom"]

MAX_NODES: Final = 1_000_000
_INT64: Final = (-(2**63), 2**63 - 1)


def _go(v: Any) -> str:
    """A value as kube-openapi's messages print it."""
    return (
        json.dumps(v) if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else str(v)
    )


def _where(path: str) -> str:
    return path or "body"


def _walk(v: Any, s: dict[str, Any], path: str, w: Walk) -> Any:
    w.nodes += 1
    if w.nodes > MAX_NODES:
        raise TooLarge
    if v is None:
        if not s.get("nullable"):
            w.errors.append(
                FieldError(
                    path,
                    e.TYPE_INVALID,
                    f'{_where(path)} in body must be of type {s.get("type", "object")}: "null"',
                    None,
                )
            )
        return v
    if s.get("x-kubernetes-int-or-string"):
        if isinstance(v, bool) or not isinstance(v, int | str):
            w.errors.append(
                FieldError(
                    path,
                    e.TYPE_INVALID,
                    f"{_where(path)} in body must be of type integer,string: {_go(json_type(v))}",
                    shown(v),
                )
            )
        return v
    typ = s.get("type")
    if typ is None:
        return v  # x-kubernetes-preserve-unknown-fields (or embedded) without a type
    actual = json_type(v)
    if actual != typ and not (typ == "number" and actual == "integer"):
        if typ == "integer" and actual == "number" and float(v).is_integer():
            v = int(v)
        else:
            w.errors.append(
                FieldError(
                    path,
                    e.TYPE_INVALID,
                    f"{_where(path)} in body must be of type {typ}: {_go(actual)}",
                    shown(v),
                )
            )
            return v
    if typ == "object":
        v = _walk_object(v, s, path, w)
    elif typ == "array":
        v = _walk_array(v, s, path, w)
    elif typ == "string":
        _check_string(v, s, path, w)
    elif typ in ("integer", "number"):
        _check_number(v, s, path, w)
    if "enum" in s and v not in s["enum"]:
        w.errors.append(e.not_supported(path, shown(v), [_go(x).strip('"') for x in s["enum"]]))
    return v


def _walk_object(v: dict[str, Any], s: dict[str, Any], path: str, w: Walk) -> dict[str, Any]:
    props: dict[str, Any] | None = s.get("properties")
    addl = s.get("additionalProperties")
    preserve = bool(s.get("x-kubernetes-preserve-unknown-fields"))
    embedded = bool(s.get("x-kubernetes-embedded-resource"))
    out: dict[str, Any] = {}
    # Structural defaulting: absent fields (and nulls of non-nullable ones) take their default.
    for k, ps in (props or {}).items():
        if "default" in ps and (k not in v or (v[k] is None and not ps.get("nullable"))):
            v = {**v, k: copy.deepcopy(ps["default"])}
    for k, sub in v.items():
        kp = child(path, str(k))
        ps = props.get(k) if props is not None else None
        if ps is None and isinstance(addl, dict):
            ps = addl
            kp = key(path, str(k))
        if ps is None:
            if (embedded and k in ("apiVersion", "kind", "metadata")) or preserve or addl is True:
                out[k] = sub
            else:
                w.warnings.append(f'unknown field "{kp}"')
            continue
        if sub is None and not ps.get("nullable"):
            continue  # pruned, as the API server drops nulls of non-nullable fields
        out[k] = _walk(sub, ps, kp, w)
    for r in s.get("required", ()):
        if r not in out:
            w.errors.append(e.required(child(path, r)))
    n = len(out)
    if "maxProperties" in s and n > s["maxProperties"]:
        w.errors.append(e.too_many(path, n, s["maxProperties"]))
    if "minProperties" in s and n < s["minProperties"]:
        w.errors.append(
            e.invalid(
                path,
                n,
                f"{_where(path)} in body should have at least {s['minProperties']} properties",
            )
        )
    return out


def _walk_array(v: list[Any], s: dict[str, Any], path: str, w: Walk) -> list[Any]:
    item = s.get("items") or {}
    out = [_walk(x, item, index(path, i), w) for i, x in enumerate(v)]
    n = len(out)
    if "maxItems" in s and n > s["maxItems"]:
        w.errors.append(e.too_many(path, n, s["maxItems"]))
    if "minItems" in s and n < s["minItems"]:
        w.errors.append(
            e.invalid(path, n, f"{_where(path)} in body should have at least {s['minItems']} items")
        )
    list_duplicates(out, s, path, w)
    return out


def _check_string(v: str, s: dict[str, Any], path: str, w: Walk) -> None:
    where = _where(path)
    if "maxLength" in s and len(v) > s["maxLength"]:
        w.errors.append(e.too_long(path, s["maxLength"]))
    if "minLength" in s and len(v) < s["minLength"]:
        w.errors.append(
            e.invalid(path, v, f"{where} in body should be at least {s['minLength']} chars long")
        )
    pat = s.get("pattern")
    if pat is not None and not compiled_pattern(pat).search(v):
        w.errors.append(e.invalid(path, v, f"{where} in body should match '{pat}'"))
    fmt = s.get("format")
    if fmt == "date-time":
        try:
            msgspec.convert(v, datetime)
        except msgspec.ValidationError:
            w.errors.append(
                e.invalid(path, v, f"{where} in body must be of type date-time: {_go(v)}")
            )
    elif fmt == "quantity":
        try:
            Quantity.from_value(v)
        except QuantityError as err:
            w.errors.append(e.invalid(path, v, str(err)))


def _check_number(v: float, s: dict[str, Any], path: str, w: Walk) -> None:
    where = _where(path)
    lo, hi = s.get("minimum"), s.get("maximum")
    if lo is not None:
        if s.get("exclusiveMinimum") and v <= lo:
            w.errors.append(e.invalid(path, v, f"{where} in body should be greater than {_go(lo)}"))
        elif v < lo:
            w.errors.append(
                e.invalid(path, v, f"{where} in body should be greater than or equal to {_go(lo)}")
            )
    if hi is not None:
        if s.get("exclusiveMaximum") and v >= hi:
            w.errors.append(e.invalid(path, v, f"{where} in body should be less than {_go(hi)}"))
        elif v > hi:
            w.errors.append(
                e.invalid(path, v, f"{where} in body should be less than or equal to {_go(hi)}")
            )
    m = s.get("multipleOf")
    if m and (v / m) != int(v / m):
        w.errors.append(e.invalid(path, v, f"{where} in body should be a multiple of {_go(m)}"))
    if s.get("type") == "integer" and not _INT64[0] <= v <= _INT64[1]:
        w.errors.append(e.invalid(path, v, "must be a 64-bit integer"))


def validate_custom(
    raw: dict[str, Any], schema: dict[str, Any]
) -> tuple[dict[str, Any] | None, list[FieldError], list[str]]:
    """A custom resource against its version's ``openAPIV3Schema``: the
    defaulted and pruned document (apiVersion, kind and metadata as given),
    the errors and the pruned fields' warnings."""
    w = Walk()
    body = {k: v for k, v in raw.items() if k not in ("apiVersion", "kind", "metadata")}
    props = dict(schema.get("properties") or {})
    for k in ("apiVersion", "kind", "metadata"):
        props.pop(k, None)
    root = {**schema, "type": "object", "properties": props}
    root.pop("required", None)
    try:
        out = _walk_object(body, root, "", w)
    except TooLarge:
        return (
            None,
            [e.FieldError("", e.TOO_MANY, f"document has more than {MAX_NODES} nodes")],
            w.warnings,
        )
    for r in schema.get("required") or ():
        if r not in ("apiVersion", "kind", "metadata") and r not in out:
            w.errors.append(e.required(r))
    head = {k: raw[k] for k in ("apiVersion", "kind", "metadata") if k in raw}
    full = {**head, **out}
    if has_rules(schema):
        # kube-apiserver runs the CEL rules after the schema's checks, unless
        # one of those found a value of the wrong type (hasBlockingErr).
        if any(_blocking(err) for err in w.errors):
            w.errors.append(e.invalid("", None, BLOCKED))
        else:
            w.errors.extend(validate_rules(full, schema))
    return full, w.errors, w.warnings


def _blocking(err: FieldError) -> bool:
    return err.type == e.NOT_SUPPORTED or " must be of type " in err.detail
