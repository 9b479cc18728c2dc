"""CustomResourceDefinitions of Kueue's kinds, generated from kuota's types.

Both versions are served; v1beta2 is the storage version and v1beta1 is marked
deprecated, as in Kueue. The schemas are the ones ``kuota validate`` checks
documents against (``schema.openapi``), so what the CRD admits and what kuota
admits cannot drift apart.
"""

from __future__ import annotations

import copy
from typing import Any

import yaml

from kuota.api import registry
from kuota.api.kueue import types as kt
from kuota.api.schema import openapi


def _version_schema(typ: type, root_rules: Any = None) -> dict[str, Any]:
    s = copy.deepcopy(openapi(typ))
    extra = (root_rules.extra_json_schema if root_rules is not None else None) or {}
    if extra.get("x-kubernetes-validations"):
        s["x-kubernetes-validations"] = extra["x-kubernetes-validations"]
    props = s.setdefault("properties", {})
    props["apiVersion"] = {"type": "string"}
    props["kind"] = {"type": "string"}
    props["metadata"] = {"type": "object"}
    s.pop("required", None)
    required = [
        r for r in openapi(typ).get("required", []) if r not in ("apiVersion", "kind", "metadata")
    ]
    if required:
        s["required"] = required
    return s


def crd(kind: str) -> dict[str, Any]:
    # Kueue's kinds, then kuota's own (kuota.dev: ``--kind BizGroupResourceQuota``).
    spec = registry.by_group_kind(kt.GROUP, kind) or registry.by_group_kind("kuota.dev", kind)
    if spec is None:
        raise KeyError(kind)
    versions = []
    for v in sorted((v for v in spec.versions if v.served), key=lambda v: v.name):
        out: dict[str, Any] = {
            "name": v.name,
            "served": True,
            "storage": v.storage,
            "schema": {"openAPIV3Schema": _version_schema(v.wire, v.root_rules)},
        }
        if v.deprecated:
            out["deprecated"] = True
            out["deprecationWarning"] = (
                f"{spec.api_version(v)} {kind} is deprecated; use {spec.api_version(spec.storage_version)}"
            )
        if spec.status_subresource:
            out["subresources"] = {"status": {}}
        if v.columns:
            out["additionalPrinterColumns"] = [
                {"name": c.name, "type": c.type, "jsonPath": c.json_path}
                | ({"priority": c.priority} if c.priority else {})
                for c in v.columns
            ]
        versions.append(out)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{spec.plural}.{spec.group}"},
        "spec": {
            "group": spec.group,
            "names": {
                "kind": kind,
                "listKind": spec.list_kind,
                "plural": spec.plural,
                "singular": spec.singular,
                "shortNames": list(spec.short_names),
            },
            "scope": "Namespaced" if spec.namespaced else "Cluster",
            "versions": versions,
        },
    }


def all_crds(kinds: list[str] | None = None) -> list[dict[str, Any]]:
    return [crd(k) for k in (kinds or [s.kind for s in registry.kinds_of_group(kt.GROUP)])]


def crds_yaml(objs: list[dict[str, Any]]) -> str:
    return yaml.safe_dump_all(objs, sort_keys=False, default_flow_style=False, width=120)
