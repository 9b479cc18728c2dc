"""Events about objects, as client-go's recorder writes them: one core/v1
Event per (object, type, reason, message), its count and lastTimestamp bumped
when it repeats, and events older than the API server's event TTL (1 h by
default) deleted, so a long simulation keeps a bounded number of them."""

from __future__ import annotations

import contextlib
import itertools
import uuid
from collections import OrderedDict
from datetime import timedelta
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
        self._seq = itertools.count()
        # The names this recorder created at the current instant: a second
        # event of one object at one instant (QuotaReserved and Admitted)
        # takes the suffixed name at once instead of after a refused create.
        self._taken: tuple[Any, set[tuple[str, str]]] = (None, set())
        self._adopted = False

    def _adopt(self) -> None:
        """The events a kept state already holds (a resumed run): they repeat
        and expire as if this recorder had written them."""
        self._adopted = True
        kept = [ev for ev in self.store.list(EVENT).items if ev.last_timestamp is not None]
        kept.sort(key=lambda ev: ev.last_timestamp)
        for ev in kept:
            io = ev.involved_object
            m = ev.metadata
            who = (io.uid or f"{io.kind}/{io.name}") if io is not None else ""
            key: _Key = (m.namespace or "default", who, ev.type, ev.reason or "", ev.message or "")
            self._live[key] = ev

    def event(self, obj: Any, type_: EventType, reason: str, message: str, component: str) -> None:
        """Record that ``reason`` happened to ``obj`` (any API object)."""
        if not self.enabled:
            return
        if not self._adopted:
            self._adopt()
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
            # Suffixes count within an instant: names then do not depend on
            # what this process recorded before (a resumed run names alike).
            self._taken = (now, set())
            self._seq = itertools.count()
        taken = self._taken[1]
        if (ns, ev.metadata.name) in taken:
            ev.metadata.name = f"{m.name[:230]}.{nanos:x}{next(self._seq):x}"
        for _ in range(8):
            # A uid of its own, so that events (which a resumed run records
            # afresh) never shift the store's sequence of generated uids.
            ev.metadata.uid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"event:{ns}/{ev.metadata.name}"))
            try:
                self._live[key] = self.store.create(ev)
                taken.add((ns, ev.metadata.name))
                return
            except AlreadyExists:
                ev.metadata.name = f"{m.name[:230]}.{nanos:x}{next(self._seq):x}"

    def _expire(self, now: Any) -> None:
        cutoff = now - self.ttl
        while self._live:
            key, ev = next(iter(self._live.items()))
            if ev.last_timestamp is not None and ev.last_timestamp >= cutoff:
                return
            del self._live[key]
            with contextlib.suppress(NotFound):
                self.store.delete(EVENT, ev.metadata.namespace, ev.metadata.name)
