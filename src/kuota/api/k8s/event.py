"""core/v1 Event: what controllers report about an object, as ``oc describe``
and ``oc get events`` show it. kuota writes them; users never do."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import msgspec

from kuota.api.base import Object
from kuota.api.meta import ObjectMeta

__all__ = ["Event", "EventSource", "ObjectReference"]


class ObjectReference(Object):
    kind: str | None = None
    namespace: str | None = None
    name: str | None = None
    uid: str | None = None
    api_version: str | None = None
    resource_version: str | None = None


class EventSource(Object):
    component: str | None = None
    host: str | None = None


class Event(Object):
    api_version: str
    kind: str
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    involved_object: ObjectReference = msgspec.field(default_factory=ObjectReference)
    reason: str | None = None
    message: str | None = None
    type: Literal["Normal", "Warning"] | None = None
    count: int | None = None
    first_timestamp: datetime | None = None
    last_timestamp: datetime | None = None
    source: EventSource | None = None
    reporting_component: str | None = None
