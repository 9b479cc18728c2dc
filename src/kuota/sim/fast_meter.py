"""What the fast replay measures, as :class:`kuota.sim.report.SimRecorder`
measures the full one, from the replay's own events instead of informer
events: per team submissions, first admissions and their waits, finishes,
preemptions, pending counts, GPU-seconds of running pods, borrowed
GPU-seconds per ClusterQueue, and the same time series, sampled once per
settled instant. Every figure is the full replay's (the equality test in
tests/sim/test_fastreplay.py holds the two to it)."""

from __future__ import annotations

from datetime import datetime

from kuota.embedded.run_report import TeamStats
from kuota.scheduler.admission.admission_core import AdmissionCore
from kuota.sim import replay_series
from kuota.sim.mapping import GPU

__all__ = ["FastMeter"]


class FastMeter:
    """The attributes ``kuota.sim.report.build_result`` reads of a recorder."""

    def __init__(self, core: AdmissionCore, t0: datetime, milli_resource: str) -> None:
        self.core = core
        self.t0 = t0
        self.now = t0
        self.weights = {GPU: 1000, milli_resource: 1}
        self.teams: dict[str, TeamStats] = {}
        self.start_waits: dict[str, list[float]] = {}
        self.pending_by_team: dict[str, int] = {}
        self.finished_jobs = 0
        self.running_milli = 0
        self.capacity_milli = 0
        self.team_gpu_seconds: dict[str, float] = {}
        self.util_series: list[tuple[float, float, float]] = []
        self.pending_series: list[tuple[float, int]] = []
        self.team_pending_series: dict[str, list[tuple[float, int]]] = {}
        self.team_gpu_series: dict[str, list[tuple[float, float]]] = {}
        self._team_running: dict[str, int] = {}
        self._dirty_use: set[str] = set()
        self._dirty_pending: set[str] = set()
        self._pending_total = 0
        self._cq_team: dict[str, dict[str, int]] = {}
        self._dirty_cqs: set[str] = set()
        self._cq_rates: dict[str, dict[str, float]] = {}
        self._rate: dict[str, float] = {}
        self._since: dict[str, datetime] = {}
        self._last_util: tuple[int, int] | None = None
        self._last_pending: int | None = None
        self._last_finished = 0
        self.last_change = 0.0

    def elapsed(self) -> float:
        return (self.now - self.t0).total_seconds()

    def _stats(self, team: str) -> TeamStats:
        s = self.teams.get(team)
        if s is None:
            s = self.teams[team] = TeamStats()
        return s

    # -------------------------------------------------------------- events
    def _pending(self, team: str, delta: int) -> None:
        self.pending_by_team[team] = self.pending_by_team.get(team, 0) + delta
        self._pending_total += delta
        self._dirty_pending.add(team)

    def submitted(self, team: str) -> None:
        self._stats(team).workloads += 1
        self._pending(team, 1)

    def reserved(self, team: str, cq: str, milli: int, wait: float | None) -> None:
        """Quota reserved; ``wait`` on the first time (creation to now)."""
        s = self._stats(team)
        if wait is not None:
            s.admitted += 1
            s.waits.append(wait)
        self._pending(team, -1)
        self._hold(cq, team, milli)

    def released(self, team: str, cq: str, milli: int, requeued: bool) -> None:
        """Quota given back: finished, or evicted (``requeued``: pending again)."""
        self._hold(cq, team, -milli)
        if requeued:
            self._pending(team, 1)

    def _hold(self, cq: str, team: str, milli: int) -> None:
        per = self._cq_team.get(cq)
        if per is None:
            per = self._cq_team[cq] = {}
        per[team] = per.get(team, 0) + milli
        self._dirty_cqs.add(cq)

    def finished(self, team: str) -> None:
        self._stats(team).finished += 1
        self.finished_jobs += 1

    def preempted(self, team: str, reason: str) -> None:
        s = self._stats(team)
        s.preempted += 1
        s.evictions["Preempted"] = s.evictions.get("Preempted", 0) + 1

    def pods_started(self, team: str, milli: int, first_wait: float | None) -> None:
        """``milli``: the GPUs of all its pods; ``first_wait``: its first start."""
        self.running_milli += milli
        if milli:
            self._team_running[team] = self._team_running.get(team, 0) + milli
            self._dirty_use.add(team)
        if first_wait is not None:
            self.start_waits.setdefault(team, []).append(first_wait)

    def pods_stopped(self, team: str, milli: int, seconds: float) -> None:
        self.running_milli -= milli
        if milli:
            self._team_running[team] -= milli
            self._dirty_use.add(team)
        self.team_gpu_seconds[team] = self.team_gpu_seconds.get(team, 0.0) + milli * seconds

    # -------------------------------------------------------------- instants
    def sample(self) -> None:
        """Once per settled instant, as SimRecorder.sample (one measure)."""
        now = self.now
        replay_series.sample(self, self.core.tree, now, (now - self.t0).total_seconds())

    def close(self, running: list[tuple[str, int, datetime]]) -> None:
        """Count what still runs up to now (``running``: team, milli, start)."""
        now = self.now
        replay_series.flush_rates(self, now)
        for team, milli, start in running:
            dt = (now - start).total_seconds()
            self.team_gpu_seconds[team] = self.team_gpu_seconds.get(team, 0.0) + milli * dt
