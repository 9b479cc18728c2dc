"""Which kinds the store holds: ResourceType -> (internal struct type, namespaced).

Kueue kinds are keyed by their group only (a v1beta1 and a v1beta2 Workload
are one object of one internal type); core kinds by theirs ("" for core/v1).
The kinds are the stored ones of ``kuota.api.registry``; this module derives
what the store reads of each on every write (spec fields, status).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from kuota.api import registry
from kuota.store.protocol import NotFound, ResourceType, group_of


@dataclass(frozen=True, slots=True)
class KindInfo:
    rtype: ResourceType
    type: type
    namespaced: bool
    # Top-level fields whose change bumps metadata.generation (all but
    # apiVersion, kind, metadata and status).
    spec_fields: tuple[str, ...]
    has_status: bool


_KINDS: Final[dict[ResourceType, KindInfo]] = {}
_NOT_SPEC: Final = frozenset({"api_version", "kind", "metadata", "status"})


def register_kind(rtype: ResourceType, typ: type, namespaced: bool) -> KindInfo:
    """Register (or replace) a kind; ``typ`` is a msgspec Struct with
    ``api_version``, ``kind`` and ``metadata`` fields."""
    fields: tuple[str, ...] = getattr(typ, "__struct_fields__", ())
    missing = {"api_version", "kind", "metadata"} - set(fields)
    if missing:
        raise TypeError(f"{typ.__name__} is not an API object: no {', '.join(sorted(missing))}")
    info = KindInfo(
        rtype=rtype,
        type=typ,
        namespaced=namespaced,
        spec_fields=tuple(f for f in fields if f not in _NOT_SPEC),
        has_status="status" in fields,
    )
    _KINDS[rtype] = info
    _RTYPES.clear()
    return info


def kind_info(rtype: ResourceType) -> KindInfo:
    """The registered kind; raises NotFound (as the API server answers 404 for
    a resource it does not serve)."""
    info = _KINDS.get(rtype)
    if info is None:
        group, kind = rtype
        raise NotFound(f'no matches for kind "{kind}" in group "{group}"')
    return info


def resource_type(obj: Any) -> ResourceType:
    """``rtype_of(obj)``, as the very tuple the kind was registered with: the
    store's tables are keyed by it, and a dict finds an identical key at once
    (a new tuple of new strings is hashed and compared at every lookup)."""
    api_version: str = obj.api_version
    kind: str = obj.kind
    by_kind = _RTYPES.get(api_version)
    if by_kind is None:
        by_kind = {}
        if len(_RTYPES) < _RTYPES_SIZE:
            _RTYPES[api_version] = by_kind
    rtype = by_kind.get(kind)
    if rtype is None:
        rtype = (group_of(api_version), kind)
        info = _KINDS.get(rtype)
        if info is not None:
            rtype = info.rtype
            if len(by_kind) < _RTYPES_SIZE:
                by_kind[kind] = rtype
    return rtype


# api_version -> kind -> registered rtype; capped (any text may name a version).
_RTYPES: Final[dict[str, dict[str, ResourceType]]] = {}
_RTYPES_SIZE: Final = 256


def registered_kinds() -> list[ResourceType]:
    return sorted(_KINDS)


def _register_builtin() -> None:
    for spec in registry.KINDS:
        if spec.stored:
            register_kind((spec.group, spec.kind), spec.internal, spec.namespaced)


_register_builtin()
