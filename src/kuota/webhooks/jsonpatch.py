"""RFC 6902 JSON Patch from one JSON document to another: what a mutating
webhook answers (``patchType: JSONPatch``)."""

from __future__ import annotations

import copy
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


class PatchError(ValueError):
    """A patch that does not apply (its operation index and reason)."""


def _tokens(pointer: str) -> list[str]:
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PatchError(f"path {pointer!r} does not start with '/'")
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def _parent(doc: Any, tokens: list[str]) -> Any:
    cur = doc
    for t in tokens[:-1]:
        if isinstance(cur, dict) and t in cur:
            cur = cur[t]
        elif isinstance(cur, list) and t.isdigit() and int(t) < len(cur):
            cur = cur[int(t)]
        else:
            raise PatchError(f"path segment {t!r} does not exist")
    return cur


def _get(doc: Any, pointer: str) -> Any:
    tokens = _tokens(pointer)
    if not tokens:
        return doc
    parent, last = _parent(doc, tokens), tokens[-1]
    if isinstance(parent, dict) and last in parent:
        return parent[last]
    if isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        return parent[int(last)]
    raise PatchError(f"{pointer!r} does not exist")


def _remove(doc: Any, pointer: str) -> Any:
    tokens = _tokens(pointer)
    parent, last = _parent(doc, tokens), tokens[-1]
    if isinstance(parent, dict) and last in parent:
        return parent.pop(last)
    if isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        return parent.pop(int(last))
    raise PatchError(f"cannot remove {pointer!r}: it does not exist")


def _add(doc: Any, pointer: str, value: Any, replace: bool = False) -> Any:
    tokens = _tokens(pointer)
    if not tokens:
        return value
    parent, last = _parent(doc, tokens), tokens[-1]
    if isinstance(parent, dict):
        if replace and last not in parent:
            raise PatchError(f"cannot replace {pointer!r}: it does not exist")
        parent[last] = value
    elif isinstance(parent, list):
        if last == "-" and not replace:
            parent.append(value)
        elif last.isdigit() and int(last) <= len(parent) - (1 if replace else 0):
            if replace:
                parent[int(last)] = value
            else:
                parent.insert(int(last), value)
        else:
            raise PatchError(f"index {last!r} is out of range in {pointer!r}")
    else:
        raise PatchError(f"the parent of {pointer!r} is no object or array")
    return doc


def apply(doc: Any, patch: list[Any]) -> Any:
    """``doc`` after the RFC 6902 operations of ``patch`` (a new document;
    ``doc`` is left as it was)."""
    out = copy.deepcopy(doc)
    for i, op in enumerate(patch):
        if not isinstance(op, dict) or not isinstance(op.get("path"), str):
            raise PatchError(f"operation {i}: needs an op and a path")
        kind, path = op.get("op"), op["path"]
        try:
            if kind == "add":
                out = _add(out, path, copy.deepcopy(op.get("value")))
            elif kind == "replace":
                out = _add(out, path, copy.deepcopy(op.get("value")), replace=True)
            elif kind == "remove":
                _remove(out, path)
            elif kind in ("move", "copy"):
                src = op.get("from")
                if not isinstance(src, str):
                    raise PatchError("needs from")
                value = _remove(out, src) if kind == "move" else copy.deepcopy(_get(out, src))
                out = _add(out, path, value)
            elif kind == "test":
                if _get(out, path) != op.get("value"):
                    raise PatchError(f"test of {path!r} failed")
            else:
                raise PatchError(f"unknown op {kind!r}")
        except PatchError as err:
            raise PatchError(f"operation {i}: {err}") from None
    return out
