"""coordination.k8s.io/v1 Lease: the lock of leader election (client-go's
``LeaseLock``). Its times are MicroTime text (RFC 3339 with microseconds),
kept as the text the writer sent."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

from kuota.api.base import Object
from kuota.api.meta import ObjectMeta

__all__ = ["GROUP", "Lease", "LeaseSpec"]

GROUP = "coordination.k8s.io"


class LeaseSpec(Object):
    holder_identity: str | None = None
    lease_duration_seconds: Annotated[int, Meta(ge=0, le=2**31 - 1)] | None = None
    acquire_time: str | None = None
    renew_time: str | None = None
    lease_transitions: Annotated[int, Meta(ge=0, le=2**31 - 1)] | None = None
    strategy: str | None = None
    preferred_holder: str | None = None


class Lease(Object):
    api_version: str
    kind: str
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: LeaseSpec = msgspec.field(default_factory=LeaseSpec)
