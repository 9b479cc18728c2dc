"""The apimachinery components every group-version document refers to
(ObjectMeta from kuota's struct; the small wire-only types written out as
k8s.io/apimachinery defines them)."""

from __future__ import annotations

import copy
from typing import Any

import msgspec.inspect as mi

from kuota.api.meta import ObjectMeta
from kuota.api.schema import openapi
from kuota.server.openapi.schemas import _annotate

META = "io.k8s.apimachinery.pkg.apis.meta.v1"
OBJECT_META = f"{META}.ObjectMeta"
LIST_META = f"{META}.ListMeta"
STATUS = f"{META}.Status"
WATCH_EVENT = f"{META}.WatchEvent"
DELETE_OPTIONS = f"{META}.DeleteOptions"
PATCH = f"{META}.Patch"

_S = {"type": "string"}
_I = {"type": "integer", "format": "int64"}


def object_meta() -> dict[str, Any]:
    s = copy.deepcopy(openapi(ObjectMeta))
    _annotate(mi.type_info(ObjectMeta), s, set(), builtin=True)
    s["description"] = (
        "ObjectMeta is metadata that all persisted resources must have, "
        "which includes all objects users must create."
    )
    return s


def components() -> dict[str, dict[str, Any]]:
    return {
        OBJECT_META: object_meta(),
        LIST_META: {
            "description": "ListMeta describes metadata that synthetic resources must have.",
            "type": "object",
            "properties": {
                "continue": _S,
                "remainingItemCount": _I,
                "resourceVersion": _S,
                "selfLink": _S,
            },
        },
        STATUS: {
            "description": "Status is a return value for calls that don't return other objects.",
            "type": "object",
            "properties": {
                "apiVersion": _S,
                "kind": _S,
                "metadata": {"allOf": [{"$ref": f"#/components/schemas/{LIST_META}"}]},
                "status": _S,
                "message": _S,
                "reason": _S,
                "code": {"type": "integer", "format": "int32"},
                "details": {
                    "type": "object",
                    "properties": {
                        "name": _S,
                        "group": _S,
                        "kind": _S,
                        "uid": _S,
                        "retryAfterSeconds": {"type": "integer", "format": "int32"},
                        "causes": {
                            "type": "array",
                            "x-kubernetes-list-type": "atomic",
                            "items": {
                                "type": "object",
                                "properties": {"reason": _S, "message": _S, "field": _S},
                            },
                        },
                    },
                },
            },
            "x-kubernetes-group-version-kind": [{"group": "", "version": "v1", "kind": "Status"}],
        },
        WATCH_EVENT: {
            "description": "Event represents a single event to a watched resource.",
            "type": "object",
            "required": ["type", "object"],
            "properties": {
                "type": _S,
                "object": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            },
        },
        DELETE_OPTIONS: {
            "description": "DeleteOptions may be provided when deleting an API object.",
            "type": "object",
            "properties": {
                "apiVersion": _S,
                "kind": _S,
                "dryRun": {"type": "array", "items": _S, "x-kubernetes-list-type": "atomic"},
                "gracePeriodSeconds": _I,
                "orphanDependents": {"type": "boolean"},
                "preconditions": {
                    "type": "object",
                    "properties": {"resourceVersion": _S, "uid": _S},
                },
                "propagationPolicy": _S,
            },
        },
        PATCH: {
            "description": "Patch is provided to give a concrete name and type to the "
            "Kubernetes PATCH request body.",
            "type": "object",
        },
    }
