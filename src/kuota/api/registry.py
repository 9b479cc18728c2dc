"""Every kind kuota knows, each declared once by its API group's package, and the
lookups the rest of kuota reads them by: decoding (``kuota.api.decode``), the store
(``kuota.store.kinds``), ``kuota crds``, the CLI and, next, API discovery.

Pure: no I/O. Lookups are plain dict reads of tables built at import.
"""

from __future__ import annotations

from kuota.api.appwrapper.appwrapper_kinds import APPWRAPPER_KINDS
from kuota.api.autoscaling.autoscaling_kinds import AUTOSCALING_KINDS
from kuota.api.jobset.jobset_kinds import JOBSET_KINDS
from kuota.api.k8s.k8s_kinds import K8S_KINDS, RESOURCE_KINDS
from kuota.api.kindspec import KindSpec, VersionSpec
from kuota.api.kubeflow.kubeflow_kinds import KUBEFLOW_KINDS
from kuota.api.kueue.kueue_kinds import KUEUE_KINDS
from kuota.api.kueue.provisioning_config import PROVISIONING_CONFIG_KINDS
from kuota.api.kuotadev.kuota_kinds import KUOTA_KINDS
from kuota.api.lws.lws_kinds import LWS_KINDS
from kuota.api.openshift.openshift_kinds import OPENSHIFT_KINDS
from kuota.api.ray.ray_kinds import RAY_KINDS
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
]

# Kueue first: its kinds are the ones kuota is about.
KINDS: tuple[KindSpec, ...] = (
    *KUEUE_KINDS,
    *PROVISIONING_CONFIG_KINDS,
    *K8S_KINDS,
    *RESOURCE_KINDS,
    *LWS_KINDS,
    *JOBSET_KINDS,
    *KUBEFLOW_KINDS,
    *RAY_KINDS,
    *APPWRAPPER_KINDS,
    *TRAINER_KINDS,
    *OPENSHIFT_KINDS,
    *AUTOSCALING_KINDS,
    *KUOTA_KINDS,
)

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
