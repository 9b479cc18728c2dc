"""Informer caches: the objects of one kind as the store last told us, kept
current by the manager's watch, with secondary indexes (e.g. pods by owner)
and handlers that turn changes into work-queue keys."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kuota.store.protocol import EventType, ResourceType

Handler = Callable[[EventType, Any, Any | None], None]  # (type, object, old object)
IndexFn = Callable[[Any], Iterable[str]]


def key_of(obj: Any) -> str:
    """``namespace/name`` for namespaced objects, ``name`` for cluster-scoped."""
    m = obj.metadata
    return f"{m.namespace}/{m.name}" if m.namespace else m.name


class Informer:
    def __init__(self, rtype: ResourceType) -> None:
        self.rtype = rtype
        self.objects: dict[str, Any] = {}
        self.handlers: list[Handler] = []
        self._index_fns: dict[str, IndexFn] = {}
        self._indexes: dict[str, dict[str, set[str]]] = {}

    def get(self, key: str) -> Any | None:
        return self.objects.get(key)

    def list(self, namespace: str | None = None) -> list[Any]:
        if namespace is None:
            return list(self.objects.values())
        return [o for o in self.objects.values() if o.metadata.namespace == namespace]

    def add_index(self, name: str, fn: IndexFn) -> None:
        self._index_fns[name] = fn
        idx: dict[str, set[str]] = {}
        for k, o in self.objects.items():
            for v in fn(o):
                idx.setdefault(v, set()).add(k)
        self._indexes[name] = idx

    def by_index(self, name: str, value: str) -> list[Any]:
        keys = self._indexes[name].get(value, ())
        return [self.objects[k] for k in sorted(keys)]

    def on_change(self, handler: Handler) -> None:
        self.handlers.append(handler)

    def apply(self, etype: EventType, obj: Any) -> None:
        key = key_of(obj)
        old = self.objects.get(key)
        if old is not None:
            self._unindex(key, old)
        if etype == "DELETED":
            self.objects.pop(key, None)
        else:
            self.objects[key] = obj
            self._index(key, obj)
            if old is None:
                etype = "ADDED"  # a resync or a missed ADDED: handlers see it as new
        for h in self.handlers:
            h(etype, obj, old)

    def _index(self, key: str, obj: Any) -> None:
        for name, fn in self._index_fns.items():
            idx = self._indexes[name]
            for v in fn(obj):
                idx.setdefault(v, set()).add(key)

    def _unindex(self, key: str, obj: Any) -> None:
        for name, fn in self._index_fns.items():
            idx = self._indexes[name]
            for v in fn(obj):
                s = idx.get(v)
                if s is not None:
                    s.discard(key)
                    if not s:
                        del idx[v]
