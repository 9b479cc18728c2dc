"""``kubectl get`` tables: the server-side Table a client asks for with
``Accept: application/json;as=Table;v=v1;g=meta.k8s.io``.

A kind with JSON-path columns (a CRD's additionalPrinterColumns: Kueue's,
LWS's, kuota's own) gets its cells from the paths; a built-in kind gets the
cells the API server's printers compute (``builtin_cells``). Dates print as
kube's human ages (``5m``, ``3d4h``), against the control plane's clock.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

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


def _cell(col: PrinterColumn, wire_obj: Any, now: datetime) -> Any:
    values = struct_path(wire_obj, col.json_path)
    if not values:
        return None
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
        cells = [meta.get("name", ""), *builtin(full_builtins(wire_obj), now)]
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
