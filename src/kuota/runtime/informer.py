"""Informer caches: the objects of one kind as the store last told us, kept
current by the manager's watch, with secondary indexes (e.g. pods by owner)
and handlers that turn changes into work-queue keys."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable
from typing import Any

from kuota.store.protocol import EventType, ResourceType

Handler = Callable[[EventType, Any, Any | None], None]  # (type, object, old object)
IndexFn = Callable[[Any], Iterable[str]]


def key_of(obj: Any) -> str:
    """``namespace/name`` for namespaced objects, ``name`` for cluster-scoped."""
    m = obj.metadata
    ns: str = m.namespace
    return f"{ns}/{m.name}" if ns else m.name


class Informer:
    def __init__(self, rtype: ResourceType) -> None:
        self.rtype = rtype
        self.objects: dict[str, Any] = {}
        self.handlers: list[Handler] = []
        self._index_fns: dict[str, IndexFn] = {}
        self._indexes: dict[str, dict[str, set[str]]] = {}
        # index name -> key -> the values its object was indexed under: an
        # update recomputes only the new object's, and touches the index only
        # when they differ (most updates are status writes).
        self._values: dict[str, dict[str, tuple[str, ...]]] = {}

    def get(self, key: str) -> Any | None:
        return self.objects.get(key)

    def list(self, namespace: str | None = None) -> list[Any]:
        if namespace is None:
            return list(self.objects.values())
        return [o for o in self.objects.values() if o.metadata.namespace == namespace]

    def add_index(self, name: str, fn: IndexFn) -> None:
        self._index_fns[name] = fn
        idx: dict[str, set[str]] = {}
        values: dict[str, tuple[str, ...]] = {}
        for k, o in self.objects.items():
            vs = values[k] = tuple(fn(o))
            for v in vs:
                idx.setdefault(v, set()).add(k)
        self._indexes[name] = idx
        self._values[name] = values

    def by_index(self, name: str, value: str) -> builtins.list[Any]:
        keys = self._indexes[name].get(value, ())
        return [self.objects[k] for k in sorted(keys)]

    def on_change(self, handler: Handler) -> None:
        self.handlers.append(handler)

    def apply(self, etype: EventType, obj: Any) -> None:
        key = key_of(obj)
        old = self.objects.get(key)
        if etype == "DELETED":
            if old is not None:
                self._reindex(key, None)
            self.objects.pop(key, None)
        else:
            self.objects[key] = obj
            if self._index_fns:
                self._reindex(key, obj)
            if old is None:
                etype = "ADDED"  # a resync or a missed ADDED: handlers see it as new
        for h in self.handlers:
            h(etype, obj, old)

    def _reindex(self, key: str, obj: Any | None) -> None:
        """File ``key`` under ``obj``'s index values (None: under none)."""
        for name, fn in self._index_fns.items():
            values = self._values[name]
            before = values.get(key, ())
            after = tuple(fn(obj)) if obj is not None else ()
            if after == before:
                continue
            idx = self._indexes[name]
            for v in before:
                s = idx.get(v)
                if s is not None:
                    s.discard(key)
                    if not s:
                        del idx[v]
            for v in after:
                idx.setdefault(v, set()).add(key)
            if after:
                values[key] = after
            else:
                values.pop(key, None)
