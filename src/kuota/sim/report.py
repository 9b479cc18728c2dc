"""What a trace replay did to each team, measured as it runs.

:class:`SimRecorder` extends the embedded control plane's
:class:`~kuota.embedded.run_report.Recorder` (per-team admissions, finishes,
waits, preemptions) for traces: teams are the trace's, GPUs are counted in
whole and milli-GPUs alike, each team's GPU-hours come from its pods' run
intervals, borrowed capacity is tracked per ClusterQueue only when its
usage changes, and utilization and queue lengths are kept as time series.
Every update is O(1) or O(teams of one ClusterQueue) per event.

Definitions (also in the HTML report):

* wait: creation of the Job (its trace ``submit_s``) to its first quota
  reservation (Kueue's admission); percentiles are nearest-rank over the
  admitted jobs; start wait: creation to its first pod running (longer when
  the nodes, not the quota, are what is short);
* GPU-hours: GPUs held by the team's running pods x time, as charged
  (``round-up`` charges a sharing pod a whole GPU);
* borrowed: GPUs a ClusterQueue uses beyond its nominal quota, shared among
  its teams by their usage; borrowed share = borrowed / used GPU-hours;
* fairness: the team's share of all GPU-hours over its nominal share (its
  ClusterQueue's nominal GPU quota over all ClusterQueues', split evenly
  among the teams mapped to that ClusterQueue); 1 is exactly its share;
* utilization: GPUs held by running pods over the nodes' GPUs.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from rich.table import Table

from kuota.api.conditions import true_since
from kuota.cluster.nodeutil import node_allocatable, pod_resource_requests
from kuota.embedded.run_report import Recorder, TeamStats
from kuota.quota.requests import resource_value
from kuota.runtime.informer import key_of
from kuota.runtime.manager import Manager
from kuota.scheduler.admission.admission_core import AdmissionCore
from kuota.sim import replay_series
from kuota.sim.budget_burn import budget_json
from kuota.sim.mapping import GPU

if TYPE_CHECKING:
    from kuota.sim.simulate import Plan

__all__ = [
    "DesignResult",
    "SimRecorder",
    "TeamResult",
    "build_result",
    "compare_table",
    "fmt_seconds",
    "nearest_rank",
    "report_json",
    "summary_table",
    "wait_stats",
]


# ---------------------------------------------------------------------- statistics
def nearest_rank(sorted_values: list[float], p: float) -> float | None:
    """The nearest-rank percentile ``p`` (0-100] of already sorted values."""
    if not sorted_values:
        return None
    k = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[min(k, len(sorted_values)) - 1]


def wait_stats(sorted_values: list[float]) -> dict[str, float | None]:
    if not sorted_values:
        return {"mean": None, "p50": None, "p95": None, "max": None}
    return {
        "mean": _r(sum(sorted_values) / len(sorted_values), 3),
        "p50": _r(nearest_rank(sorted_values, 50), 3),
        "p95": _r(nearest_rank(sorted_values, 95), 3),
        "max": _r(sorted_values[-1], 3),
    }


def _r(x: float | None, digits: int = 4) -> float | None:
    if x is None:
        return None
    v = round(x, digits)
    return 0.0 if v == 0 else v


def natural_key(text: str) -> list[Any]:
    """``app_2`` before ``app_10``."""
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text)]


def fmt_gpu_hours(h: float) -> str:
    return f"{h:,.1f}" if h >= 10 or h == 0 else f"{h:.3g}"


def fmt_seconds(s: float | None) -> str:
    if s is None:
        return "-"
    if s < 120:
        return f"{s:.0f}s"
    if s < 7200:
        return f"{s / 60:.1f}m"
    if s < 172800:
        return f"{s / 3600:.1f}h"
    return f"{s / 86400:.1f}d"


# ---------------------------------------------------------------------- the recorder
def _owner_job(obj: Any) -> str | None:
    for ref in obj.metadata.owner_references or ():
        if ref.kind == "Job":
            return f"{obj.metadata.namespace}/{ref.name}"
    return None


class SimRecorder(Recorder):
    """The embedded Recorder, per trace team, with GPU-hours, borrowing and
    time series. GPU amounts are kept as integer milli-GPUs."""

    def __init__(
        self,
        mgr: Manager,
        core: AdmissionCore,
        job_team: dict[str, str],
        milli_resource: str,
        job_created: dict[str, datetime] | None = None,
    ) -> None:
        super().__init__(mgr, core)
        self.job_team = job_team
        self.job_created = job_created or {}
        self.start_waits: dict[str, list[float]] = {}  # team -> creation to first pod running
        self.weights = {GPU: 1000, milli_resource: 1}  # milli-GPUs per unit
        self.t0 = mgr.clock.now()
        self.finished_jobs = 0
        self.running_milli = 0
        self.capacity_milli = 0
        self.team_gpu_seconds: dict[str, float] = {}  # milli-GPU-seconds
        self._pods: dict[str, tuple[str | None, int, datetime]] = {}
        self._pending: dict[str, str] = {}
        self.pending_by_team: dict[str, int] = {}
        self._dirty_pending: set[str] = set()
        self._held: dict[str, tuple[str, str, int]] = {}  # workload -> (cq, team, milli)
        self._cq_team: dict[str, dict[str, int]] = {}
        self._dirty_cqs: set[str] = set()
        self._cq_rates: dict[str, dict[str, float]] = {}  # cq -> team -> borrowed milli
        self._rate: dict[str, float] = {}
        self._since: dict[str, datetime] = {}
        self.util_series: list[tuple[float, float, float]] = []
        self.pending_series: list[tuple[float, int]] = []
        self.team_pending_series: dict[str, list[tuple[float, int]]] = {}
        self.team_gpu_series: dict[str, list[tuple[float, float]]] = {}  # GPUs in use
        self._team_running: dict[str, int] = {}  # milli-GPUs
        self._dirty_use: set[str] = set()
        self._last_util: tuple[int, int] | None = None
        self._pending_total = 0
        self._last_pending: int | None = None
        self._last_finished = 0
        # The last instant the trace's jobs changed (controllers' own timers may
        # keep the run going a while after the last job ends).
        self.last_change = 0.0

    def elapsed(self) -> float:
        return (self.mgr.clock.now() - self.t0).total_seconds()

    def team(self, wl: Any) -> str:  # type: ignore[override]
        job = _owner_job(wl)
        return self.job_team.get(job, "") if job is not None else ""

    def _gpu_milli(self, resources: dict[str, int]) -> int:
        return sum(v * self.weights[r] for r, v in resources.items() if r in self.weights)

    # -------------------------------------------------------------- events
    def _workload(self, etype: str, wl: Any, old: Any | None) -> None:
        team = self.team(wl)
        if not team:
            return  # not one of the trace's jobs
        finished_before = self.teams.get(team, TeamStats()).finished
        super()._workload(etype, wl, old)
        if self.teams[team].finished != finished_before:
            self.finished_jobs += 1
        key = key_of(wl)
        alive = etype != "DELETED"
        reserved = alive and true_since(wl, "QuotaReserved") is not None
        finished = alive and true_since(wl, "Finished") is not None
        pending = alive and not reserved and not finished
        if pending != (key in self._pending):
            if pending:
                self._pending[key] = team
                delta = 1
            else:
                del self._pending[key]
                delta = -1
            self.pending_by_team[team] = self.pending_by_team.get(team, 0) + delta
            self._pending_total += delta
            self._dirty_pending.add(team)
        held: tuple[str, str, int] | None = None
        adm = wl.status.admission if wl.status is not None else None
        if reserved and not finished and adm is not None:
            milli = 0
            for psa in adm.pod_set_assignments:
                for r, q in (psa.resource_usage or {}).items():
                    if r in self.weights:
                        milli += resource_value(r, q) * self.weights[r]
            held = (adm.cluster_queue, team, milli)
        prev = self._held.get(key)
        if prev != held:
            if prev is not None:
                self._cq_team[prev[0]][prev[1]] -= prev[2]
                self._dirty_cqs.add(prev[0])
                del self._held[key]
            if held is not None:
                per = self._cq_team.setdefault(held[0], {})
                per[team] = per.get(team, 0) + held[2]
                self._dirty_cqs.add(held[0])
                self._held[key] = held
        if not alive and true_since(wl, "Finished") is not None:
            # A finished job deleted (its time to live after finishing) is
            # never seen again: forget its team, as a long trace's go by.
            job = _owner_job(wl)
            if job is not None:
                self.job_team.pop(job, None)

    def _pod(self, etype: str, pod: Any, old: Any | None) -> None:
        key = key_of(pod)
        running = etype != "DELETED" and pod.status is not None and pod.status.phase == "Running"
        if running and key not in self._pods:
            job = _owner_job(pod)
            team = self.job_team.get(job) if job is not None else None
            milli = self._gpu_milli(pod_resource_requests(pod))
            now = self.mgr.clock.now()
            self._pods[key] = (team, milli, now)
            self.running_milli += milli
            if team is not None and milli:
                self._team_running[team] = self._team_running.get(team, 0) + milli
                self._dirty_use.add(team)
            if team is not None:
                # The job's first pod to run: its creation time is taken (a
                # long trace's are kept only until used), so later pods skip.
                created = self.job_created.pop(job, None)  # type: ignore[arg-type]
                if created is not None:
                    waits = self.start_waits.setdefault(team, [])
                    waits.append((now - created).total_seconds())
        elif not running and key in self._pods:
            team, milli, start = self._pods.pop(key)
            self.running_milli -= milli
            if team is not None and milli:
                self._team_running[team] -= milli
                self._dirty_use.add(team)
            if team is not None:
                dt = (self.mgr.clock.now() - start).total_seconds()
                self.team_gpu_seconds[team] = self.team_gpu_seconds.get(team, 0.0) + milli * dt

    def _node(self, etype: str, node: Any, old: Any | None) -> None:
        if old is not None:
            self.capacity_milli -= self._gpu_milli(node_allocatable(old))
        if etype != "DELETED":
            self.capacity_milli += self._gpu_milli(node_allocatable(node))

    # -------------------------------------------------------------- instants
    def sample(self) -> None:
        """Once per settled instant (the manager's on_round)."""
        now = self.mgr.clock.now()
        if self._last is None:
            self.first = now
        self._last = now
        replay_series.sample(self, self.core.tree, now, (now - self.t0).total_seconds())

    def close(self) -> None:
        """Count what still runs up to now (a run stopped by ``--until``)."""
        now = self.mgr.clock.now()
        replay_series.flush_rates(self, now)
        for key, (team, milli, start) in list(self._pods.items()):
            if team is not None:
                dt = (now - start).total_seconds()
                self.team_gpu_seconds[team] = self.team_gpu_seconds.get(team, 0.0) + milli * dt
            self._pods[key] = (team, milli, now)


# ---------------------------------------------------------------------- results
@dataclass
class TeamResult:
    team: str
    queue: str
    cluster_queue: str
    nominal_gpus: float
    jobs: int
    submitted: int = 0
    admitted: int = 0
    finished: int = 0
    pending: int = 0
    waits: list[float] = field(default_factory=list)  # sorted, seconds
    start_waits: list[float] = field(default_factory=list)  # sorted: to the first pod running
    gpu_hours: float = 0.0
    borrowed_gpu_hours: float = 0.0
    preemptions: int = 0


@dataclass
class DesignResult:
    name: str
    source: str
    trace: str
    policy: str
    fractional: str
    gpu_resource: str
    nodes_from: str
    stopped: str
    end_s: float
    admissions: int
    gpu_capacity: float  # GPUs on the nodes at the end
    nominal_gpus: float  # nominal GPU quota over all ClusterQueues
    utilization: float | None
    teams: dict[str, TeamResult]
    util_series: list[tuple[float, float, float]]
    pending_series: list[tuple[float, int]]
    team_pending_series: dict[str, list[tuple[float, int]]]
    team_gpu_series: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    submit_s: list[float] = field(default_factory=list)  # sorted: each job's creation
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    budgets: list[Any] = field(default_factory=list)  # sim.budget_burn.BudgetResult
    # "fast" (the admission core alone) or "full: <why>" (kuota.sim.replay_path)
    replay: str = "full"

    @property
    def overall(self) -> TeamResult:
        t = TeamResult("overall", "", "", self.nominal_gpus, 0)
        waits: list[float] = []
        starts: list[float] = []
        for x in self.teams.values():
            t.jobs += x.jobs
            t.submitted += x.submitted
            t.admitted += x.admitted
            t.finished += x.finished
            t.pending += x.pending
            t.gpu_hours += x.gpu_hours
            t.borrowed_gpu_hours += x.borrowed_gpu_hours
            t.preemptions += x.preemptions
            waits += x.waits
            starts += x.start_waits
        t.waits = sorted(waits)
        t.start_waits = sorted(starts)
        return t

    @property
    def quota_utilization(self) -> float | None:
        if not self.nominal_gpus or not self.end_s:
            return None
        return self.overall.gpu_hours * 3600 / (self.nominal_gpus * self.end_s)


def build_result(
    plan: Plan, rec: SimRecorder, *, stopped: str, admissions: int, errors: list[str]
) -> DesignResult:
    teams: dict[str, TeamResult] = {}
    for name in sorted(plan.teams, key=natural_key):
        tp = plan.teams[name]
        s = rec.teams.get(name, TeamStats())
        teams[name] = TeamResult(
            team=name,
            queue=tp.target.key,
            cluster_queue=tp.cluster_queue,
            nominal_gpus=tp.nominal_gpus,
            jobs=tp.jobs,
            submitted=s.workloads,
            admitted=s.admitted,
            finished=s.finished,
            pending=rec.pending_by_team.get(name, 0),
            waits=sorted(s.waits),
            start_waits=sorted(rec.start_waits.get(name, ())),
            gpu_hours=rec.team_gpu_seconds.get(name, 0.0) / 1000 / 3600,
            borrowed_gpu_hours=s.borrowed_gpu_seconds / 3600,
            preemptions=s.preempted,
        )
    end = rec.elapsed() if stopped == "until" else rec.last_change
    warnings = list(plan.warnings)
    waiting = sum(rec.pending_by_team.values())
    if waiting and stopped == "idle":
        what = "job still waiting" if waiting == 1 else "jobs still waiting"
        warnings.append(
            f"{waiting} {what} when nothing more could happen (asking for more than "
            "their queue can ever give?)"
        )
    return DesignResult(
        name=plan.design.name,
        source=plan.design.source,
        trace=plan.trace.path,
        policy=plan.mapping.describe(),
        fractional=plan.mapping.fractional,
        gpu_resource=plan.mapping.gpu_resource,
        nodes_from=plan.nodes_from,
        stopped=stopped,
        end_s=end,
        admissions=admissions,
        gpu_capacity=rec.capacity_milli / 1000,
        nominal_gpus=plan.nominal_gpus,
        utilization=utilization(rec.util_series, end),
        teams=teams,
        util_series=rec.util_series,
        pending_series=rec.pending_series,
        team_pending_series=rec.team_pending_series,
        team_gpu_series=rec.team_gpu_series,
        submit_s=sorted(plan.submit_s),
        warnings=warnings,
        errors=errors,
    )


def utilization(series: list[tuple[float, float, float]], end: float) -> float | None:
    """GPU-seconds used over GPU-seconds offered, from the step series
    (time, used, capacity) up to ``end``."""
    used = offered = 0.0
    for i, (t, u, c) in enumerate(series):
        nxt = series[i + 1][0] if i + 1 < len(series) else end
        dt = max(0.0, min(nxt, end) - t)
        used += u * dt
        offered += c * dt
    return used / offered if offered else None


# ---------------------------------------------------------------------- JSON
def _team_json(t: TeamResult, total_gpu_hours: float, total_nominal: float) -> dict[str, Any]:
    use_share = t.gpu_hours / total_gpu_hours if total_gpu_hours else None
    nominal_share = t.nominal_gpus / total_nominal if total_nominal else None
    fairness = use_share / nominal_share if use_share is not None and nominal_share else None
    return {
        "jobs": t.jobs,
        "submitted": t.submitted,
        "admitted": t.admitted,
        "finished": t.finished,
        "pending": t.pending,
        "gpu_hours": _r(t.gpu_hours),
        "borrowed_gpu_hours": _r(t.borrowed_gpu_hours),
        "borrowed_share": _r(t.borrowed_gpu_hours / t.gpu_hours) if t.gpu_hours else None,
        "wait_s": wait_stats(t.waits),
        "start_wait_s": wait_stats(t.start_waits),
        "preemptions": t.preemptions,
        "queue": t.queue,
        "cluster_queue": t.cluster_queue,
        "nominal_gpus": _r(t.nominal_gpus),
        "nominal_share": _r(nominal_share),
        "use_share": _r(use_share),
        "fairness": _r(fairness),
    }


def fairness_index(r: DesignResult) -> float | None:
    """Jain's index of the teams' use over their nominal share (1: every team
    used exactly its share, 1/n: one team used everything)."""
    total = r.overall.gpu_hours
    xs = [
        (t.gpu_hours / total) / (t.nominal_gpus / r.nominal_gpus)
        for t in r.teams.values()
        if t.jobs and t.nominal_gpus and total and r.nominal_gpus
    ]
    sq = sum(x * x for x in xs)
    return sum(xs) ** 2 / (len(xs) * sq) if sq else None


def design_json(r: DesignResult) -> dict[str, Any]:
    overall = r.overall
    total = overall.gpu_hours
    o = _team_json(overall, total, r.nominal_gpus)
    for k in ("queue", "cluster_queue", "nominal_share", "use_share", "fairness"):
        o.pop(k)
    return {
        "design": r.name,
        "source": r.source,
        "trace": r.trace,
        "fractional_gpus": r.fractional,
        "gpu_resource": r.gpu_resource,
        "policy": r.policy,
        "nodes_from": r.nodes_from,
        "replay": r.replay.partition(":")[0],
        "stopped": r.stopped,
        "simulated_s": _r(r.end_s, 3),
        "jobs": overall.jobs,
        "submitted": overall.submitted,
        "admitted": overall.admitted,
        "finished": overall.finished,
        "pending": overall.pending,
        "admissions": r.admissions,
        "gpu_capacity": _r(r.gpu_capacity),
        "nominal_gpus": _r(r.nominal_gpus),
        "utilization": _r(r.utilization),
        "quota_utilization": _r(r.quota_utilization),
        "fairness_index": _r(fairness_index(r)),
        "teams": {name: _team_json(t, total, r.nominal_gpus) for name, t in r.teams.items()},
        "overall": o,
        "warnings": r.warnings,
        "errors": r.errors,
    } | ({"budgets": [budget_json(b) for b in r.budgets]} if r.budgets else {})


def report_json(results: list[DesignResult], compare: bool) -> dict[str, Any]:
    """One design: its report. With ``--compare``: an object keyed by design
    name, in the order the designs were given."""
    if not compare:
        return design_json(results[0])
    return {r.name: design_json(r) for r in results}


# ---------------------------------------------------------------------- terminal
def _top_teams(r: DesignResult, limit: int) -> tuple[list[TeamResult], list[TeamResult]]:
    ranked = sorted(r.teams.values(), key=lambda t: (-t.gpu_hours, -t.jobs, natural_key(t.team)))
    shown = sorted(ranked[:limit], key=lambda t: natural_key(t.team))
    return shown, ranked[limit:]


def summary_table(r: DesignResult, limit: int = 15) -> Table:
    util = f"{r.utilization:.1%}" if r.utilization is not None else "-"
    qutil = f"{r.quota_utilization:.1%}" if r.quota_utilization is not None else "-"
    fi = fairness_index(r)
    title = (
        f"{r.name}: {fmt_seconds(r.end_s)} simulated, stopped: {r.stopped}; "
        f"GPU utilization {util} of {r.gpu_capacity:g} GPUs (nodes from {r.nodes_from}), "
        f"{qutil} of {r.nominal_gpus:g} nominal; fairness index "
        + (f"{fi:.2f}" if fi is not None else "-")
        + f"\nGPUs: {r.policy}"
    )
    t = Table(title=title, title_justify="left")
    for col in (
        "TEAM",
        "QUEUE",
        "JOBS",
        "FINISHED",
        "GPU-H",
        "MEAN WAIT",
        "P50",
        "P95",
        "MAX",
        "BORROWED",
        "PREEMPTED",
        "USE/NOMINAL",
    ):
        t.add_column(col, justify="left" if col in ("TEAM", "QUEUE") else "right")
    total = r.overall.gpu_hours

    def row(x: TeamResult, name: str, queue: str) -> None:
        w = wait_stats(x.waits)
        fair = "-"
        if total and x.nominal_gpus and r.nominal_gpus and name != "overall":
            fair = f"{(x.gpu_hours / total) / (x.nominal_gpus / r.nominal_gpus):.2f}"
        t.add_row(
            name,
            queue,
            str(x.jobs),
            str(x.finished),
            fmt_gpu_hours(x.gpu_hours),
            fmt_seconds(w["mean"]),
            fmt_seconds(w["p50"]),
            fmt_seconds(w["p95"]),
            fmt_seconds(w["max"]),
            f"{x.borrowed_gpu_hours / x.gpu_hours:.0%}" if x.gpu_hours else "-",
            str(x.preemptions),
            fair,
        )

    shown, rest = _top_teams(r, limit)
    for x in shown:
        row(x, x.team, x.queue)
    if rest:
        row(combined(f"({len(rest)} more teams)", rest), f"({len(rest)} more teams)", "")
    row(r.overall, "overall", "")
    return t


def combined(name: str, teams: list[TeamResult]) -> TeamResult:
    """Several teams as one row: their jobs, GPU-hours, quota and waits together."""
    agg = TeamResult(name, "", "", 0.0, 0)
    waits: list[float] = []
    for x in teams:
        agg.jobs += x.jobs
        agg.finished += x.finished
        agg.gpu_hours += x.gpu_hours
        agg.borrowed_gpu_hours += x.borrowed_gpu_hours
        agg.preemptions += x.preemptions
        agg.nominal_gpus += x.nominal_gpus
        waits += x.waits
    agg.waits = sorted(waits)
    return agg


def compare_table(results: list[DesignResult], limit: int = 12) -> Table:
    """Per team, p95 wait and GPU-hours in each design, side by side."""
    t = Table(title="designs compared: p95 wait / mean wait / GPU-hours", title_justify="left")
    t.add_column("TEAM")
    for r in results:
        t.add_column(r.name, justify="right")
    shown, _ = _top_teams(results[0], limit)
    names = [x.team for x in shown]
    for name in [*names, "overall"]:
        cells = []
        for r in results:
            x = r.overall if name == "overall" else r.teams.get(name)
            if x is None:
                cells.append("-")
                continue
            w = wait_stats(x.waits)
            cells.append(f"{fmt_seconds(w['p95'])} / {fmt_seconds(w['mean'])} / {x.gpu_hours:,.0f}")
        t.add_row(name, *cells)
    t.add_row(
        "utilization",
        *[f"{r.utilization:.1%}" if r.utilization is not None else "-" for r in results],
    )
    t.add_row("preemptions", *[str(r.overall.preemptions) for r in results])
    return t
