"""In real time the clock runs while the manager works through an instant. A
timer that comes due meanwhile (a job's finish in the bench runner) is
reconciled before the next idle hook (the scheduling cycle), as in a live
controller; a virtual clock stands still, so there nothing changes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from kuota.runtime.manager import Manager
from kuota.store.memory import MemoryStore

T0 = datetime(2026, 1, 1, tzinfo=UTC)


class SteppedClock:
    """A clock that moves only when told to; real or virtual by flag."""

    def __init__(self, virtual: bool) -> None:
        self.virtual = virtual
        self.t = T0

    def now(self) -> datetime:
        return self.t

    def wait_until(self, at: datetime) -> None:
        self.t = max(self.t, at)


class Worker:
    """Reconciling "slow" takes a second of the clock; "finish" is a timer."""

    name = "worker"

    def __init__(self, clock: SteppedClock, log: list[str]) -> None:
        self.clock, self.log = clock, log

    def setup(self, mgr: Manager) -> None:
        self.mgr = mgr

    def reconcile(self, key: str) -> None:
        self.log.append(key)
        if key == "slow":
            self.clock.t += timedelta(seconds=1)


def _run(virtual: bool) -> list[str]:
    clock = SteppedClock(virtual)
    log: list[str] = []
    mgr = Manager(MemoryStore(clock.now), clock, raise_errors=True)  # type: ignore[arg-type]
    mgr.add(Worker(clock, log))
    cycles = [0]

    def cycle() -> bool:
        if cycles[0] >= 2:
            return False
        cycles[0] += 1
        log.append(f"cycle@{(clock.now() - T0).total_seconds():g}s")
        return True

    mgr.idle_hooks.append(cycle)
    mgr.enqueue_at("worker", "finish", T0 + timedelta(milliseconds=500))
    mgr.enqueue("worker", "slow")
    mgr.run()
    return log


def test_real_time_reconciles_what_came_due_before_the_next_cycle() -> None:
    assert _run(virtual=False) == ["slow", "finish", "cycle@1s", "cycle@1s"]


def test_virtual_time_finishes_the_instant_first() -> None:
    # The clock moved (as if virtually) but a virtual clock's due timers wait
    # for the instant to settle: the cycles of T0+1s run first.
    assert _run(virtual=True) == ["slow", "cycle@1s", "cycle@1s", "finish"]
