"""cluster-autoscaler's ``autoscaling.x-k8s.io/v1`` ProvisioningRequest
(``apis/provisioningrequest/autoscaling.x-k8s.io/v1/types.go``): a request for
capacity for a set of pods, described by PodTemplates in its namespace. Kueue's
provisioning admission check writes them; the autoscaler answers in
``status.conditions`` (Accepted, Provisioned, Failed, BookingExpired,
CapacityRevoked)."""

from __future__ import annotations

from typing import Annotated, Final

import msgspec
from msgspec import Meta

from kuota.api import names
from kuota.api.base import LIST_ATOMIC, Object, Rule, cel, pattern
from kuota.api.errors import FieldError, index, required
from kuota.api.k8s.validation.objectmeta import name_errors, validate_object_meta
from kuota.api.meta import Conditions, ObjectMeta

__all__ = [
    "ACCEPTED",
    "API_VERSION",
    "BEST_EFFORT_ATOMIC",
    "BOOKING_EXPIRED",
    "CAPACITY_REVOKED",
    "CHECK_CAPACITY",
    "CLASS_ANNOTATION",
    "CONSUME_ANNOTATION",
    "FAILED",
    "GROUP",
    "KIND",
    "PROVISIONED",
    "PodSet",
    "ProvisioningRequest",
    "ProvisioningRequestSpec",
    "ProvisioningRequestStatus",
    "Reference",
    "validate_provisioning_request",
]

GROUP: Final = "autoscaling.x-k8s.io"
API_VERSION: Final = f"{GROUP}/v1"
KIND: Final = "ProvisioningRequest"

# The classes cluster-autoscaler implements (its FAQ, "supported ProvisioningClasses").
CHECK_CAPACITY: Final = "check-capacity.autoscaling.x-k8s.io"
BEST_EFFORT_ATOMIC: Final = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"

# Condition types (v1/types.go).
ACCEPTED: Final = "Accepted"
PROVISIONED: Final = "Provisioned"
FAILED: Final = "Failed"
BOOKING_EXPIRED: Final = "BookingExpired"
CAPACITY_REVOKED: Final = "CapacityRevoked"

# Pod annotations naming the request whose capacity a pod consumes.
CONSUME_ANNOTATION: Final = "autoscaling.x-k8s.io/consume-provisioning-request"
CLASS_ANNOTATION: Final = "autoscaling.x-k8s.io/provisioning-class-name"

_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
_IMMUTABLE = Rule(
    "self == oldSelf",
    "Value is immutable",
    lambda _: True,
    transition=lambda new, old: new == old,
)

Parameter = Annotated[str, Meta(max_length=255)]


class Reference(Object):
    name: Annotated[str, Meta(max_length=253), pattern(_SUBDOMAIN)] | None = None


class PodSet(Object):
    pod_template_ref: Reference
    count: Annotated[int, Meta(ge=1, le=2**31 - 1)]


class ProvisioningRequestSpec(Object):
    pod_sets: Annotated[
        list[PodSet], Meta(min_length=1, max_length=32), LIST_ATOMIC, cel(_IMMUTABLE)
    ]
    provisioning_class_name: Annotated[
        str, Meta(max_length=253), pattern(_SUBDOMAIN), cel(_IMMUTABLE)
    ]
    parameters: Annotated[dict[str, Parameter], Meta(max_length=100), cel(_IMMUTABLE)] | None = None


class ProvisioningRequestStatus(Object):
    conditions: Conditions | None = None
    provisioning_class_details: Annotated[dict[str, str], Meta(max_length=64)] | None = None


class ProvisioningRequest(Object):
    api_version: str
    kind: str
    spec: ProvisioningRequestSpec
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    status: ProvisioningRequestStatus | None = None


def validate_provisioning_request(pr: ProvisioningRequest) -> list[FieldError]:
    errs = validate_object_meta(pr.metadata, True, names.is_dns1123_subdomain)
    for i, ps in enumerate(pr.spec.pod_sets):
        path = f"{index('spec.podSets', i)}.podTemplateRef.name"
        if not ps.pod_template_ref.name:
            errs.append(required(path, ""))
        else:
            errs += name_errors(names.is_dns1123_subdomain, ps.pod_template_ref.name, path)
    return errs
