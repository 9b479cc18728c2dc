"""One worker cluster as the manager sees it (Kueue's ``remoteClient``): a
kube store over the worker's API server (lightkube on an I/O thread of its
own), a heartbeat that says whether the worker answers, and caches of the
worker's Workloads and jobs (of the kinds dispatched) fed by watches.

The edge of MultiKueue: every byte to a worker crosses here. The heartbeat
and the watches run on the I/O thread, so a worker that hangs never stalls
the manager; the manager's thread only drains the watches (``sync``) and
makes the few writes a dispatch needs (create, delete, a status), each
bounded by a short timeout and never retried here (the workload controller
requeues)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from lightkube import KubeConfig

from kuota.store.kube.kubestore import KubeStore
from kuota.store.kube.kubewatch import KubeWatch
from kuota.store.protocol import Gone, ResourceType, StoreError
from kuota.store.resources import NAMESPACE, WORKLOAD

__all__ = ["RemoteCluster"]

_HEARTBEAT_SECONDS = 1.0
_REQUEST_TIMEOUT = 5.0


def _key(obj: Any) -> str:
    return f"{obj.metadata.namespace}/{obj.metadata.name}"


class RemoteCluster:
    def __init__(
        self,
        name: str,
        kubeconfig: dict[str, Any],
        origin: str,
        kinds: Mapping[ResourceType, Callable[[Any], list[str]]],
    ) -> None:
        """``kinds``: the job kinds dispatched, watched beside the Workloads,
        each with the Workloads a copy belongs to (its adapter's
        ``workload_keys``: ``WorkloadKeysFor``)."""
        self.name = name
        self.origin = origin
        self._keys_of = dict(kinds)
        self.watched: tuple[ResourceType, ...] = (WORKLOAD, *kinds)
        self.store = KubeStore(
            KubeConfig.from_dict(kubeconfig), retry_for=0, request_timeout=_REQUEST_TIMEOUT
        )
        self.caches: dict[ResourceType, dict[str, Any]] = {rt: {} for rt in self.watched}
        self._watches: dict[ResourceType, KubeWatch] = {}
        self.connected = False
        self.lost_since: datetime | None = None
        self.error = ""  # why the last heartbeat failed
        self._alive = False  # written by the heartbeat on the I/O thread
        self._beats = 0
        self._beat = self.store.io.spawn(self._heartbeat())

    # ------------------------------------------------------------ the I/O thread
    async def _heartbeat(self) -> None:
        ns = _namespace_resource()
        while True:
            try:
                await asyncio.wait_for(
                    self.store.client.get(ns, "default"), timeout=_REQUEST_TIMEOUT
                )
                self._alive, self.error = True, ""
            except asyncio.CancelledError:
                raise
            except Exception as err:  # refused, reset, timed out, 5xx: not usable
                self._alive = False
                self.error = _short(err)
            self._beats += 1
            await asyncio.sleep(_HEARTBEAT_SECONDS)

    # ------------------------------------------------------------ the manager's thread
    @property
    def probed(self) -> bool:
        """The heartbeat has answered at least once."""
        return self._beats > 0

    def sync(self, now: datetime) -> tuple[bool, set[str]]:
        """Follow the heartbeat and drain the watches. Returns whether the
        connection changed and the keys (namespace/name) of the Workloads
        whose remote objects changed."""
        changed: set[str] = set()
        flipped = False
        if self._alive and not self.connected:
            try:
                changed |= self._connect()
            except StoreError as err:
                self.error = str(err)
                return False, changed
            self.connected, self.lost_since, flipped = True, None, True
        elif not self._alive and self.connected and self.probed:
            changed |= self._disconnect(now)
            flipped = True
        if self.connected:
            try:
                changed |= self._drain()
            except Gone:
                changed |= self._disconnect(now)
                flipped = True
        return flipped, changed

    def _connect(self) -> set[str]:
        keys: set[str] = set()
        for rt in self.watched:
            listed = self.store.list(rt)
            cache = self.caches[rt] = {}
            for obj in listed.items:
                cache[_key(obj)] = obj
                keys.update(self._workload_keys(rt, obj))
            self._watches[rt] = self.store.watch(rt, listed.resource_version)
        return keys

    def _disconnect(self, now: datetime) -> set[str]:
        for w in self._watches.values():
            w.close()
        self._watches.clear()
        keys = {
            k
            for rt, c in self.caches.items()
            for o in c.values()
            for k in self._workload_keys(rt, o)
        }
        for c in self.caches.values():
            c.clear()
        self.connected = False
        self.lost_since = now
        return keys

    def _drain(self) -> set[str]:
        keys: set[str] = set()
        for rt, w in self._watches.items():
            cache = self.caches[rt]
            for ev in w.poll():
                if ev.object is None:
                    continue
                k = _key(ev.object)
                if ev.type == "DELETED":
                    cache.pop(k, None)
                elif not _older(ev.object, cache.get(k)):
                    cache[k] = ev.object
                keys.update(self._workload_keys(rt, ev.object))
        return keys

    def _workload_keys(self, rt: ResourceType, obj: Any) -> list[str]:
        """The manager's Workloads a remote object of this origin belongs
        to: a Workload is its own; a job's its adapter says."""
        labels = obj.metadata.labels or {}
        if labels.get("kueue.x-k8s.io/multikueue-origin") != self.origin:
            return []
        if rt == WORKLOAD:
            return [_key(obj)]
        return self._keys_of[rt](obj)

    def get(self, rt: ResourceType, key: str) -> Any | None:
        return self.caches[rt].get(key)

    def owned(self, rt: ResourceType) -> Iterable[Any]:
        """The cached objects of this manager (its origin label)."""
        for obj in self.caches[rt].values():
            if (obj.metadata.labels or {}).get("kueue.x-k8s.io/multikueue-origin") == self.origin:
                yield obj

    def close(self) -> None:
        self._beat.cancel()
        with contextlib.suppress(Exception):
            self.store.close()


def _older(obj: Any, cached: Any | None) -> bool:
    """The store hands a written object to its watches after the call
    returns, so a newer version from the stream may already be cached:
    resourceVersions are opaque, but a worker's (etcd's, kuota's) are
    increasing integers, and an older one is dropped."""
    if cached is None:
        return False
    a, b = obj.metadata.resource_version or "", cached.metadata.resource_version or ""
    return a.isdigit() and b.isdigit() and int(a) < int(b)


def _namespace_resource() -> Any:
    from kuota.store.kube.kubewire import lk_resource

    return lk_resource(NAMESPACE)


def _short(err: BaseException) -> str:
    text = str(err) or type(err).__name__
    return text if len(text) <= 200 else text[:197] + "..."
