"""The replay report's time series and borrowed GPU-seconds, measured once for
both replay paths: the full replay's recorder (``report.SimRecorder``) and the
fast replay's meter (``fast_meter.FastMeter``) keep the same counters, each
from its own events, and sample them here, so their reports are equal by
construction (tests/sim/test_fastreplay.py checks it end to end)."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from kuota.embedded.run_report import TeamStats
from kuota.quota.tree import QuotaTree


class Measured(Protocol):
    """The counters a replay's recorder keeps for the report."""

    teams: dict[str, TeamStats]
    weights: dict[str, int]  # milli-GPUs per unit of each GPU resource
    finished_jobs: int
    running_milli: int
    capacity_milli: int
    pending_by_team: dict[str, int]
    util_series: list[tuple[float, float, float]]
    pending_series: list[tuple[float, int]]
    team_pending_series: dict[str, list[tuple[float, int]]]
    team_gpu_series: dict[str, list[tuple[float, float]]]  # GPUs in use
    last_change: float
    _team_running: dict[str, int]  # milli-GPUs
    _dirty_use: set[str]
    _dirty_pending: set[str]
    _pending_total: int
    _cq_team: dict[str, dict[str, int]]  # cq -> team -> milli-GPUs held
    _dirty_cqs: set[str]
    _cq_rates: dict[str, dict[str, float]]  # cq -> team -> borrowed milli
    _rate: dict[str, float]
    _since: dict[str, datetime]
    _last_util: tuple[int, int] | None
    _last_pending: int | None
    _last_finished: int


def sample(m: Measured, tree: QuotaTree, now: datetime, t: float) -> None:
    """Once per settled instant (``t``: seconds since the replay's start)."""
    update_borrowing(m, tree, now)
    util = (m.running_milli, m.capacity_milli)
    if util != m._last_util:
        m.util_series.append((t, util[0] / 1000, util[1] / 1000))
        m._last_util = util
        m.last_change = t
    if m._dirty_use:
        for team in sorted(m._dirty_use):
            useries = m.team_gpu_series.setdefault(team, [])
            gpus = m._team_running[team] / 1000
            if not useries or useries[-1][1] != gpus:
                useries.append((t, gpus))
        m._dirty_use.clear()
    if m._dirty_pending:
        for team in sorted(m._dirty_pending):
            series = m.team_pending_series.setdefault(team, [])
            n = m.pending_by_team[team]
            if not series or series[-1][1] != n:
                series.append((t, n))
        m._dirty_pending.clear()
    if m._pending_total != m._last_pending:
        m.pending_series.append((t, m._pending_total))
        m._last_pending = m._pending_total
        m.last_change = t
    if m.finished_jobs != m._last_finished:
        m._last_finished = m.finished_jobs
        m.last_change = t


def update_borrowing(m: Measured, tree: QuotaTree, now: datetime) -> None:
    """Each changed ClusterQueue's borrowed milli-GPUs, shared among its teams
    by what each holds there; the rates change from now on."""
    if not m._dirty_cqs:
        return
    for cq in sorted(m._dirty_cqs):
        node = tree.cqs.get(cq)
        borrowed = 0
        if node is not None:
            for fr, used in node.usage.items():
                w = m.weights.get(fr[1])
                if w is None:
                    continue
                q = node.quotas.get(fr)
                borrowed += max(0, used - (q.nominal if q is not None else 0)) * w
        per = m._cq_team.get(cq, {})
        total = sum(per.values())
        new = (
            {team: borrowed * u / total for team, u in per.items() if u > 0}
            if borrowed > 0 and total > 0
            else {}
        )
        old = m._cq_rates.get(cq, {})
        for team in sorted(set(old) | set(new)):
            delta = new.get(team, 0.0) - old.get(team, 0.0)
            if delta:
                flush_rate(m, team, now)
                m._rate[team] = m._rate.get(team, 0.0) + delta
        m._cq_rates[cq] = new
    m._dirty_cqs.clear()


def flush_rate(m: Measured, team: str, now: datetime) -> None:
    """Add a team's borrowed GPU-seconds at its rate since the last change."""
    rate = m._rate.get(team, 0.0)
    since = m._since.get(team)
    if rate and since is not None:
        stats = m.teams.get(team)
        if stats is None:
            stats = m.teams[team] = TeamStats()
        stats.borrowed_gpu_seconds += rate / 1000 * (now - since).total_seconds()
    m._since[team] = now


def flush_rates(m: Measured, now: datetime) -> None:
    """Every team's borrowed GPU-seconds up to now (the replay's end)."""
    for team in sorted(m._rate):
        flush_rate(m, team, now)
