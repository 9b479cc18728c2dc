"""The HTML report: one self-contained file (no script, nothing fetched), the
plots as well-formed inline SVG with titles, labelled axes and legends, the
fractional-GPU policy stated; and, where Debian's chromium is installed, a
headless screenshot that is the right size and not blank."""

from __future__ import annotations

import html as html_module
import json
import os
import re
import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
import zlib
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from kuota.cli.main import main

DATA = Path(__file__).parent.parent / "data" / "sim"
SVG = "{http://www.w3.org/2000/svg}"


def report(tmp_path: Path, *args: str) -> str:
    out = tmp_path / "r.html"
    r = CliRunner().invoke(main, ["simulate", *args, "--html", str(out), "--no-progress"])
    assert r.exit_code == 0, r.output
    return out.read_text()


def charts(html: str) -> list[ET.Element]:
    return [ET.fromstring(m) for m in re.findall(r"<svg .*?</svg>", html, re.S)]


def texts(svg: ET.Element, cls: str) -> list[str]:
    return [t.text or "" for t in svg.iter(f"{SVG}text") if t.get("class") == cls]


def check_chart(svg: ET.Element) -> str:
    title = svg.find(f"{SVG}title")
    assert title is not None and title.text
    assert texts(svg, "title") == [title.text]
    assert len(svg.findall(f".//{SVG}path")) + len(svg.findall(f".//{SVG}rect")) > 2
    # legible: no text smaller than 11 px, and the axes and legend are labelled
    sizes = [float(t.get("font-size", "0")) for t in svg.iter(f"{SVG}text")]
    assert sizes and min(sizes) >= 11
    assert texts(svg, "xlabel") and texts(svg, "legend")
    return title.text


def test_single_design_report(tmp_path: Path) -> None:
    html = report(
        tmp_path, "--trace", str(DATA / "tiny.csv"), "--world", str(DATA / "tiny-pool.yaml")
    )
    assert html.startswith("<!DOCTYPE html>")
    # self-contained: nothing to fetch, nothing to run
    assert "<script" not in html and "<link" not in html and "@import" not in html
    assert "src=" not in html and "url(http" not in html
    assert re.findall(r"https?://[^\s\"']+", html) == ["http://www.w3.org/2000/svg"] * 4
    assert 'id="policy"' in html and "rounded up to whole nvidia.com/gpu" in html
    svgs = charts(html)
    titles = [check_chart(s) for s in svgs]
    assert titles == [
        "Wait-time CDF per team: tiny-pool",
        "GPU utilization over time: tiny-pool",
        "Queue length over time: tiny-pool",
        "Each team's share of GPU-hours against its nominal share",
    ]
    cdf, util, queue, fair = svgs
    assert texts(cdf, "xlabel") == [
        "wait from submission to admission (log scale; waits under 1 s at 1 s)"
    ]
    assert texts(cdf, "ylabel") == ["jobs admitted within that wait (%)"]
    assert texts(cdf, "legend") == ["team-a (2)", "team-b (2)", "all teams"]
    assert texts(util, "xlabel") == ["time since the trace's first submission (minutes)"]
    assert texts(util, "ylabel") == ["GPUs in use (% of the nodes' GPUs)"]
    assert texts(queue, "ylabel") == ["jobs waiting for admission"]
    assert texts(queue, "legend") == ["team-a", "team-b", "all teams"]
    assert texts(fair, "legend") == ["nominal: tiny-pool", "used: tiny-pool"]
    assert texts(util, "legend") == ["team-a", "team-b", "all teams (mean 97%)"]
    assert len(util.findall(f".//{SVG}path[@class='series']")) == 3
    assert "<table" in html and "Definitions" in html
    assert "Replay stopped" not in html


def test_a_replay_cut_short_says_so_at_the_top(tmp_path: Path) -> None:
    html = report(
        tmp_path,
        "--trace",
        str(DATA / "tiny.csv"),
        "--world",
        str(DATA / "tiny-pool.yaml"),
        "--until",
        "120s",
    )
    head = html.split("<h2>", 1)[0]
    assert "Replay stopped by --until after 2.0m</strong>: the figures cover" in head


def test_compare_overlays_the_designs(tmp_path: Path) -> None:
    html = report(
        tmp_path,
        "--trace",
        str(DATA / "tiny.csv"),
        "--world",
        str(DATA / "tiny-pool.yaml"),
        "--compare",
        str(DATA / "tiny-cohort.yaml"),
    )
    svgs = charts(html)
    titles = [check_chart(s) for s in svgs]
    assert titles == [
        "Wait-time CDF: all teams",
        "Wait-time CDF: team-a",
        "Wait-time CDF: team-b",
        "GPU utilization over time",
        "Queue length over time (all teams)",
        "Each team's share of GPU-hours against its nominal share",
    ]
    for svg in svgs[:5]:
        names = [n.split(" (")[0] for n in texts(svg, "legend")]
        assert names == ["tiny-pool", "tiny-cohort"]
        paths = svg.findall(f".//{SVG}path[@class='series']")
        assert len(paths) == 2
        # the second design is dashed over the first: where they coincide both show
        assert paths[0].get("stroke-dasharray") is None and paths[1].get("stroke-dasharray")
        assert paths[0].get("stroke") != paths[1].get("stroke")
    assert texts(svgs[5], "legend") == [
        "nominal: tiny-pool",
        "used: tiny-pool",
        "nominal: tiny-cohort",
        "used: tiny-cohort",
    ]
    assert "Designs side by side" in html


def _png(path: Path, max_rows: int = 700) -> tuple[int, int, list[bytes]]:
    """Width, height and the first decoded rows of an 8-bit RGB(A) PNG."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, []
    width = height = 0
    bpp = 4
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and color in (2, 6)
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + length
    stride = width * bpp
    raw = zlib.decompressobj().decompress(b"".join(idat), (stride + 1) * max_rows)
    rows: list[bytes] = []
    prev = bytearray(stride)
    for r in range(min(max_rows, len(raw) // (stride + 1))):
        f = raw[r * (stride + 1)]
        line = bytearray(raw[r * (stride + 1) + 1 : (r + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif f == 2:
            line = bytearray((a + b) & 0xFF for a, b in zip(line, prev, strict=True))
        elif f == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prev[i], prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 0xFF
        rows.append(bytes(line))
        prev = line
    return width, height, rows


CHROMIUM = shutil.which("chromium") or (
    "/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None
)


def _chromium(tmp_path: Path, *args: str) -> str:
    """Run headless chromium at 1280 px wide (a laptop's browser); its output."""
    cmd = [
        str(CHROMIUM),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--window-size=1280,2000",
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False).stdout


# Appended to a copy of a report: every text of every plot shown, measured as
# the browser lays it out, that does not lie wholly inside its plot's box.
_MEASURE = """<script>
const cut = [];
document.querySelectorAll("svg.chart").forEach((svg) => {
  const box = svg.getBoundingClientRect();
  if (!box.width) return;  // folded away
  svg.querySelectorAll("text").forEach((t) => {
    const b = t.getBoundingClientRect();
    if (b.left < box.left - 0.5 || b.right > box.right + 0.5 ||
        b.top < box.top - 0.5 || b.bottom > box.bottom + 0.5)
      cut.push(svg.querySelector("title").textContent + ": " + t.textContent);
  });
});
document.body.setAttribute("data-cut", JSON.stringify(cut));
</script>"""


def _cut_texts(tmp_path: Path, report_html: str) -> list[str]:
    page = tmp_path / "measure.html"
    page.write_text(report_html.replace("</body>", _MEASURE + "</body>"))
    dom = _chromium(tmp_path, "--dump-dom", f"file://{page}")
    found = re.search(r'data-cut="([^"]*)"', dom)
    assert found, "chromium did not run the measurement"
    return list(json.loads(html_module.unescape(found.group(1))))


@pytest.mark.skipif(
    CHROMIUM is None,
    reason="Debian's chromium is not installed (apt-get install chromium): no screenshot test",
)
def test_headless_chromium_renders_the_plots(tmp_path: Path) -> None:
    html = report(
        tmp_path,
        "--trace",
        str(DATA / "openb-slice.csv"),
        "--world",
        str(DATA / "tiny-pool.yaml"),
        "--mapping",
        str(_mapping(tmp_path)),
    )
    assert html
    png = tmp_path / "shot.png"
    _chromium(tmp_path, f"--screenshot={png}", f"file://{tmp_path / 'r.html'}")
    assert png.exists(), "chromium wrote no screenshot"
    width, height, rows = _png(png, max_rows=1100)  # the plots are in the top 1100 rows
    assert (width, height) == (1280, 2000)
    bpp = len(rows[0]) // width
    pixels = [r[i : i + 3] for r in rows[::4] for i in range(0, len(r), bpp * 2)]
    grey = [sum(p) / 3 for p in pixels]
    mean = sum(grey) / len(grey)
    variance = sum((g - mean) ** 2 for g in grey) / len(grey)
    assert variance > 100, "the page is blank"
    dark = sum(1 for g in grey if g < 128) / len(grey)
    assert dark > 0.005, "no text or axes drawn"
    # every team's line was drawn: the series colours of the three teams (BE,
    # Burstable, LS: nothing but plotted lines and bars uses them) are on the page
    seen = Counter(
        bytes(r[i : i + 3]) for r in rows for i in range(0, len(r), bpp) if r[i] != r[i + 1]
    )

    def near(color: str) -> int:
        want = bytes.fromhex(color[1:])
        return sum(
            n
            for px, n in seen.items()
            if all(abs(a - b) < 24 for a, b in zip(px, want, strict=True))
        )

    for color in ("#4e79a7", "#f28e2b", "#e15759"):
        assert near(color) > 50, f"no line or bar drawn in {color}"
    # no title, tick, axis label or legend runs out of its plot, as laid out
    assert _cut_texts(tmp_path, html) == []


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed: no layout test")
def test_long_team_names_fit_their_plots_as_chromium_lays_them_out(tmp_path: Path) -> None:
    from .test_report_reading import LONG, bunched_trace

    (tmp_path / "trace.csv").write_text(bunched_trace())
    (tmp_path / "m.yaml").write_text('teams: {"*": team-a/team-a}\n')
    html = report(
        tmp_path,
        "--trace",
        str(tmp_path / "trace.csv"),
        "--world",
        str(DATA / "tiny-pool.yaml"),
        "--mapping",
        str(tmp_path / "m.yaml"),
    )
    assert LONG in html
    assert _cut_texts(tmp_path, html) == []


def _mapping(tmp_path: Path) -> Path:
    m = tmp_path / "m.yaml"
    m.write_text('teams: {LS: team-a/team-a, "*": team-b/team-b}\n')
    return m


def test_long_series_are_drawn_as_interval_means_or_maxima() -> None:
    from kuota.sim.html import BUCKETS, _bucketed

    # a step function alternating 0 and 1 every second for 2400 s, in 600
    # intervals of 4 s: every interval's time-weighted mean is 1/2, its maximum 1
    points = [(float(i), float(i % 2)) for i in range(2400)]
    means = _bucketed(points, 2400.0, mean=True)
    assert len(means) == BUCKETS and means[0][0] == 0
    assert all(abs(v - 0.5) < 1e-9 for _, v in means)
    assert {v for _, v in _bucketed(points, 2400.0, mean=False)} == {1.0}
    short = points[:100]
    assert _bucketed(short, 100.0, mean=True) == short  # drawn exactly


def test_bars_end_inside_the_frame_on_a_labelled_tick() -> None:
    from kuota.sim.svg_chart import bar_chart

    # 50.3 % used: the axis must run past it to a tick (60), not stop at 50.3
    svg = ET.fromstring(
        bar_chart("t", "share (%)", [("LS", [50.3, 33.3])], ["used", "nominal"], ["#111", "#222"])
    )
    rects = [r for r in svg.iter(f"{SVG}rect") if r.find(f"{SVG}title") is not None]
    frame = next(r for r in svg.iter(f"{SVG}rect") if r.get("stroke") == "#666666")
    right = float(frame.get("x", 0)) + float(frame.get("width", 0))
    widest = max(float(r.get("x", 0)) + float(r.get("width", 0)) for r in rects)
    assert widest < right - 5
    ticks = [t.text for t in svg.iter(f"{SVG}text") if t.get("class") is None and t.text]
    assert ticks[-2:] == ["60", "LS"]  # the last tick label, then the group label
