"""The self-contained HTML report of ``kuota simulate``: tables and plots as
inline SVG (drawn by ``kuota.sim.svg_chart``; no script, no stylesheet or
font from the network), so the file opens in any browser offline.

Plots: wait-time CDF per team, GPU utilization over time, queue length
over time, each team's use against its nominal share; with several designs
the designs are overlaid (and the per-team CDFs become small multiples, one
panel per team, one line per design). Read as a user would:

- every plot and the table above them show the same teams (the most
  GPU-hours first; the rest together as "N other teams");
- when at least half of every curve's jobs never waited, a CDF would squeeze
  the curves into its top half: the plot shows the tail instead, the share of
  jobs that waited longer than x, on a log scale;
- when a trace's activity is bunched (a long lead-in holding at most 1 % of
  its submissions, a quarter of the timeline or more), the time axes start
  where the activity does, and the whole timeline is one click below.
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
    combined,
    fairness_index,
    fmt_gpu_hours,
    fmt_seconds,
    natural_key,
    wait_stats,
)
from kuota.sim.svg_chart import Series, bar_chart, line_chart, nice_step

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
TRIM_SHARE = 0.01  # a lead-in with at most this share of the submissions ...
TRIM_SPAN = 0.25  # ... and at least this share of the timeline is left off the time axes


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


def _cdf_points(
    waits: list[float], lo: float, hi: float, tail: bool = False
) -> list[tuple[float, float]]:
    """The empirical CDF (in %) of sorted waits at log-spaced positions; with
    ``tail``, its complement: the share that waited longer than each."""
    n = len(waits)
    if not n:
        return []
    out = []
    a, b = math.log10(lo), math.log10(hi)
    for k in range(CDF_POINTS + 1):
        x = 10 ** (a + (b - a) * k / CDF_POINTS)
        within = bisect.bisect_right(waits, x)
        out.append((x, 100.0 * ((n - within) if tail else within) / n))
    return out


# ---------------------------------------------------------------------- the plots
def _teams_shown(r: DesignResult) -> tuple[list[TeamResult], list[TeamResult]]:
    """The teams every plot and the table above them show one by one (the
    most GPU-hours, then the most jobs), and the rest, shown together."""

    def rank(t: TeamResult) -> tuple[Any, ...]:
        return (-t.gpu_hours, -t.jobs, natural_key(t.team))

    ranked = sorted(r.teams.values(), key=rank)
    if len(ranked) <= MAX_TEAMS:
        return sorted(ranked, key=lambda t: natural_key(t.team)), []
    shown = sorted(ranked[: MAX_TEAMS - 1], key=lambda t: natural_key(t.team))
    return shown, ranked[MAX_TEAMS - 1 :]


def _others(rest: list[TeamResult]) -> str:
    return f"{len(rest)} other teams"


def _wait_range(results: Sequence[DesignResult]) -> tuple[float, float]:
    hi = max((w for r in results for t in r.teams.values() for w in t.waits[-1:]), default=60.0)
    top = 10 ** math.ceil(math.log10(max(hi, 60.0) * 1.01))
    return 1.0, float(top)


def _wait_ticks(lo: float, hi: float) -> list[tuple[float, str]]:
    return [(v, label) for v, label in _WAIT_TICKS if lo <= v <= hi]


_CDF_X = "wait from submission to admission (log scale; waits under 1 s at 1 s)"
_CDF_Y = "jobs admitted within that wait (%)"
_TAIL_Y = "jobs that waited longer (%, log scale)"


class _WaitAxes:
    """The wait plots' axes, the same for every panel of a report: x the wait
    on a log scale; y the CDF, or its tail on a log scale when at least half
    of every curve's jobs waited under the lowest wait shown."""

    def __init__(self, results: Sequence[DesignResult], curves: Sequence[list[float]]) -> None:
        self.rng = _wait_range(results)
        lo = self.rng[0]
        drawn = [w for w in curves if w]
        self.tail = bool(drawn) and all(2 * bisect.bisect_right(w, lo) >= len(w) for w in drawn)

    def points(self, waits: list[float]) -> list[tuple[float, float]]:
        return _cdf_points(waits, *self.rng, tail=self.tail)

    def chart(self, title: str, series: list[Series], most: int) -> str:
        """The plot of ``series``, whose largest curve counts ``most`` jobs."""
        if not self.tail:
            return line_chart(
                f"Wait-time CDF{title}",
                _CDF_X,
                _CDF_Y,
                series,
                x_range=self.rng,
                y_range=(0, 100),
                x_log=True,
                x_ticks=_wait_ticks(*self.rng),
            )
        # down to the decade that holds one job of the largest curve
        floor = 10.0 ** math.floor(math.log10(100.0 / max(most, 1)))
        decades = range(round(math.log10(floor)), 3)
        return line_chart(
            f"Wait-time tail{title}",
            _CDF_X,
            _TAIL_Y,
            series,
            x_range=self.rng,
            y_range=(floor, 100),
            x_log=True,
            x_ticks=_wait_ticks(*self.rng),
            y_log=True,
            y_ticks=[(10.0**d, f"{10.0**d:g}") for d in decades],
        )

    def caption(self, what: str) -> str:
        if not self.tail:
            return f"Share of {what} whose wait was at most x"
        return (
            f"Share of {what} that waited longer than x, on a log scale (at least half of "
            f"them waited under {fmt_seconds(self.rng[0])}: a CDF would squeeze every curve "
            "into its top half). A curve ends at the bottom where no job waited longer"
        )


def _team_cdf(r: DesignResult, axes: _WaitAxes) -> str:
    shown, rest = _teams_shown(r)
    series = []
    for i, t in enumerate(shown):
        series.append(Series(f"{t.team} ({len(t.waits)})", axes.points(t.waits), PALETTE[i % 10]))
    if rest:
        waits = combined("", rest).waits
        series.append(
            Series(
                f"{_others(rest)} ({len(waits)})",
                axes.points(waits),
                PALETTE[len(shown) % 10],
                dash="2 2",
            )
        )
    series.append(Series("all teams", axes.points(r.overall.waits), "#222222", "6 3", width=2.2))
    return axes.chart(f" per team: {r.name}", series, len(r.overall.waits))


def _team_curves(r: DesignResult) -> list[list[float]]:
    """The waits of each curve of the one-design wait plot."""
    shown, rest = _teams_shown(r)
    return [
        *(t.waits for t in shown),
        combined("", rest).waits,
        r.overall.waits,
    ]


def _design_style(i: int) -> tuple[str, str]:
    """The first design solid, the others dashed and drawn over it, so two
    designs that did the same thing both show (alternating colours)."""
    return PALETTE[i % 10], DASHES[1 + (i - 1) % (len(DASHES) - 1)] if i else ""


def _compare_panels(
    results: Sequence[DesignResult],
) -> list[tuple[str, Callable[[DesignResult], list[float]]]]:
    """One panel per team (the first design's teams shown) and one for all
    teams, each with the waits of a design."""
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
                _others(rest),
                lambda r: sorted(w for n, t in r.teams.items() if n in names for w in t.waits),
            )
        )
    return panels


def _compare_cdfs(results: Sequence[DesignResult]) -> tuple[list[str], _WaitAxes]:
    """The designs overlaid, one panel per team (see _compare_panels)."""
    panels = _compare_panels(results)
    axes = _WaitAxes(results, [get(r) for _, get in panels for r in results])
    out = []
    for label, get in panels:
        series = []
        most = 0
        for i, r in enumerate(results):
            color, dash = _design_style(i)
            waits = get(r)
            most = max(most, len(waits))
            series.append(Series(f"{r.name} ({len(waits)})", axes.points(waits), color, dash))
        out.append(axes.chart(f": {label}", series, most))
    return out, axes


class _TimeAxis:
    """The time plots' x axis, shared by every time plot of a report: from
    the start of the activity (see TRIM_SHARE, TRIM_SPAN) to the end of the
    longest replay, in minutes, hours or days."""

    def __init__(self, results: Sequence[DesignResult], whole: bool = False) -> None:
        self.end = max((r.end_s for r in results), default=1.0) or 1.0
        submits = results[0].submit_s if results else []
        self.start = 0.0 if whole else _activity_start(submits, self.end)
        self.unit, self.unit_name = _time_unit(self.end - self.start)
        if self.start:  # on a tick of the axis, so that its first label is its start
            step = nice_step((self.end - self.start) / self.unit, 8) * self.unit
            self.start = math.floor(self.start / step) * step
        self.left_out = bisect.bisect_left(submits, self.start)  # jobs submitted before
        self.submitted = len(submits)

    @property
    def label(self) -> str:
        base = f"time since the trace's first submission ({self.unit_name})"
        if not self.start:
            return base
        return f"{base}, from {self.at(self.start)}"

    def at(self, t: float) -> str:
        return f"{self.unit_name.rstrip('s')} {round(t / self.unit, 1):g}"

    def note(self) -> str:
        """What the trimmed axis leaves out, for the caption."""
        if not self.start:
            return ""
        jobs = "job was" if self.left_out == 1 else "jobs were"
        return (
            f" The axis starts at {self.at(self.start)}: {self.left_out:,} of the "
            f"{self.submitted:,} {jobs} submitted before it (the whole timeline is below)."
        )

    def points(
        self, points: list[tuple[float, float]], end: float, mean: bool
    ) -> list[tuple[float, float]]:
        """A step series from the axis' start, at most BUCKETS points, scaled."""
        shown = _from(points, self.start)
        return [(t / self.unit, v) for t, v in _bucketed(shown, end, mean=mean)]

    @property
    def range(self) -> tuple[float, float]:
        return self.start / self.unit, self.end / self.unit


def _activity_start(submits: list[float], end: float) -> float:
    """Where the activity of a trace starts: after a lead-in that holds at most
    TRIM_SHARE of the submissions and lasts TRIM_SPAN of the timeline or more
    (openb: the 1 % mark is day 116 of 157; 19 of its 7,255 jobs come before
    day 110, where the axis then starts); else 0."""
    if not submits:
        return 0.0
    start = submits[int(len(submits) * TRIM_SHARE)]
    return start if start >= TRIM_SPAN * end else 0.0


def _from(points: list[tuple[float, float]], start: float) -> list[tuple[float, float]]:
    """A step series cut at ``start``: the value held then, and what follows."""
    if not points or points[0][0] >= start:
        return points
    i = bisect.bisect_right(points, (start, math.inf)) - 1
    return [(start, points[i][1]), *(p for p in points[i + 1 :] if p[0] > start)]


def _summed(series: list[list[tuple[float, float]]]) -> list[tuple[float, float]]:
    """Step series added up (the teams drawn together)."""
    changes = sorted((t, k, v) for k, s in enumerate(series) for t, v in s)
    now = [0.0] * len(series)
    total = 0.0
    out: list[tuple[float, float]] = []
    for t, k, v in changes:
        total += v - now[k]
        now[k] = v
        if out and out[-1][0] == t:
            out[-1] = (t, total)
        else:
            out.append((t, total))
    return out


def _time_figure(
    make: Callable[[_TimeAxis], str], results: Sequence[DesignResult], caption: str
) -> str:
    """A time plot on the report's axis; if that axis is trimmed, the same
    plot over the whole timeline folded below it (HTML's disclosure, no script)."""
    axis = _TimeAxis(results)
    body = make(axis)
    if axis.start:
        whole = _TimeAxis(results, whole=True)
        body += _details(
            f"the whole timeline ({whole.at(0)} to {whole.at(whole.end)})", make(whole)
        )
    return _figure(body, caption + axis.note())


def _util_chart(results: Sequence[DesignResult], axis: _TimeAxis) -> str:
    """All GPUs in use per design; for one design, also each team's part."""
    series = []
    if len(results) == 1:
        r = results[0]
        cap = max((c for _, _, c in r.util_series), default=0.0)
        shown, rest = _teams_shown(r)

        def pct(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
            return [(a, 100.0 * g / cap if cap else 0.0) for a, g in points]

        for i, t in enumerate(shown):  # a team that never ran still has its legend entry
            pts = pct(r.team_gpu_series.get(t.team, []))
            series.append(
                Series(t.team, axis.points(pts, r.end_s, True), PALETTE[i % 10], width=1.4)
            )
        if rest:
            pts = pct(_summed([r.team_gpu_series.get(t.team, []) for t in rest]))
            series.append(
                Series(
                    _others(rest),
                    axis.points(pts, r.end_s, True),
                    PALETTE[len(shown) % 10],
                    "2 2",
                    width=1.4,
                )
            )
    for i, r in enumerate(results):
        pts = [(t, 100.0 * used / cap if cap else 0.0) for t, used, cap in r.util_series]
        color, dash = _design_style(i) if len(results) > 1 else ("#222222", "")
        util = f"{r.utilization:.0%}" if r.utilization is not None else "-"
        label = f"{r.name} (mean {util})" if len(results) > 1 else f"all teams (mean {util})"
        series.append(Series(label, axis.points(pts, r.end_s, True), color, dash, width=2.0))
    title = "GPU utilization over time" + ("" if len(results) > 1 else f": {results[0].name}")
    return line_chart(
        title,
        axis.label,
        f"GPUs in use (% of the nodes' GPUs){' — interval means' if _long(results) else ''}",
        series,
        x_range=axis.range,
        y_range=(0, 100),
    )


def _long(results: Sequence[DesignResult]) -> bool:
    return any(len(r.util_series) > 2 * BUCKETS for r in results)


def _queue_chart(results: Sequence[DesignResult], axis: _TimeAxis) -> str:
    series = []
    if len(results) == 1:
        r = results[0]
        shown, rest = _teams_shown(r)

        def floats(points: list[tuple[float, int]]) -> list[tuple[float, float]]:
            return [(float(a), float(b)) for a, b in points]

        for i, t in enumerate(shown):
            pts = floats(r.team_pending_series.get(t.team, []))
            series.append(Series(t.team, axis.points(pts, r.end_s, False), PALETTE[i % 10]))
        if rest:
            pts = _summed([floats(r.team_pending_series.get(t.team, [])) for t in rest])
            series.append(
                Series(
                    _others(rest),
                    axis.points(pts, r.end_s, False),
                    PALETTE[len(shown) % 10],
                    "2 2",
                )
            )
        pts = floats(r.pending_series)
        series.append(Series("all teams", axis.points(pts, r.end_s, False), "#222222", "6 3"))
        title = f"Queue length over time: {r.name}"
    else:
        for i, r in enumerate(results):
            pts = [(float(a), float(b)) for a, b in r.pending_series]
            color, dash = _design_style(i)
            series.append(Series(r.name, axis.points(pts, r.end_s, False), color, dash))
        title = "Queue length over time (all teams)"
    many = any(len(r.pending_series) > 2 * BUCKETS for r in results)
    return line_chart(
        title,
        axis.label,
        "jobs waiting for admission" + (" (interval maxima)" if many else ""),
        series,
        x_range=axis.range,
    )


def _fair_chart(results: Sequence[DesignResult]) -> str:
    """Per team (the first design's shown), its nominal share and its share
    of the GPU-hours used, for each design."""
    r0 = results[0]
    shown, rest = _teams_shown(r0)
    names: list[str] = []
    colors: list[str] = []
    for i, r in enumerate(results):
        color = _design_style(i)[0]
        names += [f"nominal: {r.name}", f"used: {r.name}"]
        colors += [f"{color}/0.35", color]
    rows = [(t.team, [t.team]) for t in shown]
    if rest:
        rows.append((_others(rest), [t.team for t in rest]))
    groups = []
    for label, members in rows:
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
    # the teams the plots show, the rest as one row; every team folded below
    shown, rest = _teams_shown(r)
    rows = [_team_row(r, t) for t in shown]
    if rest:
        rows.append(_team_row(r, combined(_others(rest), rest)))
    rows.append(_team_row(r, r.overall))
    table = _table(_TEAM_HEAD, rows, "teams")
    if rest:
        every = [_team_row(r, t) for t in r.teams.values()]
        table += _details(f"all {len(r.teams)} teams", _table(_TEAM_HEAD, every, "teams"))
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
    """Folded (HTML's own disclosure: no script)."""
    return f"<details><summary>{escape(what)} (click to show)</summary>{body}</details>"


def _compare_section(results: Sequence[DesignResult]) -> str:
    """Overall figures and the teams the plots show side by side; every team
    folded below."""
    head = ["team"] + [f"{r.name}: p95 / mean wait, GPU-h" for r in results]
    r0 = results[0]
    shown, rest = _teams_shown(r0)

    def row(name: str, members: list[str] | None = None) -> list[str]:
        out = [name]
        for r in results:
            if members is not None:
                t: TeamResult | None = combined(name, [r.teams[m] for m in members if m in r.teams])
            else:
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
    rows = [row(t.team) for t in shown]
    if rest:
        rows.append(row(_others(rest), [t.team for t in rest]))
    body = _table(head, [*rows, row("overall"), *tail], "compare")
    if rest:
        body = (
            f"<p>The {len(shown)} teams with the most GPU-hours in {escape(r0.name)}, as the "
            f"plots show them, and the {len(rest)} others together:</p>" + body
        )
        every = [row(name) for name in r0.teams]
        body += _details(f"all {len(every)} teams", _table(head, every, "compare"))
    return "<section><h2>Designs side by side</h2>" + body + "</section>"


_CSS = """
body{font-family:-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:24px;color:#222;
max-width:1600px}
h1{font-size:22px;margin:0 0 6px}h2{font-size:18px;margin:28px 0 8px}
p.meta{color:#444;margin:2px 0}
.grid{display:flex;flex-wrap:wrap;gap:12px}
figure{margin:0;border:1px solid #ddd;padding:4px;background:#fff;flex:1 1 540px;max-width:760px}
figure svg.chart{width:100%;height:auto}
figcaption{font-size:12px;color:#555;padding:2px 4px}
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


def render_html(
    results: Sequence[DesignResult],
    trace_rows: int,
    trace_span_s: float,
    title: str = "kuota simulate",
    preface: str = "",
) -> str:
    """The whole report as one HTML document (``preface``: HTML before the plots)."""
    r0 = results[0]
    compare = len(results) > 1
    names = ", ".join(r.name for r in results)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(title)}: {escape(r0.trace)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{escape(title)}: {escape(r0.trace)}</h1>",
        f'<p class="meta">{trace_rows:,} jobs submitted over {fmt_seconds(trace_span_s)}; '
        f"design{'s' if compare else ''}: {escape(names)}.{_stopped_early(results)}</p>",
        f'<p class="meta" id="policy">Fractional GPUs: {escape(r0.policy)}.</p>',
    ]
    if preface:
        parts.append(preface)
    if compare:
        parts.append(_compare_section(results))
    parts.append('<h2>Plots</h2><div class="grid">')
    if compare:
        cdfs, axes = _compare_cdfs(results)
        for svg in cdfs:
            parts.append(_figure(svg, axes.caption("admitted jobs") + "; one line per design."))
    else:
        axes = _WaitAxes(results, _team_curves(r0))
        parts.append(
            _figure(
                _team_cdf(r0, axes),
                axes.caption("each team's admitted jobs")
                + " (jobs never admitted are not in the curve; the legend gives how many were).",
            )
        )
    parts.append(
        _time_figure(
            lambda axis: _util_chart(results, axis),
            results,
            "GPUs held by running pods over the GPUs of the simulated nodes"
            + (", as the mean of each of 600 equal intervals." if _long(results) else "."),
        )
    )
    parts.append(
        _time_figure(
            lambda axis: _queue_chart(results, axis),
            results,
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
