"""JSON patch (RFC 6902, with RFC 6901 pointers): ``kubectl patch --type json``."""

from __future__ import annotations

import copy
from typing import Any

from kuota.server.patch.errors import PatchError

_Container = dict[str, Any] | list[Any]


def _tokens(pointer: Any) -> list[str]:
    if not isinstance(pointer, str) or (pointer and not pointer.startswith("/")):
        raise PatchError(f"invalid JSON pointer {pointer!r}: must be empty or start with '/'")
    if pointer == "":
        return []
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def _index(container: list[Any], token: str, pointer: str, *, adding: bool) -> int:
    if adding and token == "-":
        return len(container)
    if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
        raise PatchError(f"invalid array index {token!r} in {pointer!r}")
    i = int(token)
    if i > len(container) or (i == len(container) and not adding):
        raise PatchError(f"array index {i} out of bounds in {pointer!r}")
    return i


def _get(doc: Any, tokens: list[str], pointer: str) -> Any:
    cur = doc
    for t in tokens:
        if isinstance(cur, dict):
            if t not in cur:
                raise PatchError(f"doc is missing path: {pointer!r}")
            cur = cur[t]
        elif isinstance(cur, list):
            cur = cur[_index(cur, t, pointer, adding=False)]
        else:
            raise PatchError(f"doc is missing path: {pointer!r}")
    return cur


def _parent(doc: Any, pointer: str) -> tuple[_Container, str]:
    tokens = _tokens(pointer)
    if not tokens:
        raise PatchError("the root of the document cannot be the target of this operation")
    parent = _get(doc, tokens[:-1], pointer)
    if not isinstance(parent, dict | list):
        raise PatchError(f"doc is missing path: {pointer!r}")
    return parent, tokens[-1]


def _add(doc: Any, pointer: str, value: Any) -> Any:
    if pointer == "":
        return value
    parent, last = _parent(doc, pointer)
    if isinstance(parent, dict):
        parent[last] = value
    else:
        parent.insert(_index(parent, last, pointer, adding=True), value)
    return doc


def _remove(doc: Any, pointer: str) -> Any:
    parent, last = _parent(doc, pointer)
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"unable to remove nonexistent key: {last}: missing value")
        return parent.pop(last)
    return parent.pop(_index(parent, last, pointer, adding=False))


def json_patch(obj: dict[str, Any], ops: list[Any]) -> dict[str, Any]:
    """``obj`` with ``ops`` applied in order; all or nothing (``obj`` unchanged)."""
    if not isinstance(ops, list):
        raise PatchError("a JSON patch must be a list of operations")
    doc: Any = copy.deepcopy(obj)
    for n, op in enumerate(ops):
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise PatchError(f"operation {n}: must be an object with 'op' and 'path'")
        kind, path = op["op"], op["path"]
        if kind in ("add", "replace", "test") and "value" not in op:
            raise PatchError(f"operation {n} ({kind} {path}): missing 'value'")
        if kind == "add":
            doc = _add(doc, path, copy.deepcopy(op["value"]))
        elif kind == "remove":
            _remove(doc, path)
        elif kind == "replace":
            _get(doc, _tokens(path), path)  # the target must exist
            if path == "":
                doc = copy.deepcopy(op["value"])
            else:
                _remove(doc, path)
                doc = _add(doc, path, copy.deepcopy(op["value"]))
        elif kind in ("move", "copy"):
            src = op.get("from")
            if not isinstance(src, str):
                raise PatchError(f"operation {n} ({kind} {path}): missing 'from'")
            if kind == "move" and (path + "/").startswith(src + "/") and path != src:
                raise PatchError(f"operation {n}: cannot move {src!r} into its own child")
            value = _get(doc, _tokens(src), src)
            if kind == "move":
                _remove(doc, src)
            doc = _add(doc, path, copy.deepcopy(value))
        elif kind == "test":
            if _get(doc, _tokens(path), path) != op["value"]:
                raise PatchError(f"testing value {path} failed: test failed")
        else:
            raise PatchError(f"operation {n}: unexpected kind of operation {kind!r}")
    if not isinstance(doc, dict):
        raise PatchError("the patched document is not a JSON object")
    return doc
