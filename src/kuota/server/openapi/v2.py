"""OpenAPI v2 (swagger 2.0): the v3 documents of every group-version folded into
one, as ``/openapi/v2`` serves them to clients that still read it (kubectl 1.32
asks v2 only as protobuf and reads v3 first; kuota answers v2 as JSON)."""

from __future__ import annotations

import functools
import json
from typing import Any

import msgspec

from kuota.server.openapi.v3 import v3_document, v3_index

_V3_REF = "#/components/schemas/"


def _refs(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            k: (v.replace(_V3_REF, "#/definitions/") if k == "$ref" else _refs(v))
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_refs(x) for x in node]
    return node


def _param(p: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in p.items() if k != "schema"}
    schema = p.get("schema") or {}
    out["type"] = schema.get("type", "string")
    if schema.get("uniqueItems"):
        out["uniqueItems"] = True
    return out


def _operation(op: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in op.items() if k not in ("requestBody", "responses", "parameters")}
    params = [_param(p) for p in op.get("parameters", [])]
    body = op.get("requestBody")
    if body is not None:
        content = body["content"]
        out["consumes"] = list(content)
        schema = next(iter(content.values()))["schema"]
        params.insert(0, {"name": "body", "in": "body", "required": True, "schema": schema})
    out["parameters"] = params
    out["produces"] = ["application/json", "application/yaml"]
    out["schemes"] = ["https"]
    out["responses"] = {
        code: {
            "description": r.get("description", ""),
            **({"schema": r["content"]["application/json"]["schema"]} if "content" in r else {}),
        }
        for code, r in op["responses"].items()
    }
    return out


@functools.cache
def v2_document() -> bytes:
    """The swagger 2.0 JSON of every served kind."""
    definitions: dict[str, Any] = {}
    paths: dict[str, Any] = {}
    for gv in v3_index()["paths"]:
        body = v3_document(gv)
        assert body is not None
        doc = json.loads(body)
        definitions.update(doc["components"]["schemas"])
        for path, item in doc["paths"].items():
            paths[path] = {
                verb: ([_param(p) for p in value] if verb == "parameters" else _operation(value))
                for verb, value in item.items()
            }
    out = {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": "v1.32.0"},
        "paths": _refs(paths),
        "definitions": _refs(definitions),
        "securityDefinitions": {
            "BearerToken": {"type": "apiKey", "name": "authorization", "in": "header"}
        },
        "security": [{"BearerToken": []}],
    }
    return msgspec.json.encode(out)
