"""The manager watches each resource it caches. Over a store that offers only
the protocol (an API server), it lists each resource and opens a watch per
resource from that list's resourceVersion; over the memory store it reads the
store's one stream of every resource, so that handlers see the writes of
different resources in the order they were made."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from kuota.api.k8s import Namespace, Node
from kuota.api.meta import LabelSelector, ObjectMeta
from kuota.runtime.clock import VirtualClock
from kuota.runtime.manager import Manager
from kuota.store import Gone, ListResult, Watch
from kuota.store.memory import MemoryStore
from kuota.store.protocol import ResourceType
from kuota.store.resources import NAMESPACE, NODE

T0 = datetime(2026, 1, 1, tzinfo=UTC)


class ProtocolOnly:
    """A memory store seen through the ObjectStore protocol alone (no
    multiplexed watch), recording the watches opened."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self.watches: list[tuple[ResourceType, str]] = []

    def get(self, rtype: ResourceType, namespace: str, name: str) -> Any:
        return self.store.get(rtype, namespace, name)

    def list(
        self,
        rtype: ResourceType,
        namespace: str | None = None,
        label_selector: LabelSelector | str | None = None,
    ) -> ListResult:
        return self.store.list(rtype, namespace, label_selector)

    def create(self, obj: Any) -> Any:
        return self.store.create(obj)

    def update(self, obj: Any) -> Any:
        return self.store.update(obj)

    def update_status(self, obj: Any) -> Any:
        return self.store.update_status(obj)

    def patch(
        self,
        rtype: ResourceType,
        namespace: str,
        name: str,
        patch: Mapping[str, Any],
        *,
        status: bool = False,
    ) -> Any:
        return self.store.patch(rtype, namespace, name, patch, status=status)

    def delete(
        self, rtype: ResourceType, namespace: str, name: str, *, resource_version: str | None = None
    ) -> Any | None:
        return self.store.delete(rtype, namespace, name, resource_version=resource_version)

    def watch(
        self,
        rtype: ResourceType,
        since: str,
        *,
        namespace: str | None = None,
        bookmarks: bool = False,
    ) -> Watch:
        assert isinstance(since, str)  # a list's resourceVersion, handed back
        self.watches.append((rtype, since))
        return self.store.watch(rtype, since, namespace=namespace, bookmarks=bookmarks)


class Recorder:
    """Records every change its informers report, as ``resource:name``."""

    name = "recorder"

    def __init__(self) -> None:
        self.seen: list[str] = []

    def setup(self, mgr: Manager) -> None:
        for rtype in (NAMESPACE, NODE):
            mgr.informer(rtype).on_change(self._on(rtype[2]))

    def _on(self, resource: str) -> Any:
        def on_change(etype: str, obj: Any, old: Any | None) -> None:
            self.seen.append(f"{etype} {resource}:{obj.metadata.name}")

        return on_change

    def reconcile(self, key: str) -> None:
        return None


def namespace(name: str) -> Namespace:
    return Namespace(api_version="v1", kind="Namespace", metadata=ObjectMeta(name=name))


def node(name: str) -> Node:
    return Node(api_version="v1", kind="Node", metadata=ObjectMeta(name=name))


def test_over_the_protocol_the_manager_watches_each_resource_from_its_list() -> None:
    mem = MemoryStore(lambda: T0)
    mem.create(namespace("a"))
    store = ProtocolOnly(mem)
    mgr = Manager(store, VirtualClock(T0))
    rec = Recorder()
    mgr.add(rec)
    mgr.start()
    listed = mem.list(NAMESPACE).resource_version
    assert store.watches == [(NAMESPACE, listed), (NODE, listed)]
    assert rec.seen == ["ADDED namespaces:a"]
    mem.create(node("n1"))
    mem.create(namespace("b"))
    mem.delete(NODE, "", "n1")
    assert mgr.pump() == 3
    # Each resource's events in order; the resources one after the other.
    assert rec.seen[1:] == ["ADDED namespaces:b", "ADDED nodes:n1", "DELETED nodes:n1"]
    assert set(mgr.informer(NAMESPACE).objects) == {"a", "b"}
    assert mgr.informer(NODE).objects == {}


def test_over_the_protocol_a_lost_watch_lists_again() -> None:
    mem = MemoryStore(lambda: T0, history=2)
    store = ProtocolOnly(mem)
    mgr = Manager(store, VirtualClock(T0))
    rec = Recorder()
    mgr.add(rec)
    mgr.start()
    for name in ("a", "b", "c"):
        mem.create(namespace(name))
    try:
        mem.watch(NAMESPACE, "0").poll()
        raise AssertionError("the history holds 2 events")
    except Gone:
        pass
    assert mgr.pump() == 1  # Gone: listed again, every watch reopened
    assert set(mgr.informer(NAMESPACE).objects) == {"a", "b", "c"}
    assert len(store.watches) == 4


def test_over_the_memory_store_handlers_see_writes_in_write_order() -> None:
    mem = MemoryStore(lambda: T0)
    mgr = Manager(mem, VirtualClock(T0))
    rec = Recorder()
    mgr.add(rec)
    mgr.start()
    mem.create(node("n1"))
    mem.create(namespace("b"))
    mem.delete(NODE, "", "n1")
    assert mgr.pump() == 3
    assert rec.seen == ["ADDED nodes:n1", "ADDED namespaces:b", "DELETED nodes:n1"]
