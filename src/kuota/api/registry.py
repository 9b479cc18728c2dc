"""Every kind kuota knows, each declared once by its API group's package, and the
lookups the rest of kuota reads them by: decoding (``kuota.api.decode``), the store
(``kuota.store.kinds``), ``kuota crds``, the CLI and, next, API discovery.

Pure: no I/O. Lookups are plain dict reads of tables built at import.
"""

from __future__ import annotations

from collections.abc import Callable

from kuota.api.apiextensions.crd_kinds import APIEXTENSIONS_KINDS
from kuota.api.appwrapper.appwrapper_kinds import APPWRAPPER_KINDS
from kuota.api.autoscaling.autoscaling_kinds import AUTOSCALING_KINDS
from kuota.api.jobset.jobset_kinds import JOBSET_KINDS
from kuota.api.k8s.k8s_kinds import K8S_KINDS, RESOURCE_KINDS
from kuota.api.kindspec import KindSpec, VersionSpec
from kuota.api.kubeflow.kubeflow_kinds import KUBEFLOW_KINDS
from kuota.api.kueue.kueue_kinds import KUEUE_KINDS
from kuota.api.kueue.multikueue_types import MULTIKUEUE_KINDS
from kuota.api.kueue.provisioning_config import PROVISIONING_CONFIG_KINDS
from kuota.api.kuotadev.kuota_kinds import KUOTA_KINDS
from kuota.api.lws.lws_kinds import LWS_KINDS
from kuota.api.openshift.openshift_kinds import OPENSHIFT_KINDS
from kuota.api.ray.ray_kinds import RAY_KINDS
from kuota.api.spark.spark_kinds import SPARK_KINDS
from kuota.api.trainer.trainer_kinds import TRAINER_KINDS

__all__ = [
    "KINDS",
    "KindSpec",
    "VersionSpec",
    "by_api_version",
    "by_group_kind",
    "by_group_resource",
    "by_short_name",
    "kinds_of_group",
    "on_register",
    "register",
]

# Kueue first: its kinds are the ones kuota is about.
KINDS: tuple[KindSpec, ...] = (
    *KUEUE_KINDS,
    *PROVISIONING_CONFIG_KINDS,
    *MULTIKUEUE_KINDS,
    *K8S_KINDS,
    *RESOURCE_KINDS,
    *LWS_KINDS,
    *JOBSET_KINDS,
    *KUBEFLOW_KINDS,
    *RAY_KINDS,
    *APPWRAPPER_KINDS,
    *SPARK_KINDS,
    *TRAINER_KINDS,
    *OPENSHIFT_KINDS,
    *AUTOSCALING_KINDS,
    *KUOTA_KINDS,
    *APIEXTENSIONS_KINDS,
)

# The kinds declared in code; ``register`` adds kinds CRDs define (KINDS then
# holds both: read it as ``registry.KINDS``, never bound to a name at import).
BUILTIN: frozenset[tuple[str, str]] = frozenset((s.group, s.kind) for s in KINDS)
_LISTENERS: list[Callable[[KindSpec], None]] = []

_BY_GROUP_KIND: dict[tuple[str, str], KindSpec] = {}
_BY_GROUP_RESOURCE: dict[tuple[str, str], KindSpec] = {}
_BY_SHORT_NAME: dict[str, KindSpec] = {}
_BY_API_VERSION: dict[tuple[str, str], tuple[KindSpec, VersionSpec]] = {}


def _index() -> None:
    for spec in KINDS:
        gk = (spec.group, spec.kind)
        if gk in _BY_GROUP_KIND:
            raise ValueError(f"kind {spec.kind} of group {spec.group!r} declared twice")
        _BY_GROUP_KIND[gk] = spec
        _BY_GROUP_RESOURCE[(spec.group, spec.plural)] = spec
        for short in spec.short_names:
            _BY_SHORT_NAME.setdefault(short, spec)
        for version in spec.versions:
            _BY_API_VERSION[(spec.api_version(version), spec.kind)] = (spec, version)


_index()


def on_register(fn: Callable[[KindSpec], None]) -> None:
    """Call ``fn`` with every kind ``register`` adds or replaces from now on
    (the tables built from the registry at import: decoding, the store, the
    CLI's views, the API server's resources)."""
    _LISTENERS.append(fn)


def register(spec: KindSpec) -> None:
    """Add a kind a CustomResourceDefinition defines, or replace the one it
    defined before (its CRD updated). Kinds declared in code are not replaced."""
    global KINDS
    gk = (spec.group, spec.kind)
    if gk in BUILTIN:
        raise ValueError(f"kind {spec.kind} of group {spec.group!r} is built in")
    old = _BY_GROUP_KIND.get(gk)
    KINDS = (*(s for s in KINDS if s is not old), spec)
    if old is not None:
        for short in old.short_names:
            if _BY_SHORT_NAME.get(short) is old:
                del _BY_SHORT_NAME[short]
        _BY_GROUP_RESOURCE.pop((old.group, old.plural), None)
        for v in old.versions:
            _BY_API_VERSION.pop((old.api_version(v), old.kind), None)
    _BY_GROUP_KIND[gk] = spec
    _BY_GROUP_RESOURCE[(spec.group, spec.plural)] = spec
    for short in spec.short_names:
        _BY_SHORT_NAME.setdefault(short, spec)
    for version in spec.versions:
        _BY_API_VERSION[(spec.api_version(version), spec.kind)] = (spec, version)
    for fn in _LISTENERS:
        fn(spec)


def by_group_kind(group: str, kind: str) -> KindSpec | None:
    return _BY_GROUP_KIND.get((group, kind))


def by_group_resource(group: str, resource: str) -> KindSpec | None:
    """The kind served as ``resource`` (its plural name) in ``group``."""
    return _BY_GROUP_RESOURCE.get((group, resource))


def by_short_name(short: str) -> KindSpec | None:
    return _BY_SHORT_NAME.get(short)


def by_api_version(api_version: str, kind: str) -> tuple[KindSpec, VersionSpec] | None:
    """The kind and version a manifest's ``apiVersion``/``kind`` names, served or not."""
    return _BY_API_VERSION.get((api_version, kind))


def kinds_of_group(group: str) -> list[KindSpec]:
    return [s for s in KINDS if s.group == group]
