"""Schemas from the types: CRD OpenAPI export, raw-document validation, CEL rules.

Three consumers, one source (the annotated structs of ``base``):

* ``openapi(T)`` gives the Kubernetes structural schema of a type (what
  ``kuota crds`` prints and what the validator walks).
* ``validate_raw(doc, T)`` walks a raw document (dicts and lists as YAML/JSON
  decoding gives them) against that schema as the API server does: every error
  at once, unknown fields reported as warnings and pruned.
* ``check_rules(obj, T)`` runs, on a decoded struct, what msgspec cannot check
  while decoding: CEL rules and list-map/set uniqueness.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

import msgspec
import msgspec.inspect as mi

from kuota.api import errors as e
from kuota.api.base import GO_PATTERN_OF, RULES, Quantity, compiled_pattern
from kuota.api.errors import FieldError, child, index, key
from kuota.api.quantity import QuantityError

QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
    r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
INT32 = (-(2**31), 2**31 - 1)


def _schema_hook(typ: type) -> dict[str, Any]:
    if typ is Quantity:
        return {
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "pattern": QUANTITY_PATTERN,
            "x-kubernetes-int-or-string": True,
        }
    raise NotImplementedError


def _structural(node: Any, defs: dict[str, Any], stack: tuple[str, ...] = ()) -> dict[str, Any]:
    """msgspec's JSON Schema -> Kubernetes structural schema (refs inlined,
    optional-null unions collapsed, enums typed, titles dropped)."""
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        if name in stack:  # no recursive kinds in this API; guard anyway
            return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        merged = {**defs[name], **{k: v for k, v in node.items() if k != "$ref"}}
        return _structural(merged, defs, (*stack, name))
    out: dict[str, Any] = {}
    any_of = node.get("anyOf")
    if any_of is not None and not node.get("x-kubernetes-int-or-string"):
        non_null = [s for s in any_of if s.get("type") != "null"]
        if len(non_null) == 1:
            extra = {k: v for k, v in node.items() if k != "anyOf"}
            return _structural({**non_null[0], **extra}, defs, stack)
    for k, v in node.items():
        if k in ("title", "$defs"):
            continue
        if k == "properties":
            out[k] = {pk: _structural(pv, defs, stack) for pk, pv in v.items()}
        elif k == "items":
            out[k] = _structural(v, defs, stack)
        elif k == "additionalProperties":
            if v is False:
                continue  # structural schemas prune instead
            out[k] = _structural(v, defs, stack) if isinstance(v, dict) else v
        elif k == "required":
            if v:
                out[k] = list(v)
        elif k == "default":
            if v is not None:
                out[k] = v
        elif k == "pattern":
            out[k] = GO_PATTERN_OF.get(v, v)
        else:
            out[k] = v
    if "enum" in out and "type" not in out:
        out["type"] = "string"
    if out.get("type") == "integer" and (out.get("minimum"), out.get("maximum")) == INT32:
        del out["minimum"], out["maximum"]
        out["format"] = "int32"
    elif out.get("type") == "integer" and out.get("maximum") == INT32[1]:
        del out["maximum"]
        out["format"] = "int32"
    if "type" not in out and "anyOf" not in out and "x-kubernetes-int-or-string" not in out:
        out["x-kubernetes-preserve-unknown-fields"] = True
    return out


@functools.cache
def openapi(typ: type) -> dict[str, Any]:
    (root,), defs = msgspec.json.schema_components(
        [typ], schema_hook=_schema_hook, ref_template="#/$defs/{name}"
    )
    return _structural(root, defs)


# ----------------------------------------------------------------------------- raw walk
MAX_NODES = 200_000


class _Walk:
    __slots__ = ("errors", "nodes", "warnings")

    def __init__(self) -> None:
        self.errors: list[FieldError] = []
        self.warnings: list[str] = []
        self.nodes = 0


class TooLarge(Exception):
    pass


def _json_type(v: Any) -> str:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, dict):
        return "object"
    if isinstance(v, list):
        return "array"
    return type(v).__name__


def _shown(v: Any) -> Any:
    return v if isinstance(v, str | int | float | bool) or v is None else str(v)


def _walk(v: Any, s: dict[str, Any], path: str, w: _Walk) -> Any:
    """Check ``v`` against ``s``; return ``v`` pruned of unknown fields."""
    w.nodes += 1
    if w.nodes > MAX_NODES:
        raise TooLarge
    if s.get("x-kubernetes-int-or-string"):
        return _walk_quantity(v, s, path, w)
    typ = s.get("type")
    if typ is None:
        return v  # preserve-unknown-fields subtree
    actual = _json_type(v)
    if actual != typ and not (typ == "number" and actual == "integer"):
        if typ == "integer" and actual == "number" and float(v).is_integer():
            v = int(v)
        else:
            w.errors.append(
                FieldError(
                    path,
                    e.TYPE_INVALID,
                    f"must be of type {typ}",
                    _shown(v) if actual not in ("object", "array") else actual,
                )
            )
            return v
    if typ == "object":
        return _walk_object(v, s, path, w)
    if typ == "array":
        return _walk_array(v, s, path, w)
    if typ == "string":
        _check_string(v, s, path, w)
    elif typ in ("integer", "number"):
        _check_number(v, s, path, w)
    return v


def _walk_object(v: dict[Any, Any], s: dict[str, Any], path: str, w: _Walk) -> dict[Any, Any]:
    props = s.get("properties")
    out: dict[Any, Any] = {}
    if props is not None:
        for k, sub in v.items():
            kp = child(path, str(k))
            ps = props.get(k) if isinstance(k, str) else None
            if ps is None:
                w.warnings.append(f'unknown field "{kp}"')
                continue
            if sub is None:
                continue  # the API server prunes nulls of non-nullable fields
            out[k] = _walk(sub, ps, kp, w)
        for r in s.get("required", ()):
            if r not in out:
                w.errors.append(e.required(child(path, r)))
    else:
        addl = s.get("additionalProperties")
        for k, sub in v.items():
            if not isinstance(k, str):
                w.errors.append(e.invalid(path, str(k), "map keys must be strings"))
                continue
            if isinstance(addl, dict):
                out[k] = _walk(sub, addl, key(path, k), w) if sub is not None else sub
            else:
                out[k] = sub
    n = len(v)
    if "maxProperties" in s and n > s["maxProperties"]:
        w.errors.append(e.too_many(path, n, s["maxProperties"]))
    if "minProperties" in s and n < s["minProperties"]:
        w.errors.append(
            e.invalid(
                path, n, f"{path} in body should have at least {s['minProperties']} properties"
            )
        )
    return out


def _walk_array(v: list[Any], s: dict[str, Any], path: str, w: _Walk) -> list[Any]:
    item = s.get("items", {})
    out = [_walk(x, item, index(path, i), w) for i, x in enumerate(v)]
    n = len(v)
    if "maxItems" in s and n > s["maxItems"]:
        w.errors.append(e.too_many(path, n, s["maxItems"]))
    if "minItems" in s and n < s["minItems"]:
        w.errors.append(
            e.invalid(path, n, f"{path} in body should have at least {s['minItems']} items")
        )
    lt = s.get("x-kubernetes-list-type")
    if lt == "map":
        keys = s.get("x-kubernetes-list-map-keys", [])
        props = item.get("properties", {})
        seen: set[str] = set()
        for i, x in enumerate(out):
            if not isinstance(x, dict):
                continue
            # Map keys are compared after defaulting (podSet name defaults to main).
            kv = {k: x.get(k, props.get(k, {}).get("default")) for k in keys}
            sig = json.dumps(kv, sort_keys=True, default=str)
            if sig in seen:
                w.errors.append(
                    e.duplicate(index(path, i), kv if len(kv) > 1 else next(iter(kv.values())))
                )
            seen.add(sig)
    elif lt == "set":
        seen_set: set[str] = set()
        for i, x in enumerate(out):
            sig = json.dumps(x, sort_keys=True, default=str)
            if sig in seen_set:
                w.errors.append(e.duplicate(index(path, i), _shown(x)))
            seen_set.add(sig)
    return out


def _check_string(v: str, s: dict[str, Any], path: str, w: _Walk) -> None:
    if "enum" in s and v not in s["enum"]:
        w.errors.append(e.not_supported(path, v, s["enum"]))
        return
    if "maxLength" in s and len(v) > s["maxLength"]:
        w.errors.append(e.too_long(path, s["maxLength"]))
    if "minLength" in s and len(v) < s["minLength"]:
        w.errors.append(
            e.invalid(path, v, f"{path} in body should be at least {s['minLength']} chars long")
        )
    pat = s.get("pattern")
    if pat is not None and not compiled_pattern(pat).search(v):
        w.errors.append(e.invalid(path, v, f"{path} in body should match '{pat}'"))
    if s.get("format") == "date-time":
        try:
            msgspec.convert(v, datetime)
        except msgspec.ValidationError:
            w.errors.append(e.invalid(path, v, f"{path} in body must be of type date-time"))


def _check_number(v: float, s: dict[str, Any], path: str, w: _Walk) -> None:
    if "minimum" in s and v < s["minimum"]:
        w.errors.append(
            e.invalid(path, v, f"{path} in body should be greater than or equal to {s['minimum']}")
        )
    if "maximum" in s and v > s["maximum"]:
        w.errors.append(
            e.invalid(path, v, f"{path} in body should be less than or equal to {s['maximum']}")
        )
    if s.get("format") == "int32" and not INT32[0] <= v <= INT32[1]:
        w.errors.append(e.invalid(path, v, "must be a 32-bit integer"))
    if "enum" in s and v not in s["enum"]:
        w.errors.append(e.not_supported(path, v, [str(x) for x in s["enum"]]))


def _walk_quantity(v: Any, s: dict[str, Any], path: str, w: _Walk) -> Any:
    if isinstance(v, bool) or not isinstance(v, int | float | str):
        w.errors.append(
            FieldError(
                path, e.TYPE_INVALID, "must be a quantity (a string or a number)", _json_type(v)
            )
        )
        return v
    try:
        Quantity.from_value(v)
    except QuantityError as err:
        w.errors.append(e.invalid(path, _shown(v), str(err)))
    return v


def validate_raw(doc: Any, typ: type) -> tuple[Any, list[FieldError], list[str]]:
    """Validate a raw document against ``typ``'s schema.

    Returns the pruned document, the errors and the unknown-field warnings.
    """
    w = _Walk()
    try:
        pruned = _walk(doc, openapi(typ), "", w)
    except TooLarge:
        return (
            None,
            [e.FieldError("", e.TOO_MANY, f"document has more than {MAX_NODES} nodes")],
            w.warnings,
        )
    return pruned, w.errors, w.warnings


# ----------------------------------------------------------------------------- rules on structs
Check = Callable[[Any, str, list[FieldError]], None]


def _kind_word(v: Any) -> str:
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict | msgspec.Struct):
        return "object"
    return _shown(v)


def _compile(t: mi.Type) -> Check | None:
    """A checker for values of type ``t`` or None when nothing in it has rules."""
    if isinstance(t, mi.Metadata):
        inner = _compile(t.type)
        extra = t.extra_json_schema or {}
        rules = [RULES[r["rule"]] for r in extra.get("x-kubernetes-validations", ())]
        list_keys = (
            tuple(extra.get("x-kubernetes-list-map-keys", ()))
            if extra.get("x-kubernetes-list-type") == "map"
            else None
        )
        is_set = extra.get("x-kubernetes-list-type") == "set"
        if not rules and list_keys is None and not is_set:
            return inner

        def check_meta(v: Any, path: str, errs: list[FieldError]) -> None:
            if inner is not None:
                inner(v, path, errs)
            for r in rules:
                if not r.check(v):
                    p = path + r.field_path if r.field_path else path
                    errs.append(e.invalid(p, _kind_word(v), r.message))
            if list_keys is not None:
                seen: set[tuple[Any, ...]] = set()
                for i, x in enumerate(v):
                    sig = tuple(getattr(x, _attr(x, k)) for k in list_keys)
                    if sig in seen:
                        errs.append(
                            e.duplicate(index(path, i), sig[0] if len(sig) == 1 else list(sig))
                        )
                    seen.add(sig)
            elif is_set:
                seen_v: set[Any] = set()
                for i, x in enumerate(v):
                    if x in seen_v:
                        errs.append(e.duplicate(index(path, i), x))
                    seen_v.add(x)

        return check_meta
    if isinstance(t, mi.UnionType):
        subs = [_compile(x) for x in t.types if not isinstance(x, mi.NoneType)]
        subs = [c for c in subs if c is not None]
        if not subs:
            return None
        only = subs[0]

        def check_union(v: Any, path: str, errs: list[FieldError]) -> None:
            if v is not None:
                only(v, path, errs)

        return check_union
    if isinstance(t, mi.ListType):
        item = _compile(t.item_type)
        if item is None:
            return None

        def check_list(v: list[Any], path: str, errs: list[FieldError]) -> None:
            for i, x in enumerate(v):
                item(x, index(path, i), errs)

        return check_list
    if isinstance(t, mi.DictType):
        val = _compile(t.value_type)
        if val is None:
            return None

        def check_dict(v: dict[str, Any], path: str, errs: list[FieldError]) -> None:
            for k, x in v.items():
                val(x, key(path, k), errs)

        return check_dict
    if isinstance(t, mi.StructType):
        return _struct_checker(t.cls)
    return None


def _attr(obj: Any, wire: str) -> str:
    return _wire_to_attr(type(obj))[wire]


@functools.cache
def _wire_to_attr(cls: type) -> dict[str, str]:
    info = mi.type_info(cls)
    return {f.encode_name: f.name for f in info.fields}  # type: ignore[attr-defined]


_STRUCT_CHECKERS: dict[type, Check | None] = {}
_IN_PROGRESS: set[type] = set()


def _struct_checker(cls: type) -> Check | None:
    if cls in _STRUCT_CHECKERS:
        return _STRUCT_CHECKERS[cls]
    if cls in _IN_PROGRESS:
        return None
    _IN_PROGRESS.add(cls)
    info = mi.type_info(cls)
    fields = []
    for f in info.fields:  # type: ignore[attr-defined]
        c = _compile(f.type)
        if c is not None:
            fields.append((f.name, f.encode_name, c))
    _IN_PROGRESS.discard(cls)
    if not fields:
        _STRUCT_CHECKERS[cls] = None
        return None

    def check_struct(v: Any, path: str, errs: list[FieldError]) -> None:
        for attr, wire, c in fields:
            x = getattr(v, attr)
            if x is not None:
                c(x, child(path, wire), errs)

    _STRUCT_CHECKERS[cls] = check_struct
    return check_struct


def check_rules(obj: Any, typ: type, root_rules: Any = None) -> list[FieldError]:
    """CEL rules and list uniqueness of ``obj`` (a decoded ``typ``)."""
    errs: list[FieldError] = []
    c = _struct_checker(typ)
    if c is not None:
        c(obj, "", errs)
    if root_rules is not None:
        for r in (root_rules.extra_json_schema or {}).get("x-kubernetes-validations", ()):
            rule = RULES[r["rule"]]
            if not rule.check(obj):
                errs.append(e.invalid("", "object", rule.message))
    return errs
