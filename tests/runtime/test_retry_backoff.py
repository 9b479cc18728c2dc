"""A reconcile that keeps failing is retried with client-go's per-item
exponential backoff (ItemExponentialFailureRateLimiter: 5 ms doubling, at
most 1000 s), for as long as the run goes on: the delay stays at the maximum
however many times it failed (it once overflowed after some 55 failures,
about ten virtual hours, and the run died of an OverflowError)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise

from kuota.runtime.clock import VirtualClock
from kuota.runtime.manager import Manager
from kuota.store.memory import MemoryStore

T0 = datetime(2026, 1, 1, tzinfo=UTC)


class AlwaysFails:
    name = "always-fails"

    def setup(self, mgr: Manager) -> None:
        mgr.enqueue(self.name, "k")

    def reconcile(self, key: str) -> timedelta | None:
        raise RuntimeError("the object cannot be handled")


def test_a_reconcile_failing_for_days_is_retried_every_1000s_without_overflow() -> None:
    clock = VirtualClock(T0)
    mgr = Manager(MemoryStore(clock.now), clock)
    mgr.add(AlwaysFails())
    assert mgr.run(until=T0 + timedelta(days=3)) == "until"
    at = [e.at for e in mgr.stats.errors]
    gaps = [b - a for a, b in pairwise(at)]
    ms = timedelta(milliseconds=1)
    assert gaps[:4] == [5 * ms, 10 * ms, 20 * ms, 40 * ms]
    assert gaps[17] == 5 * ms * 2**17  # 655.36 s
    assert set(gaps[18:]) == {timedelta(seconds=1000)}  # 5 ms * 2**18 is past the maximum
    assert len(at) > 200  # failures well past the old overflow (about 55)
    assert all(e.error == "RuntimeError: the object cannot be handled" for e in mgr.stats.errors)
