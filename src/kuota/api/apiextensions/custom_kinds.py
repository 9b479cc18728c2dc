"""The kind a CustomResourceDefinition defines, as kuota declares kinds
(``KindSpec``): a struct made for it (its schema's top-level fields, their
values kept as read), each version read against its own schema
(``structural.validate_custom``), its printer columns and subresources;
registered in ``kuota.api.registry`` so that decoding, the store, ``kuota
get`` and the API server take it from then on. A CRD for a kind kuota
declares in code (Kueue's, JobSet's, ...) is kept as an object but changes
nothing: kuota's own definition stays."""

from __future__ import annotations

import functools
import keyword
from typing import Any

import msgspec

from kuota.api import registry
from kuota.api.apiextensions.cel_rules import has_rules
from kuota.api.apiextensions.crd_types import CustomResourceDefinition
from kuota.api.apiextensions.structural import validate_custom
from kuota.api.base import Object
from kuota.api.kindspec import KindSpec, PrinterColumn, VersionSpec
from kuota.api.meta import ObjectMeta

__all__ = ["custom_kind_spec", "register_crd", "rules_schema"]

_HEAD = ("apiVersion", "kind", "metadata")
_DEFAULT_COLUMNS = (PrinterColumn("Age", "date", ".metadata.creationTimestamp"),)
# CRD name -> (the spec it was registered from, its KindSpec)
_REGISTERED: dict[str, tuple[Any, KindSpec]] = {}
# A custom kind's struct -> its group and storage version's schema, for the
# kinds whose schema has CEL rules (the stored object is in that version).
_RULED: dict[type, tuple[str, dict[str, Any]]] = {}


def rules_schema(typ: type) -> tuple[str, dict[str, Any]] | None:
    """The group and storage schema of a custom kind with CEL rules."""
    return _RULED.get(typ)


def _schema(v: Any) -> dict[str, Any]:
    sch = v.schema.open_apiv3_schema if v.schema is not None else None
    return sch if isinstance(sch, dict) else {"type": "object"}


def _struct(crd: CustomResourceDefinition) -> type:
    """A msgspec struct for the kind: apiVersion, kind, metadata, and each
    top-level field any version's schema names (``status`` under that name:
    the store knows a status by it), values kept as read."""
    wire_names: list[str] = []
    for v in crd.spec.versions:
        for k in _schema(v).get("properties") or {}:
            if k not in _HEAD and k not in wire_names:
                wire_names.append(k)
    rename = {"api_version": "apiVersion", "kind": "kind", "metadata": "metadata"}
    fields: list[Any] = [("api_version", str), ("kind", str)]
    fields.append(("metadata", ObjectMeta, msgspec.field(default_factory=ObjectMeta)))
    for i, w in enumerate(wire_names):
        attr = (
            w if w.isidentifier() and not keyword.iskeyword(w) and w not in rename else f"field_{i}"
        )
        rename[attr] = w
        fields.append((attr, Any, None))
    name = crd.spec.names.kind if crd.spec.names.kind.isidentifier() else "CustomResource"
    return msgspec.defstruct(
        name,
        fields,
        bases=(Object,),
        rename=rename,
        module=__name__,
        omit_defaults=True,
        forbid_unknown_fields=True,
        kw_only=True,
    )


def _columns(v: Any) -> tuple[PrinterColumn, ...]:
    cols = v.additional_printer_columns
    if not cols:
        return _DEFAULT_COLUMNS
    return tuple(PrinterColumn(c.name, c.type, c.json_path, c.priority or 0) for c in cols)


def custom_kind_spec(crd: CustomResourceDefinition) -> KindSpec:
    spec = crd.spec
    typ = _struct(crd)
    versions = tuple(
        VersionSpec(
            v.name,
            typ,
            served=v.served,
            storage=v.storage,
            deprecated=bool(v.deprecated),
            columns=_columns(v),
            prepare=functools.partial(validate_custom, schema=_schema(v)),
            crd_schema=_schema(v),
        )
        for v in spec.versions
    )
    storage = next((v for v in spec.versions if v.storage), spec.versions[0])
    subs = storage.subresources
    return KindSpec(
        group=spec.group,
        kind=spec.names.kind,
        plural=spec.names.plural,
        namespaced=spec.scope == "Namespaced",
        internal=typ,
        versions=versions,
        short_names=tuple(spec.names.short_names or ()),
        categories=tuple(spec.names.categories or ()),
        status_subresource=subs is not None and subs.status is not None,
        scale_subresource=subs is not None and subs.scale is not None,
    )


def register_crd(crd: CustomResourceDefinition) -> KindSpec | None:
    """Serve the kind ``crd`` defines (again only when its spec changed);
    None for a kind kuota declares in code."""
    if (crd.spec.group, crd.spec.names.kind) in registry.BUILTIN:
        return None
    name = crd.metadata.name or ""
    known = _REGISTERED.get(name)
    if known is not None and known[0] == crd.spec:
        return known[1]
    ks = custom_kind_spec(crd)
    registry.register(ks)
    if known is not None:
        _RULED.pop(known[1].internal, None)
    storage = next((v for v in crd.spec.versions if v.storage), crd.spec.versions[0])
    if has_rules(_schema(storage)):
        _RULED[ks.internal] = (crd.spec.group, _schema(storage))
    _REGISTERED[name] = (crd.spec, ks)
    return ks
