"""The self-contained HTML report of ``kuota simulate``: tables and plots as
inline SVG (drawn by ``kuota.sim.svg_chart``; no script, no stylesheet or
font from the network), so the file opens in any browser offline.

Plots: wait-time CDF per team, GPU utilization over time, queue length
over time, each team's use against its nominal share; with several designs
the designs are overlaid (and the per-team CDFs become small multiples, one
panel per team, one line per design).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Sequence
from html import escape
from typing import Any

from kuota.sim.report import (
    DesignResult,
    TeamResult,
    fairness_index,
    fmt_gpu_hours,
    fmt_seconds,
    natural_key,
    wait_stats,
)
from kuota.sim.svg_chart import Series, bar_chart, line_chart

__all__ = ["render_html"]

PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#b07aa1",
    "#9c755f",
    "#ff9da7",
    "#edc948",
    "#bab0ac",
)
DASHES = ("", "6 3", "2 2", "8 3 2 3")
MAX_TEAMS = 8  # lines per plot before the rest are folded into "other teams"
BUCKETS = 600  # a long time series is drawn as this many time-weighted means
CDF_POINTS = 300
LONG_TABLE = 25  # tables with more rows are folded
TOP_TEAMS = 12


_WAIT_TICKS = (
    (1, "1 s"),
    (10, "10 s"),
    (60, "1 min"),
    (600, "10 min"),
    (3600, "1 h"),
    (86400, "1 d"),
    (864000, "10 d"),
    (8640000, "100 d"),
)


def _time_unit(span_s: float) -> tuple[float, str]:
    if span_s <= 3 * 3600:
        return 60.0, "minutes"
    if span_s <= 4 * 86400:
        return 3600.0, "hours"
    return 86400.0, "days"


# ---------------------------------------------------------------------- series shaping
def _bucketed(
    points: list[tuple[float, float]], end: float, mean: bool
) -> list[tuple[float, float]]:
    """A step function as at most BUCKETS points: the time-weighted mean (or
    the maximum) of each equal interval of [first point, end]."""
    if len(points) <= 2 * BUCKETS or end <= points[0][0]:
        return points
    start = points[0][0]
    width = (end - start) / BUCKETS
    out: list[tuple[float, float]] = []
    i = 0
    for b in range(BUCKETS):
        lo, hi = start + b * width, start + (b + 1) * width
        while i + 1 < len(points) and points[i + 1][0] <= lo:
            i += 1
        j = i
        acc, peak = 0.0, points[i][1]
        while j < len(points) and points[j][0] < hi:
            seg_lo = max(lo, points[j][0])
            seg_hi = min(hi, points[j + 1][0]) if j + 1 < len(points) else hi
            acc += points[j][1] * max(0.0, seg_hi - seg_lo)
            peak = max(peak, points[j][1])
            j += 1
        out.append((lo, acc / width if mean else peak))
    return out


def _cdf_points(waits: list[float], lo: float, hi: float) -> list[tuple[float, float]]:
    """The empirical CDF (in %) of sorted waits at log-spaced positions."""
    n = len(waits)
    if not n:
        return []
    out = []
    a, b = math.log10(lo), math.log10(hi)
    for k in range(CDF_POINTS + 1):
        x = 10 ** (a + (b - a) * k / CDF_POINTS)
        out.append((x, 100.0 * bisect.bisect_right(waits, x) / n))
    return out


# ---------------------------------------------------------------------- the plots
def _teams_shown(
    r: DesignResult, by_use: bool = False
) -> tuple[list[TeamResult], list[TeamResult]]:
    """The teams drawn one by one (the most jobs, or the most GPU-hours) and
    the rest, drawn together."""

    def rank(t: TeamResult) -> tuple[Any, ...]:
        return (-t.gpu_hours if by_use else -t.jobs, -t.jobs, natural_key(t.team))

    ranked = sorted(r.teams.values(), key=rank)
    if len(ranked) <= MAX_TEAMS:
        return sorted(ranked, key=lambda t: natural_key(t.team)), []
    shown = sorted(ranked[: MAX_TEAMS - 1], key=lambda t: natural_key(t.team))
    return shown, ranked[MAX_TEAMS - 1 :]


def _wait_range(results: Sequence[DesignResult]) -> tuple[float, float]:
    hi = max((w for r in results for t in r.teams.values() for w in t.waits[-1:]), default=60.0)
    top = 10 ** math.ceil(math.log10(max(hi, 60.0) * 1.01))
    return 1.0, float(top)


def _wait_ticks(lo: float, hi: float) -> list[tuple[float, str]]:
    return [(v, label) for v, label in _WAIT_TICKS if lo <= v <= hi]


_CDF_X = "wait from submission to admission (log scale; waits under 1 s at 1 s)"
_CDF_Y = "jobs admitted within that wait (%)"


def _cdf_chart(title: str, series: list[Series], rng: tuple[float, float], **kw: object) -> str:
    return line_chart(
        title,
        _CDF_X,
        _CDF_Y,
        series,
        x_range=rng,
        y_range=(0, 100),
        x_log=True,
        x_ticks=_wait_ticks(*rng),
        **kw,  # type: ignore[arg-type]
    )


def _team_cdf(r: DesignResult, rng: tuple[float, float]) -> str:
    shown, rest = _teams_shown(r)
    series = []
    for i, t in enumerate(shown):
        series.append(
            Series(f"{t.team} ({len(t.waits)})", _cdf_points(t.waits, *rng), PALETTE[i % 10])
        )
    if rest:
        waits = sorted(w for t in rest for w in t.waits)
        series.append(
            Series(
                f"{len(rest)} other teams ({len(waits)})",
                _cdf_points(waits, *rng),
                PALETTE[len(shown) % 10],
                dash="2 2",
            )
        )
    series.append(
        Series("all teams", _cdf_points(r.overall.waits, *rng), "#222222", "6 3", width=2.2)
    )
    return _cdf_chart(f"Wait-time CDF per team: {r.name}", series, rng)


def _design_style(i: int) -> tuple[str, str]:
    """The first design solid, the others dashed and drawn over it, so two
    designs that did the same thing both show (alternating colours)."""
    return PALETTE[i % 10], DASHES[1 + (i - 1) % (len(DASHES) - 1)] if i else ""


def _compare_cdfs(results: Sequence[DesignResult], rng: tuple[float, float]) -> list[str]:
    """One panel per team (the first design's largest teams) and one for all
    teams, the designs overlaid."""
    shown, rest = _teams_shown(results[0])
    panels: list[tuple[str, Callable[[DesignResult], list[float]]]] = [
        ("all teams", lambda r: r.overall.waits)
    ]
    for t in shown:
        panels.append(
            (t.team, lambda r, name=t.team: r.teams[name].waits if name in r.teams else [])
        )
    if rest:
        names = {t.team for t in rest}
        panels.append(
            (
                f"{len(rest)} other teams",
                lambda r: sorted(w for n, t in r.teams.items() if n in names for w in t.waits),
            )
        )
    out = []
    for label, get in panels:
        series = []
        for i, r in enumerate(results):
            color, dash = _design_style(i)
            waits = get(r)
            series.append(Series(f"{r.name} ({len(waits)})", _cdf_points(waits, *rng), color, dash))
        out.append(_cdf_chart(f"Wait-time CDF: {label}", series, rng))
    return out


def _time_axis(results: Sequence[DesignResult]) -> tuple[float, float, str]:
    end = max((r.end_s for r in results), default=1.0) or 1.0
    unit, name = _time_unit(end)
    return end, unit, f"time since the trace's first submission ({name})"


def _scaled(points: list[tuple[float, float]], unit: float) -> list[tuple[float, float]]:
    return [(t / unit, v) for t, v in points]


def _util_chart(results: Sequence[DesignResult]) -> str:
    """All GPUs in use per design; for one design, also each team's part."""
    end, unit, xl = _time_axis(results)
    series = []
    if len(results) == 1:
        r = results[0]
        cap = max((c for _, _, c in r.util_series), default=0.0)
        shown, _ = _teams_shown(r, by_use=True)
        for i, t in enumerate(shown):
            pts = [
                (a, 100.0 * g / cap if cap else 0.0) for a, g in r.team_gpu_series.get(t.team, [])
            ]
            if pts:
                pts = _bucketed(pts, r.end_s, mean=True)
                series.append(Series(t.team, _scaled(pts, unit), PALETTE[i % 10], width=1.4))
    for i, r in enumerate(results):
        pts = [(t, 100.0 * used / cap if cap else 0.0) for t, used, cap in r.util_series]
        pts = _bucketed(pts, r.end_s, mean=True)
        color, dash = _design_style(i) if len(results) > 1 else ("#222222", "")
        util = f"{r.utilization:.0%}" if r.utilization is not None else "-"
        label = f"{r.name} (mean {util})" if len(results) > 1 else f"all teams (mean {util})"
        series.append(Series(label, _scaled(pts, unit), color, dash, width=2.0))
    title = "GPU utilization over time" + ("" if len(results) > 1 else f": {results[0].name}")
    return line_chart(
        title,
        xl,
        f"GPUs in use (% of the nodes' GPUs){' — interval means' if _long(results) else ''}",
        series,
        x_range=(0, end / unit),
        y_range=(0, 100),
    )


def _long(results: Sequence[DesignResult]) -> bool:
    return any(len(r.util_series) > 2 * BUCKETS for r in results)


def _queue_chart(results: Sequence[DesignResult]) -> str:
    end, unit, xl = _time_axis(results)
    series = []
    if len(results) == 1:
        r = results[0]
        shown, _ = _teams_shown(r)
        for i, t in enumerate(shown):
            pts = [(float(a), float(b)) for a, b in r.team_pending_series.get(t.team, [])]
            if pts:
                pts = _bucketed(pts, r.end_s, mean=False)
                series.append(Series(t.team, _scaled(pts, unit), PALETTE[i % 10]))
        pts = [(float(a), float(b)) for a, b in r.pending_series]
        series.append(
            Series("all teams", _scaled(_bucketed(pts, r.end_s, False), unit), "#222222", "6 3")
        )
        title = f"Queue length over time: {r.name}"
    else:
        for i, r in enumerate(results):
            pts = [(float(a), float(b)) for a, b in r.pending_series]
            color, dash = _design_style(i)
            series.append(
                Series(r.name, _scaled(_bucketed(pts, r.end_s, False), unit), color, dash)
            )
        title = "Queue length over time (all teams)"
    many = any(len(r.pending_series) > 2 * BUCKETS for r in results)
    return line_chart(
        title,
        xl,
        "jobs waiting for admission" + (" (interval maxima)" if many else ""),
        series,
        x_range=(0, end / unit),
    )


def _fair_chart(results: Sequence[DesignResult]) -> str:
    """Per team (the first design's largest), its nominal share and its share
    of the GPU-hours used, for each design."""
    r0 = results[0]
    shown, rest = _teams_shown(r0, by_use=True)
    names: list[str] = []
    colors: list[str] = []
    for i, r in enumerate(results):
        color = _design_style(i)[0]
        names += [f"nominal: {r.name}", f"used: {r.name}"]
        colors += [f"{color}/0.35", color]
    labels = [t.team for t in shown] + ([f"{len(rest)} other teams"] if rest else [])
    groups = []
    for label in labels:
        members = [label] if label in r0.teams else [t.team for t in rest]
        vals: list[float] = []
        for r in results:
            nominal = sum(r.teams[m].nominal_gpus for m in members if m in r.teams)
            total = r.overall.gpu_hours
            used = sum(r.teams[m].gpu_hours for m in members if m in r.teams)
            vals.append(100.0 * nominal / r.nominal_gpus if r.nominal_gpus else 0.0)
            vals.append(100.0 * used / total if total else 0.0)
        groups.append((label, vals))
    return bar_chart(
        "Each team's share of GPU-hours against its nominal share",
        "share (%) of all GPU-hours used / of all nominal GPU quota",
        groups,
        names,
        colors,
    )


# ---------------------------------------------------------------------- tables
def _table(head: list[str], rows: list[list[str]], cls: str = "") -> str:
    h = "".join(f"<th>{escape(c)}</th>" for c in head)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{cls}"><thead><tr>{h}</tr></thead><tbody>{body}</tbody></table>'


def _team_row(r: DesignResult, t: TeamResult) -> list[str]:
    w = wait_stats(t.waits)
    total = r.overall.gpu_hours
    fair = "-"
    if total and t.nominal_gpus and r.nominal_gpus and t.team != "overall":
        fair = f"{(t.gpu_hours / total) / (t.nominal_gpus / r.nominal_gpus):.2f}"
    return [
        t.team,
        t.queue,
        str(t.jobs),
        str(t.finished),
        fmt_gpu_hours(t.gpu_hours),
        fmt_seconds(w["mean"]),
        fmt_seconds(w["p50"]),
        fmt_seconds(w["p95"]),
        fmt_seconds(w["max"]),
        f"{t.borrowed_gpu_hours / t.gpu_hours:.0%}" if t.gpu_hours else "-",
        str(t.preemptions),
        f"{t.nominal_gpus:.4g}",
        fair,
    ]


_TEAM_HEAD = [
    "team",
    "queue",
    "jobs",
    "finished",
    "GPU-hours",
    "mean wait",
    "p50 wait",
    "p95 wait",
    "max wait",
    "borrowed",
    "preemptions",
    "nominal GPUs",
    "use / nominal share",
]


def _design_section(r: DesignResult) -> str:
    util = f"{r.utilization:.1%}" if r.utilization is not None else "-"
    q = f"{r.quota_utilization:.1%}" if r.quota_utilization is not None else "-"
    fi = fairness_index(r)
    rows = [_team_row(r, t) for t in r.teams.values()]
    rows.append(_team_row(r, r.overall))
    table = _table(_TEAM_HEAD, rows, "teams")
    if len(rows) > LONG_TABLE:
        table = _details(f"the {len(r.teams)} teams", table)
    notes = "".join(f"<li>warning: {escape(w)}</li>" for w in r.warnings)
    notes += "".join(f"<li>error: {escape(e)}</li>" for e in r.errors)
    return (
        f'<section class="design"><h2>Design {escape(r.name)}</h2>'
        f"<p>{escape(r.source)} — {fmt_seconds(r.end_s)} simulated, stopped: {escape(r.stopped)}; "
        f"nodes from {escape(r.nodes_from)}; GPU utilization {util} of {r.gpu_capacity:g} GPUs, "
        f"{q} of {r.nominal_gpus:g} nominal; fairness index "
        f"{f'{fi:.2f}' if fi is not None else '-'}; {r.admissions} admissions.</p>"
        + (f"<ul>{notes}</ul>" if notes else "")
        + table
        + "</section>"
    )


def _details(what: str, body: str) -> str:
    """A long table, folded (HTML's own disclosure: no script)."""
    return f"<details><summary>{escape(what)} (click to show)</summary>{body}</details>"


def _compare_section(results: Sequence[DesignResult]) -> str:
    """Overall figures and the largest teams side by side; every team folded below."""
    head = ["team"] + [f"{r.name}: p95 / mean wait, GPU-h" for r in results]
    r0 = results[0]

    def row(name: str) -> list[str]:
        out = [name]
        for r in results:
            t = r.overall if name == "overall" else r.teams.get(name)
            if t is None:
                out.append("-")
                continue
            w = wait_stats(t.waits)
            out.append(f"{fmt_seconds(w['p95'])} / {fmt_seconds(w['mean'])}, {t.gpu_hours:,.0f}")
        return out

    tail = [
        ["utilization"]
        + [f"{r.utilization:.1%}" if r.utilization is not None else "-" for r in results],
        ["preemptions"] + [str(r.overall.preemptions) for r in results],
    ]
    every = [row(name) for name in r0.teams]
    if len(every) <= LONG_TABLE:
        body = _table(head, [*every, row("overall"), *tail], "compare")
    else:
        ranked = sorted(r0.teams.values(), key=lambda t: (-t.gpu_hours, natural_key(t.team)))
        top = sorted((t.team for t in ranked[:TOP_TEAMS]), key=natural_key)
        body = (
            f"<p>The {TOP_TEAMS} teams with the most GPU-hours in {escape(r0.name)}:</p>"
            + _table(head, [*(row(n) for n in top), row("overall"), *tail], "compare")
            + _details(f"all {len(every)} teams", _table(head, every, "compare"))
        )
    return "<section><h2>Designs side by side</h2>" + body + "</section>"


_CSS = """
body{font-family:-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:24px;color:#222;
max-width:1600px}
h1{font-size:22px;margin:0 0 6px}h2{font-size:18px;margin:28px 0 8px}
p.meta{color:#444;margin:2px 0}
.grid{display:flex;flex-wrap:wrap;gap:12px}
figure{margin:0;border:1px solid #ddd;padding:4px;background:#fff}
figcaption{font-size:12px;color:#555;max-width:612px;padding:2px 4px}
table{border-collapse:collapse;font-size:12px;margin:6px 0}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:right}
th:first-child,td:first-child,th:nth-child(2),td:nth-child(2){text-align:left}
table.compare td:nth-child(2){text-align:right}
dl{font-size:13px}dt{font-weight:bold;margin-top:6px}
summary{cursor:pointer;font-size:13px;margin:6px 0}
"""


def _figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption>{escape(caption)}</figcaption></figure>"


def _stopped_early(results: Sequence[DesignResult]) -> str:
    """The replay's end when --until cut it short (the figures cover only that)."""
    until = [r for r in results if r.stopped == "until"]
    if not until:
        return ""
    end = max(r.end_s for r in until)
    return (
        f" <strong>Replay stopped by --until after {escape(fmt_seconds(end))}</strong>: "
        "the figures cover that much of the trace only."
    )


def render_html(results: Sequence[DesignResult], trace_rows: int, trace_span_s: float) -> str:
    """The whole report as one HTML document."""
    r0 = results[0]
    compare = len(results) > 1
    rng = _wait_range(results)
    names = ", ".join(r.name for r in results)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>kuota simulate: {escape(r0.trace)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>kuota simulate: {escape(r0.trace)}</h1>",
        f'<p class="meta">{trace_rows:,} jobs submitted over {fmt_seconds(trace_span_s)}; '
        f"design{'s' if compare else ''}: {escape(names)}.{_stopped_early(results)}</p>",
        f'<p class="meta" id="policy">Fractional GPUs: {escape(r0.policy)}.</p>',
    ]
    if compare:
        parts.append(_compare_section(results))
    parts.append('<h2>Plots</h2><div class="grid">')
    if compare:
        for svg in _compare_cdfs(results, rng):
            parts.append(
                _figure(
                    svg, "Share of admitted jobs whose wait was at most x; one line per design."
                )
            )
    else:
        parts.append(
            _figure(
                _team_cdf(r0, rng),
                "Share of each team's admitted jobs whose wait was at most x (jobs never "
                "admitted are not in the curve; the legend gives how many were).",
            )
        )
    parts.append(
        _figure(
            _util_chart(results),
            "GPUs held by running pods over the GPUs of the simulated nodes"
            + (", as the mean of each of 600 equal intervals." if _long(results) else "."),
        )
    )
    parts.append(
        _figure(
            _queue_chart(results),
            "Jobs created but not (or no longer) holding quota"
            + (
                ", as the maximum of each of 600 equal intervals."
                if any(len(r.pending_series) > 2 * BUCKETS for r in results)
                else "."
            ),
        )
    )
    parts.append(
        _figure(
            _fair_chart(results),
            "Nominal share: the team's ClusterQueue's nominal GPU quota over all ClusterQueues' "
            "(split evenly among the teams in one ClusterQueue); use share: the team's GPU-hours "
            "over all GPU-hours.",
        )
    )
    parts.append("</div>")
    for r in results:
        parts.append(_design_section(r))
    parts.append(
        "<section><h2>Definitions</h2><dl>"
        "<dt>wait</dt><dd>from the Job's creation (its trace submit time) to its first quota "
        "reservation (Kueue's admission); percentiles are nearest-rank over the admitted jobs. "
        "The start wait (in the JSON report) runs to the job's first pod running: longer when "
        "the nodes, not the quota, are short.</dd>"
        "<dt>GPU-hours</dt><dd>GPUs held by the team's running pods times their run time, as "
        "charged (with round-up a sharing pod is charged a whole GPU).</dd>"
        "<dt>borrowed</dt><dd>share of the team's GPU-hours beyond its ClusterQueue's nominal "
        "quota (a ClusterQueue's borrowing is shared among its teams by their usage).</dd>"
        "<dt>use / nominal share</dt><dd>the team's share of all GPU-hours over its nominal "
        "share; 1 means it used exactly its share. The fairness index is Jain's index of these "
        "ratios over the teams (1: all equal).</dd>"
        "<dt>utilization</dt><dd>GPUs held by running pods over the simulated nodes' GPUs; the "
        "quota figure is over the nominal GPU quota of all ClusterQueues.</dd>"
        "</dl></section>"
    )
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
