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
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import msgspec
import msgspec.inspect as mi

from kuota.api import errors as e
from kuota.api.base import GO_PATTERN_OF, RULES, Quantity, compiled_pattern
from kuota.api.errors import FieldError, child, index, key
from kuota.api.quantity import QuantityError
from kuota.api.rawwalk import TooLarge, Walk, json_type, list_duplicates, shown

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
    if out.get("type") == "array" and "items" not in out:
        # ``list[Any]``: kube-apiserver refuses an array without ``items``
        # (structural schema). Every list kuota leaves untyped is, in
        # Kubernetes' and Kueue's types, a list of objects: kept as given.
        out["items"] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return out


@functools.cache
def openapi(typ: type) -> dict[str, Any]:
    (root,), defs = msgspec.json.schema_components(
        [typ], schema_hook=_schema_hook, ref_template="#/$defs/{name}"
    )
    out = _structural(root, defs)
    _restore_union_meta(mi.type_info(typ), out, set())
    return out


def _restore_union_meta(t: Any, s: dict[str, Any], open_: set[type]) -> None:
    """msgspec drops the schema extras of ``Annotated[X, Meta(...)] | None``;
    put the CEL rules of optional fields back where the CRD has them."""
    if isinstance(t, mi.Metadata):
        _restore_union_meta(t.type, s, open_)
    elif isinstance(t, mi.UnionType):
        for member in t.types:
            if isinstance(member, mi.NoneType):
                continue
            if isinstance(member, mi.Metadata):
                rules = (member.extra_json_schema or {}).get("x-kubernetes-validations")
                if rules and "x-kubernetes-validations" not in s:
                    s["x-kubernetes-validations"] = list(rules)
            _restore_union_meta(member, s, open_)
    elif isinstance(t, mi.ListType | mi.SetType | mi.FrozenSetType):
        if isinstance(s.get("items"), dict):
            _restore_union_meta(t.item_type, s["items"], open_)
    elif isinstance(t, mi.DictType):
        if isinstance(s.get("additionalProperties"), dict):
            _restore_union_meta(t.value_type, s["additionalProperties"], open_)
    elif isinstance(t, mi.StructType) and t.cls not in open_:
        open_.add(t.cls)
        props = s.get("properties") or {}
        for f in t.fields:
            sub = props.get(f.encode_name)
            if isinstance(sub, dict):
                _restore_union_meta(f.type, sub, open_)
        open_.discard(t.cls)


# ----------------------------------------------------------------------------- raw walk
MAX_NODES = 200_000


def _walk(v: Any, s: dict[str, Any], path: str, w: Walk) -> Any:
    """Check ``v`` against ``s``; return ``v`` pruned of unknown fields."""
    w.nodes += 1
    if w.nodes > MAX_NODES:
        raise TooLarge
    if s.get("x-kubernetes-int-or-string"):
        return _walk_quantity(v, s, path, w)
    typ = s.get("type")
    if typ is None:
        return v  # preserve-unknown-fields subtree
    actual = json_type(v)
    if actual != typ and not (typ == "number" and actual == "integer"):
        if typ == "integer" and actual == "number" and float(v).is_integer():
            v = int(v)
        else:
            w.errors.append(
                FieldError(
                    path,
                    e.TYPE_INVALID,
                    f"must be of type {typ}",
                    shown(v) if actual not in ("object", "array") else actual,
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


def _walk_object(v: dict[Any, Any], s: dict[str, Any], path: str, w: Walk) -> dict[Any, Any]:
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


def _walk_array(v: list[Any], s: dict[str, Any], path: str, w: Walk) -> list[Any]:
    item = s.get("items", {})
    out = [_walk(x, item, index(path, i), w) for i, x in enumerate(v)]
    n = len(v)
    if "maxItems" in s and n > s["maxItems"]:
        w.errors.append(e.too_many(path, n, s["maxItems"]))
    if "minItems" in s and n < s["minItems"]:
        w.errors.append(
            e.invalid(path, n, f"{path} in body should have at least {s['minItems']} items")
        )
    list_duplicates(out, s, path, w)
    return out


def _check_string(v: str, s: dict[str, Any], path: str, w: Walk) -> None:
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


def _check_number(v: float, s: dict[str, Any], path: str, w: Walk) -> None:
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


def _walk_quantity(v: Any, s: dict[str, Any], path: str, w: Walk) -> Any:
    if isinstance(v, bool) or not isinstance(v, int | float | str):
        w.errors.append(
            FieldError(
                path, e.TYPE_INVALID, "must be a quantity (a string or a number)", json_type(v)
            )
        )
        return v
    try:
        Quantity.from_value(v)
    except QuantityError as err:
        w.errors.append(e.invalid(path, shown(v), str(err)))
    return v


def validate_raw(doc: Any, typ: type) -> tuple[Any, list[FieldError], list[str]]:
    """Validate a raw document against ``typ``'s schema.

    Returns the pruned document, the errors and the unknown-field warnings.
    """
    w = Walk()
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
# Every decoded object runs these checks, so each kind gets one generated
# function: straight-line code over exactly the fields that carry rules or
# list semantics (nested structs inlined, nothing else visited), and field
# paths that are built only when an error is reported.
Checker = Callable[[Any, list[FieldError]], None]


def _kind_word(v: Any) -> str:
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict | msgspec.Struct):
        return "object"
    return shown(v)


def _attr(obj: Any, wire: str) -> str:
    return _wire_to_attr(type(obj))[wire]


@functools.cache
def _wire_to_attr(cls: type) -> dict[str, str]:
    return dict(zip(cls.__struct_encode_fields__, cls.__struct_fields__, strict=True))  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class _Path:
    """A field path in generated code: the expression computing it, and its
    value when it is known at generation time (no list index or map key in it)."""

    expr: str
    known: str | None = None

    def child(self, name: str) -> _Path:
        if self.known is not None:
            p = e.child(self.known, name)
            return _Path(repr(p), p)
        return _Path(f"_child({self.expr}, {name!r})")

    def index(self, var: str) -> _Path:
        return _Path(f"_index({self.expr}, {var})")

    def key(self, var: str) -> _Path:
        return _Path(f"_key({self.expr}, {var})")

    def plus(self, suffix: str) -> _Path:
        if self.known is not None:
            return _Path(repr(self.known + suffix), self.known + suffix)
        return _Path(f"{self.expr} + {suffix!r}")


def _indent(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines]


class _Gen:
    """Writes the source of one kind's checker; values it needs become names
    in the function's globals."""

    def __init__(self) -> None:
        self.ns: dict[str, Any] = {
            "_child": e.child,
            "_index": index,
            "_key": key,
            "_invalid": e.invalid,
            "_duplicate": e.duplicate,
            "_kind_word": _kind_word,
            "_attr": _attr,
        }
        self.n = 0
        self.open: set[type] = set()  # structs being inlined: a recursive type stops here

    def const(self, value: Any) -> str:
        name = f"_c{len(self.ns)}"
        self.ns[name] = value
        return name

    def var(self, stem: str) -> str:
        self.n += 1
        return f"{stem}{self.n}"

    def node(self, t: mi.Type, v: str, p: _Path) -> list[str] | None:
        """Lines checking the value in variable ``v`` (of type ``t``, not None
        unless a union allows it) at path ``p``; None when nothing in it has rules."""
        if isinstance(t, mi.Metadata):
            return self.metadata(t, v, p)
        if isinstance(t, mi.UnionType):
            body = self.present(t, v, p)
            return None if body is None else [f"if {v} is not None:", *_indent(body)]
        if isinstance(t, mi.ListType):
            i, x = self.var("i"), self.var("x")
            body = self.node(t.item_type, x, p.index(i))
            return None if body is None else [f"for {i}, {x} in enumerate({v}):", *_indent(body)]
        if isinstance(t, mi.DictType):
            k, x = self.var("k"), self.var("x")
            body = self.node(t.value_type, x, p.key(k))
            return None if body is None else [f"for {k}, {x} in {v}.items():", *_indent(body)]
        if isinstance(t, mi.StructType):
            return self.struct(t, v, p)
        return None

    def present(self, t: mi.Type, v: str, p: _Path) -> list[str] | None:
        """``node`` for a value known not to be None."""
        if not isinstance(t, mi.UnionType):
            return self.node(t, v, p)
        # The first member with checks applies (unions here are "T | None").
        for x in t.types:
            if not isinstance(x, mi.NoneType):
                body = self.node(x, v, p)
                if body is not None:
                    return body
        return None

    def struct(self, t: mi.StructType, v: str, p: _Path) -> list[str] | None:
        if t.cls in self.open:
            return None
        self.open.add(t.cls)
        lines: list[str] = []
        for f in t.fields:
            x = self.var("x")
            body = self.present(f.type, x, p.child(f.encode_name))
            if body is not None:
                lines += [f"{x} = {v}.{f.name}", f"if {x} is not None:", *_indent(body)]
        self.open.discard(t.cls)
        return lines or None

    def metadata(self, t: mi.Metadata, v: str, p: _Path) -> list[str] | None:
        inner = self.node(t.type, v, p)
        extra = t.extra_json_schema or {}
        rules = [
            RULES[(r["rule"], r["message"])] for r in extra.get("x-kubernetes-validations", ())
        ]
        list_type = extra.get("x-kubernetes-list-type")
        map_keys = (
            tuple(extra.get("x-kubernetes-list-map-keys", ())) if list_type == "map" else None
        )
        if not rules and map_keys is None and list_type != "set":
            return inner
        # The order errors come in: the value's insides, its rules, then duplicates.
        lines = list(inner or ())
        for r in rules:
            rp = p.plus(r.field_path) if r.field_path else p
            lines += [
                f"if not {self.const(r.check)}({v}):",
                f"    errs.append(_invalid({rp.expr}, _kind_word({v}), {self.const(r.message)}))",
            ]
        if map_keys is None and list_type != "set":
            return lines
        i, x, seen, sig = self.var("i"), self.var("x"), self.var("seen"), self.var("sig")
        if map_keys is None:
            sig_expr, shown = x, sig
        else:
            attrs = _item_attrs(t.type, map_keys)
            parts = [
                f"{x}.{a}" if a is not None else f"getattr({x}, _attr({x}, {k!r}))"
                for k, a in zip(map_keys, attrs, strict=True)
            ]
            # One key: the value itself stands for the 1-tuple (same equality).
            sig_expr = parts[0] if len(parts) == 1 else f"({', '.join(parts)})"
            shown = sig if len(parts) == 1 else f"list({sig})"
        # Fewer than two items cannot repeat.
        return [
            *lines,
            f"if len({v}) > 1:",
            f"    {seen} = set()",
            f"    for {i}, {x} in enumerate({v}):",
            f"        {sig} = {sig_expr}",
            f"        if {sig} in {seen}:",
            f"            errs.append(_duplicate({p.index(i).expr}, {shown}))",
            f"        {seen}.add({sig})",
        ]


def _item_attrs(t: mi.Type, wire_keys: tuple[str, ...]) -> list[str | None]:
    """Attribute names of a list-map's keys when its items are one struct type
    (None where only the item's own type can tell)."""
    item = t.item_type if isinstance(t, mi.ListType) else None
    while isinstance(item, mi.Metadata):
        item = item.type
    if not isinstance(item, mi.StructType):
        return [None] * len(wire_keys)
    names = {f.encode_name: f.name for f in item.fields}
    return [names.get(k) for k in wire_keys]


_CHECKERS: dict[tuple[type, Any], Checker] = {}


def _checker(typ: type, root_rules: Any) -> Checker:
    g = _Gen()
    body = g.node(mi.type_info(typ), "obj", _Path('""', "")) or []
    extra = (root_rules.extra_json_schema if root_rules is not None else None) or {}
    for r in extra.get("x-kubernetes-validations", ()):
        rule = RULES[(r["rule"], r["message"])]
        body += [
            f"if not {g.const(rule.check)}(obj):",
            f"    errs.append(_invalid('', 'object', {g.const(rule.message)}))",
        ]
    src = "\n".join(["def check(obj, errs):", *_indent(body or ["pass"])])
    exec(compile(src, f"<rules of {typ.__qualname__}>", "exec"), g.ns)
    check: Checker = g.ns["check"]
    return check


def check_rules(obj: Any, typ: type, root_rules: Any = None) -> list[FieldError]:
    """CEL rules and list uniqueness of ``obj`` (a decoded ``typ``)."""
    c = _CHECKERS.get((typ, root_rules))
    if c is None:
        c = _CHECKERS[(typ, root_rules)] = _checker(typ, root_rules)
    errs: list[FieldError] = []
    c(obj, errs)
    return errs
