"""apiregistration.k8s.io/v1 APIService: the registration of an extension
API server with the aggregator (Kueue's visibility server registers
``v1beta1`` and ``v1beta2.visibility.kueue.x-k8s.io``). kuota serve stores
and validates them, as kube-apiserver does; it does not proxy to them (the
controller's dashboard answers the visibility API itself). Pure: no I/O."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec

from kuota.api.base import Meta, Object
from kuota.api.meta import ObjectMeta

__all__ = ["GROUP", "APIService", "APIServiceSpec", "APIServiceStatus", "ServiceReference"]

GROUP = "apiregistration.k8s.io"
# Go's []byte, as upstream publishes this one (format byte, an atomic list).
_BYTES = {"format": "byte", "x-kubernetes-list-type": "atomic"}


class ServiceReference(Object, kw_only=True):
    namespace: str | None = None
    name: str | None = None
    port: int | None = None


class APIServiceSpec(Object, kw_only=True):
    service: ServiceReference | None = None
    group: str | None = None
    version: str | None = None
    insecure_skip_tls_verify: bool | None = msgspec.field(
        default=None, name="insecureSkipTLSVerify"
    )
    # base64 PEM, as on the wire (Go's []byte: published as format byte)
    ca_bundle: Annotated[str, Meta(extra_json_schema=_BYTES)] | None = None
    group_priority_minimum: int
    version_priority: int


class APIServiceCondition(Object, kw_only=True):
    type: str
    status: str
    last_transition_time: datetime | None = None
    reason: str | None = None
    message: str | None = None


class APIServiceStatus(Object, kw_only=True):
    conditions: list[APIServiceCondition] | None = None


class APIService(Object, kw_only=True):
    api_version: str = f"{GROUP}/v1"
    kind: str = "APIService"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: APIServiceSpec | None = None  # (required in effect: its priorities are)
    status: APIServiceStatus = msgspec.field(default_factory=APIServiceStatus)
