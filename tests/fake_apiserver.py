"""Just enough of an API server on localhost for `kubectl apply --dry-run=client`
of CustomResourceDefinitions: discovery and a 404 for every CRD, so kubectl
maps the kind, reads the object and plans a create.

kubectl's own schema check downloads the server's OpenAPI v2 document as
protobuf, which a fake cannot reasonably serve, so kubectl runs with
``--validate=false`` here and the tests check the manifests against
``SCHEMAS`` instead: the CustomResourceDefinition type (apiextensions.k8s.io/v1)
written from the Kubernetes API reference, every field a real server accepts
and nothing else, which is what kubectl's strict validation enforces.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

GV = "apiextensions.k8s.io/v1"
PREFIX = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1."


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{PREFIX}{name}"}


def _obj(props: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        out["required"] = list(required)
    return out


def _arr(item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": item}


STR: dict[str, Any] = {"type": "string"}
BOOL: dict[str, Any] = {"type": "boolean"}
INT: dict[str, Any] = {"type": "integer", "format": "int64"}
NUM: dict[str, Any] = {"type": "number", "format": "double"}
ANY: dict[str, Any] = {}


def _schemas() -> dict[str, Any]:
    props = {"type": "object", "additionalProperties": _ref("JSONSchemaProps")}
    json_schema_props = _obj(
        {
            "id": STR,
            "$schema": STR,
            "$ref": STR,
            "description": STR,
            "type": STR,
            "format": STR,
            "title": STR,
            "default": ANY,
            "maximum": NUM,
            "exclusiveMaximum": BOOL,
            "minimum": NUM,
            "exclusiveMinimum": BOOL,
            "maxLength": INT,
            "minLength": INT,
            "pattern": STR,
            "maxItems": INT,
            "minItems": INT,
            "uniqueItems": BOOL,
            "multipleOf": NUM,
            "enum": _arr(ANY),
            "maxProperties": INT,
            "minProperties": INT,
            "required": _arr(STR),
            "items": ANY,  # a schema or a list of schemas
            "allOf": _arr(_ref("JSONSchemaProps")),
            "oneOf": _arr(_ref("JSONSchemaProps")),
            "anyOf": _arr(_ref("JSONSchemaProps")),
            "not": _ref("JSONSchemaProps"),
            "properties": props,
            "additionalProperties": ANY,  # a schema or a boolean
            "patternProperties": props,
            "dependencies": {"type": "object", "additionalProperties": ANY},
            "additionalItems": ANY,
            "definitions": props,
            "externalDocs": _obj({"description": STR, "url": STR}),
            "example": ANY,
            "nullable": BOOL,
            "x-kubernetes-preserve-unknown-fields": BOOL,
            "x-kubernetes-embedded-resource": BOOL,
            "x-kubernetes-int-or-string": BOOL,
            "x-kubernetes-list-map-keys": _arr(STR),
            "x-kubernetes-list-type": STR,
            "x-kubernetes-map-type": STR,
            "x-kubernetes-validations": _arr(_ref("ValidationRule")),
        }
    )
    meta = {
        "type": "object",
        "properties": {
            "name": STR,
            "labels": {"type": "object", "additionalProperties": STR},
            "annotations": {"type": "object", "additionalProperties": STR},
        },
    }
    crd = _obj(
        {
            "apiVersion": STR,
            "kind": STR,
            "metadata": meta,
            "spec": _ref("CustomResourceDefinitionSpec"),
            "status": {"type": "object"},
        },
        ("spec",),
    )
    crd["x-kubernetes-group-version-kind"] = [
        {"group": "apiextensions.k8s.io", "kind": "CustomResourceDefinition", "version": "v1"}
    ]
    names = _obj(
        {
            "categories": _arr(STR),
            "kind": STR,
            "listKind": STR,
            "plural": STR,
            "shortNames": _arr(STR),
            "singular": STR,
        },
        ("plural", "kind"),
    )
    version = _obj(
        {
            "additionalPrinterColumns": _arr(_ref("CustomResourceColumnDefinition")),
            "deprecated": BOOL,
            "deprecationWarning": STR,
            "name": STR,
            "schema": _obj({"openAPIV3Schema": _ref("JSONSchemaProps")}),
            "selectableFields": _arr(_obj({"jsonPath": STR}, ("jsonPath",))),
            "served": BOOL,
            "storage": BOOL,
            "subresources": _obj(
                {
                    "scale": _obj(
                        {
                            "labelSelectorPath": STR,
                            "specReplicasPath": STR,
                            "statusReplicasPath": STR,
                        }
                    ),
                    "status": {"type": "object"},
                }
            ),
        },
        ("name", "served", "storage"),
    )
    return {
        PREFIX + "CustomResourceDefinition": crd,
        PREFIX + "CustomResourceDefinitionSpec": _obj(
            {
                "conversion": {"type": "object"},
                "group": STR,
                "names": _ref("CustomResourceDefinitionNames"),
                "preserveUnknownFields": BOOL,
                "scope": STR,
                "versions": _arr(_ref("CustomResourceDefinitionVersion")),
            },
            ("group", "names", "scope", "versions"),
        ),
        PREFIX + "CustomResourceDefinitionNames": names,
        PREFIX + "CustomResourceDefinitionVersion": version,
        PREFIX + "CustomResourceColumnDefinition": _obj(
            {
                "description": STR,
                "format": STR,
                "jsonPath": STR,
                "name": STR,
                "priority": {"type": "integer", "format": "int32"},
                "type": STR,
            },
            ("name", "type", "jsonPath"),
        ),
        PREFIX + "JSONSchemaProps": json_schema_props,
        PREFIX + "ValidationRule": _obj(
            {
                "fieldPath": STR,
                "message": STR,
                "messageExpression": STR,
                "optionalOldSelf": BOOL,
                "reason": STR,
                "rule": STR,
            },
            ("rule",),
        ),
    }


def _not_found() -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "reason": "NotFound",
        "code": 404,
        "message": "not found",
    }


ROUTES: dict[str, Any] = {
    "/version": {"major": "1", "minor": "32", "gitVersion": "v1.32.0"},
    "/api": {"kind": "APIVersions", "versions": ["v1"]},
    "/api/v1": {"kind": "APIResourceList", "groupVersion": "v1", "resources": []},
    "/apis": {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [
            {
                "name": "apiextensions.k8s.io",
                "versions": [{"groupVersion": GV, "version": "v1"}],
                "preferredVersion": {"groupVersion": GV, "version": "v1"},
            }
        ],
    },
    f"/apis/{GV}": {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": GV,
        "resources": [
            {
                "name": "customresourcedefinitions",
                "singularName": "customresourcedefinition",
                "namespaced": False,
                "kind": "CustomResourceDefinition",
                "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
                "shortNames": ["crd", "crds"],
            }
        ],
    },
}

SCHEMAS = _schemas()
ROOT = PREFIX + "CustomResourceDefinition"


def schema_errors(obj: Any, schema: dict[str, Any] | None = None, path: str = "") -> list[str]:
    """``obj`` against ``SCHEMAS`` as kubectl's strict validation reads them:
    unknown fields, wrong types and missing required fields."""
    schema = SCHEMAS[ROOT] if schema is None else schema
    if "$ref" in schema:
        schema = SCHEMAS[schema["$ref"].rsplit("/", 1)[1]]
    typ = schema.get("type")
    if typ is None:
        return []  # any value
    kinds = {"object": dict, "array": list, "string": str, "boolean": bool}
    if typ in ("integer", "number"):
        ok = isinstance(obj, int | float) and not isinstance(obj, bool)
    else:
        ok = isinstance(obj, kinds[typ])
    if not ok:
        return [f"{path}: expected {typ}, got {type(obj).__name__}"]
    errs: list[str] = []
    if typ == "array":
        for i, item in enumerate(obj):
            errs += schema_errors(item, schema["items"], f"{path}[{i}]")
    elif typ == "object":
        props, addl = schema.get("properties"), schema.get("additionalProperties")
        for k, v in obj.items():
            if props is not None and k in props:
                errs += schema_errors(v, props[k], f"{path}.{k}")
            elif addl is not None:
                errs += schema_errors(v, addl, f"{path}.{k}")
            elif props is not None:
                errs.append(f"{path}.{k}: unknown field")
        errs += [f"{path}.{r}: required" for r in schema.get("required", ()) if r not in obj]
    return errs


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        body = ROUTES.get(path)
        code = 200 if body is not None else 404
        data = json.dumps(body if body is not None else _not_found()).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextmanager
def fake_apiserver() -> Iterator[str]:
    """Serve on a free localhost port; yields the server's URL."""
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()
