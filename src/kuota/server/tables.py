"""``kubectl get`` tables: the server-side Table a client asks for with
``Accept: application/json;as=Table;v=v1;g=meta.k8s.io``.

A kind with JSON-path columns (a CRD's additionalPrinterColumns: Kueue's,
LWS's, kuota's own) gets its cells from the paths; a built-in kind gets the
cells the API server's printers compute (``builtin_cells``). Dates print as
kube's human ages (``5m``, ``3d4h``), against the control plane's clock.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from datetime import datetime
from typing import Any, Final

import msgspec

from kuota.api.jsonpath import select
from kuota.api.kindspec import PrinterColumn
from kuota.server.builtin_cells import BUILTIN_CELLS, human_age
from kuota.server.served import Served, encode
from kuota.server.wireform import attr_of, full_builtins

TABLE_TYPE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def _struct_field(node: Any, name: str) -> Any:
    if isinstance(node, msgspec.Struct):
        attr = attr_of(type(node), name)
        return getattr(node, attr, None) if attr is not None else None
    return node.get(name) if isinstance(node, dict) else None


def struct_path(value: Any, path: str) -> list[Any]:
    """A printer column's JSONPath read on the API struct itself (wire names
    mapped to its fields), without encoding the object: a column reads a few
    fields of each of thousands of objects. A struct's defaulted fields are
    there."""
    return [full_builtins(v) for v in select(value, path, _struct_field)]


# A column path of fields with at most one filter (``.status.conditions[?(
# @.type=="Admitted")].status``, every printer column of Kueue's kinds) is
# read by a walk of its own, not the general selection: a table of 50,000
# Workloads reads 250,000 cells.
_SIMPLE: Final = re.compile(
    r"^((?:\.[A-Za-z0-9_\-/]+)+)"
    r"""(?:\[\?\(@\.([\w-]+)\s*==\s*["']([^"']*)["']\)\]((?:\.[A-Za-z0-9_\-/]+)*))?$"""
)
Getter = Callable[[Any], list[Any]]
_GETTERS: dict[tuple[type, str], Getter] = {}


def _struct_of(t: Any) -> type | None:
    """The struct class a field of type ``t`` holds (through Optional)."""
    if isinstance(t, msgspec.inspect.Metadata):
        return _struct_of(t.type)
    if isinstance(t, msgspec.inspect.StructType):
        return t.cls
    if isinstance(t, msgspec.inspect.UnionType):
        found = [c for x in t.types if (c := _struct_of(x)) is not None]
        others = [x for x in t.types if not isinstance(x, msgspec.inspect.NoneType)]
        return found[0] if len(found) == 1 and len(others) == 1 else None
    return None


def _attrs(cls: type | None, names: list[str]) -> tuple[str, type | None] | None:
    """The dotted attribute path of wire ``names`` from struct ``cls``, and
    the class of a struct it ends on; None unless every step but the last
    is a struct field of one struct type."""
    attrs: list[str] = []
    for i, name in enumerate(names):
        if cls is None:
            return None
        attr = attr_of(cls, name)
        if attr is None:
            return None
        attrs.append(attr)
        info = msgspec.inspect.type_info(cls)
        assert isinstance(info, msgspec.inspect.StructType)
        ftype = next(f.type for f in info.fields if f.name == attr)
        if i == len(names) - 1:
            if isinstance(ftype, msgspec.inspect.Metadata):
                ftype = ftype.type
            if isinstance(ftype, msgspec.inspect.UnionType):
                lists = [
                    x
                    for t in ftype.types
                    if isinstance(
                        x := t.type if isinstance(t, msgspec.inspect.Metadata) else t,
                        msgspec.inspect.ListType,
                    )
                ]
                ftype = lists[0] if len(lists) == 1 else ftype
            item = ftype.item_type if isinstance(ftype, msgspec.inspect.ListType) else None
            return ".".join(attrs), _struct_of(item) if item is not None else None
        cls = _struct_of(ftype)
    return ".".join(attrs), None


def _get(dotted: str) -> Callable[[Any], Any]:
    getter = operator.attrgetter(dotted)

    def get(node: Any) -> Any:
        try:
            return getter(node)
        except AttributeError:  # (a None on the way)
            return None

    return get


def _compile(cls: type, path: str) -> Getter:
    """A column's path from the struct type's own fields, read by attribute
    getters (C) instead of the general selection: a table of 50,000
    Workloads reads 250,000 cells. Paths of fields with at most one filter
    (every printer column of Kueue's kinds); any other: the selection."""
    general: Getter = lambda root: _general(root, path)  # noqa: E731
    m = _SIMPLE.match(path)
    if m is None:
        return general
    head = _attrs(cls, m.group(1)[1:].split("."))
    if head is None:
        return general
    get_head = _get(head[0])
    if m.group(2) is None:

        def fields(root: Any) -> list[Any]:
            v = get_head(root)
            return [] if v is None else [v]

        return fields
    key = _attrs(head[1], [m.group(2)])
    tail = _attrs(head[1], m.group(4)[1:].split(".")) if m.group(4) else ("", None)
    if key is None or tail is None:
        return general
    get_key, want = _get(key[0]), m.group(3)
    get_tail = _get(tail[0]) if tail[0] else None

    def filtered(root: Any) -> list[Any]:
        items = get_head(root)
        if not isinstance(items, list):
            return []
        out = []
        for x in items:
            got = get_key(x)
            if got is not None and str(got) == want:
                v = get_tail(x) if get_tail is not None else x
                if v is not None:
                    out.append(v)
        return out

    return filtered


class Counts:
    """Cells read by the general selection, not a compiled getter (a
    structural count; never reset)."""

    general = 0


def _general(root: Any, path: str) -> list[Any]:
    Counts.general += 1
    return select(root, path, _struct_field)


def _raw_path(value: Any, path: str) -> list[Any]:
    cls = type(value)
    get = _GETTERS.get((cls, path))
    if get is None:
        if not isinstance(value, msgspec.Struct):
            return _general(value, path)
        get = _GETTERS[(cls, path)] = _compile(cls, path)
    return get(value)


def _cell(col: PrinterColumn, wire_obj: Any, now: datetime) -> Any:
    raw = _raw_path(wire_obj, col.json_path)
    if not raw:
        return None
    if col.type == "date" and len(raw) == 1 and isinstance(raw[0], datetime):
        return human_age(raw[0], now)  # (not through its text and back)
    values = [full_builtins(v) for v in raw]
    v = values[0] if len(values) == 1 else ",".join(str(x) for x in values)
    if col.type == "date" and isinstance(v, str):
        try:
            return human_age(datetime.fromisoformat(v.replace("Z", "+00:00")), now)
        except ValueError:
            return v
    return v


def columns_of(served: Served) -> tuple[PrinterColumn, ...]:
    cols = served.version.columns
    if not cols:  # apiextensions' serveDefaultColumnsIfEmpty
        return (PrinterColumn("Age", "date", ".metadata.creationTimestamp"),)
    return cols


def column_definitions(served: Served) -> list[dict[str, Any]]:
    defs = [
        {
            "name": "Name",
            "type": "string",
            "format": "name",
            "description": "Name must be unique within a namespace.",
            "priority": 0,
        }
    ]
    for c in columns_of(served):
        defs.append(
            {
                "name": c.name,
                "type": "string" if c.type == "date" else c.type,
                "format": "",
                "description": c.name,
                "priority": c.priority,
            }
        )
    return defs


RowFn = Callable[[dict[str, Any], datetime], list[Any]]


def row(served: Served, obj: Any, now: datetime, include: str) -> dict[str, Any]:
    """A row of an internal object (as the served version shows it)."""
    wire_obj = served.version.from_internal(obj)
    meta = full_builtins(wire_obj.metadata)
    cols = columns_of(served)
    builtin = BUILTIN_CELLS.get((served.group, served.kind))
    if builtin is not None and not any(c.json_path for c in cols):
        # Of the internal object, as kube-apiserver's printers read its
        # internal version (an autoscaling/v1 HPA shows its v2 metrics).
        cells = [meta.get("name", ""), *builtin(full_builtins(obj), now)]
        cells += [""] * (len(cols) + 1 - len(cells))
        cells = cells[: len(cols) + 1]
    else:
        cells = [meta.get("name", ""), *(_cell(c, wire_obj, now) for c in cols)]
    out: dict[str, Any] = {"cells": cells}
    if include == "Object":
        out["object"] = encode(obj, served)
    elif include != "None":
        out["object"] = {
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": meta,
        }
    return out


def table(
    served: Served,
    objs: list[Any],
    now: datetime,
    *,
    resource_version: str = "",
    cont: str = "",
    include: str = "Metadata",
    definitions: bool = True,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"resourceVersion": resource_version} if resource_version else {}
    if cont:
        meta["continue"] = cont
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": meta,
        "columnDefinitions": column_definitions(served) if definitions else [],
        "rows": [row(served, o, now, include) for o in objs],
    }
