"""Strategic merge patch, as apimachinery's strategicpatch.StrategicMergePatch
applies it: maps merge, lists follow their field's ``x-kubernetes-patch-strategy``
(``merge`` by ``x-kubernetes-patch-merge-key``, ``retainKeys``; otherwise
replaced), and the directives ``$patch: replace|delete|merge``,
``$setElementOrder/<list>``, ``$retainKeys`` and ``$deleteFromPrimitiveList/<list>``.
The strategies are read from the kind's schema (``kuota.server.openapi``)."""

from __future__ import annotations

import copy
from typing import Any

from kuota.server.openapi.schemas import kind_schema, lookup, strategic_merge
from kuota.server.patch.errors import PatchError

DIRECTIVE = "$patch"
RETAIN_KEYS = "$retainKeys"
SET_ORDER = "$setElementOrder/"
DELETE_PRIMITIVE = "$deleteFromPrimitiveList/"

Schema = dict[str, Any]


def strategic_merge_patch(
    obj: dict[str, Any], patch: dict[str, Any], gvk: tuple[str, str, str]
) -> dict[str, Any]:
    """``obj`` with ``patch`` applied; neither argument is changed."""
    found = lookup(gvk)
    if found is None:
        raise PatchError(f"no kind {gvk[2]!r} is served in {gvk[0] or 'core'}/{gvk[1]}")
    if not strategic_merge(found[0]):
        # kube-apiserver refuses it for custom resources (415): no patch metadata.
        raise PatchError(
            f"strategic merge patch is not supported for {found[0].kind}"
            f".{found[0].group}: use a JSON merge patch"
        )
    if not isinstance(patch, dict):
        raise PatchError("a strategic merge patch must be a JSON object")
    schema = kind_schema(gvk)
    out = _merge_map(copy.deepcopy(obj), copy.deepcopy(patch), schema or {})
    return out if out is not None else {}


def _prop(schema: Schema, key: str) -> Schema:
    props = schema.get("properties")
    if isinstance(props, dict):
        sub = props.get(key)
        return sub if isinstance(sub, dict) else {}
    addl = schema.get("additionalProperties")
    return addl if isinstance(addl, dict) else {}


def _merge_map(original: Any, patch: dict[str, Any], schema: Schema) -> dict[str, Any] | None:
    """The merged map; None when the patch deletes it (``$patch: delete``)."""
    original = original if isinstance(original, dict) else {}
    directive = patch.pop(DIRECTIVE, None)
    if directive == "delete":
        return None
    if directive == "replace":
        return _clean(patch, schema)
    if directive not in (None, "merge"):
        raise PatchError(f"unknown patch type {directive!r} in map")
    retain = patch.pop(RETAIN_KEYS, None)
    if retain is not None:
        if not isinstance(retain, list):
            raise PatchError(f"{RETAIN_KEYS} must be a list, got {retain!r}")
        original = {k: v for k, v in original.items() if k in retain}
    orders: dict[str, list[Any]] = {}
    deletes: dict[str, list[Any]] = {}
    for k in [k for k in patch if k.startswith((SET_ORDER, DELETE_PRIMITIVE))]:
        v = patch.pop(k)
        if not isinstance(v, list):
            raise PatchError(f"{k} must be a list, got {v!r}")
        if k.startswith(SET_ORDER):
            orders[k.removeprefix(SET_ORDER)] = v
        else:
            deletes[k.removeprefix(DELETE_PRIMITIVE)] = v
    out = dict(original)
    for k, v in deletes.items():
        if isinstance(out.get(k), list):
            out[k] = [x for x in out[k] if x not in v]
    for k, v in patch.items():
        sub = _prop(schema, k)
        if v is None:
            out.pop(k, None)
        elif isinstance(v, dict):
            merged = _merge_map(out.get(k), v, sub)
            if merged is None:
                out.pop(k, None)
            else:
                out[k] = merged
        elif isinstance(v, list):
            merged_list = _merge_list(out.get(k), v, sub)
            if merged_list is None:
                out.pop(k, None)
            else:
                out[k] = merged_list
        else:
            out[k] = v
    for k, order in orders.items():
        if isinstance(out.get(k), list):
            out[k] = _ordered(out[k], order, _prop(schema, k).get("x-kubernetes-patch-merge-key"))
    return out


def _strategy(schema: Schema) -> tuple[bool, str | None]:
    strategy = str(schema.get("x-kubernetes-patch-strategy", ""))
    return "merge" in strategy.split(","), schema.get("x-kubernetes-patch-merge-key")


def _merge_list(original: Any, patch: list[Any], schema: Schema) -> list[Any] | None:
    merge, key = _strategy(schema)
    raw = schema.get("items")
    items: Schema = raw if isinstance(raw, dict) else {}
    if not merge:
        # Replaced whole; a {"$patch": "replace"} marker in it means the same.
        return [_clean(x, items) for x in patch if not _is_directive(x, "replace")]
    original = list(original) if isinstance(original, list) else []
    if any(_is_directive(x, "replace") for x in patch):
        return [_clean(x, items) for x in patch if not _is_directive(x, "replace")]
    if all(not isinstance(x, dict) for x in patch):
        # A merged list of scalars is a set: the patch's values are added.
        return original + [x for x in patch if x not in original]
    if key is None:
        raise PatchError("a merge list of objects has no x-kubernetes-patch-merge-key")
    out = list(original)
    for x in patch:
        if not isinstance(x, dict):
            raise PatchError(f"list items must be objects with {key!r}: got {x!r}")
        if key not in x:
            raise PatchError(f"map: {x} does not contain declared merge key: {key}")
        at = next(
            (i for i, y in enumerate(out) if isinstance(y, dict) and y.get(key) == x[key]), None
        )
        if x.get(DIRECTIVE) == "delete":
            out = [y for y in out if not (isinstance(y, dict) and y.get(key) == x[key])]
            continue
        if at is None:
            out.append(_clean(x, items))
        else:
            merged = _merge_map(out[at], x, items)
            if merged is None:
                del out[at]
            else:
                out[at] = merged
    return out


def _is_directive(x: Any, what: str) -> bool:
    return isinstance(x, dict) and x.get(DIRECTIVE) == what and len(x) == 1


def _clean(value: Any, schema: Schema) -> Any:
    """A patch value set where the original had none: directives removed."""
    if isinstance(value, dict):
        return _merge_map({}, value, schema)
    if isinstance(value, list):
        return _merge_list([], value, schema)
    return value


def _ordered(items: list[Any], order: list[Any], key: str | None) -> list[Any]:
    """``$setElementOrder``: the listed elements in that order; the others keep
    their place relative to each other, after the listed ones."""

    def ident(x: Any) -> Any:
        return x.get(key) if key is not None and isinstance(x, dict) else x

    wanted = [ident(o) for o in order]
    listed = sorted((x for x in items if ident(x) in wanted), key=lambda x: wanted.index(ident(x)))
    return listed + [x for x in items if ident(x) not in wanted]
