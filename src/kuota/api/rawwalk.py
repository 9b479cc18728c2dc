"""What the two raw-document validators share: kuota's own kinds against
their generated schemas (``kuota.api.schema``) and custom resources against
their CRD's structural schema (``kuota.api.apiextensions.structural``). Both
walk a decoded JSON document with a schema dict; their messages differ
(kuota's validation vs kube-openapi's), the walk's bookkeeping, the JSON
type names and the list-type duplicate rules do not.

Pure: no I/O.
"""

from __future__ import annotations

import json
from typing import Any

from kuota.api import errors as e
from kuota.api.errors import FieldError, index

__all__ = ["TooLarge", "Walk", "json_type", "list_duplicates", "shown"]


class Walk:
    """One walk's findings and its node count (each validator bounds it)."""

    __slots__ = ("errors", "nodes", "warnings")

    def __init__(self) -> None:
        self.errors: list[FieldError] = []
        self.warnings: list[str] = []
        self.nodes = 0


class TooLarge(Exception):
    """A document with more nodes than its validator allows."""


def json_type(v: Any) -> str:
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
    return "null" if v is None else type(v).__name__


def shown(v: Any) -> Any:
    """The bad value a field error carries (a type's name for containers)."""
    if isinstance(v, dict | list):
        return json_type(v)
    return v if isinstance(v, str | int | float | bool) or v is None else str(v)


def list_duplicates(out: list[Any], s: dict[str, Any], path: str, w: Walk) -> None:
    """Duplicate entries of an ``x-kubernetes-list-type`` map or set list.

    Map keys are compared after defaulting (a pod set's name defaults to
    ``main``), as the API server compares them after structural defaulting.
    """
    lt = s.get("x-kubernetes-list-type")
    if lt == "map":
        keys = s.get("x-kubernetes-list-map-keys") or []
        props = (s.get("items") or {}).get("properties") or {}
        seen: set[str] = set()
        for i, x in enumerate(out):
            if not isinstance(x, dict):
                continue
            kv = {k: x.get(k, props.get(k, {}).get("default")) for k in keys}
            sig = json.dumps(kv, sort_keys=True, default=str)
            if sig in seen:
                w.errors.append(
                    e.duplicate(
                        index(path, i), kv if len(kv) > 1 else next(iter(kv.values()), None)
                    )
                )
            seen.add(sig)
    elif lt == "set":
        seen_set: set[str] = set()
        for i, x in enumerate(out):
            sig = json.dumps(x, sort_keys=True, default=str)
            if sig in seen_set:
                w.errors.append(e.duplicate(index(path, i), shown(x)))
            seen_set.add(sig)
