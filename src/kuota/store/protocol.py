"""The object store protocol: what the API server offers its clients.

Shaped like httpx/h11: the controllers and the runtime talk to this protocol
only, and the transport behind it is injected — the in-memory store (with or
without the durable journal) in embedded mode, a real API server in cluster
mode.

Objects are kuota's typed API structs (``kuota.api``): Kueue kinds in the
internal (v1beta2-shaped) model, core kinds as ``kuota.api.k8s`` declares
them. Every object carries ``api_version``, ``kind`` and ``metadata``.

**Objects read from a store are shared and must not be mutated.** ``get``,
``list`` and watch events hand out the stored instance (as an informer cache
does); call :func:`kuota.store.clone` before changing one. Writes store a
private copy of what they are given.

Resource versions are opaque strings (kube-apiserver's contract): every
object carries one in ``metadata.resourceVersion``, every list and watch
event one of its own. A client may hand one back to the store (a
compare-and-set precondition, a watch's starting point) and compare two for
equality, never order them or do arithmetic on them: only the store that
issued a resourceVersion may interpret it.

Resources are addressed as the API server addresses them: by (group,
version, resource), the resource its plural lowercase name ("workloads",
"pods"); the versions of one kind are one object. ``kuota.store.resources``
names each key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol

import msgspec

from kuota.api.errors import FieldError
from kuota.api.meta import LabelSelector

# (API group, version, resource): "" is the core group, the resource is the
# kind's plural lowercase name ("workloads"). A v1beta1 and a v1beta2
# Workload are the same object. Three strings, typed tuple[str, ...] so that
# compiled code passes the tuple object itself: mypyc keeps a
# tuple[str, str, str] unboxed and builds a new tuple (hashed anew, compared
# item by item) at every dict lookup keyed by it.
ResourceType = tuple[str, ...]

EventType = Literal["ADDED", "MODIFIED", "DELETED", "BOOKMARK"]
Operation = Literal["CREATE", "UPDATE", "DELETE"]


def group_of(api_version: str) -> str:
    return api_version.rpartition("/")[0]


# ------------------------------------------------------------------ errors
class StoreError(Exception):
    """A request the store refused; ``code`` is the HTTP status the API server
    would answer with and ``reason`` its StatusReason."""

    code = 500
    reason = "InternalError"


class NotFound(StoreError):
    code, reason = 404, "NotFound"


class AlreadyExists(StoreError):
    code, reason = 409, "AlreadyExists"


class Conflict(StoreError):
    """Compare-and-set failed: the object changed since it was read."""

    code, reason = 409, "Conflict"


class Gone(StoreError):
    """A watch asked for a resourceVersion older than the store remembers."""

    code, reason = 410, "Expired"


class BadRequest(StoreError):
    """A malformed request (a resourceVersion the store never issued)."""

    code, reason = 400, "BadRequest"


class MethodNotAllowed(StoreError):
    """A write to a store opened read-only."""

    code, reason = 405, "MethodNotAllowed"


class Invalid(StoreError):
    """Admission (defaulting and validation) refused the object."""

    code, reason = 422, "Invalid"

    def __init__(self, ref: str, errors: Sequence[FieldError]) -> None:
        self.ref = ref
        self.errors = list(errors)
        super().__init__(f"{ref} is invalid: " + "; ".join(str(e) for e in self.errors))


# ------------------------------------------------------------------ watch
class Event(msgspec.Struct, frozen=True, gc=False):
    """A watch event. A msgspec struct, not a dataclass: one is made per write,
    and a frozen dataclass is built in Python (gc=False: it never holds itself)."""

    type: EventType
    # The object after the change (for DELETED: its last state). None for BOOKMARK.
    object: Any
    # Opaque: the object's metadata.resourceVersion (a BOOKMARK's: where the
    # watch has read up to, to resume from).
    resource_version: str


class Watch(Protocol):
    def poll(self) -> list[Event]:
        """Events since the last poll, oldest first; never blocks. Raises Gone
        when the store dropped events this watch had not read yet (list again)."""
        ...

    def close(self) -> None: ...


# ------------------------------------------------------------------ admission
# An admission hook sees every write before it is stored: it may return a
# changed object (defaulting, on a private copy) or raise Invalid. A hook with
# a ``kinds`` attribute (a set of ResourceTypes) sees writes of those kinds
# only, as a webhook's rules select resources, and one with ``operations`` (a
# set of "CREATE"/"UPDATE") those operations only: the store then skips the
# copy it makes for the hooks on every other write. A hook with ``validating``
# set is a validating webhook: it runs after all the others, on the final
# object, and may only raise Invalid (the store makes no copy for it). With
# ``status_writes = False`` a hook (of either sort) does not see writes of the
# status subresource, as a webhook whose rules name the resource but not its
# ``/status``.
AdmissionHook = Callable[[Operation, Any, Any | None], Any]


@dataclass(slots=True)
class ListResult:
    items: list[Any]
    resource_version: str  # opaque: a watch from it sees every later change
    meta: Mapping[str, Any] = field(default_factory=dict)


class ObjectStore(Protocol):
    def get(self, rtype: ResourceType, namespace: str, name: str) -> Any:
        """The object; raises NotFound. Cluster-scoped kinds use namespace ""."""
        ...

    def list(
        self,
        rtype: ResourceType,
        namespace: str | None = None,
        label_selector: LabelSelector | str | None = None,
    ) -> ListResult:
        """Objects of one resource sorted by (namespace, name); ``namespace=None``
        means all namespaces; the selector is a LabelSelector or its string
        form (``a=b,c!=d,e in (x,y),!f``)."""
        ...

    def create(self, obj: Any) -> Any:
        """Store a new object: fills uid, resourceVersion, generation (1),
        creationTimestamp (if unset), a name from generateName. Status given at
        creation is kept (worlds and scenarios load objects with status).
        Raises AlreadyExists, Invalid."""
        ...

    def update(self, obj: Any) -> Any:
        """Replace metadata and spec (the status is kept: status has its own
        subresource). Compare-and-set when ``metadata.resourceVersion`` is set
        (Conflict if stale). ``generation`` grows when anything but metadata
        and status changed. Removing the last finalizer of an object being
        deleted deletes it (and returns its last state). An update that
        changes nothing is no write: no new resourceVersion, no event, the
        stored object returned (as the API server does). Raises NotFound,
        Conflict, Invalid."""
        ...

    def update_status(self, obj: Any) -> Any:
        """Replace the status only; compare-and-set as ``update``."""
        ...

    def patch(
        self,
        rtype: ResourceType,
        namespace: str,
        name: str,
        patch: Mapping[str, Any],
        *,
        status: bool = False,
    ) -> Any:
        """JSON merge patch (RFC 7386) on the object's wire form (camelCase
        keys); ``status=True`` patches the status subresource. A
        ``metadata.resourceVersion`` in the patch is a precondition."""
        ...

    def delete(
        self,
        rtype: ResourceType,
        namespace: str,
        name: str,
        *,
        resource_version: str | None = None,
    ) -> Any | None:
        """Delete: an object with finalizers gets ``deletionTimestamp`` and is
        returned (removed once its finalizers are gone); otherwise it is
        removed and None returned. Dependents (ownerReferences to its uid) are
        deleted in the background, as the garbage collector does. Raises
        NotFound, Conflict (precondition)."""
        ...

    def watch(
        self,
        rtype: ResourceType,
        since: str,
        *,
        namespace: str | None = None,
        bookmarks: bool = False,
    ) -> Watch:
        """Events of one resource after resourceVersion ``since`` (a list's or
        an event's). Raises Gone when ``since`` is older than the store's
        event history (or newer than the store: it restarted without its
        state), BadRequest when the store never issued it. With
        ``bookmarks``, a poll that found no event for this watch while the
        store moved on returns one BOOKMARK carrying the resourceVersion to
        resume from."""
        ...


Clock = Callable[[], datetime]
