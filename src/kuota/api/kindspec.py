"""How a kind is declared: once, by the package of its API group, with what the
API server's discovery, ``kubectl get``, decoding and the store read of it.

A ``KindSpec`` names the kind (group, kind, plural resource, singular, short
names, categories), says whether it is namespaced and which subresources it
has, and lists its versions (``VersionSpec``: served, storage, the wire struct,
its conversion to and from the internal struct and its printer columns). The
rules applied on create (``validate``, ``default``, ``name_fn``) are the kind's:
every version is converted to the one internal struct first. Pure data: the
registry (``kuota.api.registry``) collects the declarations.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kuota.api.base import Meta
from kuota.api.errors import FieldError
from kuota.api.names import is_dns1123_subdomain

Gates = Mapping[str, bool]
Validator = Callable[[Any, Gates], list[FieldError]]
# A raw document read against a schema before it is decoded (a custom
# resource's CRD schema): the defaulted and pruned document, the errors, the
# pruned fields' warnings.
Preparer = Callable[[dict[str, Any]], tuple[dict[str, Any] | None, list[FieldError], list[str]]]


def identity(obj: Any) -> Any:
    return obj


def no_errors(obj: Any, gates: Gates) -> list[FieldError]:
    return []


def gateless(fn: Callable[[Any], list[FieldError]]) -> Validator:
    """A validator that reads no feature gate, as the registry calls it."""
    return lambda obj, gates: fn(obj)


@dataclass(frozen=True, slots=True)
class PrinterColumn:
    """A column of ``kubectl get`` after NAME: a CRD's additionalPrinterColumn, or
    one of a built-in kind's server-side table (whose cells the API server computes:
    ``json_path`` is then empty)."""

    name: str
    type: str  # string, integer, date, ...
    json_path: str = ""
    priority: int = 0  # 1: shown only with ``-o wide``


@dataclass(frozen=True, slots=True)
class VersionSpec:
    """One version of a kind, as the API server serves it."""

    name: str  # "v1", "v1beta2", ...
    wire: type  # the struct a manifest of this version decodes into
    served: bool = True
    storage: bool = False
    deprecated: bool = False
    # wire -> internal struct on read (also the defaulting of kinds defaulted so),
    # internal -> wire on write.
    to_internal: Callable[[Any], Any] = identity
    from_internal: Callable[[Any], Any] = identity
    root_rules: Meta | None = None  # CEL rules on the whole object
    columns: tuple[PrinterColumn, ...] = ()
    # Read from manifests (``kuota.api.decode``); an Event is written, never read.
    decoded: bool = True
    prepare: Preparer | None = None  # a CRD-defined kind: its schema's walk
    crd_schema: Mapping[str, Any] | None = None  # ... and the schema (OpenAPI)


@dataclass(frozen=True, slots=True)
class KindSpec:
    group: str  # "" for the core group
    kind: str
    plural: str  # the resource name: ``kubectl get <plural>``, REST paths
    namespaced: bool
    internal: type  # the struct every version converts to; what the store holds
    versions: tuple[VersionSpec, ...]
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()  # ``kubectl get all`` reads category "all"
    status_subresource: bool = False
    scale_subresource: bool = False
    validate: Validator = no_errors  # on create, of the internal object
    default: Callable[[Any, Gates], None] | None = None  # a mutating webhook
    name_fn: Callable[[str], list[str]] = is_dns1123_subdomain
    stored: bool = True  # held by the store (the control plane's objects)

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    def api_version(self, version: VersionSpec) -> str:
        return f"{self.group}/{version.name}" if self.group else version.name

    @property
    def storage_version(self) -> VersionSpec:
        return next(v for v in self.versions if v.storage)
