"""The goals ``kuota recommend`` searches for, and how a replay meets them.

Syntax (one ``--goal`` each; a team after ``:`` holds one team to it):

* ``p95-wait<=2h`` (any ``pN-wait``, or ``mean-wait``): every team's
  N-th percentile wait (submission to admission, nearest rank) is at most
  the duration (Go's syntax: ``90m``, ``1h30m``, ``0s``; or days: ``2d``); jobs never
  admitted count as waiting for ever; ``p95-wait:LS<=30m`` only team LS;
* ``utilization>=0.6`` (or ``60%``): GPU-hours used over the nominal GPU
  quota held over the replay;
* ``fair-share>=0.8``: no team that waited used less than 0.8 x its
  nominal share (its share of all GPU-hours over its share of the nominal
  quota). A team whose jobs never waited got all it asked for: a small
  share is then its own demand, not unfairness, and is not held against
  the design.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from kuota.api.kueue.config import parse_duration
from kuota.sim.report import DesignResult, TeamResult, nearest_rank

__all__ = [
    "Goal",
    "GoalError",
    "goal_value",
    "parse_goal",
    "shortfall",
    "worst_wait",
]

_GOAL = re.compile(r"^\s*([A-Za-z0-9.-]+)(?::([^<>=]+))?\s*(<=|>=|<|>|=)\s*(.*?)\s*$")
_DAYS = re.compile(r"^(\d+(?:\.\d+)?)d$")  # Go has no days; a trace spans them
_PCT = re.compile(r"^p(\d+(?:\.\d+)?)-wait$")
METRICS = "pN-wait (e.g. p95-wait), mean-wait, utilization, fair-share"


class GoalError(ValueError):
    """A goal that cannot be read: ``--goal "TEXT": reason``."""


@dataclass(frozen=True, slots=True)
class Goal:
    text: str
    metric: str  # "wait", "utilization" or "fair-share"
    percentile: float | None  # for waits: None is the mean
    team: str | None  # None: every team
    bound: float  # seconds for waits, a fraction otherwise

    @property
    def at_most(self) -> bool:
        return self.metric == "wait"

    def shown(self, value: float) -> str:
        if self.metric == "wait":
            return _fmt_s(value)
        if math.isinf(value):  # fair share with no team that waited
            return "no team waited"
        return "-" if math.isnan(value) else f"{value:.2f}"


def _fmt_s(s: float) -> str:
    if math.isinf(s):
        return "never admitted"
    if s < 120:
        return f"{s:.0f}s"
    if s < 7200:
        return f"{s / 60:.1f}m"
    return f"{s / 3600:.1f}h"


def parse_goal(text: str) -> Goal:
    """One ``--goal``; raises :class:`GoalError` naming the goal and the reason."""

    def bad(reason: str) -> GoalError:
        return GoalError(f'--goal "{text}": {reason}')

    m = _GOAL.match(text)
    if m is None:
        raise bad(f"expected METRIC<=VALUE or METRIC>=VALUE (metrics: {METRICS})")
    name, team, op, raw = m.group(1), m.group(2), m.group(3), m.group(4)
    team = team.strip() if team is not None else None
    if team == "":
        raise bad("no team after ':'")
    pct = _PCT.match(name)
    if pct is not None or name == "mean-wait":
        percentile = float(pct.group(1)) if pct is not None else None
        if percentile is not None and not 0 < percentile <= 100:
            raise bad(f"percentile {pct.group(1) if pct else ''} is not in (0, 100]")
        if op != "<=":
            raise bad(f"a wait is a ceiling: write {name}<={raw or 'DURATION'}")
        try:
            days = _DAYS.match(raw)
            bound = float(days.group(1)) * 86400 if days else parse_duration(raw).total_seconds()
        except ValueError as err:
            raise bad(f"{raw!r} is not a duration such as 2h or 90m ({err})") from None
        if bound < 0:
            raise bad("a wait cannot be negative")
        return Goal(text, "wait", percentile, team, bound)
    if name in ("utilization", "fair-share"):
        if op != ">=":
            raise bad(f"{name} is a floor: write {name}>={raw or 'VALUE'}")
        if team is not None and name == "utilization":
            raise bad("utilization is the whole design's, not a team's")
        try:
            bound = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
        except ValueError:
            raise bad(f"{raw!r} is not a number (e.g. 0.6 or 60%)") from None
        if not math.isfinite(bound) or bound < 0 or (name == "utilization" and bound > 1):
            limit = "between 0 and 1" if name == "utilization" else "a number from 0"
            raise bad(f"{raw} is not {limit}")
        return Goal(text, name, None, team, bound)
    raise bad(f'unknown metric "{name}" (metrics: {METRICS})')


# ---------------------------------------------------------------------- measures
def _wait(t: TeamResult, percentile: float | None) -> float:
    """The team's wait; its jobs never admitted wait for ever (they are the
    slowest, so a percentile that reaches them is infinite)."""
    never = t.jobs - t.admitted
    if percentile is None:
        return math.inf if never > 0 else (sum(t.waits) / len(t.waits) if t.waits else 0.0)
    if not t.jobs:
        return 0.0
    values = t.waits + [math.inf] * max(never, 0)
    got = nearest_rank(values, percentile)
    return got if got is not None else 0.0


def _teams(r: DesignResult, team: str | None) -> list[TeamResult]:
    return [t for t in r.teams.values() if team is None or t.team == team]


def worst_wait(r: DesignResult, percentile: float | None = 95) -> float:
    """The longest of the teams' waits at ``percentile`` (the Pareto front's y)."""
    return max((_wait(t, percentile) for t in r.teams.values() if t.jobs), default=0.0)


def goal_value(goal: Goal, r: DesignResult) -> float:
    """The design's figure for the goal (the worst team's where it is per team)."""
    if goal.metric == "wait":
        ws = [_wait(t, goal.percentile) for t in _teams(r, goal.team) if t.jobs]
        return max(ws, default=0.0)
    if goal.metric == "utilization":
        u = r.quota_utilization
        return u if u is not None else 0.0
    total = sum(t.gpu_hours for t in r.teams.values())
    ratios = [
        (t.gpu_hours / total) / (t.nominal_gpus / r.nominal_gpus)
        for t in _teams(r, goal.team)
        if t.jobs and t.nominal_gpus and r.nominal_gpus and total and (t.waits and t.waits[-1] > 0)
    ]
    return min(ratios, default=math.inf)


def shortfall(goal: Goal, value: float) -> float:
    """How far a value misses the goal, relative to it (0: met). Comparable
    across goals, so that candidates that miss can be ranked."""
    if goal.at_most:
        if value <= goal.bound:
            return 0.0
        if math.isinf(value):
            return 1e6
        return (value - goal.bound) / max(goal.bound, 60.0)
    if value >= goal.bound:
        return 0.0
    return (goal.bound - value) / max(goal.bound, 1e-9)
