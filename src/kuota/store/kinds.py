"""Which kinds the store holds: ResourceType -> (internal struct type, namespaced).

Kueue kinds are keyed by their group only (a v1beta1 and a v1beta2 Workload
are one object of one internal type); core kinds by theirs ("" for core/v1).
"""

from __future__ import annotations

from dataclasses import dataclass

from kuota.api.core import CORE_KINDS
from kuota.api.core_validation import NAMESPACED as CORE_NAMESPACED
from kuota.api.event import Event
from kuota.api.kueue import types as kt
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


_KINDS: dict[ResourceType, KindInfo] = {}
_NOT_SPEC = frozenset({"api_version", "kind", "metadata", "status"})


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
    return info


def kind_info(rtype: ResourceType) -> KindInfo:
    """The registered kind; raises NotFound (as the API server answers 404 for
    a resource it does not serve)."""
    info = _KINDS.get(rtype)
    if info is None:
        group, kind = rtype
        raise NotFound(f'no matches for kind "{kind}" in group "{group}"')
    return info


def registered_kinds() -> list[ResourceType]:
    return sorted(_KINDS)


def _register_builtin() -> None:
    for kind, typ in kt.KINDS.items():
        register_kind((kt.GROUP, kind), typ, kind in kt.NAMESPACED_KINDS)
    for (api_version, kind), typ in CORE_KINDS.items():
        register_kind((group_of(api_version), kind), typ, kind in CORE_NAMESPACED)
    register_kind(("", "Event"), Event, True)


_register_builtin()
