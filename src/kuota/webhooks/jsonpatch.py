"""RFC 6902 JSON Patch from one JSON document to another: what a mutating
webhook answers (``patchType: JSONPatch``)."""

from __future__ import annotations

from typing import Any


def _pointer(path: str, key: str) -> str:
    return f"{path}/{key.replace('~', '~0').replace('/', '~1')}"


def diff(old: Any, new: Any, path: str = "") -> list[dict[str, Any]]:
    """Operations turning ``old`` into ``new``: objects are compared key by
    key, anything else (lists included, as controller-runtime's defaulter
    patches replace them) is replaced whole."""
    if isinstance(old, dict) and isinstance(new, dict):
        ops: list[dict[str, Any]] = []
        for k in old:
            if k not in new:
                ops.append({"op": "remove", "path": _pointer(path, k)})
        for k, v in new.items():
            if k not in old:
                ops.append({"op": "add", "path": _pointer(path, k), "value": v})
            elif old[k] != v:
                ops += diff(old[k], v, _pointer(path, k))
        return ops
    if old == new:
        return []
    return [{"op": "replace", "path": path, "value": new}]
