"""A restarted manager takes over the Events its state holds (issue 24.4):
a repeat bumps the stored Event's count and an old Event expires after the
event TTL, as in the run that recorded them. The recorder's memory is not
kept with the state; before, a resumed run recorded repeats as new Events
and never expired the old ones, so its final Events differed from an
uninterrupted run's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from kuota.api.k8s import Namespace
from kuota.api.meta import ObjectMeta
from kuota.runtime.clock import VirtualClock
from kuota.runtime.manager import Manager
from kuota.runtime.recorder import EventRecorder
from kuota.store.memory import MemoryStore
from kuota.store.resources import EVENT

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_a_restarted_manager_bumps_and_expires_the_events_it_finds() -> None:
    clock = VirtualClock(T0)
    store = MemoryStore(clock.now)
    ns = store.create(Namespace(api_version="v1", kind="Namespace", metadata=ObjectMeta(name="a")))
    first = EventRecorder(store, clock)  # the run before the restart
    first.event(ns, "Warning", "Pending", "no room", "test")
    first.event(ns, "Normal", "Started", "go", "test")
    first.event(ns, "Normal", "Other", "x", "test")  # same instant: a suffixed name

    clock.wait_until(T0 + timedelta(minutes=30))
    mgr = Manager(store, clock)  # the restarted process, on the same store
    mgr.start()
    mgr.recorder.event(ns, "Warning", "Pending", "no room", "test")
    events = {e.reason: e for e in store.list(EVENT).items}
    assert sorted(events) == ["Other", "Pending", "Started"]
    assert events["Pending"].count == 2
    assert events["Pending"].last_timestamp == T0 + timedelta(minutes=30)

    # An hour after their last time, the next event drops Started and Other.
    clock.wait_until(T0 + timedelta(minutes=61))
    mgr.recorder.event(ns, "Normal", "Later", "y", "test")
    assert sorted(e.reason for e in store.list(EVENT).items) == ["Later", "Pending"]


def test_names_taken_at_one_instant_are_numbered_from_zero_in_every_process() -> None:
    # A resumed run names the second Event of an object at an instant as the
    # run it continues did: the suffix counts within the instant.
    clock = VirtualClock(T0)
    store = MemoryStore(clock.now)
    ns = store.create(Namespace(api_version="v1", kind="Namespace", metadata=ObjectMeta(name="a")))
    rec = EventRecorder(store, clock)
    rec.event(ns, "Normal", "A", "a", "test")
    rec.event(ns, "Normal", "B", "b", "test")
    clock.wait_until(T0 + timedelta(seconds=1))
    rec.event(ns, "Normal", "C", "c", "test")
    rec.event(ns, "Normal", "D", "d", "test")
    names = sorted(e.metadata.name for e in store.list(EVENT, "default").items)
    t0 = int(T0.timestamp()) * 10**9
    t1 = t0 + 10**9
    assert names == sorted([f"a.{t0:x}", f"a.{t0:x}0", f"a.{t1:x}", f"a.{t1:x}0"])
