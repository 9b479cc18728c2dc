"""The manager's rounds: each pass gives every queue with keys one reconcile,
in the order the controllers were added; a key queued for a controller the
pass has already gone by waits for the next pass. Only the queues holding
keys are visited (a control plane has some 35 controllers and a write
wakes two or three: the others are not asked, pass after pass)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from kuota.runtime import workqueue
from kuota.runtime.clock import VirtualClock
from kuota.runtime.manager import Manager
from kuota.store.memory import MemoryStore

T0 = datetime(2026, 1, 1, tzinfo=UTC)


class Recorder:
    """Reconciles by appending (its name, the key) to a shared log; a key
    ``x>c:k`` also queues ``k`` for controller ``c``."""

    def __init__(self, name: str, log: list[tuple[str, str]]) -> None:
        self.name = name
        self.log = log
        self.mgr: Manager | None = None

    def setup(self, mgr: Manager) -> None:
        self.mgr = mgr

    def reconcile(self, key: str) -> timedelta | None:
        self.log.append((self.name, key))
        if ">" in key:
            assert self.mgr is not None
            for target in key.split(">", 1)[1].split(","):
                ctrl, k = target.split(":")
                self.mgr.enqueue(ctrl, k)
        return None


def _manager(names: list[str], log: list[tuple[str, str]]) -> Manager:
    clock = VirtualClock(T0)
    mgr = Manager(MemoryStore(clock.now), clock, raise_errors=True)
    for n in names:
        mgr.add(Recorder(n, log))
    return mgr


def test_a_pass_visits_the_queues_in_order_one_key_each() -> None:
    log: list[tuple[str, str]] = []
    mgr = _manager(["a", "b", "c", "d"], log)
    mgr.enqueue("c", "c1>a:a2,d:d1")  # a is behind in this pass, d ahead
    mgr.enqueue("a", "a1")
    mgr.enqueue("a", "a3")
    mgr.enqueue("b", "b1>b:b2")  # (b itself: the next pass)
    assert mgr.run_until_idle()
    assert log == [
        ("a", "a1"),
        ("b", "b1>b:b2"),
        ("c", "c1>a:a2,d:d1"),
        ("d", "d1"),
        ("a", "a3"),
        ("b", "b2"),
        ("a", "a2"),
    ]


def test_a_queue_replaced_by_a_controller_of_the_same_name_keeps_its_turn() -> None:
    log: list[tuple[str, str]] = []
    mgr = _manager(["a", "b", "c"], log)
    mgr.enqueue("a", "stale")
    mgr.add(Recorder("a", log))  # a new queue for "a", still first in a pass
    mgr.enqueue("c", "c1")
    mgr.enqueue("a", "a1")
    assert mgr.run_until_idle()
    assert log == [("a", "a1"), ("c", "c1")]


@pytest.mark.interpreted
def test_only_the_queues_holding_keys_are_asked_for_one(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []
    get = workqueue.WorkQueue.get

    def counted(self: workqueue.WorkQueue) -> str | None:
        asked.append(self.name)
        return get(self)

    monkeypatch.setattr(workqueue.WorkQueue, "get", counted)
    log: list[tuple[str, str]] = []
    names = [f"c{i:02d}" for i in range(40)]
    mgr = _manager(names, log)
    mgr.enqueue("c39", "k>c05:k2")
    assert mgr.run_until_idle()
    assert log == [("c39", "k>c05:k2"), ("c05", "k2")]
    assert asked == ["c39", "c05"]  # not 40 queues a pass, for three passes
