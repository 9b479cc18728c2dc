"""The decisions of a replay as data, to hold the fast replay to the full
one: ``(virtual seconds, event, job name)`` for each quota reservation
(``admit``), preemption (``preempt:<reason>``) and finish, as they happen.
Within one instant the full replay writes statuses in key order, so two
logs are compared instant by instant, as sets (:func:`by_instant`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kuota.api.conditions import find_condition

__all__ = ["DecisionLog", "WorkloadWatcher", "by_instant"]

DecisionLog = list[tuple[float, str, str]]
_WATCHED = ("QuotaReserved", "Preempted", "Finished")


def by_instant(log: DecisionLog) -> list[tuple[float, list[tuple[str, str]]]]:
    out: list[tuple[float, list[tuple[str, str]]]] = []
    for t, event, job in log:
        if not out or out[-1][0] != t:
            out.append((t, []))
        out[-1][1].append((event, job))
    # A condition's transitions are told apart by their time: the full replay
    # sees a workload admitted (or preempted) twice at one instant as once.
    return [(t, sorted(set(events))) for t, events in out]


class WorkloadWatcher:
    """The full replay's decisions, from its Workload informer's events: each
    new True transition of QuotaReserved, Preempted and Finished."""

    def __init__(self, log: DecisionLog, start: datetime, now: Any) -> None:
        self.log = log
        self.start = start
        self.now = now  # () -> the virtual clock's time
        self._seen: dict[str, dict[str, Any]] = {}

    def __call__(self, etype: str, wl: Any, old: Any | None) -> None:
        refs = wl.metadata.owner_references or ()
        if etype == "DELETED" or not refs:
            self._seen.pop(wl.metadata.name, None)
            return
        job = refs[0].name
        seen = self._seen.setdefault(wl.metadata.name, {})
        t = (self.now() - self.start).total_seconds()
        for ctype in _WATCHED:
            c = find_condition(wl, ctype)
            if c is None or c.status != "True" or seen.get(ctype) == c.last_transition_time:
                continue
            seen[ctype] = c.last_transition_time
            event = {"QuotaReserved": "admit", "Finished": "finish"}.get(ctype)
            self.log.append((t, event or f"preempt:{c.reason}", job))
