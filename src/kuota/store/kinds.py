"""Which resources the store holds: (group, version, resource) -> KindInfo.

A resource is addressed as the API server addresses it,
``/apis/GROUP/VERSION/namespaces/NS/RESOURCE``: its group ("" for core), a
version it is served at and its plural lowercase name. Every version of a
kind is ONE object: a v1beta1 and a v1beta2 Workload are the same Workload,
of one internal type, keyed in the store's tables by the resource's
registered key (its storage version, ``KindInfo.rtype``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from kuota.api import registry
from kuota.store.protocol import NotFound, ResourceType, group_of


@dataclass(frozen=True, slots=True)
class KindInfo:
    rtype: ResourceType  # (group, storage version, resource): the store's table key
    kind: str
    type: type
    namespaced: bool
    # Top-level fields whose change bumps metadata.generation (all but
    # apiVersion, kind, metadata and status).
    spec_fields: tuple[str, ...]
    has_status: bool


def resource_of(kind: str) -> str:
    """A kind's resource (plural, lowercase) name, by Kubernetes' own guess
    (UnsafeGuessKindToResource): "Workload" -> "workloads", "Topology" ->
    "topologies", "Endpoints" -> "endpoints". The one place the plural is
    derived for a kind the api registry does not declare (its kinds name
    their plural)."""
    name = kind.lower()
    if not name or name.endswith("endpoints"):
        return name
    if name.endswith("s"):
        return name + "es"
    if name.endswith("y") and len(name) > 1 and name[-2] not in "aeiou":
        return name[:-1] + "ies"
    return name + "s"


def version_of(api_version: str) -> str:
    return api_version.rpartition("/")[2]


# Every served (group, version, resource) -> its kind; (group, kind) -> its kind.
_KINDS: Final[dict[ResourceType, KindInfo]] = {}
_BY_KIND: Final[dict[tuple[str, str], KindInfo]] = {}
_NOT_SPEC: Final = frozenset({"api_version", "kind", "metadata", "status"})


def register_kind(
    rtype: ResourceType,
    typ: type,
    namespaced: bool,
    *,
    kind: str,
    versions: tuple[str, ...] = (),
) -> KindInfo:
    """Register (or replace) a kind; ``rtype`` is its (group, storage version,
    resource), ``versions`` the other versions it is served at; ``typ`` is a
    msgspec Struct with ``api_version``, ``kind`` and ``metadata`` fields."""
    fields: tuple[str, ...] = getattr(typ, "__struct_fields__", ())
    missing = {"api_version", "kind", "metadata"} - set(fields)
    if missing:
        raise TypeError(f"{typ.__name__} is not an API object: no {', '.join(sorted(missing))}")
    group, _, resource = rtype
    info = KindInfo(
        rtype=rtype,
        kind=kind,
        type=typ,
        namespaced=namespaced,
        spec_fields=tuple(f for f in fields if f not in _NOT_SPEC),
        has_status="status" in fields,
    )
    _KINDS[rtype] = info
    for v in versions:
        _KINDS[(group, v, resource)] = info
    _BY_KIND[(group, kind)] = info
    _RTYPES.clear()
    return info


def kind_info(rtype: ResourceType) -> KindInfo:
    """The registered kind of a resource, at any version it is served at;
    raises NotFound (as the API server answers 404 for a resource it does
    not serve)."""
    info = _KINDS.get(rtype)
    if info is None:
        group, version, resource = rtype
        gv = f"{group}/{version}" if group else version
        raise NotFound(f'the server could not find the requested resource "{resource}" in "{gv}"')
    return info


def kind_named(group: str, kind: str) -> KindInfo:
    """The registered kind of a group; raises NotFound."""
    info = _BY_KIND.get((group, kind))
    if info is None:
        raise NotFound(f'no matches for kind "{kind}" in group "{group}"')
    return info


def kind_of(obj: Any) -> KindInfo:
    """The registered kind of an object; raises NotFound as kubectl says it."""
    api_version: str = obj.api_version
    kind: str = obj.kind
    info = _BY_KIND.get((group_of(api_version), kind))
    if info is None:
        raise NotFound(f'no matches for kind "{kind}" in version "{api_version}"')
    return info


def resource_type(obj: Any) -> ResourceType:
    """The resource an object belongs to, as the very tuple its kind was
    registered with (whatever the object's version): the store's tables are
    keyed by it, and a dict finds an identical key at once (a new tuple of
    new strings is hashed and compared at every lookup). An unregistered
    kind gets its guessed resource at the object's version."""
    api_version: str = obj.api_version
    kind: str = obj.kind
    by_kind = _RTYPES.get(api_version)
    if by_kind is None:
        by_kind = {}
        if len(_RTYPES) < _RTYPES_SIZE:
            _RTYPES[api_version] = by_kind
    rtype = by_kind.get(kind)
    if rtype is None:
        info = _BY_KIND.get((group_of(api_version), kind))
        if info is not None:
            rtype = info.rtype
            if len(by_kind) < _RTYPES_SIZE:
                by_kind[kind] = rtype
        else:
            rtype = (group_of(api_version), version_of(api_version), resource_of(kind))
    return rtype


# api_version -> kind -> registered rtype; capped (any text may name a version).
_RTYPES: Final[dict[str, dict[str, ResourceType]]] = {}
_RTYPES_SIZE: Final = 256


def rtype_of(obj: Any) -> ResourceType:
    """The (group, version, resource) of an object (``resource_type``)."""
    return resource_type(obj)


def resource_for(api_version: str, kind: str) -> ResourceType:
    """The registered resource of a kind, named by apiVersion and kind."""
    return kind_named(group_of(api_version), kind).rtype


def resource_named(kind: str) -> ResourceType:
    """The registered resource of a kind named by its kind alone (the first
    of its groups, in sorted order)."""
    for group, k in sorted(_BY_KIND):
        if k == kind:
            return _BY_KIND[(group, k)].rtype
    raise NotFound(f'no kind "{kind}"')


def registered_kinds() -> list[ResourceType]:
    """The registered resources, each at its storage version."""
    return sorted({info.rtype for info in _KINDS.values()})


def _register_spec(spec: registry.KindSpec) -> None:
    """A stored kind of the api registry, at its storage version and served
    at its other versions too."""
    if not spec.stored:
        return
    storage = spec.storage_version.name
    register_kind(
        (spec.group, storage, spec.plural),
        spec.internal,
        spec.namespaced,
        kind=spec.kind,
        versions=tuple(v.name for v in spec.versions if v.served and v.name != storage),
    )


def _register_builtin() -> None:
    for spec in registry.KINDS:
        _register_spec(spec)


_register_builtin()
# Kinds CustomResourceDefinitions define are stored from their registration on.
registry.on_register(_register_spec)
