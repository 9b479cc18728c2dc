"""OpenAPI v3, one self-contained document per group-version, as kube-apiserver
serves ``/openapi/v3/<gv>``: components (each kind, its list, the apimachinery
types) and paths whose operations carry ``x-kubernetes-action`` and the
group-version-kind kubectl matches (query_param_verifier_v3.go: a PATCH
operation with a ``fieldValidation`` parameter means server-side validation;
``requestBody.content`` lists the patch types the kind accepts)."""

from __future__ import annotations

import copy
import functools
import hashlib
from typing import Any

import msgspec

from kuota.api.kindspec import KindSpec, VersionSpec
from kuota.server.openapi import meta
from kuota.server.openapi.schemas import (
    kind_schema,
    schema_name,
    served_versions,
    strategic_merge,
)

JSON = "application/json"
PATCH_TYPES = (
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
)


def gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def _query(name: str, description: str, typ: str = "string") -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "description": description,
        "schema": {"type": typ, "uniqueItems": True},
    }


_DRY_RUN = _query("dryRun", "When present, modifications are not persisted (All).")
_FIELD_MANAGER = _query("fieldManager", "The name of the actor making these changes.")
_FIELD_VALIDATION = _query(
    "fieldValidation", "How to treat unknown or duplicate fields: Ignore, Warn or Strict."
)
_FORCE = _query("force", "Force apply requests to take over conflicting fields.", "boolean")
_PRETTY = _query("pretty", "If 'true', the output is pretty printed.")
_LIST_PARAMS = [
    _query("allowWatchBookmarks", "Requests watch events of type BOOKMARK.", "boolean"),
    _query("continue", "The continue token of the previous page."),
    _query("fieldSelector", "Restricts the list by the objects' fields."),
    _query("labelSelector", "Restricts the list by the objects' labels."),
    _query("limit", "The most items to return.", "integer"),
    _query("resourceVersion", "Which version of the collection to serve."),
    _query("resourceVersionMatch", "How resourceVersion applies to the list."),
    _query("sendInitialEvents", "A watch starts with the current objects.", "boolean"),
    _query("timeoutSeconds", "Timeout of the list or watch call.", "integer"),
    _query("watch", "Watch for changes instead of listing.", "boolean"),
]


def _responses(name: str, *codes: str) -> dict[str, Any]:
    body = {"content": {JSON: {"schema": _ref(name)}}, "description": "OK"}
    out: dict[str, Any] = {
        c: {**body, "description": w}
        for c, w in zip(codes, ("OK", "Created", "Accepted"), strict=False)
    }
    out["401"] = {"description": "Unauthorized"}
    return out


def _op(
    action: str,
    gvk: dict[str, str],
    op_id: str,
    name: str,
    *codes: str,
    params: list[Any] | None = None,
) -> dict[str, Any]:
    return {
        "operationId": op_id,
        "description": f"{action} {gvk['kind']}",
        "parameters": params or [],
        "responses": _responses(name, *(codes or ("200",))),
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": dict(gvk),
    }


def _body(name: str, types: tuple[str, ...] = (JSON,)) -> dict[str, Any]:
    return {"content": {t: {"schema": _ref(name)} for t in types}, "required": True}


def _paths(spec: KindSpec, version: VersionSpec, paths: dict[str, Any]) -> None:
    gvk = {"group": spec.group, "version": version.name, "kind": spec.kind}
    name = schema_name(spec, version.name)
    list_name = schema_name(spec, version.name, spec.list_kind)
    base = "/" + gv_path(spec.group, version.name)
    op = f"{version.name}{spec.kind}"
    patch_types = tuple(t for t in PATCH_TYPES if strategic_merge(spec) or "strategic" not in t)
    ns = "/namespaces/{namespace}" if spec.namespaced else ""
    scope_params: list[Any] = (
        [{"name": "namespace", "in": "path", "required": True, "schema": {"type": "string"}}]
        if spec.namespaced
        else []
    )
    write = [_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION]
    collection = f"{base}{ns}/{spec.plural}"
    paths[collection] = {
        "parameters": [*scope_params, _PRETTY],
        "get": _op("list", gvk, f"list{op}", list_name, params=_LIST_PARAMS),
        "post": {
            **_op("post", gvk, f"create{op}", name, "200", "201", "202", params=write),
            "requestBody": _body(name),
        },
        "delete": {
            **_op(
                "deletecollection", gvk, f"deletecollection{op}", meta.STATUS, params=_LIST_PARAMS
            ),
            "requestBody": {"content": {JSON: {"schema": _ref(meta.DELETE_OPTIONS)}}},
        },
    }
    if spec.namespaced:
        paths[f"{base}/{spec.plural}"] = {
            "parameters": [_PRETTY],
            "get": _op("list", gvk, f"list{op}ForAllNamespaces", list_name, params=_LIST_PARAMS),
        }
    item_params = [
        {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}},
        *scope_params,
        _PRETTY,
    ]
    subs = [("", "")] + ([("/status", "Status")] if spec.status_subresource else [])
    for suffix, word in subs:
        paths[f"{collection}/{{name}}{suffix}"] = {
            "parameters": item_params,
            "get": _op("get", gvk, f"read{op}{word}", name),
            "put": {
                **_op("put", gvk, f"replace{op}{word}", name, "200", "201", params=write),
                "requestBody": _body(name),
            },
            "patch": {
                **_op(
                    "patch", gvk, f"patch{op}{word}", name, "200", "201", params=[*write, _FORCE]
                ),
                "requestBody": _body(meta.PATCH, patch_types),
            },
            **(
                {}
                if suffix
                else {
                    "delete": {
                        **_op(
                            "delete",
                            gvk,
                            f"delete{op}",
                            meta.STATUS,
                            "200",
                            "202",
                            params=[_DRY_RUN],
                        ),
                        "requestBody": {"content": {JSON: {"schema": _ref(meta.DELETE_OPTIONS)}}},
                    }
                }
            ),
        }


def _list_schema(spec: KindSpec, version: VersionSpec) -> dict[str, Any]:
    return {
        "description": f"{spec.list_kind} is a list of {spec.kind}.",
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "items": {"type": "array", "items": _ref(schema_name(spec, version.name))},
            "metadata": {"allOf": [_ref(meta.LIST_META)], "default": {}},
        },
        "x-kubernetes-group-version-kind": [
            {"group": spec.group, "version": version.name, "kind": spec.list_kind}
        ],
    }


def _with_meta_ref(schema: dict[str, Any]) -> dict[str, Any]:
    """The published form: metadata refers to the shared ObjectMeta component."""
    s = copy.copy(schema)
    props = dict(s.get("properties") or {})
    props["metadata"] = {
        "allOf": [_ref(meta.OBJECT_META)],
        "default": {},
        "description": "Standard object's metadata.",
    }
    s["properties"] = props
    return s


@functools.cache
def _documents() -> dict[str, bytes]:
    docs: dict[str, dict[str, Any]] = {}
    for spec, version in served_versions():
        gv = gv_path(spec.group, version.name)
        doc = docs.setdefault(
            gv,
            {
                "openapi": "3.0.0",
                "info": {"title": "Kubernetes", "version": "v1.32.0"},
                "paths": {},
                "components": {"schemas": meta.components()},
            },
        )
        schemas = doc["components"]["schemas"]
        full = kind_schema((spec.group, version.name, spec.kind))
        assert full is not None
        schemas[schema_name(spec, version.name)] = _with_meta_ref(full)
        schemas[schema_name(spec, version.name, spec.list_kind)] = _list_schema(spec, version)
        _paths(spec, version, doc["paths"])
    return {gv: msgspec.json.encode(d) for gv, d in sorted(docs.items())}


def clear() -> None:
    """Forget the documents (a CustomResourceDefinition defined a kind)."""
    _documents.cache_clear()


def v3_document(path: str) -> bytes | None:
    """The document of ``path`` ("api/v1", "apis/batch/v1", ...); None if not served."""
    return _documents().get(path.strip("/"))


def v3_index() -> dict[str, Any]:
    """``/openapi/v3``: each document's URL with the hash of its content, so a
    client's HTTP cache keeps it until it changes."""
    return {
        "paths": {
            gv: {
                "serverRelativeURL": f"/openapi/v3/{gv}?hash="
                + hashlib.sha512(body).hexdigest()[:128].upper()
            }
            for gv, body in _documents().items()
        }
    }
