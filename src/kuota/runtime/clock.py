"""Clocks: real time for watching a world live, virtual time for simulation.

Virtual time moves only when the manager has nothing left to do at the
current instant: it then jumps to the next timer, so a simulated week runs
as fast as the CPU allows."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    virtual: bool

    def now(self) -> datetime: ...

    def wait_until(self, at: datetime) -> None:
        """Let time pass until ``at`` (a virtual clock jumps; a real one sleeps)."""
        ...


class VirtualClock:
    virtual = True

    def __init__(self, start: datetime) -> None:
        self._now = start

    def now(self) -> datetime:
        return self._now

    def wait_until(self, at: datetime) -> None:
        if at > self._now:
            self._now = at


class RealClock:
    """Wall-clock time, optionally sped up (``speed`` virtual seconds per real
    second) for watching a long world in a short while."""

    virtual = False

    def __init__(self, start: datetime | None = None, speed: float = 1.0) -> None:
        self._origin = start or datetime.now(UTC)
        self._t0 = time.monotonic()
        self.speed = speed

    def now(self) -> datetime:
        # (Positional: the keyword form costs a third more, at every reading.)
        return self._origin + timedelta(0, (time.monotonic() - self._t0) * self.speed)

    def resume_at(self, at: datetime) -> None:
        """Continue from ``at`` (a restarted run picks up where the last one
        stopped, not at the world's start again)."""
        self._origin = at
        self._t0 = time.monotonic()

    def wait_until(self, at: datetime) -> None:
        delay = (at - self.now()).total_seconds() / self.speed
        if delay > 0:
            time.sleep(min(delay, 0.25))  # wake often enough to notice a stop request
