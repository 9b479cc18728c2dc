"""The store protocol over a real Kubernetes API server (cluster mode).

Reads (``get``, ``list``) and writes go to the API server and are awaited
on the I/O thread (``io_thread``); watches stream there all the time. The
manager's informers are the cache: they are filled by list+watch as over
the memory store, and every object this process writes is handed to its
watches at once (``KubeWatch.inject``), so the controllers read their own
writes as they do embedded.

Writes are compare-and-set on ``metadata.resourceVersion`` (a stale one is
the API server's 409, ``Conflict``): before raising it the store reads
the object again and hands it to the watches, so the caller's retry (the
Kueue controller's, or the manager's requeue of the key) works from the
current version and never books quota on a stale one. An update without a
resourceVersion is made unconditional as the protocol says, by reading
the current one (custom resources refuse a PUT without it).

A request the API server could not answer (connection refused while it
restarts, 5xx, 429) is tried again with backoff for ``retry_for``
seconds. Retrying is safe: a PUT carries its resourceVersion (if the lost
attempt was applied, the retry is a Conflict and the caller re-reads its
own write), a create that finds its object created by the lost attempt
returns it, a delete that finds it gone is done."""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import threading
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any, TypeVar

from lightkube import ALL_NS, AsyncClient, KubeConfig
from lightkube.types import CascadeType, PatchType

from kuota.api.meta import LabelSelector
from kuota.store.kinds import KindInfo, kind_info, kind_of
from kuota.store.kube.event_sink import EventSink
from kuota.store.kube.fastlane import FastLane
from kuota.store.kube.io_thread import IoThread
from kuota.store.kube.kubewatch import KubeWatch
from kuota.store.kube.kubewire import Unavailable, decode, encode, lk_resource, store_error
from kuota.store.protocol import (
    AlreadyExists,
    Conflict,
    Event,
    ListResult,
    NotFound,
    ResourceType,
    StoreError,
)
from kuota.store.resources import EVENT
from kuota.store.selectors import selector_matcher

T = TypeVar("T")

FIELD_MANAGER = "kueue"  # Kueue's own field manager name (cluster-mode.md §2)
_FIRST_BACKOFF = 0.05
_MAX_BACKOFF = 1.0
_IN_FLIGHT = 8  # writes update_status_all sends at once


def load_kubeconfig(path: str | None, context: str | None = None) -> KubeConfig:
    """A kubeconfig file, or the pod's service account when ``path`` is None
    (in-cluster). Raises lightkube's ConfigError."""
    if path is None:
        return KubeConfig.from_service_account()
    return KubeConfig.from_file(path)


def _ref(info: KindInfo, namespace: str, name: str) -> str:
    res = info.rtype[2] if not info.rtype[0] else f"{info.rtype[2]}.{info.rtype[0]}"
    return f"{res} {namespace}/{name}" if namespace else f"{res} {name}"


class KubeStore:
    """``ObjectStore`` over a Kubernetes API server (lightkube, async)."""

    def __init__(
        self,
        config: KubeConfig,
        *,
        field_manager: str = FIELD_MANAGER,
        retry_for: float = 30.0,
        request_timeout: float = 30.0,
    ) -> None:
        self.io = IoThread()
        self.retry_for = retry_for
        self.request_timeout = request_timeout
        self.changed = threading.Event()
        self._watches: dict[ResourceType, list[KubeWatch]] = {}
        self._field_manager = field_manager
        # namespace/name of an object whose writes the watches' ``seen``
        # skips (a paced controller's own acknowledgement: runtime/pacing.py)
        self.seen_ignores: str | None = None
        # (Any: lightkube's overloads do not know generic resources)
        self.client: Any = self.io.call(self._make_client(config))
        # The hot writes' lane (None: lightkube sends them too).
        self._lane = FastLane.for_config(
            config, field_manager=field_manager, timeout=request_timeout
        )
        # What crossed the wire (bench and the fault tests read them).
        self.requests = 0
        self.retries = 0
        self.conflicts = 0
        self.events = EventSink()

    async def _make_client(self, config: KubeConfig) -> AsyncClient:
        # (inside the loop: httpx's async client binds to the running loop)
        return AsyncClient(config, field_manager=self._field_manager)

    # ------------------------------------------------------------ plumbing
    def _call(self, make: Callable[[], Coroutine[Any, Any, T]], ref: str, timed: bool = False) -> T:
        """Run one request on the I/O thread, retrying what the API server
        could not answer until ``retry_for`` has passed."""
        return self.io.call(self._retrying(make, ref, timed), self._patience)

    @property
    def _patience(self) -> float:
        """How long one request may take with its retries (the last attempt
        may start just before ``retry_for`` ends)."""
        return self.retry_for + _MAX_BACKOFF + self.request_timeout + 5

    async def _retrying(
        self, make: Callable[[], Coroutine[Any, Any, T]], ref: str, timed: bool = False
    ) -> T:
        """One request on the I/O loop, what the API server could not answer
        (``Unavailable``) tried again with backoff until ``retry_for`` has
        passed; each attempt within the request timeout (``timed``: the
        fast lane's own, which ends it first; asyncio's wait_for is a task
        and a timer more per request)."""
        deadline = time.monotonic() + self.retry_for
        backoff = _FIRST_BACKOFF
        while True:
            self.requests += 1
            try:
                if timed:
                    return await _guarded(make(), ref)
                return await asyncio.wait_for(_guarded(make(), ref), self.request_timeout + 5)
            except Unavailable:
                if time.monotonic() + backoff > deadline:
                    raise
                self.retries += 1
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, _MAX_BACKOFF)

    def _inject(self, info: KindInfo, etype: str, obj: Any) -> None:
        ev = Event(etype, obj, obj.metadata.resource_version)  # type: ignore[arg-type]
        for w in self._watches.get(info.rtype, ()):
            w.inject(ev)

    def _reread(self, info: KindInfo, namespace: str, name: str) -> None:
        """After a Conflict: the current object to the watches, so that the
        caller's retry reads it."""
        self.conflicts += 1
        try:
            cur = self._get(info, namespace, name)
        except StoreError:
            return
        self._inject(info, "MODIFIED", cur)

    def _get(self, info: KindInfo, namespace: str, name: str) -> Any:
        res = lk_resource(info.rtype)
        ns = namespace or None
        raw = self._call(
            lambda: self.client.get(res, name, namespace=ns), _ref(info, namespace, name)
        )
        return decode(raw, info)

    def wait(self, timeout: float) -> bool:
        """Block until a watch has something new (or ``timeout`` seconds)."""
        got = self.changed.wait(timeout)
        self.changed.clear()
        return got

    # ------------------------------------------------------------ reads
    def get(self, rtype: ResourceType, namespace: str, name: str) -> Any:
        return self._get(kind_info(rtype), namespace, name)

    def list(
        self,
        rtype: ResourceType,
        namespace: str | None = None,
        label_selector: LabelSelector | str | None = None,
    ) -> ListResult:
        info = kind_info(rtype)
        res = lk_resource(rtype)
        ns = (namespace or ALL_NS) if info.namespaced else None

        async def listing() -> tuple[list[Any], str]:
            it = self.client.list(res, namespace=ns, chunk_size=500)
            items = [raw async for raw in it]
            return items, it.resourceVersion

        raws, rv = self._call(listing, _ref(info, namespace or "", ""))
        match = selector_matcher(label_selector)
        items = [o for o in (decode(r, info) for r in raws) if match(o.metadata.labels)]
        items.sort(key=lambda o: (o.metadata.namespace or "", o.metadata.name))
        return ListResult(items, rv)

    async def names(self, rtype: ResourceType) -> list[tuple[str, str]]:
        """(namespace, name) of every object of a kind, listed by a caller
        already on the I/O loop (the controller's dashboard), which the
        blocking ``list`` would deadlock. Raises the API server's error."""
        info = kind_info(rtype)
        ns = ALL_NS if info.namespaced else None
        out: list[tuple[str, str]] = []
        async for raw in self.client.list(lk_resource(rtype), namespace=ns, chunk_size=500):
            m = raw.metadata if hasattr(raw, "metadata") else None
            meta = m if m is not None else raw.get("metadata", {})
            if isinstance(meta, dict):
                out.append((meta.get("namespace") or "", meta.get("name") or ""))
            else:
                out.append((meta.namespace or "", meta.name or ""))
        return out

    def pod_log(self, namespace: str, name: str, container: str, tail_lines: int) -> str:
        """The last ``tail_lines`` lines of a container's log (``pods/log``,
        not part of the store protocol: must-gather reads it). Raises the
        API server's error as a StoreError."""

        async def read() -> str:
            lines = self.client.log(
                name, namespace=namespace, container=container, tail_lines=tail_lines
            )
            return "".join([line async for line in lines])

        return self._call(read, f"pods/{name}/log")

    # ------------------------------------------------------------ writes
    def create(self, obj: Any) -> Any:
        info = kind_of(obj)
        if info.rtype == EVENT:
            self.events.submit(lambda: self._send_event(info, obj))
            return obj
        return self._create(info, obj)

    def _send_event(self, info: KindInfo, obj: Any) -> None:
        """(On the event sink's thread.) A name another writer took: the
        Event is dropped, as client-go's sink drops what it cannot write."""
        with contextlib.suppress(AlreadyExists):
            self._best_effort(lambda: self._create(info, obj), obj)

    def _send_bump(self, info: KindInfo, obj: Any) -> None:
        """(On the event sink's thread.) A repeat; of an Event that has
        expired meanwhile, a new one."""
        try:
            self._best_effort(lambda: self._bump_event(info, obj), obj, bump=True)
        except NotFound:
            fresh = _replace(obj, metadata=_replace(obj.metadata, resource_version=None))
            self._send_event(info, fresh)

    def _send_delete(self, info: KindInfo, namespace: str, name: str) -> None:
        """(On the event sink's thread.) An expired Event's deletion."""
        try:
            self._delete(info, namespace, name, None)
        except NotFound:
            pass
        except StoreError as err:
            _log().warning("event not deleted", name=name, error=str(err))

    def _best_effort(self, write: Callable[[], Any], obj: Any, *, bump: bool = False) -> Any:
        """Events are best effort, as client-go's broadcaster sends them: a
        refused or lost Event never fails the reconcile that recorded it."""
        try:
            return write()
        except AlreadyExists:
            raise  # (a name another writer took: _send_event drops it)
        except NotFound:
            if bump:
                raise  # (a repeat of an expired Event: _send_bump creates it anew)
            _log().warning("event not recorded", name=obj.metadata.name, error="not found")
            return obj
        except StoreError as err:
            _log().warning("event not recorded", name=obj.metadata.name, error=str(err))
            return obj

    def _create(self, info: KindInfo, obj: Any) -> Any:
        m = obj.metadata
        res = lk_resource(info.rtype)
        ns = m.namespace or None
        ref = _ref(info, m.namespace or "", m.name or m.generate_name or "")
        tried = False
        lane = self._lane
        event = info.rtype == EVENT  # (its answer is never read: not decoded)

        async def once() -> Any:
            nonlocal tried
            first, tried = not tried, True
            try:
                if lane is not None:
                    return await lane.create(info, obj, ref, answer=not event)
                return await self.client.create(res(encode(obj)), namespace=ns)
            except Exception as err:
                known = err if isinstance(err, StoreError) else store_error(err, ref)
                if first or not m.name or known.code != 409:
                    raise
            # A retry found the object: the attempt whose answer was lost made it.
            if info.rtype == EVENT:
                return None  # never read back: a recorder may create, not get
            return await self.client.get(res, m.name, namespace=ns)

        raw = self._call(once, ref, timed=lane is not None)
        if raw is None:
            return obj  # (an Event whose lost answer is not read back)
        out = decode(raw, info)
        self._inject(info, "ADDED", out)
        return out

    def _with_version(self, info: KindInfo, obj: Any) -> Any:
        if obj.metadata.resource_version:
            return obj
        m = obj.metadata
        cur = self._get(info, m.namespace or "", m.name)
        meta = _replace(m, resource_version=cur.metadata.resource_version)
        return _replace(obj, metadata=meta)

    def _put(self, obj: Any, status: bool) -> Any:
        info = kind_of(obj)
        if info.rtype == EVENT:
            self.events.submit(lambda: self._send_bump(info, obj))
            return obj
        return self._put_as(info, obj, status)

    def _bump_event(self, info: KindInfo, obj: Any) -> Any:
        """A repeated Event, as client-go's correlator sends it: a patch of
        its count, time and message, with no resourceVersion, so it needs
        neither a read (the manager's role has no ``get`` on events) nor a
        retry on conflict."""
        m = obj.metadata
        raw = encode(obj)
        body: dict[str, Any] = {
            k: raw[k] for k in ("count", "lastTimestamp", "message") if k in raw
        }
        return self._patch(info.rtype, m.namespace or "", m.name, body, status=False, answer=False)

    def _put_as(self, info: KindInfo, obj: Any, status: bool) -> Any:
        obj = self._with_version(info, obj)
        m = obj.metadata
        ref = _ref(info, m.namespace or "", m.name)
        try:
            raw = self._call(self._replace(info, obj, ref, status), ref, self._lane is not None)
        except Conflict:
            self._reread(info, m.namespace or "", m.name)
            raise
        return self._took(info, raw)

    def _replace(
        self, info: KindInfo, obj: Any, ref: str, status: bool
    ) -> Callable[[], Coroutine[Any, Any, Any]]:
        """The update (or status update) of ``obj``, to run on the I/O loop."""
        m = obj.metadata
        ns = m.namespace or None
        lane = self._lane
        if lane is not None:
            return lambda: lane.replace(info, obj, ref, status)
        res = lk_resource(info.rtype)
        if status:
            body = res.Status(encode(obj))
            return lambda: self.client.replace(body, m.name, namespace=ns)
        whole = res(encode(obj))
        return lambda: self.client.replace(whole, namespace=ns)

    def _took(self, info: KindInfo, raw: Any) -> Any:
        """A written object, handed to the watches."""
        out = decode(raw, info)
        gone = out.metadata.deletion_timestamp is not None and not out.metadata.finalizers
        if not gone:  # (the last finalizer removed: the DELETED comes by the watch)
            self._inject(info, "MODIFIED", out)
        return out

    def update(self, obj: Any) -> Any:
        return self._put(obj, status=False)

    def update_status_all(self, given: Sequence[Any]) -> Sequence[Any]:
        """``update_status`` of each object, the requests in flight
        together (as Kueue's scheduler applies admissions without waiting
        for each in turn). Each result is the written object or the
        StoreError its write met, in the order given; a Conflict has re-read
        its object, as ``update_status`` does."""
        infos = [kind_of(o) for o in given]
        objs = [self._with_version(i, o) for i, o in zip(infos, given, strict=True)]
        refs = [
            _ref(i, o.metadata.namespace or "", o.metadata.name)
            for i, o in zip(infos, objs, strict=True)
        ]
        calls = [
            self._retrying(self._replace(info, obj, ref, True), ref, self._lane is not None)
            for info, obj, ref in zip(infos, objs, refs, strict=True)
        ]

        # A few at a time: more than the client's pool keeps alive (20, some
        # held by watches) would each open a new TLS connection and close it.
        gate = asyncio.Semaphore(_IN_FLIGHT)

        async def gated(call: Coroutine[Any, Any, Any]) -> Any:
            async with gate:
                return await call

        async def together() -> builtins.list[Any]:
            return await asyncio.gather(*map(gated, calls), return_exceptions=True)

        rounds = -(-len(calls) // _IN_FLIGHT)  # (the gate queues the rest)
        answers = self.io.call(together(), self._patience * rounds)
        out: builtins.list[Any] = []
        for info, obj, raw in zip(infos, objs, answers, strict=True):
            m = obj.metadata
            if isinstance(raw, Conflict):
                self._reread(info, m.namespace or "", m.name)
            if isinstance(raw, StoreError):
                out.append(raw)
                continue
            if isinstance(raw, BaseException):
                raise raw
            out.append(self._took(info, raw))
        return out

    def update_status(self, obj: Any) -> Any:
        return self._put(obj, status=True)

    def patch(
        self,
        rtype: ResourceType,
        namespace: str,
        name: str,
        patch: Mapping[str, Any],
        *,
        status: bool = False,
    ) -> Any:
        return self._patch(rtype, namespace, name, patch, status=status, answer=True)

    def _patch(
        self,
        rtype: ResourceType,
        namespace: str,
        name: str,
        patch: Mapping[str, Any],
        *,
        status: bool,
        answer: bool,
    ) -> Any:
        """``patch``; ``answer`` False (an Event's repeat): the answer is
        not decoded nor handed to the watches, and None is returned."""
        info = kind_info(rtype)
        ns = namespace or None
        body = dict(patch)
        ref = _ref(info, namespace, name)
        lane = self._lane
        if lane is not None:
            make = lambda: lane.merge_patch(  # noqa: E731
                info, namespace, name, body, ref, status, answer
            )
        else:
            res = lk_resource(rtype)
            target = res.Status if status else res
            make = lambda: self.client.patch(  # noqa: E731
                target, name, body, namespace=ns, patch_type=PatchType.MERGE
            )
        try:
            raw = self._call(make, ref, lane is not None)
        except Conflict:
            self._reread(info, namespace, name)
            raise
        if not answer:
            return None
        out = decode(raw, info)
        self._inject(info, "MODIFIED", out)
        return out

    def delete(
        self,
        rtype: ResourceType,
        namespace: str,
        name: str,
        *,
        resource_version: str | None = None,
    ) -> Any | None:
        info = kind_info(rtype)
        if info.rtype == EVENT and resource_version is None:
            # (in order after the Event's create and repeats: the sink's queue)
            self.events.submit(lambda: self._send_delete(info, namespace, name))
            return None
        return self._delete(info, namespace, name, resource_version)

    def _delete(
        self, info: KindInfo, namespace: str, name: str, resource_version: str | None
    ) -> Any | None:
        res = lk_resource(info.rtype)
        ns = namespace or None
        ref = _ref(info, namespace, name)
        if resource_version is not None:
            # (lightkube's delete sends no preconditions: checked just before)
            cur = self._get(info, namespace, name)
            if cur.metadata.resource_version != resource_version:
                raise Conflict(
                    f"Operation cannot be fulfilled on {ref}: the object has been modified"
                )
        tried = False

        async def once() -> None:
            nonlocal tried
            first, tried = not tried, True
            try:
                await self.client.delete(res, name, namespace=ns, cascade=CascadeType.BACKGROUND)
            except Exception as err:
                if first or store_error(err, ref).code != 404:
                    raise  # (a retry that finds it gone: the lost attempt deleted it)

        self._call(once, ref)
        if info.rtype == EVENT:
            return None  # (no finalizers; and a recorder may not get events)
        try:
            left = self._get(info, namespace, name)
        except NotFound:
            return None
        if left.metadata.deletion_timestamp is None:
            return None  # (deleted, and another of that name created since)
        self._inject(info, "MODIFIED", left)
        return left

    # ------------------------------------------------------------ watches
    def watch(
        self,
        rtype: ResourceType,
        since: str,
        *,
        namespace: str | None = None,
        bookmarks: bool = False,
    ) -> KubeWatch:
        info = kind_info(rtype)
        w = KubeWatch(
            self.client,
            lk_resource(rtype),
            info,
            since,
            namespace=namespace,
            bookmarks=bookmarks,
            wake=self.changed.set,
            on_close=self._forget,
            ignore=self.seen_ignores,
            lane=self._lane,
        )
        self._watches.setdefault(info.rtype, []).append(w)
        w.task = self.io.spawn(w.run())
        return w

    def _forget(self, w: KubeWatch) -> None:
        ws = self._watches.get(w.info.rtype, [])
        if w in ws:
            ws.remove(w)

    def close(self) -> None:
        self.events.close()  # what was recorded is sent before the client goes
        for ws in list(self._watches.values()):
            for w in list(ws):
                w.close()
        with contextlib.suppress(Exception):
            self.io.call(self.client.close(), 5)
        if self._lane is not None:
            with contextlib.suppress(Exception):
                self.io.call(self._lane.close(), 5)
        self.io.stop()


async def _guarded(coro: Coroutine[Any, Any, T], ref: str) -> T:
    """The request's exception as the store's error."""
    try:
        return await coro
    except asyncio.CancelledError:
        raise
    except StoreError:
        raise
    except Exception as err:
        raise store_error(err, ref) from None


def _log() -> Any:
    import structlog

    return structlog.get_logger("kuota.store.kube")


def _replace(obj: Any, **changes: Any) -> Any:
    import msgspec

    return msgspec.structs.replace(obj, **changes)


__all__ = ["AlreadyExists", "KubeStore", "load_kubeconfig"]
