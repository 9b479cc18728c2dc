"""Each served kind's schema, from kuota's own types (``kuota.api.schema.openapi``,
the generator ``kuota crds`` uses) plus what the API server's documents add:
the list and patch markers, the kind's group-version-kind and the types'
docstrings as descriptions. Everything inlined: the patch functions walk it.
"""

from __future__ import annotations

import copy
import functools
import inspect
from typing import Any

import msgspec.inspect as mi

from kuota.api import registry
from kuota.api.kindspec import KindSpec, VersionSpec
from kuota.api.schema import openapi
from kuota.server.openapi import goforms
from kuota.server.openapi.markers import MARKERS

GVK = tuple[str, str, str]  # group, version, kind


def served_versions() -> list[tuple[KindSpec, VersionSpec]]:
    """Every kind the API serves, with each version it is served in."""
    return [(s, v) for s in registry.KINDS for v in s.versions if v.served]


def lookup(gvk: GVK) -> tuple[KindSpec, VersionSpec] | None:
    group, version, kind = gvk
    spec = registry.by_group_kind(group, kind)
    if spec is None:
        return None
    v = next((v for v in spec.versions if v.name == version and v.served), None)
    return None if v is None else (spec, v)


# Built-in groups kuota serves only as far as it reads them (the CRD kind,
# DRA's device classes and claim templates): their schemas are kuota's, not
# their Go types' published forms (strategic merge still applies to them).
_PARTIAL_GROUPS = frozenset({"apiextensions.k8s.io", "resource.k8s.io"})


# CRD-defined groups under k8s.io (Spark Operator's is not Kubernetes' own).
_CRD_K8S_GROUPS = frozenset({"sparkoperator.k8s.io"})


def strategic_merge(spec: KindSpec) -> bool:
    """Strategic merge applies to the built-in kinds, not to CRDs' kinds."""
    if spec.group in _CRD_K8S_GROUPS:
        return False
    return not ("." in spec.group and not spec.group.endswith(".k8s.io"))


def is_crd(spec: KindSpec) -> bool:
    """Kinds whose schema is not their Go type's published form: the kinds
    CRDs serve (strategic merge does not apply to them), and the built-in
    groups kuota reads only in part."""
    return spec.group in _PARTIAL_GROUPS or not strategic_merge(spec)


def _doc(cls: type) -> str:
    doc = inspect.getdoc(cls) or ""
    # msgspec.Struct's own docstring is inherited by undocumented structs.
    return "" if doc.startswith(("A base class", "Base of every API struct")) else doc


def _annotate(
    t: Any,
    s: dict[str, Any],
    open_: set[type],
    builtin: bool = False,
    at: tuple[str, str] = ("", ""),
) -> None:
    """Walk the type beside its schema; add markers and descriptions, and for
    a built-in kind the forms its Go types have upstream (goforms.py)."""
    if isinstance(t, mi.Metadata):
        _annotate(t.type, s, open_, builtin, at)
    elif isinstance(t, mi.UnionType):
        for member in t.types:
            if not isinstance(member, mi.NoneType):
                _annotate(member, s, open_, builtin, at)
        if builtin:
            goforms.scalar_form(s, *at)
    elif isinstance(t, mi.ListType | mi.SetType | mi.FrozenSetType):
        if isinstance(s.get("items"), dict):
            _annotate(t.item_type, s["items"], open_, builtin, at)
    elif isinstance(t, mi.DictType):
        if isinstance(s.get("additionalProperties"), dict):
            _annotate(t.value_type, s["additionalProperties"], open_, builtin, at)
    elif isinstance(t, mi.DateTimeType):
        s.setdefault("format", "date-time")
    elif isinstance(t, mi.StructType) and t.cls not in open_:
        open_.add(t.cls)
        doc = _doc(t.cls)
        if doc and "description" not in s:
            s["description"] = doc
        struct = t.cls.__name__
        if builtin:
            goforms.struct_form(s, struct)
        props = s.get("properties") or {}
        for f in t.fields:
            sub = props.get(f.encode_name)
            if not isinstance(sub, dict):
                continue
            marks = MARKERS.get((struct, f.encode_name))
            if marks and (sub.get("type") == "array" or "x-kubernetes-list-type" not in marks):
                sub.update(copy.deepcopy(marks))
            _annotate(f.type, sub, open_, builtin, (struct, f.encode_name))
        open_.discard(t.cls)
    elif builtin:
        goforms.scalar_form(s, *at)


@functools.cache
def kind_schema(gvk: GVK) -> dict[str, Any] | None:
    """The full (inlined) schema of a served kind, or None if not served."""
    found = lookup(gvk)
    if found is None:
        return None
    spec, version = found
    builtin = not is_crd(spec)
    if version.crd_schema is not None:  # a kind a CustomResourceDefinition defines
        s = copy.deepcopy(dict(version.crd_schema))
        s.setdefault("properties", {})["metadata"] = {"type": "object"}
    else:
        s = copy.deepcopy(openapi(version.wire))
        _annotate(mi.type_info(version.wire), s, set(), builtin)
    if builtin:  # kube-openapi marks no field of a kind required for its type meta
        s["required"] = [r for r in s.get("required") or () if r not in ("apiVersion", "kind")]
        if not s["required"]:
            del s["required"]
    props = s.setdefault("properties", {})
    props.setdefault("apiVersion", {"type": "string"})
    props.setdefault("kind", {"type": "string"})
    for name, text in (
        ("apiVersion", "APIVersion defines the versioned schema of this representation."),
        ("kind", "Kind is a string value representing the REST resource this object represents."),
    ):
        props[name].setdefault("description", text)
    s["x-kubernetes-group-version-kind"] = [
        {"group": spec.group, "version": version.name, "kind": spec.kind}
    ]
    return s


def schema_name(spec: KindSpec, version: str, kind: str | None = None) -> str:
    """The component name upstream gives a kind: io.k8s.api.batch.v1.Job for
    built-ins, the reversed group for CRDs (io.x-k8s.kueue.v1beta2.ClusterQueue)."""
    kind = kind or spec.kind
    if is_crd(spec):
        prefix = ".".join(reversed(spec.group.split(".")))
    elif spec.group == "apiregistration.k8s.io":  # (served by the aggregator upstream)
        prefix = "io.k8s.kube-aggregator.pkg.apis.apiregistration"
    else:
        short = spec.group.split(".", 1)[0] if spec.group else "core"
        prefix = f"io.k8s.api.{short}"
    return f"{prefix}.{version}.{kind}"
