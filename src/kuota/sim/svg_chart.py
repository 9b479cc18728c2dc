"""Inline SVG charts for the HTML report of ``kuota simulate``: a line chart
and a grouped bar chart, each with title, labelled axes, grid and legend,
drawn as text so the report needs no script or network.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

__all__ = ["Series", "bar_chart", "line_chart"]


@dataclass
class Series:
    name: str
    points: list[tuple[float, float]]
    color: str
    dash: str = ""
    step: bool = True  # a step function (hold the value until the next point)
    width: float = 1.8


# ---------------------------------------------------------------------- axes
def _nice_step(span: float, target: int) -> float:
    raw = span / max(target, 1)
    if raw <= 0:
        return 1.0
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def _linear_ticks(lo: float, hi: float, target: int = 6) -> list[float]:
    step = _nice_step(hi - lo, target)
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
    width: int = 620,
    height: int = 380,
    legend: bool = True,
) -> str:
    """An SVG line chart with title, labelled axes, grid and legend."""
    left, right, top, bottom = 72, (170 if legend else 20), 34, 52
    pw, ph = width - left - right, height - top - bottom
    x0, x1 = x_range
    if x_log:
        x0, x1 = math.log10(x0), math.log10(x1)
    if x1 <= x0:
        x1 = x0 + 1
    if y_range is None:
        ymax = max((y for s in series for _, y in s.points), default=1.0)
        y_range = (0.0, ymax * 1.05 if ymax > 0 else 1.0)
    y0, y1 = y_range
    if y1 <= y0:
        y1 = y0 + 1

    def sx(x: float) -> float:
        v = math.log10(max(x, 10**x0)) if x_log else x
        return left + (v - x0) / (x1 - x0) * pw

    def sy(y: float) -> float:
        return top + ph - (y - y0) / (y1 - y0) * ph

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        'font-family="Helvetica, Arial, sans-serif">',
        f"<title>{escape(title)}</title>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text class="title" x="{left}" y="20" font-size="14" font-weight="bold">'
        f"{escape(title)}</text>",
    ]
    # grid and ticks
    yt = _linear_ticks(y0, y1)
    for v in yt:
        y = sy(v)
        out.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" stroke="#e3e3e3"/>'
        )
        out.append(
            f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">'
            f"{escape(_num(v))}</text>"
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
        out.append(
            f'<path class="series" d="{"".join(d)}" fill="none" stroke="{s.color}" '
            f'stroke-width="{s.width}"{dash}><title>{escape(s.name)}</title></path>'
        )
    out.append("</g>")
    if legend:
        lx = left + pw + 14
        for i, s in enumerate(series):
            y = top + 8 + i * 17
            dash = f' stroke-dasharray="{s.dash}"' if s.dash else ""
            out.append(
                f'<line x1="{lx}" y1="{y}" x2="{lx + 22}" y2="{y}" stroke="{s.color}" '
                f'stroke-width="2.5"{dash}/>'
            )
            name = _short(s.name)
            out.append(
                f'<text class="legend" x="{lx + 28}" y="{y + 4}" font-size="11">'
                f"{escape(name)}</text>"
            )
    out.append("</svg>")
    return "\n".join(out)


def _short(name: str, limit: int = 22) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "…"


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
    left, right, top, bottom = 130, 170, 34, 46
    bar, gap = 11, 9
    n = len(names)
    ph = len(groups) * (n * bar + gap) + gap
    height = top + ph + bottom
    pw = width - left - right
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
        'font-family="Helvetica, Arial, sans-serif">',
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
        ly = top + 8 + i * 17
        out.append(
            f'<rect x="{lx}" y="{ly - 6}" width="22" height="10" {_fill(colors[i])}/>'
            f'<text class="legend" x="{lx + 28}" y="{ly + 4}" font-size="11">'
            f"{escape(_short(name))}</text>"
        )
    out.append("</svg>")
    return "\n".join(out)
