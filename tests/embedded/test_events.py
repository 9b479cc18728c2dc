"""Events as ``oc describe`` shows them: recorded for every step of a
workload's life, folded into one event with a count when they repeat, and
dropped after the event TTL so a long simulation keeps a bounded number."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from kuota.api.kueue import types as kt
from kuota.runtime.clock import VirtualClock
from kuota.runtime.recorder import EventRecorder
from kuota.store import MemoryStore
from kuota.store.resources import CLUSTER_QUEUE, EVENT
from kuota.store.resources import WORKLOAD as WL

from .world import T0, cluster_queue, control_plane, flavor, job, local_queue, namespace, node, obj

PRIO = "kueue.x-k8s.io/priority-class"


def _events(cp: Any, ns: str = "team") -> list[Any]:
    return cp.store.list(EVENT, ns).items


def _of(events: list[Any], name: str) -> list[tuple[str, str]]:
    return [(e.type, e.reason) for e in events if e.involved_object.name.startswith(name)]


def _world() -> list[Any]:
    return [
        namespace("team"),
        flavor("a100", {"gpu": "a100"}),
        cluster_queue("cq", {"a100": 4}),
        local_queue("team", "main", "cq"),
        node("n1", 4, {"gpu": "a100"}),
    ]


def test_a_workloads_life_is_recorded_in_kueues_words() -> None:
    cp = control_plane(cluster=True)
    cp.create(_world())
    cp.create([job("team", "a", 4, duration="10m"), job("team", "b", 4, duration="10m")])
    cp.mgr.run_until_idle()
    ev = _events(cp)
    assert _of(ev, "job-a-") == [("Normal", "QuotaReserved"), ("Normal", "Admitted")]
    # b waits: one Warning with the reason, with the numbers.
    (pending,) = [e for e in ev if e.involved_object.name.startswith("job-b-")]
    assert (pending.type, pending.reason) == ("Warning", "WaitingForQuota")
    assert "insufficient unused quota for nvidia.com/gpu in flavor a100" in pending.message
    assert _of(ev, "a") == [("Normal", "CreatedWorkload"), ("Normal", "Started")]
    cp.run()
    ev = _events(cp)
    # b's reason did not change while it waited: still one Pending event.
    assert _of(ev, "job-b-") == [
        ("Warning", "WaitingForQuota"),
        ("Normal", "QuotaReserved"),
        ("Normal", "Admitted"),
    ]
    qr = next(
        e for e in ev if e.involved_object.name.startswith("job-b-") and e.reason == "QuotaReserved"
    )
    assert qr.message == "Quota reserved in ClusterQueue cq, wait time since queued was 600s"


def test_the_workload_controllers_own_reasons_record_no_event() -> None:
    # Kueue's workload controller stamps "LocalQueue X doesn't exist" without
    # an Event; the scheduler's failed attempts record one each.
    cp = control_plane(cluster=True)
    cp.create(_world())
    cp.create([job("team", "lost", 4, queue="nowhere")])
    cp.mgr.run_until_idle()
    (wl,) = [w for w in cp.store.list(WL, "team").items if w.metadata.name.startswith("job-lost-")]
    qr = next(c for c in wl.status.conditions if c.type == "QuotaReserved")
    assert (qr.reason, qr.message) == ("Misconfigured", "LocalQueue nowhere doesn't exist")
    assert _of(_events(cp), "job-lost-") == []


def test_a_preempted_workload_records_why() -> None:
    cq = cluster_queue("cq", {"a100": 4})
    cq.spec.preemption = kt.ClusterQueuePreemption(within_cluster_queue="LowerPriority")
    world = _world()
    world[2] = cq
    wpcs = [
        obj(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "WorkloadPriorityClass",
                "metadata": {"name": n},
                "value": v,
            }
        )
        for n, v in (("low", 1), ("high", 100))
    ]
    cp = control_plane(cluster=True)
    cp.create([*world, *wpcs])
    cp.create([job("team", "low", 4, duration="1h", labels={PRIO: "low"})])
    cp.mgr.run_until_idle()
    cp.create([job("team", "high", 4, duration="1h", labels={PRIO: "high"})])
    cp.run(until=T0 + timedelta(minutes=1))
    reasons = _of(_events(cp), "job-low-")
    assert ("Normal", "Preempted") in reasons
    assert ("Normal", "EvictedDueToPreempted") in reasons
    pre = next(e for e in _events(cp) if e.reason == "Preempted")
    assert pre.message.startswith("Preempted to accommodate a workload")
    assert _of(_events(cp), "low")[-1] == ("Normal", "Stopped")


def test_repeats_fold_into_a_count_and_old_events_expire() -> None:
    clock = VirtualClock(T0)
    store = MemoryStore(clock.now)
    rec = EventRecorder(store, clock)
    ns = namespace("team")
    w = job("team", "j", 1)
    w = store.create(w)
    rec.event(w, "Warning", "Pending", "no room", "test")
    clock.wait_until(T0 + timedelta(minutes=5))
    rec.event(w, "Warning", "Pending", "no room", "test")
    (e,) = store.list(EVENT, "team").items
    assert (e.count, e.first_timestamp, e.last_timestamp) == (2, T0, T0 + timedelta(minutes=5))
    assert e.involved_object.kind == "Job" and e.involved_object.uid == w.metadata.uid
    rec.event(w, "Normal", "Started", "go", "test")
    assert len(store.list(EVENT, "team").items) == 2
    # An hour after the Pending event's last repeat, the next event drops it.
    clock.wait_until(T0 + timedelta(minutes=65, seconds=1))
    rec.event(w, "Normal", "Stopped", "done", "test")
    assert sorted(e.reason for e in store.list(EVENT, "team").items) == ["Stopped"]
    assert ns is not None


def test_events_can_be_switched_off() -> None:
    cp = control_plane(cluster=True)
    cp.mgr.recorder.enabled = False
    cp.create(_world())
    cp.create([job("team", "a", 4, duration="10m")])
    cp.run()
    assert _events(cp) == []


def test_a_repeat_is_a_new_version_of_the_event_that_watchers_see() -> None:
    # The count is bumped on a new version written through the store, not on
    # the stored object: watchers get a MODIFIED event and a durable store
    # journals the new count.
    clock = VirtualClock(T0)
    store = MemoryStore(clock.now)
    rec = EventRecorder(store, clock)
    w = store.create(job("team", "j", 1))
    rec.event(w, "Warning", "Pending", "no room", "test")
    (first,) = store.list(EVENT, "team").items
    watch = store.watch(None, store.resource_version)
    clock.wait_until(T0 + timedelta(minutes=1))
    rec.event(w, "Warning", "Pending", "no room", "test")
    (again,) = store.list(EVENT, "team").items
    assert (first.count, again.count) == (1, 2)
    assert int(again.metadata.resource_version) > int(first.metadata.resource_version)
    seen = [(ev.type, ev.object.count) for ev in watch.poll() if ev.type != "BOOKMARK"]
    assert seen == [("MODIFIED", 2)]


@pytest.mark.interpreted
def test_two_events_of_one_object_at_one_instant_get_client_go_names() -> None:
    # client-go's names: the object's name and the instant in hex nanoseconds,
    # then a sequence number when the instant repeats; the second name is
    # taken at once, without a create the store refuses first.
    clock = VirtualClock(T0)
    store = MemoryStore(clock.now)
    creates: list[str] = []
    create = store.create

    def counting(obj: Any) -> Any:
        creates.append(obj.metadata.name)
        return create(obj)

    store.create = counting  # type: ignore[method-assign]
    rec = EventRecorder(store, clock)
    w = create(job("team", "j", 1))
    rec.event(w, "Normal", "QuotaReserved", "reserved", "test")
    rec.event(w, "Normal", "Admitted", "admitted", "test")
    base = f"j.{int(T0.timestamp()) * 10**9:x}"
    assert sorted(e.metadata.name for e in store.list(EVENT, "team").items) == [base, base + "0"]
    assert creates == [base, base + "0"]


def test_an_inactive_cluster_queue_says_why_in_kueues_words() -> None:
    # The Active condition's message is Kueue's inactiveReason text, naming
    # what is missing, not only the reason.
    cp = control_plane(cluster=True)
    cp.create([namespace("team"), cluster_queue("cq", {"a100": 4})])
    cp.mgr.run_until_idle()
    cq = cp.store.get(CLUSTER_QUEUE, "", "cq")
    (active,) = [c for c in cq.status.conditions if c.type == "Active"]
    assert (active.status, active.reason) == ("False", "FlavorNotFound")
    assert active.message == (
        "Can't admit new workloads: references missing ResourceFlavor(s): a100."
    )
