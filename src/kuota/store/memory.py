"""The in-memory object store, optionally backed by the durable journal.

Behaves as the API server does for the ObjectStore protocol: opaque
resourceVersions (the decimal form of one store-wide write counter, as etcd's
revision: only this store reads them as numbers), compare-and-set updates, status as a subresource,
finalizers and background garbage collection, admission hooks, and a bounded
event history that watches read from. Deterministic: uids and generated names
come from a counter, times from the injected clock, so two runs of the same
writes produce the same objects.

Single-threaded by design (the runtime drives it from one loop): no locks.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, Final

import msgspec

from kuota.api import errors as e
from kuota.api.hooks import enc_hook
from kuota.api.meta import LabelSelector
from kuota.store.codec import clone, clone_over, from_wire, to_wire, validation_error
from kuota.store.events import EventLog, MemoryWatch, revision
from kuota.store.journal import Journal, Recovered
from kuota.store.kinds import KindInfo, kind_info, kind_of, resource_type
from kuota.store.merge import merge_patch
from kuota.store.protocol import (
    AdmissionHook,
    AlreadyExists,
    Conflict,
    Event,
    EventType,
    Invalid,
    ListResult,
    NotFound,
    Operation,
    ResourceType,
    StoreError,
)
from kuota.store.selectors import everything, selector_matcher

_replace: Final = msgspec.structs.replace
Key = tuple[ResourceType, str, str]  # (rtype, namespace, name)

# Generated-name suffixes use Kubernetes' alphabet (no vowels, no 0/1/3: no words).
_ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"
_SUFFIXES: Final = len(_ALPHABET) ** 5
_MAX_GENERATE_NAME: Final = 63 - 5
_NO_RENAME: Final = "{who} may not change the kind, name or namespace of an object"
_NO_NEW_FINALIZERS: Final = "no new finalizers can be added if the object is being deleted"


def _suffix(seq: int) -> str:
    # A bijection of seq mod 27^5 (the multiplier is prime to 3), so the first
    # 14 million names never repeat, and consecutive ones do not look alike.
    x = (seq * 2654435761) % _SUFFIXES
    out = []
    for _ in range(5):
        x, d = divmod(x, len(_ALPHABET))
        out.append(_ALPHABET[d])
    return "".join(out)


def _uid(seq: int) -> str:
    if seq < _UID_LOW:  # (every store short of 2^48 writes: the leading groups are zeros)
        return _UID_ZEROS + f"{seq:012x}"
    h = f"{seq:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


_UID_LOW: Final = 1 << 48
_UID_ZEROS: Final = "00000000-0000-0000-0000-"
_SKIPPED_META: Final = "kuota.dev/skipped-ahead"  # (skip_ahead's durable mark)


def _ref(rtype: ResourceType, name: str) -> str:
    group = rtype[0]
    kind = kind_info(rtype).kind  # (in messages only)
    return f'{kind}.{group} "{name}"' if group else f'{kind} "{name}"'


def _owner_uids(obj: Any) -> tuple[str, ...]:
    refs = obj.metadata.owner_references
    return tuple(r.uid for r in refs) if refs else ()


def _json(value: Any) -> bytes:
    return msgspec.json.encode(value, enc_hook=enc_hook)


def _meta_copy(value: Any) -> Any:
    # Meta values are JSON: normalising through JSON makes the live value equal
    # to the one a replay decodes (datetimes become their RFC 3339 text).
    return msgspec.json.decode(_json(value))


def _crds_first(rtype: ResourceType) -> tuple[bool, ResourceType]:
    return (rtype[0] != "apiextensions.k8s.io", rtype)


class MemoryStore:
    def __init__(
        self,
        clock: Callable[[], datetime],
        admission: Sequence[AdmissionHook] = (),
        history: int = 100_000,
        journal: Journal | None = None,
    ) -> None:
        self._clock = clock
        self._admission = tuple(admission)
        self._hooks_by_kind: dict[
            tuple[ResourceType, Operation, bool], tuple[AdmissionHook, ...]
        ] = {}
        self._status_hooks_by_kind: dict[
            ResourceType, tuple[tuple[AdmissionHook, ...], tuple[AdmissionHook, ...]]
        ] = {}
        self._objects: dict[ResourceType, dict[str, dict[str, Any]]] = {}
        self._by_uid: dict[str, Key] = {}
        # owner uid -> its dependents (a dict as an ordered set)
        self._dependents: dict[str, dict[Key, None]] = {}
        self._events = EventLog(history)
        self._rv = 0
        # resource -> the newest revision that wrote one of its objects
        self._rv_of: dict[ResourceType, int] = {}
        self._seq = 0  # uids and generated names; advanced only by creates that use it
        self._meta: dict[str, Any] = {}
        self._journal = journal
        self._depth = 0  # nesting of batch() and of write calls
        self._gc: deque[str] = deque()  # uids of removed objects, dependents not yet handled
        self._failed: Exception | None = None
        self._closed = False
        if journal is not None:
            self.adopt(journal.recover())

    def adopt(self, state: Recovered) -> None:
        """Take a recovered state as this (new, empty) store's."""
        for rtype, objs in state.objects.items():
            for (ns, name), obj in objs.items():
                self._objects.setdefault(rtype, {}).setdefault(ns, {})[name] = obj
                self._index(rtype, obj, None)
        self._rv, self._seq, self._meta = state.rv, state.seq, state.meta

    # ------------------------------------------------------------ reading
    @property
    def resource_version(self) -> int:
        """The newest revision written: this store's own counter, not part of
        the protocol (whose clients get opaque resourceVersions from lists
        and events)."""
        return self._rv

    @property
    def durable_revision(self) -> int:
        """The newest revision whose writes are all on disk (without a
        journal: the newest). An API server shows clients no more than this,
        as kube-apiserver shows only what etcd committed: a reader is never
        shown a write a crash would take back."""
        j = self._journal
        return self._rv if j is None else j.durable_revision(self._rv)

    def revision_of(self, rtype: ResourceType) -> int:
        """The newest revision that wrote an object of this resource (its
        storage type; 0: none since this store opened): a waiting watch of
        it need not wake for other resources' writes."""
        return self._rv_of.get(rtype, 0)

    def get(self, rtype: ResourceType, namespace: str, name: str) -> Any:
        info = kind_info(rtype)
        obj = self._lookup(info.rtype, namespace if info.namespaced else "", name)
        if obj is None:
            raise NotFound(
                f"{_ref(rtype, name)} not found" + (f" in {namespace}" * bool(namespace))
            )
        return obj

    def _lookup(self, rtype: ResourceType, namespace: str, name: str) -> Any | None:
        by_ns = self._objects.get(rtype)
        if by_ns is None:
            return None
        names = by_ns.get(namespace)
        return None if names is None else names.get(name)

    def list(
        self,
        rtype: ResourceType,
        namespace: str | None = None,
        label_selector: LabelSelector | str | None = None,
    ) -> ListResult:
        info = kind_info(rtype)
        match = selector_matcher(label_selector)
        by_ns = self._objects.get(info.rtype, {})
        if namespace is not None and info.namespaced:
            spaces = [namespace] if namespace in by_ns else []
        else:
            spaces = sorted(by_ns)
        items: list[Any] = []
        for ns in spaces:
            names = by_ns[ns]
            if match is everything:
                items.extend([names[n] for n in sorted(names)])
            else:
                items.extend([o for n in sorted(names) if match((o := names[n]).metadata.labels)])
        return ListResult(items, str(self._rv))

    def get_meta(self, key: str, default: Any = None) -> Any:
        """A value stored with set_meta (a copy), or ``default``."""
        return _meta_copy(self._meta[key]) if key in self._meta else default

    def all_meta(self) -> dict[str, Any]:
        """A copy of every meta value."""
        return {k: _meta_copy(v) for k, v in sorted(self._meta.items())}

    def objects(self) -> Iterator[tuple[ResourceType, Any]]:
        """Every stored object, by resource, namespace and name; the
        CustomResourceDefinitions first (a snapshot read back registers the
        kinds they define before their objects come)."""
        for rtype in sorted(self._objects, key=_crds_first):
            by_ns = self._objects[rtype]
            for ns in sorted(by_ns):
                names = by_ns[ns]
                for name in sorted(names):
                    yield rtype, names[name]

    # ------------------------------------------------------------ watching
    def watch(
        self,
        rtype: ResourceType | None,
        since: str | int,
        *,
        namespace: str | None = None,
        bookmarks: bool = False,
        durable: bool = False,
    ) -> MemoryWatch:
        """Events after ``since``; ``since`` may be the current resourceVersion
        (this store's own callers may give its revision as an int). Raises
        Gone when it is older than the history holds, or newer than the
        store (a store that restarted without its journal). ``rtype=None``
        watches every resource in one stream, in write order: this store's
        own, not the protocol's (see ``watch_all``). ``durable``: only the
        events up to ``durable_revision`` (an API server's watches)."""
        if rtype is not None:
            rtype = kind_info(rtype).rtype
        rv = revision(since)
        self._events.check(rv, self._rv)
        head = (lambda: self.durable_revision) if durable else (lambda: self._rv)
        return MemoryWatch(self._events, head, rtype, rv, namespace, bookmarks)

    def watch_all(self) -> MemoryWatch:
        """One watch on every resource from now on, events in write order.
        An API server has no such watch (one per resource); the runtime's
        manager uses it when the store offers it, because only the store
        that wrote them can interleave the resources' events in write order
        (the order the single-threaded manager's handlers must see them)."""
        return self.watch(None, self._rv)

    # ------------------------------------------------------------ batching
    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Group commit: journal records written inside are fsynced once, when
        the outermost batch ends. Outside a batch each write is durable when it
        returns. Watches see writes at once, before they are durable."""
        self._begin()
        try:
            yield
        finally:
            self._end()

    def _begin(self) -> None:
        if self._closed:
            raise StoreError("the store is closed")
        if self._failed is not None:
            raise StoreError(f"the store stopped after a journal write failed: {self._failed}")
        self._depth += 1

    def _end(self) -> None:
        self._depth -= 1
        if self._depth or self._journal is None or self._failed is not None:
            return  # (after a failed flush nothing more is written: memory is ahead)
        j = self._journal
        try:
            j.flush()
            if j.snapshot_due:
                j.snapshot(self._rv, self._seq, self._meta, self.objects())
        except StoreError as err:  # (the journal's: it names the state and the cause)
            # Memory is ahead of the disk now; refuse further writes, as etcd does.
            self._failed = err
            raise

    @property
    def journal(self) -> Journal | None:
        """The journal, for a caller that flushes it itself (inside a batch,
        so the store never flushes it meanwhile)."""
        return self._journal

    def journal_failed(self, err: Exception) -> None:
        """The caller's flush failed: memory is ahead of the disk now; refuse
        further writes, as a failed flush of the store's own does."""
        self._failed = err

    def close(self) -> None:
        """Snapshot (when the journal has records since the last one) and release
        the state directory. Idempotent."""
        if self._closed:
            return
        self._closed = True
        j = self._journal
        if j is not None:
            try:
                if self._failed is None:
                    j.flush()
                    if j.records_since_snapshot:
                        j.snapshot(self._rv, self._seq, self._meta, self.objects())
            finally:
                j.close()

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ writing
    def skip_ahead(self, gap: int) -> None:
        """After a restart of an API server: resourceVersions and uids go on
        ``gap`` past what the journal held, durably. Its clients may have
        seen writes that never reached the disk (a watch or list shows a
        write before its group is fsynced); continuing right after the
        durable ones would give those revisions and uids again to other
        objects, so a client resuming from one would miss events and see an
        old uid on a new object. A watch from the durable revision resumes (it
        missed nothing); one from inside the gap gets Gone and lists again."""
        self._events.skip(self._rv, self._rv + gap)
        self._rv += gap
        self._seq += gap
        self.set_meta(_SKIPPED_META, {"resourceVersion": self._rv})

    def set_meta(self, key: str, value: Any) -> None:
        """Persist a small JSON value under ``key`` (None removes it)."""
        self._begin()
        try:
            value = None if value is None else _meta_copy(value)
            if value is None:
                if key not in self._meta:
                    return
                del self._meta[key]
            else:
                # Compared as JSON: 1 == True in Python, not on disk.
                if key in self._meta and _json(self._meta[key]) == _json(value):
                    return
                self._meta[key] = value
            if self._journal is not None:
                self._journal.meta(key, value, self._rv, self._seq)
        finally:
            self._end()

    def create(self, obj: Any) -> Any:
        self._begin()
        try:
            return self._create(obj)
        finally:
            self._end()

    def update(self, obj: Any) -> Any:
        self._begin()
        try:
            rtype, info, old = self._current(obj)
            if info.has_status:
                obj = _replace(obj, status=None)  # not worth copying: the old status stays
            new = self._copy_in(obj, rtype)
            return self._update(rtype, info, new, old)
        finally:
            self._end()

    def update_status(self, obj: Any) -> Any:
        self._begin()
        try:
            rtype, info, old = self._current(obj)
            if not info.has_status:
                raise NotFound(f"{_ref(rtype, old.metadata.name)} has no status subresource")
            try:
                # A mutating hook may change the status it is given: it gets a
                # whole copy, nothing shared with the stored version.
                mutating = self._status_hooks(rtype)[0]
                status = clone(obj.status) if mutating else clone_over(obj.status, old.status)
            except msgspec.ValidationError as err:
                ref = _ref(rtype, old.metadata.name)
                raise Invalid(ref, [validation_error(err, "status")]) from None
            return self._update_status(rtype, info, status, old)
        finally:
            self._end()

    def patch(
        self,
        rtype: ResourceType,
        namespace: str,
        name: str,
        patch: Mapping[str, Any],
        *,
        status: bool = False,
    ) -> Any:
        self._begin()
        try:
            info = kind_info(rtype)
            rtype = info.rtype
            old = self.get(rtype, namespace, name)
            ref = _ref(rtype, name)
            if status and not info.has_status:
                raise NotFound(f"{ref} has no status subresource")
            meta = patch.get("metadata")
            want = meta.get("resourceVersion") if isinstance(meta, Mapping) else None
            if want is not None and want != old.metadata.resource_version:
                raise Conflict(self._conflict(rtype, old))
            merged = merge_patch(to_wire(old), patch)
            try:
                new: Any = from_wire(merged, info.type)
            except msgspec.ValidationError as err:
                raise Invalid(ref, [validation_error(err, data=merged)]) from None
            if resource_type(new) != rtype or (new.metadata.name, new.metadata.namespace) != (
                old.metadata.name,
                old.metadata.namespace,
            ):
                raise Invalid(ref, [e.forbidden("metadata", _NO_RENAME.format(who="a patch"))])
            if status:
                return self._update_status(rtype, info, new.status, old)
            return self._update(rtype, info, new, old)
        finally:
            self._end()

    def delete(
        self,
        rtype: ResourceType,
        namespace: str,
        name: str,
        *,
        resource_version: str | None = None,
    ) -> Any | None:
        """As the protocol says; deleting an object that is already being
        deleted changes nothing and returns it."""
        self._begin()
        try:
            rtype = kind_info(rtype).rtype
            old = self.get(rtype, namespace, name)
            if resource_version is not None and resource_version != (old.metadata.resource_version):
                raise Conflict(self._conflict(rtype, old))
            if old.metadata.deletion_timestamp is not None:
                return old
            for hook in self._delete_hooks(rtype):
                hook("DELETE", old, old)
            if old.metadata.finalizers:
                return self._mark_deleting(rtype, old)
            self._remove(rtype, old)
            self._collect_garbage()
            return None
        finally:
            self._end()

    # ------------------------------------------------------------ write steps
    def _current(self, obj: Any) -> tuple[ResourceType, KindInfo, Any]:
        """The kind and stored object an update refers to, after the CAS check."""
        rtype = resource_type(obj)
        info = self._kind_of(obj, rtype)
        m = obj.metadata
        old = self._lookup(rtype, m.namespace if info.namespaced else "", m.name)
        if old is None:
            old = self.get(rtype, m.namespace, m.name)  # raises NotFound
        if m.resource_version and m.resource_version != old.metadata.resource_version:
            raise Conflict(self._conflict(rtype, old))
        return rtype, info, old

    @staticmethod
    def _conflict(rtype: ResourceType, old: Any) -> str:
        return (
            f"Operation cannot be fulfilled on {_ref(rtype, old.metadata.name)}: the object has "
            "been modified; please apply your changes to the latest version and try again"
        )

    @staticmethod
    def _kind_of(obj: Any, rtype: ResourceType) -> KindInfo:
        try:
            info = kind_info(rtype)
        except NotFound:
            info = kind_of(obj)  # raises, naming the kind as kubectl does
        if type(obj) is not info.type:
            raise TypeError(
                f"a {info.kind} of group {rtype[0]!r} is stored as {info.type.__name__}, "
                f"not {type(obj).__name__}"
            )
        return info

    @staticmethod
    def _copy_in(obj: Any, rtype: ResourceType) -> Any:
        try:
            return clone(obj)
        except msgspec.ValidationError as err:
            m = obj.metadata
            raise Invalid(_ref(rtype, m.name or m.generate_name), [validation_error(err)]) from None

    def _create(self, obj: Any) -> Any:
        rtype = resource_type(obj)
        info = self._kind_of(obj, rtype)
        new = self._copy_in(obj, rtype)
        m = new.metadata
        ref = m.name or m.generate_name  # (named in an error only)
        if not info.namespaced:
            m.namespace = ""
        elif not m.namespace:
            raise Invalid(_ref(rtype, ref), [e.required("metadata.namespace")])
        seq = self._seq + 1
        used = False  # the sequence moves only when it names something
        if not m.name:
            if not m.generate_name:
                raise Invalid(
                    _ref(rtype, ref),
                    [e.required("metadata.name", "name or generateName is required")],
                )
            base = m.generate_name[:_MAX_GENERATE_NAME]
            while self._lookup(rtype, m.namespace, base + _suffix(seq)) is not None:
                seq += 1
            m.name = base + _suffix(seq)
            used = True
        elif self._lookup(rtype, m.namespace, m.name) is not None:
            raise AlreadyExists(f"{_ref(rtype, m.name)} already exists")
        # A uid the world gives is kept (scenarios and restored worlds name
        # their objects' uids: Kueue breaks ties by them); else a new one.
        if not m.uid or m.uid in self._by_uid:
            m.uid = _uid(seq)
            used = True
        m.generation = 1
        m.resource_version = ""
        m.deletion_timestamp = None
        m.deletion_grace_period_seconds = None
        if m.creation_timestamp is None:
            m.creation_timestamp = self._clock()
        new = self._admit("CREATE", rtype, new, None)
        self._validate("CREATE", rtype, new, None)
        if used:
            self._seq = seq
        return self._put(rtype, new, None, "ADDED")

    def _update(self, rtype: ResourceType, info: KindInfo, new: Any, old: Any) -> Any:
        """Store ``new`` (private) as the next state of ``old``: metadata and spec
        from ``new`` (but not the fields only the server sets), status from ``old``."""
        nm, om = new.metadata, old.metadata
        if om.deletion_timestamp is not None and set(nm.finalizers or ()) - set(
            om.finalizers or ()
        ):
            err = e.forbidden("metadata.finalizers", _NO_NEW_FINALIZERS)
            raise Invalid(_ref(rtype, om.name), [err])
        nm.namespace = om.namespace
        nm.uid = om.uid
        nm.creation_timestamp = om.creation_timestamp
        nm.deletion_timestamp = om.deletion_timestamp
        nm.deletion_grace_period_seconds = om.deletion_grace_period_seconds
        nm.generation = om.generation
        nm.resource_version = om.resource_version
        if info.has_status:
            # Shared (stored objects are immutable) unless hooks get to see it.
            new.status = clone(old.status) if self._hooks(rtype, "UPDATE") else old.status
        new = self._admit("UPDATE", rtype, new, old)
        self._validate("UPDATE", rtype, new, old)
        if any(getattr(new, f) != getattr(old, f) for f in info.spec_fields):
            new.metadata.generation = om.generation + 1
        return self._store_update(rtype, new, old)

    def _update_status(self, rtype: ResourceType, info: KindInfo, status: Any, old: Any) -> Any:
        mutating, validating = self._status_hooks(rtype)
        if mutating:
            new = clone(_replace(old, status=None))  # private for the hooks
            new.status = status
            new = self._admit("UPDATE", rtype, new, old, mutating)
        else:
            new = _replace(old, status=status)
        for hook in validating:
            hook("UPDATE", new, old)
        return self._store_update(rtype, new, old)

    def _status_hooks(
        self, rtype: ResourceType
    ) -> tuple[tuple[AdmissionHook, ...], tuple[AdmissionHook, ...]]:
        """The mutating and the validating UPDATE hooks that see status writes
        (those without ``status_writes = False``), looked up once per kind:
        status writes are most of a run's writes."""
        hooks = self._status_hooks_by_kind.get(rtype)
        if hooks is None:
            validating = tuple(
                h for h in self._hooks(rtype, "UPDATE", True) if getattr(h, "status_writes", True)
            )
            mutating = tuple(
                h for h in self._hooks(rtype, "UPDATE") if getattr(h, "status_writes", True)
            )
            hooks = self._status_hooks_by_kind[rtype] = (mutating, validating)
        return hooks

    def _store_update(self, rtype: ResourceType, new: Any, old: Any) -> Any:
        m = new.metadata
        if m.deletion_timestamp is not None and not m.finalizers:
            last = self._remove(rtype, new)
            self._collect_garbage()
            return last
        if new == old:
            return old  # nothing changed: no write, no event (as the API server)
        return self._put(rtype, new, old, "MODIFIED")

    def _hooks(
        self, rtype: ResourceType, op: Operation, validating: bool = False
    ) -> tuple[AdmissionHook, ...]:
        hooks = self._hooks_by_kind.get((rtype, op, validating))
        if hooks is None:
            hooks = self._hooks_by_kind[(rtype, op, validating)] = tuple(
                h
                for h in self._admission
                if rtype in getattr(h, "kinds", (rtype,))
                and op in getattr(h, "operations", (op,))
                and bool(getattr(h, "validating", False)) == validating
            )
        return hooks

    def _delete_hooks(self, rtype: ResourceType) -> tuple[AdmissionHook, ...]:
        """The validating hooks that name DELETE among their ``operations``
        (a hook without them never sees a deletion: it was written for
        writes)."""
        return tuple(
            h
            for h in self._hooks(rtype, "DELETE", True)
            if "DELETE" in getattr(h, "operations", ())
        )

    def _validate(self, op: Operation, rtype: ResourceType, new: Any, old: Any | None) -> None:
        """Validating hooks see the final object after the mutating ones and
        may only refuse it (raise Invalid): they need no private copy. (A
        status write runs those of _status_hooks instead.)"""
        for hook in self._hooks(rtype, op, True):
            hook(op, new, old)

    def _admit(
        self,
        op: Operation,
        rtype: ResourceType,
        new: Any,
        old: Any | None,
        hooks: tuple[AdmissionHook, ...] | None = None,
    ) -> Any:
        """Run the mutating hooks (``hooks``: those of a status write)."""
        if hooks is None:
            hooks = self._hooks(rtype, op)
        if not hooks:
            return new
        before = (type(new), new.metadata.name, new.metadata.namespace)
        for hook in hooks:
            new = hook(op, new, old)
        after = (type(new), new.metadata.name, new.metadata.namespace)
        if after != before or resource_type(new) != rtype:
            ref = _ref(rtype, before[1])
            raise Invalid(ref, [e.forbidden("metadata", _NO_RENAME.format(who="admission"))])
        return new

    def _mark_deleting(self, rtype: ResourceType, old: Any) -> Any:
        om = old.metadata
        meta = _replace(
            om,
            deletion_timestamp=self._clock(),
            deletion_grace_period_seconds=0,
            # The API server bumps the generation: controllers must notice.
            generation=om.generation + 1 if om.generation > 0 else om.generation,
        )
        return self._put(rtype, _replace(old, metadata=meta), old, "MODIFIED")

    # ------------------------------------------------------------ storage
    def _put(self, rtype: ResourceType, new: Any, old: Any | None, kind: EventType) -> Any:
        self._rv += 1
        rv = self._rv
        # A fresh metadata: ``new`` may share it with the stored ``old``.
        m = new.metadata = _replace(new.metadata, resource_version=str(rv))
        ns: str = m.namespace
        by_ns = self._objects.get(rtype)
        if by_ns is None:
            by_ns = self._objects[rtype] = {}
        names = by_ns.get(ns)
        if names is None:
            names = by_ns[ns] = {}
        names[m.name] = new
        if old is None or m.owner_references is not old.metadata.owner_references:
            self._index(rtype, new, old)  # (the same references: the same owners)
        self._rv_of[rtype] = rv
        self._events.append(rv, rtype, ns, Event(kind, new, m.resource_version))
        if self._journal is not None:
            self._journal.put(rtype, rv, self._seq, new)
        return new

    def _remove(self, rtype: ResourceType, obj: Any) -> Any:
        self._rv += 1
        rv = self._rv
        last = _replace(obj, metadata=_replace(obj.metadata, resource_version=str(rv)))
        m = last.metadata
        by_ns = self._objects[rtype]
        names = by_ns[m.namespace]
        stored = names.pop(m.name)  # its owner references are the indexed ones
        if not names:
            del by_ns[m.namespace]
        key = (rtype, m.namespace, m.name)
        self._by_uid.pop(m.uid, None)
        for uid in _owner_uids(stored):
            deps = self._dependents.get(uid)
            if deps is not None:
                deps.pop(key, None)
                if not deps:
                    del self._dependents[uid]
        self._rv_of[rtype] = rv
        self._events.append(rv, rtype, m.namespace, Event("DELETED", last, m.resource_version))
        if self._journal is not None:
            self._journal.delete(rtype, last.kind, rv, self._seq, m.namespace, m.name)
        self._gc.append(m.uid)
        return last

    def _index(self, rtype: ResourceType, new: Any, old: Any | None) -> None:
        m = new.metadata
        key = (rtype, m.namespace, m.name)
        if old is None:
            self._by_uid[m.uid] = key
        before = _owner_uids(old) if old is not None else ()
        after = _owner_uids(new)
        if before == after:
            return
        for uid in before:
            if uid not in after:
                deps = self._dependents.get(uid)
                if deps is not None:
                    deps.pop(key, None)
                    if not deps:
                        del self._dependents[uid]
        for uid in after:
            self._dependents.setdefault(uid, {})[key] = None

    def _collect_garbage(self) -> None:
        """Background cascading deletion, as the garbage collector does it: a
        dependent whose owners are all gone is deleted (or marked, if it has
        finalizers); one with a live owner left only loses the dangling
        references. Sorted, so the order does not depend on history."""
        while self._gc:
            gone = self._gc.popleft()
            deps = self._dependents.pop(gone, None)
            for rtype, ns, name in sorted(deps or ()):
                dep = self._lookup(rtype, ns, name)
                if dep is None:
                    continue
                refs = dep.metadata.owner_references or []
                alive = [r for r in refs if r.uid in self._by_uid]
                if len(alive) == len(refs):
                    continue  # not (or no longer) a dependent of the removed owner
                if alive:
                    meta = _replace(dep.metadata, owner_references=alive)
                    self._put(rtype, _replace(dep, metadata=meta), dep, "MODIFIED")
                elif dep.metadata.deletion_timestamp is not None:
                    continue
                elif dep.metadata.finalizers:
                    self._mark_deleting(rtype, dep)
                else:
                    self._remove(rtype, dep)
