"""Kueue's ProvisioningRequestConfig (``apis/kueue/v1beta2/provisioningrequestconfig_types.go``
at Kueue ff69552e): how the provisioning admission check
(``kueue.x-k8s.io/provisioning-request``) writes the ProvisioningRequests of the
workloads it checks. v1beta1 has the same fields."""

from __future__ import annotations

from typing import Annotated, Final, Literal

import msgspec

from kuota.api import names
from kuota.api.base import LIST_SET, Meta, Object, crd_default, list_map, pattern
from kuota.api.errors import FieldError, duplicate, index
from kuota.api.k8s.validation.objectmeta import validate_object_meta
from kuota.api.kindspec import KindSpec, VersionSpec, gateless
from kuota.api.kueue.quota_types import SUBDOMAIN_RE, V1BETA1, V1BETA2
from kuota.api.meta import ObjectMeta

__all__ = [
    "CONTROLLER_NAME",
    "KIND",
    "PROVISIONING_CONFIG_KINDS",
    "ProvisioningRequestConfig",
    "ProvisioningRequestConfigSpec",
    "ProvisioningRequestRetryStrategy",
]

KIND: Final = "ProvisioningRequestConfig"
CONTROLLER_NAME: Final = "kueue.x-k8s.io/provisioning-request"

_KEY_RE = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
)


class ProvisioningRequestRetryStrategy(Object, kw_only=True):
    backoff_limit_count: Annotated[int, crd_default(3), Meta(ge=-(2**31), le=2**31 - 1)] = 3
    backoff_base_seconds: Annotated[int, crd_default(60), Meta(ge=-(2**31), le=2**31 - 1)] = 60
    backoff_max_seconds: Annotated[int, crd_default(1800), Meta(ge=-(2**31), le=2**31 - 1)] = 1800


class ProvisioningRequestPodSetUpdatesNodeSelector(Object, kw_only=True):
    key: Annotated[str, Meta(min_length=1, max_length=317), pattern(_KEY_RE)]
    value_from_provisioning_class_detail: Annotated[str, Meta(min_length=1, max_length=32768)]


class ProvisioningRequestPodSetUpdates(Object, kw_only=True):
    node_selector: (
        Annotated[
            list[ProvisioningRequestPodSetUpdatesNodeSelector], Meta(max_length=8), list_map("key")
        ]
        | None
    ) = None


class ProvisioningRequestConfigSpec(Object, kw_only=True):
    provisioning_class_name: Annotated[
        str, Meta(min_length=1, max_length=253), pattern(SUBDOMAIN_RE)
    ]
    parameters: (
        Annotated[dict[str, Annotated[str, Meta(max_length=255)]], Meta(max_length=100)] | None
    ) = None
    managed_resources: Annotated[list[str], Meta(max_length=100), LIST_SET] | None = None
    retry_strategy: (
        Annotated[
            ProvisioningRequestRetryStrategy,
            crd_default(
                {"backoffLimitCount": 3, "backoffBaseSeconds": 60, "backoffMaxSeconds": 1800}
            ),
        ]
        | None
    ) = msgspec.field(default_factory=ProvisioningRequestRetryStrategy)
    pod_set_updates: ProvisioningRequestPodSetUpdates | None = None
    pod_set_merge_policy: (
        Literal["IdenticalPodTemplates", "IdenticalWorkloadSchedulingRequirements"] | None
    ) = None


class ProvisioningRequestConfig(Object, kw_only=True):
    api_version: str = V1BETA2
    kind: str = KIND
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: ProvisioningRequestConfigSpec


# v1beta1: the same fields; its nodeSelector list is not a map list (no
# listType marker in Kueue's v1beta1 types).
class _PodSetUpdatesV1Beta1(Object, kw_only=True):
    node_selector: (
        Annotated[list[ProvisioningRequestPodSetUpdatesNodeSelector], Meta(max_length=8)] | None
    ) = None


class _SpecV1Beta1(ProvisioningRequestConfigSpec, kw_only=True):
    pod_set_updates: _PodSetUpdatesV1Beta1 | None = None  # type: ignore[assignment]


class ProvisioningRequestConfigV1Beta1(Object, kw_only=True):
    api_version: str = V1BETA1
    kind: str = KIND
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: _SpecV1Beta1


def _to_internal(o: ProvisioningRequestConfigV1Beta1) -> ProvisioningRequestConfig:
    wire = msgspec.to_builtins(o)
    wire["apiVersion"] = V1BETA2
    return msgspec.convert(wire, ProvisioningRequestConfig)


def _from_internal(o: ProvisioningRequestConfig) -> ProvisioningRequestConfigV1Beta1:
    wire = msgspec.to_builtins(o)
    wire["apiVersion"] = V1BETA1
    return msgspec.convert(wire, ProvisioningRequestConfigV1Beta1)


def validate_provisioning_request_config(prc: ProvisioningRequestConfig) -> list[FieldError]:
    errs = validate_object_meta(prc.metadata, False, names.is_dns1123_subdomain)
    seen: set[str] = set()
    for i, r in enumerate(prc.spec.managed_resources or ()):
        if r in seen:
            errs.append(duplicate(index("spec.managedResources", i), r))
        seen.add(r)
    return errs


PROVISIONING_CONFIG_KINDS: tuple[KindSpec, ...] = (
    KindSpec(
        group="kueue.x-k8s.io",
        kind=KIND,
        plural="provisioningrequestconfigs",
        namespaced=False,
        internal=ProvisioningRequestConfig,
        versions=(
            VersionSpec("v1beta2", ProvisioningRequestConfig, storage=True),
            VersionSpec(
                "v1beta1",
                ProvisioningRequestConfigV1Beta1,
                deprecated=True,
                to_internal=_to_internal,
                from_internal=_from_internal,
            ),
        ),
        short_names=("prc",),
        validate=gateless(validate_provisioning_request_config),
    ),
)
