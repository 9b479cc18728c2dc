"""Inline SVG charts for the HTML report of ``kuota simulate``: a line chart
and a grouped bar chart, each with title, labelled axes, grid and legend,
drawn as text so the report needs no script or network.

Legends and labels are never cut: the chart is made as wide (and as tall) as
its longest legend entry and label need, measured with Helvetica's widths
and some room for a wider sans-serif a browser may use instead.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

__all__ = ["Series", "bar_chart", "line_chart", "nice_step", "text_width"]

FONT = "Helvetica, Arial, 'Liberation Sans', sans-serif"

# Helvetica's advance widths (thousandths of an em, from its AFM metrics) of
# the printable ASCII characters, space to tilde; anything else counts 1 em.
_WIDTHS = (
    "278 278 355 556 556 889 667 191 333 333 389 584 278 333 278 278 "  # space to /
    "556 556 556 556 556 556 556 556 556 556 278 278 584 584 584 556 "  # 0 to ?
    "1015 667 667 722 722 667 611 778 722 278 500 667 556 833 722 778 "  # @ to O
    "667 778 722 667 611 722 667 944 667 667 611 278 278 278 469 556 "  # P to _
    "333 556 556 500 556 556 278 556 556 222 222 500 222 833 556 556 "  # ` to o
    "556 556 333 500 278 556 500 722 500 500 500 334 260 334 584"  # p to ~
)
_ADVANCE = {chr(32 + i): int(w) / 1000 for i, w in enumerate(_WIDTHS.split())}
SLACK = 1.15  # DejaVu Sans, a common fallback, runs about a tenth wider


def text_width(text: str, size: float) -> float:
    """The width in px that ``text`` at ``size`` px takes, at most (see SLACK)."""
    return sum(_ADVANCE.get(c, 1.0) for c in text) * size * SLACK


LEGEND_SIZE = 11
LEGEND_ROW = 17  # px between legend entries
_KEY = 28  # the legend's line or swatch, and the gap before its text


def _legend_width(names: Sequence[str]) -> float:
    """The room right of the plot for a legend of ``names``: the gap to the
    plot, the key, the longest name and a margin."""
    widest = max((text_width(n, LEGEND_SIZE) for n in names), default=0.0)
    return 14 + _KEY + widest + 8


def _legend_height(top: float, n: int) -> float:
    """Where the lowest legend entry ends."""
    return top + 8 + (n - 1) * LEGEND_ROW + 6 if n else top


@dataclass
class Series:
    name: str
    points: list[tuple[float, float]]
    color: str
    dash: str = ""
    step: bool = True  # a step function (hold the value until the next point)
    width: float = 1.8
    line: bool = True  # False: points only (a scatter plot, with marker > 0)
    marker: float = 0.0  # radius of a dot drawn at each point


# ---------------------------------------------------------------------- axes
def nice_step(span: float, target: int) -> float:
    raw = span / max(target, 1)
    if raw <= 0:
        return 1.0
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def _linear_ticks(lo: float, hi: float, target: int = 6) -> list[float]:
    step = nice_step(hi - lo, target)
    first = math.ceil(lo / step) * step
    out = []
    v = first
    while v <= hi + step * 1e-9:
        out.append(round(v, 10))
        v += step
    return out


def _num(v: float) -> str:
    if v == int(v):
        return f"{int(v):,}"
    return f"{v:,.2f}".rstrip("0").rstrip(".")


# ---------------------------------------------------------------------- the chart
def line_chart(
    title: str,
    x_label: str,
    y_label: str,
    series: Sequence[Series],
    *,
    x_range: tuple[float, float],
    y_range: tuple[float, float] | None = None,
    x_log: bool = False,
    x_ticks: list[tuple[float, str]] | None = None,
    y_log: bool = False,
    y_ticks: list[tuple[float, str]] | None = None,
    width: int = 620,
    height: int = 380,
    legend: bool = True,
) -> str:
    """An SVG line chart with title, labelled axes, grid and legend. On a log
    axis the range is in the data's units (both ends above 0), values below
    its low end are drawn at it, and the ticks are best given."""
    left, top, bottom = 72, 34, 52
    right = 170.0 if legend else 20.0
    pw, ph = width - left - right, height - top - bottom  # the plot keeps its size
    if legend:
        right = max(right, _legend_width([s.name for s in series]))
    width = round(left + pw + right)
    if legend:  # a long legend makes the chart taller, never runs off it
        height = max(height, math.ceil(_legend_height(top, len(series)) + bottom))
        ph = height - top - bottom
    x0, x1 = x_range
    if x_log:
        x0, x1 = math.log10(x0), math.log10(x1)
    if x1 <= x0:
        x1 = x0 + 1
    if y_range is None:
        ymax = max((y for s in series for _, y in s.points), default=1.0)
        y_range = (0.0, ymax * 1.05 if ymax > 0 else 1.0)
    y0, y1 = y_range
    if y_log:
        y0, y1 = math.log10(y0), math.log10(y1)
    if y1 <= y0:
        y1 = y0 + 1

    def sx(x: float) -> float:
        v = math.log10(max(x, 10**x0)) if x_log else x
        return left + (v - x0) / (x1 - x0) * pw

    def sy(y: float) -> float:
        v = math.log10(max(y, 10**y0)) if y_log else y
        return top + ph - (v - y0) / (y1 - y0) * ph

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'font-family="{FONT}">',
        f"<title>{escape(title)}</title>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text class="title" x="{left}" y="20" font-size="14" font-weight="bold">'
        f"{escape(title)}</text>",
    ]
    # grid and ticks
    if y_ticks is None:
        y_ticks = [(v, _num(v)) for v in _linear_ticks(y0, y1)]
    for v, label in y_ticks:
        y = sy(v)
        if y < top - 0.5 or y > top + ph + 0.5:
            continue
        out.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" stroke="#e3e3e3"/>'
        )
        out.append(
            f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">'
            f"{escape(label)}</text>"
        )
    if x_ticks is None:
        x_ticks = [(v, _num(v)) for v in _linear_ticks(x0, x1, 8)]
    for v, label in x_ticks:
        x = sx(v)
        if x < left - 0.5 or x > left + pw + 0.5:
            continue
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + ph}" stroke="#eeeeee"/>')
        out.append(
            f'<text x="{x:.1f}" y="{top + ph + 16}" text-anchor="middle" font-size="11">'
            f"{escape(label)}</text>"
        )
    out.append(
        f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#666666"/>'
    )
    out.append(
        f'<text class="xlabel" x="{left + pw / 2:.1f}" y="{height - 12}" text-anchor="middle" '
        f'font-size="12">{escape(x_label)}</text>'
    )
    out.append(
        f'<text class="ylabel" x="16" y="{top + ph / 2:.1f}" text-anchor="middle" font-size="12" '
        f'transform="rotate(-90 16 {top + ph / 2:.1f})">{escape(y_label)}</text>'
    )
    # lines, clipped to the plot area
    clip = f"c{zlib.crc32(f'{title}|{x_label}|{y_label}|{width}'.encode()):08x}"
    out.append(
        f'<clipPath id="{clip}"><rect x="{left}" y="{top - 2}" width="{pw}" '
        f'height="{ph + 4}"/></clipPath>'
    )
    out.append(f'<g clip-path="url(#{clip})">')
    for s in series:
        if not s.points:
            continue
        d = []
        px = None
        for x, y in s.points:
            X, Y = sx(x), sy(y)
            if px is None:
                d.append(f"M{X:.1f},{Y:.1f}")
            elif s.step:
                d.append(f"H{X:.1f}V{Y:.1f}")
            else:
                d.append(f"L{X:.1f},{Y:.1f}")
            px = X
        if s.step and px is not None:
            d.append(f"H{left + pw:.1f}")
        dash = f' stroke-dasharray="{s.dash}"' if s.dash else ""
        if s.line:
            out.append(
                f'<path class="series" d="{"".join(d)}" fill="none" stroke="{s.color}" '
                f'stroke-width="{s.width}"{dash}><title>{escape(s.name)}</title></path>'
            )
        if s.marker:
            out.extend(
                f'<circle class="point" cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="{s.marker}" '
                f'fill="{s.color}"><title>{escape(s.name)}</title></circle>'
                for x, y in s.points
            )
    out.append("</g>")
    if legend:
        lx = left + pw + 14
        for i, s in enumerate(series):
            y = top + 8 + i * LEGEND_ROW
            dash = f' stroke-dasharray="{s.dash}"' if s.dash else ""
            out.append(
                f'<line x1="{lx}" y1="{y}" x2="{lx + 22}" y2="{y}" stroke="{s.color}" '
                f'stroke-width="2.5"{dash}/>'
            )
            out.append(
                f'<text class="legend" x="{lx + _KEY}" y="{y + 4}" font-size="{LEGEND_SIZE}">'
                f"{escape(s.name)}</text>"
            )
    out.append("</svg>")
    return "\n".join(out)


def _fill(color: str) -> str:
    """``#rrggbb`` or ``#rrggbb/opacity``."""
    c, _, o = color.partition("/")
    return f'fill="{c}"' + (f' fill-opacity="{o}"' if o else "")


def bar_chart(
    title: str,
    x_label: str,
    groups: list[tuple[str, list[float]]],
    names: list[str],
    colors: list[str],
    *,
    width: int = 620,
) -> str:
    """Horizontal grouped bars: one group per label, one bar per name."""
    top, bottom = 34, 46
    # the group labels left of the plot, the legend right of it: as wide as they need
    left = max(130, math.ceil(max((text_width(g, 11) for g, _ in groups), default=0) + 12))
    pw = width - 130 - 170
    right = max(170.0, _legend_width(names))
    width = round(left + pw + right)
    bar, gap = 11, 9
    n = len(names)
    ph = max(len(groups) * (n * bar + gap) + gap, math.ceil(_legend_height(top, n) - top))
    height = top + ph + bottom
    vmax = max((v for _, vs in groups for v in vs), default=1.0) or 1.0
    ticks = _linear_ticks(0, vmax * 1.05)
    step = ticks[1] - ticks[0] if len(ticks) > 1 else vmax
    while ticks[-1] < vmax * 1.02:  # the axis ends on a tick past the longest bar
        ticks.append(round(ticks[-1] + step, 10))
    hi = ticks[-1]

    def sx(v: float) -> float:
        return left + v / hi * pw

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'font-family="{FONT}">',
        f"<title>{escape(title)}</title>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text class="title" x="{left}" y="20" font-size="14" font-weight="bold">'
        f"{escape(title)}</text>",
    ]
    for v in ticks:
        x = sx(v)
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + ph}" stroke="#e3e3e3"/>')
        out.append(
            f'<text x="{x:.1f}" y="{top + ph + 15}" text-anchor="middle" font-size="11">'
            f"{escape(_num(v))}</text>"
        )
    y = top + gap
    for label, values in groups:
        out.append(
            f'<text x="{left - 6}" y="{y + n * bar / 2 + 4:.1f}" text-anchor="end" '
            f'font-size="11">{escape(label)}</text>'
        )
        for i, v in enumerate(values):
            out.append(
                f'<rect x="{left}" y="{y + i * bar}" width="{max(0.0, sx(v) - left):.1f}" '
                f'height="{bar - 1}" {_fill(colors[i])}><title>{escape(names[i])}: '
                f"{v:.1f}</title></rect>"
            )
        y += n * bar + gap
    out.append(
        f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#666666"/>'
    )
    out.append(
        f'<text class="xlabel" x="{left + pw / 2:.1f}" y="{height - 10}" text-anchor="middle" '
        f'font-size="12">{escape(x_label)}</text>'
    )
    lx = left + pw + 14
    for i, name in enumerate(names):
        ly = top + 8 + i * LEGEND_ROW
        out.append(
            f'<rect x="{lx}" y="{ly - 6}" width="22" height="10" {_fill(colors[i])}/>'
            f'<text class="legend" x="{lx + _KEY}" y="{ly + 4}" font-size="{LEGEND_SIZE}">'
            f"{escape(name)}</text>"
        )
    out.append("</svg>")
    return "\n".join(out)
