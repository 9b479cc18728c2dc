"""The resources the server serves, addressed as REST paths name them, and the
conversion of their objects between a served version's wire form (JSON
dicts) and the store's internal structs.

Every stored kind of the api registry is served at each of its served
versions; an object is stored once, in the internal (storage-version) model,
and converted on the way in and out, as kube-apiserver converts custom
resources between their versions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from kuota.api import registry
from kuota.api.decode import REGISTRY, Document, _decode_known, decode_object
from kuota.api.errors import FieldError
from kuota.api.kindspec import KindSpec, VersionSpec, no_errors
from kuota.api.kueue.quota_types import GROUP as KUEUE_GROUP
from kuota.server import status as st
from kuota.server.wireform import full_builtins
from kuota.store.kinds import kind_named
from kuota.store.protocol import ResourceType


@dataclass(frozen=True, slots=True)
class Served:
    """One resource at one version: ``/apis/<group>/<version>/<resource>``."""

    spec: KindSpec
    version: VersionSpec
    rtype: ResourceType  # the store's key (the storage version's)

    @property
    def group(self) -> str:
        return self.spec.group

    @property
    def resource(self) -> str:
        return self.spec.plural

    @property
    def kind(self) -> str:
        return self.spec.kind

    @property
    def namespaced(self) -> bool:
        return self.spec.namespaced

    @property
    def api_version(self) -> str:
        return self.spec.api_version(self.version)


def _build() -> dict[tuple[str, str, str], Served]:
    out: dict[tuple[str, str, str], Served] = {}
    for spec in registry.KINDS:
        if not spec.stored:
            continue
        rtype = kind_named(spec.group, spec.kind).rtype
        for v in spec.versions:
            if v.served:
                out[(spec.group, v.name, spec.plural)] = Served(spec, v, rtype)
    return out


SERVED: dict[tuple[str, str, str], Served] = _build()


def _registered(spec: registry.KindSpec) -> None:
    """A kind a CustomResourceDefinition defines, served from now on (its
    versions the CRD no longer names, no longer)."""
    for k in [
        k for k, s in SERVED.items() if (s.spec.group, s.spec.kind) == (spec.group, spec.kind)
    ]:
        del SERVED[k]
    rtype = kind_named(spec.group, spec.kind).rtype
    for v in spec.versions:
        if v.served:
            SERVED[(spec.group, v.name, spec.plural)] = Served(spec, v, rtype)
    from kuota.server import discovery
    from kuota.server.openapi import schemas, v2, v3

    discovery.refresh()
    schemas.kind_schema.cache_clear()
    v3.clear()
    v2.v2_document.cache_clear()


registry.on_register(_registered)


def lookup(group: str, version: str, resource: str) -> Served | None:
    return SERVED.get((group, version, resource))


def group_versions() -> dict[str, list[str]]:
    """Each served group's versions, preferred (the storage version) first."""
    out: dict[str, list[str]] = {}
    for spec in registry.KINDS:
        if not spec.stored:
            continue
        versions = out.setdefault(spec.group, [])
        ordered = sorted(
            (v for v in spec.versions if v.served), key=lambda v: (not v.storage, v.name)
        )
        for v in ordered:
            if v.name not in versions:
                versions.append(v.name)
    return out


def resources_of(group: str, version: str) -> list[Served]:
    return [s for (g, v, _), s in SERVED.items() if g == group and v == version]


# ------------------------------------------------------------------ out
def encode(obj: Any, served: Served) -> dict[str, Any]:
    """The internal object as the served version's wire dict."""
    wire = served.version.from_internal(obj)
    body: dict[str, Any] = full_builtins(wire)
    body.pop("apiVersion", None)
    body.pop("kind", None)
    return {"apiVersion": served.api_version, "kind": served.kind, **body}


# ------------------------------------------------------------------ in
def webhook_name(served: Served) -> str | None:
    """The name of the validating webhook Kueue registers for a kind
    (``vclusterqueue.kb.io``): its denials answer 403, not 422."""
    if served.group == KUEUE_GROUP:
        return f"v{served.kind.lower()}.kb.io"
    return None


def decode_body(
    raw: Any,
    served: Served,
    namespace: str,
    gates: Mapping[str, bool],
    *,
    name: str | None = None,
    source: str = "request",
) -> Any:
    """A request body (JSON/YAML decoded to builtins) as the internal object
    to store, through decoding, defaulting, validation and webhooks exactly as
    a manifest is read. Raises ApiError: 400 for a body that names another
    kind, version, namespace or name than the request; 422 for a schema or
    rule failure; 403 for a denial by one of Kueue's webhooks."""
    if not isinstance(raw, dict):
        raise st.bad_request(f"the body of the request must be a {served.kind} object")
    raw = dict(raw)
    av, kind = raw.setdefault("apiVersion", served.api_version), raw.setdefault("kind", served.kind)
    if av != served.api_version or kind != served.kind:
        raise st.bad_request(
            f"the API version in the data ({av}) does not match the expected API version "
            f"({served.api_version})"
            if av != served.api_version
            else f"the kind in the data ({kind}) does not match the expected kind ({served.kind})"
        )
    meta = raw.get("metadata")
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise st.bad_request("metadata must be an object")
    meta = dict(meta)
    raw["metadata"] = meta
    if served.namespaced:
        ns = meta.get("namespace") or namespace
        if namespace and ns != namespace:
            raise st.bad_request(
                "the namespace of the provided object does not match the namespace sent on "
                "the request"
            )
        meta["namespace"] = ns
    else:
        meta.pop("namespace", None)
    if name is not None:
        if meta.get("name") and meta["name"] != name:
            raise st.bad_request(
                "the name of the object "
                f"({meta['name']}) does not match the name on the URL ({name})"
            )
        meta["name"] = name
    obj_name = str(meta.get("name") or meta.get("generateName") or "")
    doc = decode_object(raw, source=source, gates=gates)
    if doc.obj is None:
        raise _refusal(raw, served, obj_name, doc, gates)
    obj = doc.obj
    storage = served.spec.storage_version
    if obj.api_version != served.spec.api_version(storage):
        obj = msgspec.structs.replace(obj, api_version=served.spec.api_version(storage))
    return obj


def _refusal(
    raw: dict[str, Any], served: Served, name: str, doc: Document, gates: Mapping[str, bool]
) -> st.ApiError:
    hook = webhook_name(served)
    errors: list[FieldError] = doc.errors
    if hook is not None:
        # Which stage refused it: the CRD's schema and CEL rules (422) or
        # Kueue's validating webhook (403); decoded again without the webhook.
        info = REGISTRY[(served.api_version, served.kind)]
        schema_only = Document(source=doc.source, index=0)
        _decode_known(raw, dataclasses.replace(info, validate=no_errors), schema_only, gates)
        if not schema_only.errors:
            return st.webhook_denied(hook, errors)
    return st.invalid(served.group, served.kind, name, errors)
