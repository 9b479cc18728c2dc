"""What ``kuota recommend`` shows: the finalists' table, the Pareto front
(GPUs against the worst team's p95 wait) as an SVG plot, the HTML report
(the simulate report of the winner beside the base, with the plot and the
table first) and the JSON of every evaluation."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape
from typing import Any

from rich.table import Table

from kuota.sim.html import PALETTE, render_html
from kuota.sim.recommend_eval import Score, finite
from kuota.sim.recommend_goals import Goal
from kuota.sim.recommend_search import SearchResult
from kuota.sim.recommend_space import Candidate
from kuota.sim.report import fmt_seconds
from kuota.sim.svg_chart import Series, line_chart

__all__ = ["finalists_table", "pareto_svg", "report_html", "search_json"]


def _wait(s: float) -> str:
    return "never" if math.isinf(s) else fmt_seconds(s)


def _ordered(res: SearchResult) -> list[Score]:
    return sorted(res.finals, key=lambda s: (not s.met, s.gpus, s.p95_wait, s.candidate))


def finalists_table(res: SearchResult, goals: Sequence[Goal], cands: Sequence[Candidate]) -> Table:
    summary = {c.name: c.summary for c in cands}
    t = Table(title=f"Finalists, each replayed on all {res.plan.total_rows:,} jobs")
    t.add_column("design")
    t.add_column("GPUs", justify="right")
    for g in goals:
        t.add_column(g.text, justify="right")
    t.add_column("p95 wait (worst team)", justify="right")
    t.add_column("utilization", justify="right")
    t.add_column("preemptions", justify="right")
    t.add_column("goals")
    t.add_column("quotas")
    for s in _ordered(res):
        mark = "met" if s.met else "missed"
        if res.winner is not None and s.candidate == res.winner.candidate:
            mark = "met: recommended"
        t.add_row(
            s.candidate,
            f"{s.gpus:g}",
            *(g.shown(v) for g, v in zip(goals, s.values, strict=True)),
            _wait(s.p95_wait),
            f"{s.utilization:.0%}" if s.utilization is not None else "-",
            str(s.preemptions),
            mark,
            summary.get(s.candidate, ""),
        )
    return t


def pareto_svg(res: SearchResult) -> str:
    """GPUs against the worst team's p95 wait: every evaluation as a dot (one
    colour per slice), the full replays' front as a line."""
    series: list[Series] = []
    allx: list[float] = []
    hidden = 0

    def points(scores: Sequence[Score]) -> list[tuple[float, float]]:
        nonlocal hidden
        out = []
        for s in scores:
            if math.isinf(s.p95_wait):
                hidden += 1
                continue
            out.append((s.gpus, s.p95_wait / 3600))
            allx.append(s.gpus)
        return sorted(out)

    for r, scores in enumerate(res.rungs):
        rows = scores[0].rows if scores else 0
        series.append(
            Series(
                f"first {rows:,} jobs",
                points(scores),
                PALETTE[(r + 1) % len(PALETTE)] + "",
                step=False,
                line=False,
                marker=3.0,
            )
        )
    series.append(
        Series(
            f"all {res.plan.total_rows:,} jobs",
            points(res.finals),
            PALETTE[0],
            step=False,
            line=False,
            marker=5.0,
        )
    )
    front = [(s.gpus, s.p95_wait / 3600) for s in res.front if not math.isinf(s.p95_wait)]
    series.append(Series("Pareto front (all jobs)", front, PALETTE[0], step=True, width=1.5))
    if res.winner is not None and not math.isinf(res.winner.p95_wait):
        w = res.winner
        series.append(
            Series(
                f"recommended: {w.candidate}",
                [(w.gpus, w.p95_wait / 3600)],
                PALETTE[2],
                step=False,
                line=False,
                marker=7.0,
            )
        )
    lo, hi = (min(allx), max(allx)) if allx else (0.0, 1.0)
    pad = max((hi - lo) * 0.05, 1.0)
    title = "GPUs against p95 wait"
    if hidden:
        title += f" ({hidden} evaluations with jobs never admitted not shown)"
    return line_chart(
        title,
        "nominal GPU quota (GPUs)",
        "worst team's p95 wait (hours)",
        series,
        x_range=(max(0.0, lo - pad), hi + pad),
    )


def _finals_html(res: SearchResult, goals: Sequence[Goal], cands: Sequence[Candidate]) -> str:
    summary = {c.name: c.summary for c in cands}
    head = ["design", "GPUs", *(g.text for g in goals), "p95 wait (worst)", "goals", "quotas"]
    rows = []
    for s in _ordered(res):
        cells = [
            s.candidate,
            f"{s.gpus:g}",
            *(g.shown(v) for g, v in zip(goals, s.values, strict=True)),
            _wait(s.p95_wait),
            "met" if s.met else "missed",
            summary.get(s.candidate, ""),
        ]
        rows.append("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in cells) + "</tr>")
    return (
        "<table><tr>"
        + "".join(f"<th>{escape(h)}</th>" for h in head)
        + "</tr>"
        + "".join(rows)
        + "</table>"
    )


def report_html(
    res: SearchResult,
    goals: Sequence[Goal],
    cands: Sequence[Candidate],
    trace_path: str,
    trace_rows: int,
    trace_span_s: float,
) -> str:
    """The simulate report of the recommended design beside the base (or of
    the finalists when none met the goals), the search first."""
    base = next((s for s in res.finals if s.candidate == "base"), None)
    shown = [s for s in (res.winner, base) if s is not None]
    if res.winner is None or res.winner.candidate == "base":
        shown = list(res.finals)
    results = []
    for s in dict.fromkeys(shown):
        assert s.result is not None
        s.result.trace = trace_path
        results.append(s.result)
    answer = (
        f"<p><strong>Recommended: {escape(res.winner.candidate)}</strong>, "
        f"{res.winner.gpus:g} GPUs of nominal quota, meets every goal "
        f"({escape(', '.join(g.text for g in goals))}) on the whole trace.</p>"
        if res.winner is not None
        else "<p><strong>No finalist met every goal on the whole trace</strong> "
        f"({escape(', '.join(g.text for g in goals))}).</p>"
    )
    preface = (
        "<section><h2>Search</h2>"
        + answer
        + f'<p class="meta">{sum(len(r) for r in res.rungs)} slice evaluations in '
        f"{len(res.rungs)} rounds of successive halving, then {len(res.finals)} full replays; "
        f"{res.plan.cost:.1f} full replays' worth of jobs.</p>"
        + f"<figure>{pareto_svg(res)}<figcaption>Each dot is one design replayed on the "
        "trace's first jobs (one colour per slice) or on all of them; the line joins the full "
        "replays that no other beats on both GPUs and wait.</figcaption></figure>"
        + _finals_html(res, goals, cands)
        + "</section>"
    )
    return render_html(results, trace_rows, trace_span_s, title="kuota recommend", preface=preface)


def _score_json(s: Score) -> dict[str, Any]:
    return {
        "design": s.candidate,
        "gpus": s.gpus,
        "jobs": s.rows,
        "values": [finite(v) for v in s.values],
        "met": s.met,
        "shortfall": round(s.shortfall, 6),
        "p95_wait_s": finite(s.p95_wait),
        "utilization": round(s.utilization, 4) if s.utilization is not None else None,
        "preemptions": s.preemptions,
    }


def search_json(
    res: SearchResult, goals: Sequence[Goal], cands: Sequence[Candidate]
) -> dict[str, Any]:
    return {
        "goals": [g.text for g in goals],
        "recommended": res.winner.candidate if res.winner is not None else None,
        "candidates": {c.name: {"gpus": c.gpus, "quotas": c.summary} for c in cands},
        "rungs": [[_score_json(s) for s in r] for r in res.rungs],
        "finals": [_score_json(s) for s in res.finals],
        "pareto_front": [s.candidate for s in res.front],
        "cost_full_replays": round(res.plan.cost, 3),
    }
