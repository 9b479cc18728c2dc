"""``kubectl get`` tables: the server-side Table a client asks for with
``Accept: application/json;as=Table;v=v1;g=meta.k8s.io``.

A kind with JSON-path columns (a CRD's additionalPrinterColumns: Kueue's,
LWS's, kuota's own) gets its cells from the paths; a built-in kind gets the
cells the API server's printers compute (``builtin_cells``). Dates print as
kube's human ages (``5m``, ``3d4h``), against the control plane's clock.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

from kuota.api.kindspec import PrinterColumn
from kuota.server.builtin_cells import BUILTIN_CELLS, human_age
from kuota.server.served import Served

TABLE_TYPE = "application/json;as=Table;v=v1;g=meta.k8s.io"

_STEP = re.compile(r'\.([A-Za-z0-9_\-/]+)|\[(\d+)\]|\[\?\(@\.(\w+)\s*==\s*["\']([^"\']*)["\']\)\]')


def json_path(obj: Any, path: str) -> list[Any]:
    """The values at a CRD printer column's JSONPath (the subset CRDs use:
    fields, indexes and ``[?(@.f=="v")]`` filters)."""
    current = [obj]
    for m in _STEP.finditer(path):
        field, idx, fkey, fval = m.groups()
        nxt: list[Any] = []
        for v in current:
            if field is not None and isinstance(v, dict) and field in v:
                nxt.append(v[field])
            elif idx is not None and isinstance(v, list) and int(idx) < len(v):
                nxt.append(v[int(idx)])
            elif fkey is not None and isinstance(v, list):
                nxt += [x for x in v if isinstance(x, dict) and str(x.get(fkey)) == fval]
        current = nxt
    return current


def _cell(col: PrinterColumn, wire: dict[str, Any], now: datetime) -> Any:
    values = json_path(wire, col.json_path)
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


def row(served: Served, wire: dict[str, Any], now: datetime, include: str) -> dict[str, Any]:
    meta = wire.get("metadata") or {}
    cols = columns_of(served)
    builtin = BUILTIN_CELLS.get((served.group, served.kind))
    if builtin is not None and not any(c.json_path for c in cols):
        cells = [meta.get("name", ""), *builtin(wire, now)]
        cells += [""] * (len(cols) + 1 - len(cells))
        cells = cells[: len(cols) + 1]
    else:
        cells = [meta.get("name", ""), *(_cell(c, wire, now) for c in cols)]
    out: dict[str, Any] = {"cells": cells}
    if include == "Object":
        out["object"] = wire
    elif include != "None":
        out["object"] = {
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": meta,
        }
    return out


def table(
    served: Served,
    wires: list[dict[str, Any]],
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
        "rows": [row(served, w, now, include) for w in wires],
    }
