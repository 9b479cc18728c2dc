"""Events about objects, as client-go's recorder writes them: one core/v1
Event per (object, type, reason, message), its count and lastTimestamp bumped
when it repeats, and events older than the API server's event TTL (1 h by
default) deleted, so a long simulation keeps a bounded number of them."""

from __future__ import annotations

import contextlib
import uuid
from collections import OrderedDict
from datetime import UTC, datetime, timedelta
from typing import Any, Final, Literal

import msgspec

from kuota.api.k8s.event import Event, EventSource, ObjectReference
from kuota.api.meta import ObjectMeta
from kuota.runtime.clock import Clock
from kuota.store.protocol import AlreadyExists, Conflict, NotFound, ObjectStore
from kuota.store.resources import EVENT

EventType = Literal["Normal", "Warning"]
DEFAULT_TTL: Final = timedelta(hours=1)  # kube-apiserver --event-ttl
MAX_MESSAGE: Final = 1024  # Kueue truncates event messages to this many characters

# (namespace, involved uid or kind/name, type, reason, message)
_Key = tuple[str, str, str, str, str]
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


class EventRecorder:
    def __init__(
        self,
        store: ObjectStore,
        clock: Clock,
        *,
        enabled: bool = True,
        ttl: timedelta = DEFAULT_TTL,
    ) -> None:
        self.store = store
        self.clock = clock
        self.enabled = enabled
        self.ttl = ttl
        self.recorded = 0
        # Live events, oldest lastTimestamp first: key -> stored Event.
        self._live: OrderedDict[_Key, Event] = OrderedDict()
        # The names this recorder created at the current instant: a second
        # event of one object at one instant (QuotaReserved and Admitted)
        # takes the suffixed name at once instead of after a refused create.
        # The suffixes count from 0 at each instant, so that a resumed run
        # names its events as the run it continues did.
        self._taken: tuple[Any, set[tuple[str, str]]] = (None, set())
        self._seq = 0

    def resume(self) -> None:
        """Take over the events a previous run of the same state left: their
        repeats bump them and they expire in time, as if this process had
        recorded them (the recorder's memory is not kept with the state)."""
        if not self.enabled:
            return
        events: list[Event] = list(self.store.list(EVENT).items)
        # Oldest lastTimestamp first, as they were kept (expiry reads the front).
        events.sort(key=lambda e: (e.last_timestamp or _EPOCH, e.metadata.name))
        for ev in events:
            ref = ev.involved_object
            key: _Key = (
                ev.metadata.namespace,
                ref.uid or f"{ref.kind}/{ref.name}",
                ev.type or "",
                ev.reason or "",
                ev.message or "",
            )
            self._live.pop(key, None)
            self._live[key] = ev

    def event(self, obj: Any, type_: EventType, reason: str, message: str, component: str) -> None:
        """Record that ``reason`` happened to ``obj`` (any API object)."""
        if not self.enabled:
            return
        now = self.clock.now()
        self._expire(now)
        m = obj.metadata
        if len(message) > MAX_MESSAGE:
            message = message[: MAX_MESSAGE - 3] + "..."
        ns = m.namespace or "default"
        key: _Key = (ns, m.uid or f"{obj.kind}/{m.name}", type_, reason, message)
        self.recorded += 1
        prev = self._live.pop(key, None)
        if prev is not None:
            # A new version: the stored object is the store's (changing it in
            # place would be no change to the store: no resourceVersion, no
            # watch event, nothing journaled).
            bumped = msgspec.structs.replace(prev, count=(prev.count or 1) + 1, last_timestamp=now)
            try:
                self._live[key] = self.store.update(bumped)
                return
            except (NotFound, Conflict):
                pass  # deleted or changed by someone else: start a new one
        # As client-go names them: the object's name and the time in hex
        # nanoseconds (plus a sequence number when an instant repeats).
        nanos = int(now.timestamp()) * 10**9 + now.microsecond * 1000
        ev = Event(
            api_version="v1",
            kind="Event",
            metadata=ObjectMeta(name=f"{m.name[:230]}.{nanos:x}", namespace=ns),
            involved_object=ObjectReference(
                kind=obj.kind,
                namespace=m.namespace,
                name=m.name,
                uid=m.uid,
                api_version=obj.api_version,
                resource_version=m.resource_version,
            ),
            reason=reason,
            message=message,
            type=type_,
            count=1,
            first_timestamp=now,
            last_timestamp=now,
            source=EventSource(component=component),
            reporting_component=component,
        )
        if self._taken[0] != now:
            self._taken = (now, set())
            self._seq = 0
        taken = self._taken[1]
        if (ns, ev.metadata.name) in taken:
            ev.metadata.name = self._next_name(m.name, nanos)
        for _ in range(1024):  # (the names a resumed instant already took)
            # A uid of its own, so that events (which a resumed run records
            # afresh) never shift the store's sequence of generated uids.
            ev.metadata.uid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"event:{ns}/{ev.metadata.name}"))
            try:
                self._live[key] = self.store.create(ev)
                taken.add((ns, ev.metadata.name))
                return
            except AlreadyExists:
                ev.metadata.name = self._next_name(m.name, nanos)

    def _next_name(self, name: str, nanos: int) -> str:
        """client-go's name with the instant's next sequence number."""
        seq = self._seq
        self._seq = seq + 1
        return f"{name[:230]}.{nanos:x}{seq:x}"

    def _expire(self, now: Any) -> None:
        cutoff = now - self.ttl
        while self._live:
            key, ev = next(iter(self._live.items()))
            if ev.last_timestamp is not None and ev.last_timestamp >= cutoff:
                return
            del self._live[key]
            with contextlib.suppress(NotFound):
                self.store.delete(EVENT, ev.metadata.namespace, ev.metadata.name)
