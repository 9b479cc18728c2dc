"""Sets of field paths as server-side apply tracks them (structured-merge-diff),
and their ``fieldsV1`` form in ``metadata.managedFields``.

A path is a tuple of elements: ``("f", name)`` a field, ``("k", '{"name":"x"}')``
a list-map item by its keys, ``("v", '"x"')`` a set item by its value. Which
element a list's item gets follows the list's ``x-kubernetes-list-type``."""

from __future__ import annotations

import json
from typing import Any

Element = tuple[str, str]
Path = tuple[Element, ...]
Schema = dict[str, Any]

# Tracked by the server, never owned (apiserver fieldmanager's stripSet).
STRIPPED: frozenset[Path] = frozenset(
    {(("f", "apiVersion"),), (("f", "kind"),)}
    | {
        (("f", "metadata"), ("f", f))
        for f in (
            "name",
            "namespace",
            "creationTimestamp",
            "selfLink",
            "uid",
            "generation",
            "managedFields",
            "resourceVersion",
        )
    }
)


def compact(v: Any) -> str:
    return json.dumps(v, sort_keys=True, separators=(",", ":"))


def sub_schema(schema: Schema, name: str) -> Schema:
    props = schema.get("properties")
    if isinstance(props, dict):
        s = props.get(name)
        return s if isinstance(s, dict) else {}
    addl = schema.get("additionalProperties")
    return addl if isinstance(addl, dict) else {}


def items_schema(schema: Schema) -> Schema:
    s = schema.get("items")
    return s if isinstance(s, dict) else {}


def item_key(item: Any, schema: Schema) -> str | None:
    keys = schema.get("x-kubernetes-list-map-keys") or []
    if not isinstance(item, dict):
        return None
    return compact({k: item[k] for k in keys if k in item})


def fields_of(value: Any, schema: Schema, prefix: Path = ()) -> set[Path]:
    """Every owned path of ``value``: leaves, and list items as members."""
    out: set[Path] = set()
    _collect(value, schema, prefix, out)
    return out - STRIPPED if not prefix else out


def _collect(value: Any, schema: Schema, prefix: Path, out: set[Path]) -> None:
    if isinstance(value, dict) and value and schema.get("x-kubernetes-map-type") != "atomic":
        for k, v in value.items():
            if prefix == () and k in ("apiVersion", "kind"):
                continue
            _collect(v, sub_schema(schema, k), (*prefix, ("f", k)), out)
        if prefix and prefix[-1][0] != "f":
            out.add(prefix)
        return
    if isinstance(value, list) and value:
        lt = schema.get("x-kubernetes-list-type")
        if lt == "map":
            for item in value:
                key = item_key(item, schema)
                if key is None:
                    break
                _collect(item, items_schema(schema), (*prefix, ("k", key)), out)
            else:
                return
        elif lt == "set":
            for item in value:
                out.add((*prefix, ("v", compact(item))))
            return
    if prefix:
        out.add(prefix)


def _element(e: Element) -> str:
    return f"{e[0]}:{e[1]}"


def to_fields_v1(paths: set[Path]) -> dict[str, Any]:
    root: dict[str, Any] = {}
    for p in sorted(paths):
        node = root
        for e in p:
            node = node.setdefault(_element(e), {})
    # A member that also has children is marked with ".".
    for p in paths:
        node = root
        for e in p:
            node = node[_element(e)]
        if node and "." not in node:
            # First, as the Go encoder's sorted keys put it.
            items = list(node.items())
            node.clear()
            node["."] = {}
            node.update(items)
    return root


def from_fields_v1(tree: Any, prefix: Path = ()) -> set[Path]:
    out: set[Path] = set()
    if not isinstance(tree, dict):
        return out
    if prefix and (not tree or "." in tree):
        out.add(prefix)
    for k, v in tree.items():
        if k == "." or ":" not in k:
            continue
        kind, _, rest = k.partition(":")
        out |= from_fields_v1(v, (*prefix, (kind, rest)))
    return out


def path_string(p: Path) -> str:
    """As structured-merge-diff prints a path: ``.spec.containers[name="m"].image``."""
    parts = []
    for kind, text in p:
        if kind == "f":
            parts.append(f".{text}")
        elif kind == "k":
            keys = json.loads(text)
            parts.append("[" + ",".join(f"{k}={compact(v)}" for k, v in keys.items()) + "]")
        elif kind == "v":
            parts.append(f"[={text}]")
        else:
            parts.append(f"[{text}]")
    return "".join(parts)


_MISSING: Any = object()


def get(obj: Any, p: Path, schema: Schema) -> Any:
    """The value at ``p``, or ``MISSING``."""
    cur, s = obj, schema
    for kind, text in p:
        if kind == "f":
            if not isinstance(cur, dict) or text not in cur:
                return _MISSING
            cur, s = cur[text], sub_schema(s, text)
        elif kind == "k":
            if not isinstance(cur, list):
                return _MISSING
            cur = next((x for x in cur if item_key(x, s) == text), _MISSING)
            s = items_schema(s)
            if cur is _MISSING:
                return cur
        elif kind == "v":
            if not isinstance(cur, list) or json.loads(text) not in cur:
                return _MISSING
            cur = json.loads(text)
        else:
            return _MISSING
    return cur


MISSING = _MISSING


def remove(obj: Any, p: Path, schema: Schema) -> None:
    """Remove the value at ``p`` from ``obj`` in place (absent: nothing to do)."""
    if not p:
        return
    parent_path, (kind, text) = p[:-1], p[-1]
    parent = get(obj, parent_path, schema) if parent_path else obj
    s = schema
    for k, t in parent_path:
        s = sub_schema(s, t) if k == "f" else items_schema(s)
    if kind == "f" and isinstance(parent, dict):
        parent.pop(text, None)
    elif kind == "k" and isinstance(parent, list):
        parent[:] = [x for x in parent if item_key(x, s) != text]
    elif kind == "v" and isinstance(parent, list):
        value = json.loads(text)
        parent[:] = [x for x in parent if x != value]
