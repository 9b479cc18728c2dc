"""Read manifests as the API server and Kueue read them.

For every document: dispatch on ``apiVersion``/``kind``; decode strictly with
msgspec straight into that version's struct (the fast path: defaults applied,
types and schema constraints checked in C); if that fails, walk the raw
document against the version's schema to collect every error and to turn
unknown fields into warnings (pruned, as the API server prunes them); then
metadata and the version's CEL rules; then, only if all of that passed,
convert to the internal model and run Kueue's webhook rules.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec
import yaml

from kuota.api import errors as e
from kuota.api import registry
from kuota.api.base import Meta, dec_hook, enc_hook
from kuota.api.errors import FieldError
from kuota.api.k8s.validation.objectmeta import validate_object_meta
from kuota.api.kindspec import Gates, Preparer, Validator
from kuota.api.kueue import types as kt
from kuota.api.schema import MAX_NODES, check_rules, validate_raw


@dataclass(frozen=True, slots=True)
class ManifestKind:
    """What decoding reads of one ``apiVersion``/``kind`` pair a manifest may name:
    its kind's declaration (``kuota.api.registry``) and that version's, flattened
    for the hot path."""

    api_version: str
    kind: str
    wire: type
    namespaced: bool
    to_internal: Callable[[Any], Any]
    from_internal: Callable[[Any], Any]
    validate: Validator
    default: Callable[[Any, Gates], None] | None
    root_rules: Meta | None
    name_fn: Callable[[str], list[str]]
    prepare: Preparer | None = None


def _add_kind(reg: dict[tuple[str, str], ManifestKind], spec: registry.KindSpec) -> None:
    for v in spec.versions:
        if not v.decoded:
            continue
        api_version = spec.api_version(v)
        reg[(api_version, spec.kind)] = ManifestKind(
            api_version,
            spec.kind,
            v.wire,
            spec.namespaced,
            v.to_internal,
            v.from_internal,
            spec.validate,
            spec.default,
            v.root_rules,
            spec.name_fn,
            v.prepare,
        )


def _build_registry() -> dict[tuple[str, str], ManifestKind]:
    reg: dict[tuple[str, str], ManifestKind] = {}
    for spec in registry.KINDS:
        _add_kind(reg, spec)
    return reg


# (apiVersion, kind) -> how a manifest of it is read; kinds never read from files
# (Events) are absent.
REGISTRY = _build_registry()
KINDS_BY_NAME: dict[str, list[str]] = {}
for _av, _k in REGISTRY:
    KINDS_BY_NAME.setdefault(_k, []).append(_av)


def _registered(spec: registry.KindSpec) -> None:
    """A kind a CRD defines, read from now on (its old versions forgotten)."""
    for gk in [
        gk
        for gk, m in REGISTRY.items()
        if m.kind == spec.kind and gk[0].startswith(f"{spec.group}/")
    ]:
        del REGISTRY[gk]
    _add_kind(REGISTRY, spec)
    KINDS_BY_NAME[spec.kind] = sorted(av for av, k in REGISTRY if k == spec.kind)


registry.on_register(_registered)


def unknown_kind_hint(api_version: str, kind: str) -> str:
    """What to do about a kind kuota does not read: the versions it is read
    in, the known kind a typo was meant to be, or (as kubectl says) that the
    kind's CRD must be installed first."""
    known = KINDS_BY_NAME.get(kind)
    if known:
        return f"; {kind} is read in {', '.join(sorted(known))}"
    group = api_version.rpartition("/")[0]  # ("" for the core group's "v1")
    if group == "kind.x-k8s.io":
        return (
            "; this is a kind (Kubernetes in Docker) cluster configuration, not an object "
            "to apply: kuota's cluster is the world's Nodes"
        )
    # A typo: the same name in another case, or a close name in the same group.
    same_group = {
        k.lower(): k
        for k, versions in KINDS_BY_NAME.items()
        if any(av.rpartition("/")[0] == group for av in versions)
    }
    meant = {k.lower(): k for k in KINDS_BY_NAME}.get(kind.lower())
    if meant is None:
        close = difflib.get_close_matches(kind.lower(), list(same_group), n=1, cutoff=0.8)
        meant = same_group[close[0]] if close else None
    if meant is not None:
        return f'; did you mean "{meant}" ({", ".join(sorted(KINDS_BY_NAME[meant]))})?'
    return (
        "; ensure CRDs are installed first: a world (or `kubectl apply` to `kuota serve`) "
        "may bring the kind's CustomResourceDefinition, and its objects are then stored "
        "and validated against its schema, though no controller runs them "
        f"(`kuota validate --kinds` lists the {len(KINDS_BY_NAME)} kinds kuota reads)"
    )


@dataclass(slots=True)
class Document:
    """One object read from a file, with everything found wrong with it."""

    source: str
    index: int  # the document's position in its file (0-based)
    prefix: str = ""  # where in a containing document it sits, e.g. ``objects[3]``
    api_version: str = ""
    kind: str = ""
    name: str = ""
    namespace: str = ""
    obj: Any = None  # the internal object, when valid
    errors: list[FieldError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def ref(self) -> str:
        kind = self.kind or "<unknown kind>"
        name = self.name or "<no name>"
        return f"{kind}/{self.namespace}/{name}" if self.namespace else f"{kind}/{name}"

    @property
    def where(self) -> str:
        loc = f"{self.source} (document {self.index + 1})"
        return f"{loc} {self.prefix}" if self.prefix else loc

    def shown(self, err: FieldError) -> str:
        """The error as printed, its path counted from the file's document."""
        return str(dataclasses.replace(err, path=self.full_path(err)))

    def full_path(self, err: FieldError) -> str:
        return (
            f"{self.prefix}.{err.path}" if self.prefix and err.path else (self.prefix or err.path)
        )


def _gates(gates: Mapping[str, bool] | None) -> Mapping[str, bool]:
    if gates is not None:
        return gates
    from kuota.api.features import FEATURE_GATE_DEFAULTS

    return FEATURE_GATE_DEFAULTS


def check_update(doc: Document, old: Document, gates: Mapping[str, bool] | None = None) -> None:
    """``doc`` applied over ``old`` (the same object, read earlier): add what the
    API server and Kueue refuse on update. As ``kubectl apply`` leaves the
    status subresource alone, the stored status is the old document's."""
    if not (doc.ok and old.ok) or doc.obj is None or old.obj is None:
        return
    if doc.api_version.rpartition("/")[0] != kt.GROUP:
        return
    from kuota.api.kueue.updates import validate_update

    new = doc.obj
    if hasattr(new, "status"):
        new = msgspec.structs.replace(new, status=old.obj.status)
    errs = validate_update(new, old.obj, _gates(gates), version=doc.api_version)
    if errs:
        doc.errors.extend(errs)
        doc.obj = None


def _msgspec_error(err: msgspec.ValidationError, raw: Any = None) -> FieldError:
    """msgspec's error at its field, with the value the user wrote there."""
    text = str(err)
    m = re.match(r"^(.*) - at `\$(.*)`$", text, re.S)
    if not m:
        return e.invalid("", "object", text)
    detail, p = m.group(1), m.group(2).lstrip(".")
    return e.invalid(p, e.value_at(raw, p), detail)


def decode_object(
    raw: Any,
    *,
    source: str = "<input>",
    index: int = 0,
    prefix: str = "",
    gates: Mapping[str, bool] | None = None,
) -> Document:
    """Decode and validate one raw document (a mapping from YAML or JSON)."""
    doc = Document(source=source, index=index, prefix=prefix)
    if not isinstance(raw, dict):
        doc.errors.append(
            e.invalid(
                "",
                type(raw).__name__,
                "a Kubernetes object must be a mapping (apiVersion, kind, metadata, ...)",
            )
        )
        return doc
    api_version, kind = raw.get("apiVersion"), raw.get("kind")
    meta = raw.get("metadata")
    if isinstance(meta, dict):
        doc.name = meta.get("name") if isinstance(meta.get("name"), str) else ""
        doc.namespace = meta.get("namespace") if isinstance(meta.get("namespace"), str) else ""
    doc.errors += _head_errors(api_version, kind)
    if doc.errors:
        doc.kind = kind if isinstance(kind, str) else ""
        return doc
    doc.api_version, doc.kind = api_version, kind
    info = REGISTRY.get((api_version, kind))
    if info is None:
        doc.errors.append(
            e.FieldError(
                "kind",
                e.NOT_SUPPORTED,
                f'no matches for kind "{kind}" in version "{api_version}"'
                + unknown_kind_hint(api_version, kind),
                kind,
            )
        )
        return doc
    if not info.namespaced and isinstance(meta, dict) and "namespace" in meta:
        # kube-apiserver's rest.BeforeCreate clears the namespace of a
        # cluster-scoped object before validation
        # (EnsureObjectNamespaceMatchesRequestNamespace): `kubectl apply` of
        # such a manifest succeeds.
        raw = {**raw, "metadata": {k: v for k, v in meta.items() if k != "namespace"}}
        doc.namespace = ""
    return _decode_known(raw, info, doc, _gates(gates))


def _head_errors(api_version: Any, kind: Any) -> list[FieldError]:
    """``apiVersion`` and ``kind`` as the API server's decoder reads them: both
    required, both strings."""
    errs: list[FieldError] = []
    for name, value in (("kind", kind), ("apiVersion", api_version)):
        if value is None or value == "":
            errs.append(e.required(name, f"every object must say its {name}"))
        elif not isinstance(value, str):
            errs.append(e.invalid(name, value, "must be a string"))
    return errs


def _decode_known(
    raw: dict[str, Any], info: ManifestKind, doc: Document, gates: Mapping[str, bool]
) -> Document:
    if info.prepare is not None:
        prepared, errs, warns = info.prepare(raw)
        doc.warnings.extend(warns)
        if errs or prepared is None:
            doc.errors.extend(errs)
            return doc
        raw = prepared
    try:
        obj = msgspec.convert(raw, info.wire, dec_hook=dec_hook)
    except (msgspec.ValidationError, RecursionError):
        obj = None
    if obj is None:
        try:
            pruned, errs, warns = validate_raw(raw, info.wire)
        except RecursionError:
            pruned, errs, warns = (
                None,
                [e.invalid("", "object", "document is nested too deeply")],
                [],
            )
        doc.warnings.extend(warns)
        if errs:
            doc.errors.extend(errs)
            return doc
        try:
            obj = msgspec.convert(pruned, info.wire, dec_hook=dec_hook)
        except msgspec.ValidationError as err:
            doc.errors.append(_msgspec_error(err, pruned))
            return doc
    return _validate_decoded(obj, info, doc, gates)


def _validate_decoded(
    obj: Any, info: ManifestKind, doc: Document, gates: Mapping[str, bool]
) -> Document:
    errs = validate_object_meta(obj.metadata, info.namespaced, info.name_fn, "metadata")
    errs += check_rules(obj, info.wire, info.root_rules)
    if errs:
        doc.errors.extend(errs)
        return doc
    internal = info.to_internal(obj)
    if info.default is not None:
        info.default(internal, gates)
    doc.errors.extend(info.validate(internal, gates))
    if not doc.errors:
        doc.obj = internal
    return doc


# ----------------------------------------------------------------------------- YAML
class _Loader(yaml.CSafeLoader):
    """libyaml's loader with YAML 1.1 timestamps left as strings, as Kubernetes
    reads them (the typed fields parse RFC 3339 themselves)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        # The API server's strict decoding refuses a key set twice in one map
        # (sigs.k8s.io/yaml: 'key "x" already set in map'); libyaml keeps the last.
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                k = self.construct_object(key_node)
                if k in seen:
                    raise yaml.constructor.ConstructorError(
                        None,
                        None,
                        f"key {json.dumps(str(k))} already set in map (duplicate key)",
                        key_node.start_mark,
                    )
                seen.add(k)
        return super().construct_mapping(node, deep=deep)


_Loader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in yaml.CSafeLoader.yaml_implicit_resolvers.items()
}


class YamlError(Exception):
    """The bytes are not YAML (or not text); nothing in them can be read."""


def load_yaml_documents(data: bytes | str) -> list[Any]:
    return list(_iter_yaml_documents(data))


def iter_yaml_documents(data: bytes | str) -> Iterator[Any]:
    """The stream's documents one at a time (``kuota validate`` of a large file)."""
    return _iter_yaml_documents(data)


def _iter_yaml_documents(data: bytes | str) -> Iterator[Any]:
    """The stream's non-empty documents, loaded one at a time (so a caller that
    decodes each in turn never holds every raw document). Raises ``YamlError``."""
    aliases = (b"&" if isinstance(data, bytes) else "&") in data
    docs = yaml.load_all(data, Loader=_Loader)
    while True:
        # Only loading is guarded: what the caller does between documents is its own.
        try:
            d = next(docs)
        except StopIteration:
            return
        except yaml.YAMLError as err:
            raise YamlError(_yaml_message(err)) from None
        except RecursionError:
            raise YamlError("document is nested too deeply") from None
        except (UnicodeDecodeError, ValueError) as err:
            raise YamlError(f"not UTF-8 text: {err}") from None
        if d is not None:
            yield _TooLarge() if aliases and _too_many_nodes(d) else d


class _TooLarge:
    """Stands for a document whose aliases expand beyond MAX_NODES."""


def _too_many_nodes(d: Any) -> bool:
    count = 0
    stack = [d]
    while stack:
        x = stack.pop()
        count += 1
        if count > MAX_NODES:
            return True
        if isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return False


def _yaml_message(err: yaml.YAMLError) -> str:
    mark = getattr(err, "problem_mark", None)
    problem = getattr(err, "problem", None) or str(err)
    if mark is not None:
        return f"invalid YAML at line {mark.line + 1}, column {mark.column + 1}: {problem}"
    return f"invalid YAML: {problem}"


def iter_objects(raw: Any) -> Iterator[tuple[str, Any]]:
    """The objects in one document: itself, or the items of a ``kind: List``."""
    if isinstance(raw, dict) and raw.get("kind") == "List" and isinstance(raw.get("items"), list):
        for i, item in enumerate(raw["items"]):
            yield f"items[{i}]", item
    else:
        yield "", raw


def decode_document(
    raw: Any, *, source: str, index: int, gates: Mapping[str, bool] | None = None
) -> list[Document]:
    """The objects of one loaded YAML document (itself, or a List's items)."""
    if isinstance(raw, _TooLarge):
        d = Document(source=source, index=index)
        d.errors.append(
            e.FieldError(
                "", e.TOO_MANY, f"document expands to more than {MAX_NODES} nodes (YAML aliases)"
            )
        )
        return [d]
    return [
        decode_object(obj, source=source, index=index, prefix=prefix, gates=gates)
        for prefix, obj in iter_objects(raw)
    ]


def decode_yaml(
    data: bytes | str, source: str = "<input>", gates: Mapping[str, bool] | None = None
) -> list[Document]:
    """Every object of a multi-document YAML stream. Raises ``YamlError``."""
    return [
        doc
        for i, raw in enumerate(_iter_yaml_documents(data))
        for doc in decode_document(raw, source=source, index=i, gates=gates)
    ]


# ----------------------------------------------------------------------------- JSON
class _Head(msgspec.Struct):
    apiVersion: str = ""
    kind: str = ""


_HEAD = msgspec.json.Decoder(_Head)
_JSON_DECODERS: dict[type, msgspec.json.Decoder[Any]] = {}


def decode_json(
    data: bytes, source: str = "<input>", gates: Mapping[str, bool] | None = None
) -> list[Document]:
    """One JSON object (or a ``kind: List``), straight into its struct when valid."""
    g = _gates(gates)
    try:
        head = _HEAD.decode(data)
    except msgspec.DecodeError as err:
        raise YamlError(f"invalid JSON: {err}") from None
    except msgspec.ValidationError:
        head = None
    info = REGISTRY.get((head.apiVersion, head.kind)) if head else None
    if info is not None:
        dec = _JSON_DECODERS.get(info.wire)
        if dec is None:
            dec = _JSON_DECODERS[info.wire] = msgspec.json.Decoder(info.wire, dec_hook=dec_hook)
        try:
            obj = dec.decode(data)
        except (msgspec.ValidationError, RecursionError):
            obj = None
        if obj is not None:
            doc = Document(
                source=source,
                index=0,
                api_version=info.api_version,
                kind=info.kind,
                name=obj.metadata.name,
                namespace=obj.metadata.namespace,
            )
            return [_validate_decoded(obj, info, doc, g)]
    try:
        raw = msgspec.json.decode(data)
    except msgspec.DecodeError as err:
        raise YamlError(f"invalid JSON: {err}") from None
    return [
        decode_object(obj, source=source, index=0, prefix=p, gates=g)
        for p, obj in iter_objects(raw)
    ]


# ----------------------------------------------------------------------------- write back
def to_wire(obj: Any) -> dict[str, Any]:
    """The object as a dict in the API version it was read in."""
    info = REGISTRY.get((obj.api_version, obj.kind))
    if info is None:
        # Kinds the control plane writes but never reads from files (Events).
        plain: dict[str, Any] = msgspec.to_builtins(obj, enc_hook=enc_hook)
        return {"apiVersion": obj.api_version, "kind": obj.kind, **plain}
    body = msgspec.to_builtins(info.from_internal(obj), enc_hook=enc_hook)
    # apiVersion and kind equal their struct defaults, which omit_defaults drops.
    return {"apiVersion": info.api_version, "kind": info.kind, **body}


def to_yaml(objs: list[Any]) -> str:
    return yaml.safe_dump_all(
        [to_wire(o) for o in objs], sort_keys=False, default_flow_style=False, allow_unicode=True
    )
