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


_MICRO_TIME = Meta(extra_json_schema={"format": "date-time"})


class LeaseSpec(Object):
    holder_identity: str | None = None
    lease_duration_seconds: Annotated[int, Meta(ge=0, le=2**31 - 1)] | None = None
    # metav1.MicroTime, kept as the client wrote it (leader election compares
    # the record it reads back), published as a date-time string.
    acquire_time: Annotated[str, _MICRO_TIME] | None = None
    renew_time: Annotated[str, _MICRO_TIME] | None = None
    lease_transitions: Annotated[int, Meta(ge=0, le=2**31 - 1)] | None = None
    strategy: str | None = None
    preferred_holder: str | None = None


class Lease(Object):
    api_version: str
    kind: str
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: LeaseSpec = msgspec.field(default_factory=LeaseSpec)
