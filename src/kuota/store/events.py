"""The memory store's bounded event history and the watches that read it.

Every write appends one event with the next revision (the store's write
counter, kept as an int: the events' opaque resourceVersions are its decimal
form), so the history is a run of consecutive revisions; a watch is a cursor
into it. Reading scans from the newest end, so a poll costs the number of new
events, whatever the history's length.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from kuota.store.protocol import BadRequest, Event, Gone, ResourceType


def revision(resource_version: str | int) -> int:
    """The revision a resourceVersion this store issued stands for (the
    store's own reading: clients must not interpret one). An int is taken
    as it is (the memory store's own callers)."""
    if isinstance(resource_version, int):
        return resource_version
    if not resource_version.isdigit() or not resource_version.isascii():
        raise BadRequest(f"invalid resource version: {resource_version!r}")
    return int(resource_version)


class EventLog:
    def __init__(self, size: int) -> None:
        self._events: deque[tuple[int, ResourceType, str, Event]] = deque(maxlen=size)
        # (from, to): revisions skipped with no event (MemoryStore.skip_ahead):
        # a watch from ``from`` has missed nothing, one from inside has.
        self._skipped: tuple[int, int] | None = None
        # The newest dropped revision of each resource: an open watch whose
        # resource lost nothing past its position has missed nothing, however
        # old that position (a quiet resource's watch), as kube-apiserver's
        # watch cache hands each watcher its events as they come.
        self._size = size
        self._dropped: dict[ResourceType, int] = {}

    def skip(self, frm: int, to: int) -> None:
        self._skipped = (frm, to)

    def _since(self, since: int) -> int:
        sk = self._skipped
        return sk[1] if sk is not None and since == sk[0] else since

    def append(self, rv: int, rtype: ResourceType, namespace: str, event: Event) -> None:
        events = self._events
        if len(events) == self._size:
            gone = events[0]
            self._dropped[gone[1]] = gone[0]
        events.append((rv, rtype, namespace, event))

    def check(self, since: int, head: int) -> int:
        """Raise Gone unless every event after ``since`` up to ``head`` (the
        store's revision) is still held; ``since`` past a skipped range."""
        since = self._since(since)
        if since > head:
            raise Gone(f"resourceVersion {since} is newer than the store's ({head})")
        oldest = self._events[0][0] if self._events else head + 1
        if since < oldest - 1:
            raise Gone(f"too old resource version: {since} (oldest kept: {oldest - 1})")
        return since

    def read(
        self, since: int, head: int, rtype: ResourceType | None, namespace: str | None
    ) -> list[Event]:
        """The events after ``since`` of one resource (None: all) and
        namespace (None: all), oldest first, for an open watch: Gone only
        when the history dropped some of that resource's events after
        ``since`` (a new watch is checked against all: ``check``)."""
        since = self._since(since)
        if since > head:
            raise Gone(f"resourceVersion {since} is newer than the store's ({head})")
        oldest = self._events[0][0] if self._events else head + 1
        if since < oldest - 1 and (rtype is None or self._dropped.get(rtype, 0) > since):
            raise Gone(f"too old resource version: {since} (oldest kept: {oldest - 1})")
        out: list[Event] = []
        for rv, ert, ens, ev in reversed(self._events):
            if rv <= since:
                break
            if rv > head:
                continue  # (past what the reader may see yet: read again later)
            if (rtype is None or ert == rtype) and (namespace is None or ens == namespace):
                out.append(ev)
        out.reverse()
        return out


class MemoryWatch:
    """A watch on the memory store (see MemoryStore.watch)."""

    __slots__ = ("_bookmarks", "_closed", "_head", "_log", "_namespace", "_pos", "_rtype")

    def __init__(
        self,
        log: EventLog,
        head: Callable[[], int],
        rtype: ResourceType | None,
        since: int,
        namespace: str | None,
        bookmarks: bool,
    ) -> None:
        self._log = log
        self._head = head  # the store's current revision
        self._rtype = rtype
        self._namespace = namespace
        self._bookmarks = bookmarks
        self._pos = since  # every event up to here was delivered or filtered out
        self._closed = False

    @property
    def resource_version(self) -> str:
        """The resourceVersion this watch has read up to (to resume from)."""
        return str(self._pos)

    def poll(self) -> list[Event]:
        """Events since the last poll, oldest first. Raises Gone when the store
        dropped events this watch has not read (the caller lists again)."""
        head = self._head()
        if self._closed or self._pos >= head:
            return []
        out = self._log.read(self._pos, head, self._rtype, self._namespace)
        self._pos = head
        if not out and self._bookmarks:
            return [Event("BOOKMARK", None, str(head))]
        return out

    def close(self) -> None:
        self._closed = True
