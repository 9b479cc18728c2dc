"""Server-side apply (``application/apply-patch+yaml``), as kube-apiserver's
field manager does it: the applied configuration is merged into the live
object by the schema's list types, each manager's fields are recorded in
``metadata.managedFields`` (``fieldsV1``), a field another manager owns is a
conflict unless its value is unchanged or ``force`` takes it over, and fields
this manager applied before but no longer applies are removed unless another
manager still owns them."""

from __future__ import annotations

import copy
from typing import Any

from kuota.server.openapi.schemas import kind_schema, lookup
from kuota.server.patch import fieldset as fs
from kuota.server.patch.errors import ApplyConflict, PatchError

APPLY = "Apply"
UPDATE = "Update"
# The owner kube-apiserver gives the fields of an object that had no managed
# fields when it was first applied to.
BEFORE_FIRST_APPLY = "before-first-apply"


def apply_patch(
    live: dict[str, Any] | None,
    applied: dict[str, Any],
    *,
    manager: str,
    force: bool,
    gvk: tuple[str, str, str],
    now: str,
) -> dict[str, Any]:
    """The object after ``manager`` applies ``applied`` to ``live`` (None: create)."""
    if not manager:
        raise PatchError("fieldManager is required for apply requests")
    if not isinstance(applied, dict):
        raise PatchError("an apply patch must be an object")
    if lookup(gvk) is None:
        raise PatchError(f"no kind {gvk[2]!r} is served in {gvk[0] or 'core'}/{gvk[1]}")
    group, version, kind = gvk
    api_version = f"{group}/{version}" if group else version
    if applied.get("kind", kind) != kind or applied.get("apiVersion", api_version) != api_version:
        raise PatchError(
            f"the apply patch is {applied.get('apiVersion')}/{applied.get('kind')}, "
            f"the object is {api_version}/{kind}"
        )
    schema = kind_schema(gvk) or {}
    applied = copy.deepcopy(applied)
    if applied.get("metadata") is None:
        applied.pop("metadata", None)  # (null: none given)
    else:
        applied["metadata"].pop("managedFields", None)
    mine = fs.fields_of(applied, schema)

    live = copy.deepcopy(live) if live is not None else None
    entries = _entries(live, schema, now)
    me = next((e for e in entries if e["manager"] == manager and e["operation"] == APPLY), None)
    before: set[fs.Path] = me["set"] if me else set()
    others = [e for e in entries if e is not me]

    merged = _merge(live if live is not None else {}, applied, schema)
    causes: list[tuple[str, str]] = []
    for e in others:
        clash = {
            p
            for p in e["set"] & mine
            if live is None or fs.get(live, p, schema) != fs.get(merged, p, schema)
        }
        if clash and force:
            e["set"] -= clash
        else:
            causes += [(fs.path_string(p), f"conflict with {_who(e)}") for p in sorted(clash)]
    if causes:
        raise ApplyConflict(causes)

    still_owned = set().union(*(e["set"] for e in others)) if others else set()
    for p in sorted(before - mine - still_owned, key=len, reverse=True):
        fs.remove(merged, p, schema)

    new_entry = {
        "manager": manager,
        "operation": APPLY,
        "apiVersion": api_version,
        "time": now,
        "set": mine,
    }
    ordered = [new_entry if e is me else e for e in entries] if me else [*entries, new_entry]
    merged.setdefault("metadata", {})["managedFields"] = [_wire(e) for e in ordered if e["set"]]
    merged["apiVersion"], merged["kind"] = api_version, kind
    return merged


def _who(e: dict[str, Any]) -> str:
    """As the apiserver's conflict message prints a manager (fieldmanager/internal/conflict.go)."""
    who = f'"{e["manager"]}"'
    if e["operation"] == UPDATE:
        who += f" using {e['apiVersion']}"
        if e.get("time"):
            who += f" at {e['time']}"
    return who


def _entries(live: dict[str, Any] | None, schema: fs.Schema, now: str) -> list[dict[str, Any]]:
    if live is None:
        return []
    raw = (live.get("metadata") or {}).get("managedFields")
    if not raw:
        owned = fs.fields_of({k: v for k, v in live.items() if k != "status"}, schema)
        return [
            {
                "manager": BEFORE_FIRST_APPLY,
                "operation": UPDATE,
                "apiVersion": live.get("apiVersion", ""),
                "time": now,
                "set": owned,
            }
        ]
    out = []
    for e in raw:
        if not isinstance(e, dict) or e.get("fieldsType", "FieldsV1") != "FieldsV1":
            raise PatchError("metadata.managedFields: each entry must be FieldsV1")
        out.append(
            {
                "manager": e.get("manager", ""),
                "operation": e.get("operation", UPDATE),
                "apiVersion": e.get("apiVersion", ""),
                "time": e.get("time"),
                "subresource": e.get("subresource"),
                "set": fs.from_fields_v1(e.get("fieldsV1") or {}),
            }
        )
    return out


def _wire(e: dict[str, Any]) -> dict[str, Any]:
    out = {
        "manager": e["manager"],
        "operation": e["operation"],
        "apiVersion": e["apiVersion"],
        "time": e["time"],
        "fieldsType": "FieldsV1",
        "fieldsV1": fs.to_fields_v1(e["set"]),
    }
    if e.get("subresource"):
        out["subresource"] = e["subresource"]
    if not out["time"]:
        del out["time"]
    return out


def _merge(live: Any, applied: Any, schema: fs.Schema) -> Any:
    """``applied`` merged into ``live`` by the schema's list and map types."""
    if isinstance(applied, dict) and isinstance(live, dict):
        if schema.get("x-kubernetes-map-type") == "atomic":
            return copy.deepcopy(applied)
        out = dict(live)
        for k, v in applied.items():
            out[k] = _merge(live.get(k), v, fs.sub_schema(schema, k))
        return out
    if isinstance(applied, list) and isinstance(live, list):
        lt = schema.get("x-kubernetes-list-type")
        items = fs.items_schema(schema)
        if lt == "map":
            out_list = list(live)
            for item in applied:
                key = fs.item_key(item, schema)
                at = next(
                    (i for i, x in enumerate(out_list) if fs.item_key(x, schema) == key), None
                )
                if at is None:
                    out_list.append(copy.deepcopy(item))
                else:
                    out_list[at] = _merge(out_list[at], item, items)
            return out_list
        if lt == "set":
            return list(live) + [x for x in applied if x not in live]
    return copy.deepcopy(applied)
