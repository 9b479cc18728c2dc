"""Kueue's MultiKueue kinds (``apis/kueue/v1beta2/multikueue_types.go`` and its
v1beta1 twin): a MultiKueueCluster says how to reach a worker cluster's API
server (a kubeconfig in a Secret of Kueue's namespace, or a file), a
MultiKueueConfig lists the clusters an AdmissionCheck of controller
``kueue.x-k8s.io/multikueue`` dispatches to.

v1beta2 nests the kubeconfig under ``spec.clusterSource`` (exactly one of
``kubeConfig`` and ``clusterProfileRef``); v1beta1 has ``spec.kubeConfig``
and ``spec.clusterProfileRef``. Both store as v1beta2."""

from __future__ import annotations

from typing import Annotated, Final, Literal

import msgspec

from kuota.api import names
from kuota.api.base import LIST_ATOMIC, LIST_SET, Meta, Object, Rule, cel, crd_default
from kuota.api.errors import FieldError
from kuota.api.k8s.validation.objectmeta import validate_object_meta
from kuota.api.kindspec import KindSpec, PrinterColumn, VersionSpec, gateless
from kuota.api.kueue.quota_types import V1BETA1, V1BETA2
from kuota.api.meta import Conditions, ObjectMeta

__all__ = [
    "CONTROLLER_NAME",
    "MULTIKUEUE_KINDS",
    "ORIGIN_LABEL",
    "ORIGIN_UID_ANNOTATION",
    "SECRET_KEY",
    "ClusterSource",
    "KubeConfig",
    "MultiKueueCluster",
    "MultiKueueConfig",
]

CONTROLLER_NAME: Final = "kueue.x-k8s.io/multikueue"
ORIGIN_LABEL: Final = "kueue.x-k8s.io/multikueue-origin"
# On a worker's copy of a job whose Workload names hash the owner's uid
# (StatefulSet, LeaderWorkerSet): the manager's uid, so the names match.
ORIGIN_UID_ANNOTATION: Final = "kueue.x-k8s.io/multikueue-origin-uid"
SECRET_KEY: Final = "kubeconfig"  # the Secret's key holding the kubeconfig
CLUSTER_KIND: Final = "MultiKueueCluster"
CONFIG_KIND: Final = "MultiKueueConfig"

Location = Annotated[str, Meta(min_length=1, max_length=256)]


class KubeConfig(Object, kw_only=True):
    location: Location
    location_type: Annotated[Literal["Secret", "Path"], crd_default("Secret")] = "Secret"


class ClusterProfileReference(Object, kw_only=True):
    name: Annotated[str, Meta(min_length=1, max_length=256)]


_ONE_SOURCE = cel(
    Rule(
        "[has(self.kubeConfig),has(self.clusterProfileRef)].filter(x,x==true).size() == 1",
        "exactly one of the fields in [kubeConfig clusterProfileRef] must be set",
        lambda s: (s.kube_config is None) != (s.cluster_profile_ref is None),
    )
)


class ClusterSource(Object, kw_only=True):
    kube_config: KubeConfig | None = None
    cluster_profile_ref: ClusterProfileReference | None = None


class MultiKueueClusterSpec(Object, kw_only=True):
    cluster_source: Annotated[ClusterSource, _ONE_SOURCE]


class MultiKueueClusterStatus(Object, kw_only=True):
    conditions: Annotated[Conditions, Meta(max_length=16)] | None = None


class MultiKueueCluster(Object, kw_only=True):
    api_version: str = V1BETA2
    kind: str = CLUSTER_KIND
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: MultiKueueClusterSpec
    status: MultiKueueClusterStatus | None = None


# The same CEL text and message as Topology's levels rule: rules are found by
# both, so this one must hold for any items (equality, not hashing).
_UNIQUE = cel(
    Rule(
        "size(self.filter(i, size(self.filter(j, j == i)) > 1)) == 0",
        "must be unique",
        lambda xs: all(xs.count(x) == 1 for x in xs),
    )
)

ClusterName = Annotated[str, Meta(max_length=256)]


class MultiKueueConfigSpec(Object, kw_only=True):
    clusters: Annotated[list[ClusterName], Meta(min_length=1, max_length=20), LIST_ATOMIC, _UNIQUE]
    quota_management: Literal["Manual", "Automated"] | None = None


class MultiKueueConfig(Object, kw_only=True):
    api_version: str = V1BETA2
    kind: str = CONFIG_KIND
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: MultiKueueConfigSpec


# ------------------------------------------------------------------ v1beta1
class _ClusterSpecV1Beta1(Object, kw_only=True):
    kube_config: KubeConfig
    cluster_profile_ref: ClusterProfileReference | None = None


class MultiKueueClusterV1Beta1(Object, kw_only=True):
    api_version: str = V1BETA1
    kind: str = CLUSTER_KIND
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: _ClusterSpecV1Beta1
    status: MultiKueueClusterStatus | None = None


class _ConfigSpecV1Beta1(Object, kw_only=True):
    clusters: Annotated[list[ClusterName], Meta(min_length=1, max_length=20), LIST_SET]


class MultiKueueConfigV1Beta1(Object, kw_only=True):
    api_version: str = V1BETA1
    kind: str = CONFIG_KIND
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: _ConfigSpecV1Beta1


def _cluster_to_internal(o: MultiKueueClusterV1Beta1) -> MultiKueueCluster:
    # Kueue's conversion: kubeConfig moves under clusterSource; a
    # clusterProfileRef, when named, is the source instead.
    prof = o.spec.cluster_profile_ref
    src = (
        ClusterSource(cluster_profile_ref=prof)
        if prof is not None
        else ClusterSource(kube_config=o.spec.kube_config)
    )
    return MultiKueueCluster(
        metadata=o.metadata, spec=MultiKueueClusterSpec(cluster_source=src), status=o.status
    )


def _cluster_from_internal(o: MultiKueueCluster) -> MultiKueueClusterV1Beta1:
    src = o.spec.cluster_source
    kc = src.kube_config or KubeConfig(location="", location_type="Secret")
    return MultiKueueClusterV1Beta1(
        metadata=o.metadata,
        spec=_ClusterSpecV1Beta1(kube_config=kc, cluster_profile_ref=src.cluster_profile_ref),
        status=o.status,
    )


def _config_to_internal(o: MultiKueueConfigV1Beta1) -> MultiKueueConfig:
    return MultiKueueConfig(
        metadata=o.metadata, spec=MultiKueueConfigSpec(clusters=list(o.spec.clusters))
    )


def _config_from_internal(o: MultiKueueConfig) -> MultiKueueConfigV1Beta1:
    return MultiKueueConfigV1Beta1(
        metadata=o.metadata, spec=_ConfigSpecV1Beta1(clusters=list(o.spec.clusters))
    )


def _validate_meta(obj: MultiKueueCluster | MultiKueueConfig) -> list[FieldError]:
    return validate_object_meta(obj.metadata, False, names.is_dns1123_subdomain)


MULTIKUEUE_KINDS: tuple[KindSpec, ...] = (
    KindSpec(
        group="kueue.x-k8s.io",
        kind=CLUSTER_KIND,
        plural="multikueueclusters",
        namespaced=False,
        internal=MultiKueueCluster,
        versions=(
            VersionSpec(
                "v1beta2",
                MultiKueueCluster,
                storage=True,
                columns=(
                    PrinterColumn(
                        "Connected", "string", '.status.conditions[?(@.type=="Active")].status'
                    ),
                    PrinterColumn("Age", "date", ".metadata.creationTimestamp"),
                ),
            ),
            VersionSpec(
                "v1beta1",
                MultiKueueClusterV1Beta1,
                deprecated=True,
                to_internal=_cluster_to_internal,
                from_internal=_cluster_from_internal,
                columns=(
                    PrinterColumn(
                        "Connected", "string", '.status.conditions[?(@.type=="Active")].status'
                    ),
                    PrinterColumn("Age", "date", ".metadata.creationTimestamp"),
                ),
            ),
        ),
        short_names=("mkc",),
        status_subresource=True,
        validate=gateless(_validate_meta),
    ),
    KindSpec(
        group="kueue.x-k8s.io",
        kind=CONFIG_KIND,
        plural="multikueueconfigs",
        namespaced=False,
        internal=MultiKueueConfig,
        versions=(
            VersionSpec("v1beta2", MultiKueueConfig, storage=True),
            VersionSpec(
                "v1beta1",
                MultiKueueConfigV1Beta1,
                deprecated=True,
                to_internal=_config_to_internal,
                from_internal=_config_from_internal,
            ),
        ),
        short_names=("mkconf",),
        validate=gateless(_validate_meta),
    ),
)
