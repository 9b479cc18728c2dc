"""``kuota recommend``'s search: successive halving on trace slices, then
full replays of the finalists.

Rung 0 replays every candidate on the trace's first jobs (a slice: the
trace's first N rows in submission order, so that each slice is the start
of the full replay); each later rung keeps the better half and doubles the
slice, so every rung costs about the same. "Better": meeting the goals on
the slice, cheapest first, then missing them, nearest first. The
finalists, and the base for comparison, are then replayed on the whole
trace; the answer is the cheapest that meets every goal there.

The budget is counted in full replays of the trace: the finals take one
each, the slices' lengths share the rest.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from kuota.sim.recommend_eval import Context, Score, Task
from kuota.sim.recommend_pool import Runner
from kuota.sim.recommend_space import Candidate
from kuota.sim.trace import JOB_COLUMNS, Trace

__all__ = ["SearchPlan", "SearchResult", "pareto_front", "plan_search", "search", "slice_csv"]

MIN_ROWS = 10  # a shorter first slice says nothing


class PlanError(ValueError):
    """A budget that cannot hold the search asked for."""


@dataclass(frozen=True)
class SearchPlan:
    counts: tuple[int, ...]  # candidates per slice rung
    rows: tuple[int, ...]  # jobs per slice rung
    finalists: int
    total_rows: int

    @property
    def cost(self) -> float:
        """Jobs replayed, in full replays of the trace (the finals and the base included)."""
        sliced = sum(c * r for c, r in zip(self.counts, self.rows, strict=True))
        return sliced / self.total_rows + self.finalists + 1


def plan_search(candidates: int, finalists: int, budget: float, total_rows: int) -> SearchPlan:
    """Rungs for ``candidates`` halved down to ``finalists`` within ``budget``
    full replays (the finalists' and the base's full replays come first)."""
    counts: list[int] = []
    c = candidates
    while c > finalists:
        counts.append(c)
        c = max(finalists, math.ceil(c / 2))
    finals = min(finalists, candidates)
    left = budget - finals - 1
    if left <= 0 and counts:
        raise PlanError(
            f"--budget {budget:g}: the {finals} finalists' and the base's full replays alone "
            f"take {finals + 1}; raise --budget or lower --finalists"
        )
    weight = sum(n * 2**r for r, n in enumerate(counts))
    f0 = left / weight if weight else 0.0
    rows = tuple(min(total_rows, max(1, round(f0 * 2**r * total_rows))) for r in range(len(counts)))
    if rows and rows[0] < min(MIN_ROWS, total_rows):
        raise PlanError(
            f"--budget {budget:g}: the first slice would hold {rows[0]} of the trace's "
            f"{total_rows} jobs for {candidates} candidates; raise --budget or lower --candidates"
        )
    return SearchPlan(tuple(counts), rows, finals, total_rows)


def slice_csv(trace: Trace, rows: int) -> str:
    """The trace's first ``rows`` jobs in submission order, as a trace file."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(JOB_COLUMNS)
    for i, r in enumerate(trace):
        if i >= rows:
            break
        w.writerow(
            (
                r.job_id,
                r.submit_s,
                r.duration_s,
                r.team,
                r.user,
                r.gpus,
                r.gpu_model,
                r.cpus,
                r.memory_mib,
                r.pods,
                r.status,
            )
        )
    return buf.getvalue()


def _dominates(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return all(x <= y for x, y in zip(a, b, strict=True)) and a != b


def promote(scores: Sequence[Score], keep: int) -> list[Score]:
    """The designs that met the goals on the slice, cheapest first, then
    those that missed, nearest first. A longer slice only lengthens the
    queues, so a design that misses on a slice misses on the trace: cheap
    designs go on only while they meet the goals (on openb, ranking by GPUs
    first sent three designs of 16-24 GPUs that missed by weeks to the
    finals)."""
    order = sorted(
        scores,
        key=lambda s: (
            (0, s.gpus, s.p95_wait, s.candidate) if s.met else (1, s.shortfall, s.gpus, s.candidate)
        ),
    )
    return order[:keep]


def pareto_front(scores: Sequence[Score]) -> list[Score]:
    """The scores no other beats on both GPUs and p95 wait, by GPUs."""
    pts = [(s.gpus, s.p95_wait) for s in scores]
    front = [
        s
        for i, s in enumerate(scores)
        if not any(_dominates(pts[j], pts[i]) for j in range(len(scores)))
    ]
    return sorted(front, key=lambda s: (s.gpus, s.p95_wait, s.candidate))


@dataclass
class SearchResult:
    plan: SearchPlan
    rungs: list[list[Score]]  # every slice evaluation, rung by rung
    finals: list[Score]  # full replays: the finalists, then the base
    winner: Score | None
    front: list[Score] = field(default_factory=list)

    @property
    def cpu_s(self) -> float:
        return sum(s.cpu_s for r in self.rungs for s in r) + sum(s.cpu_s for s in self.finals)


def search(
    cands: Sequence[Candidate],
    trace: Trace,
    ctx: Context,
    runner: Runner,
    plan: SearchPlan,
    started: Callable[[str, int], None] | None = None,
    done: Callable[[Score], None] | None = None,
) -> SearchResult:
    """Run the plan; ``started(what, tasks)`` before each rung, ``done`` after each evaluation."""
    by_name = {c.name: c for c in cands}
    yamls = {c.name: c.objects_yaml() for c in cands}

    def tasks(names: Sequence[str], rung: int, rows: int, keep: bool) -> list[Task]:
        text = slice_csv(trace, rows)
        return [
            Task(n, by_name[n].gpus, yamls[n], rung, rows, text, keep_result=keep) for n in names
        ]

    alive = [c.name for c in cands]
    rungs: list[list[Score]] = []
    for r, (count, rows) in enumerate(zip(plan.counts, plan.rows, strict=True)):
        alive = alive[:count]
        if started is not None:
            started(f"rung {r + 1}: {len(alive)} designs on the first {rows:,} jobs", len(alive))
        scores = runner.run(ctx, tasks(alive, r, rows, False), done)
        rungs.append(scores)
        nxt = plan.counts[r + 1] if r + 1 < len(plan.counts) else plan.finalists
        alive = [s.candidate for s in promote(scores, nxt)]
    finalists = alive[: plan.finalists]
    names = finalists + ([] if "base" in finalists else ["base"])
    if started is not None:
        started(f"finals: {len(names)} designs on all {plan.total_rows:,} jobs", len(names))
    finals = runner.run(ctx, tasks(names, len(plan.counts), plan.total_rows, True), done)
    met = [s for s in finals if s.met]
    winner = min(met, key=lambda s: (s.gpus, s.p95_wait, s.candidate)) if met else None
    return SearchResult(plan, rungs, finals, winner, pareto_front(finals))
