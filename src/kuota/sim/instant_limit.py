"""The per-instant cycle limit both replays share: a replay whose scheduling
cycles at one instant pass :data:`MAX_CYCLES_PER_INSTANT` only repeats itself
there (workloads preempting each other for ever) and is stopped, naming who
preempts whom and, when it is off, Kueue's gate that fixes the usual cause."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

__all__ = [
    "MAX_CYCLES_PER_INSTANT",
    "PREEMPTOR_GATE",
    "InstantLimit",
    "repeating_notice",
    "spinning",
]

MAX_CYCLES_PER_INSTANT: Final = 10_000
PREEMPTOR_GATE: Final = "PrioritizePreemptorWorkloads"


def spinning(preemptions: Sequence[Any], gate_on: bool) -> list[str]:
    """Which workloads cycle, who preempts them and why (``preemptions``:
    the instant's); and, when Kueue's fix for the usual cause is off, that fix."""
    by: dict[str, set[str]] = {}
    for p in preemptions:
        by.setdefault(p.victim, set()).add(f"{p.preemptor} ({p.reason})")
    lines = [
        f"{victim}: preempted by {', '.join(sorted(by[victim]))}" for victim in sorted(by)[:10]
    ]
    if not gate_on:
        # A preemptor waits for its victims' evictions; the quota they free is
        # taken meanwhile by another head, which the victim preempts back
        # (kueue#13662, the same with Kueue's default gates).
        lines.append(
            "the quota a preemptor frees is taken by another workload before it is "
            "admitted, as Kueue does with its default feature gates; Kueue's "
            f"{PREEMPTOR_GATE} gate (alpha) stops it: featureGates: "
            f"{{{PREEMPTOR_GATE}: true}} in the Configuration"
        )
    return lines


def repeating_notice(design: str, elapsed_s: float) -> str:
    return (
        f"{design}: stopped: the replay only repeats itself (more than "
        f"{MAX_CYCLES_PER_INSTANT} scheduling cycles at {elapsed_s:.0f}s, "
        "workloads preempting each other); these workloads cycle:"
    )


class InstantLimit:
    """An idle hook for the full replay's manager: stops it once the Kueue
    controller has run more than the limit's cycles at one instant (without
    it a spinning instant runs to the manager's ten million steps)."""

    def __init__(self, cp: Any) -> None:
        self.cp = cp
        self.at: Any = None
        self.cycles0 = 0
        self.preemptions0 = 0
        self.spinning: list[str] | None = None

    def __call__(self) -> bool:
        kueue = self.cp.kueue
        core = kueue.core
        now = self.cp.clock.now()
        if now != self.at:
            self.at = now
            self.cycles0 = kueue.cycles_run
            self.preemptions0 = len(core.preemptions) if core is not None else 0
            return False
        if kueue.cycles_run - self.cycles0 > MAX_CYCLES_PER_INSTANT and self.spinning is None:
            gate_on = bool(core.state.gate(PREEMPTOR_GATE))
            self.spinning = spinning(core.preemptions[self.preemptions0 :], gate_on)
            self.cp.mgr.stop()
        return False
