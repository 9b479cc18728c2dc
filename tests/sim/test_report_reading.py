"""The simulate report read as a user (issue 25, item 11), on a trace made
to have each difficulty: its activity is bunched (two jobs in its first 60
days, 360 in the next 20), most jobs never wait (a CDF would sit at the top
of its plot), a team has a long name, and there are more teams than a plot
draws one by one."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from kuota.cli.main import main

DATA = Path(__file__).parent.parent / "data" / "sim"
SVG = "{http://www.w3.org/2000/svg}"
DAY, H = 86400, 3600
LONG = "inference-team-with-a-long-name"
# 11 small teams of unequal jobs and hours (t01: many short jobs), one job
# every 2 h: so that ranking by jobs and by GPU-hours disagree
SLOTS = ["t01"] * 5 + ["t02"] * 2 + [f"t{k:02d}" for k in range(3, 12)]


def bunched_trace() -> str:
    rows = [("lead-1", 0, H, "t01"), ("lead-2", 10 * DAY, H, "t02")]
    start = 60 * DAY
    for i in range(240):
        team = SLOTS[i % 16]
        k = int(team[1:])
        dur = H // 4 if k == 1 else H // 3 if k == 2 else H + (k % 5) * 600
        rows.append((f"j{i}", start + i * 2 * H, dur, team))
    for k in range(40):  # every 12 h three 2-h jobs at once on 2 GPUs: one waits
        for j in range(3):
            rows.append((f"b{k}-{j}", start + k * 12 * H + H // 2, 2 * H, LONG))
    rows.sort(key=lambda r: r[1])
    head = "job_id,submit_s,duration_s,team,user,gpus,gpu_model,cpus,memory_mib,pods,status\n"
    return head + "".join(f"{j},{t},{d},{team},,1,,1,1024,1,Succeeded\n" for j, t, d, team in rows)


@pytest.fixture(scope="module")
def html(tmp_path_factory: pytest.TempPathFactory) -> str:
    d = tmp_path_factory.mktemp("reading")
    (d / "trace.csv").write_text(bunched_trace())
    (d / "m.yaml").write_text('teams: {"*": team-a/team-a}\n')
    out = d / "r.html"
    args = ["--trace", str(d / "trace.csv"), "--world", str(DATA / "tiny-pool.yaml")]
    args += ["--mapping", str(d / "m.yaml"), "--html", str(out), "--no-progress"]
    r = CliRunner().invoke(main, ["simulate", *args])
    assert r.exit_code == 0, r.output
    return out.read_text()


def charts(html: str) -> dict[str, ET.Element]:
    """Each plot by its title (the first of a title: not the folded copies)."""
    out: dict[str, ET.Element] = {}
    for m in re.findall(r"<svg .*?</svg>", html, re.S):
        svg = ET.fromstring(m)
        out.setdefault(svg.findtext(f"{SVG}title") or "", svg)
    return out


def texts(svg: ET.Element, cls: str | None, anchor: str | None = None) -> list[str]:
    return [
        t.text or ""
        for t in svg.iter(f"{SVG}text")
        if t.get("class") == cls and (anchor is None or t.get("text-anchor") == anchor)
    ]


def x_ticks(svg: ET.Element) -> list[float]:
    return [float(v.replace(",", "")) for v in texts(svg, None, "middle")]


def test_the_time_axes_cover_the_activity_not_the_idle_lead_in(html: str) -> None:
    plots = charts(html)
    for title in ("GPU utilization over time: tiny-pool", "Queue length over time: tiny-pool"):
        svg = plots[title]
        ticks = x_ticks(svg)
        # days: the first 60 days hold 2 of 362 submissions and are left out,
        # the activity (days 60 to 80) is all on the axis
        assert 15 <= min(ticks) <= 60 and max(ticks) >= 75, ticks
        assert texts(svg, "xlabel")[0].endswith(f"from day {min(ticks):g}")
    assert "The axis starts at day 60: 2 of the 362 jobs were submitted before it" in html
    # the whole timeline is one click away
    folded = re.findall(r"<details><summary>the whole timeline.*?</details>", html, re.S)
    assert len(folded) == 2
    whole = [ET.fromstring(m) for f in folded for m in re.findall(r"<svg .*?</svg>", f, re.S)]
    assert [min(x_ticks(s)) for s in whole] == [0, 0]


def test_waits_most_jobs_never_had_are_drawn_as_a_log_tail(html: str) -> None:
    svg = charts(html)["Wait-time tail per team: tiny-pool"]
    assert texts(svg, "ylabel") == ["jobs that waited longer (%, log scale)"]
    # decades down to one job of the largest curve (362 jobs: 0.28 %)
    assert texts(svg, None, "end") == ["0.1", "1", "10", "100"]
    assert "admitted jobs that waited longer than x, on a log scale" in html


def test_legends_and_labels_are_never_cut(html: str) -> None:
    plots = charts(html)
    waits = next(svg for title, svg in plots.items() if title.startswith("Wait-time"))
    assert f"{LONG} (120)" in texts(waits, "legend")
    for title, svg in plots.items():
        width, height = (float(v) for v in svg.get("viewBox", "").split()[2:])
        for t in svg.iter(f"{SVG}text"):
            assert "…" not in (t.text or ""), (title, t.text)
            if t.get("class") != "legend" and t.get("text-anchor") != "end":
                continue
            # at half an em a character (Helvetica's lower case is narrower)
            size = float(t.get("font-size", "11"))
            x, y, w = float(t.get("x", 0)), float(t.get("y", 0)), 0.5 * size * len(t.text or "")
            left, right = (x - w, x) if t.get("text-anchor") == "end" else (x, x + w)
            assert left >= 0 and right <= width and y <= height, (title, t.text, right, width)


def test_the_plots_show_the_teams_the_table_lists(html: str) -> None:
    section = html.split("<h2>Design tiny-pool</h2>", 1)[1]
    table = section.split("<details>", 1)[0]  # the table shown, not the folded one
    rows = re.findall(r"<tr><td>([^<]*)</td>", table)
    assert rows[-1] == "overall"
    listed = rows[:-1]
    # by GPU-hours: the long-named team, then t04 and t09 (25), t03 and t08 (22.5) ...
    assert listed[0] == LONG and listed[-1] == "5 other teams" and len(listed) == 8
    plots = charts(html)

    def names(legend: list[str]) -> list[str]:
        return [re.sub(r" \(\d+\)$", "", n) for n in legend if not n.startswith("all teams")]

    assert names(texts(plots["Wait-time tail per team: tiny-pool"], "legend")) == listed
    assert names(texts(plots["GPU utilization over time: tiny-pool"], "legend")) == listed
    assert names(texts(plots["Queue length over time: tiny-pool"], "legend")) == listed
    fair = plots["Each team's share of GPU-hours against its nominal share"]
    assert texts(fair, None, "end") == listed
    # every team is still in the report, folded below the table
    assert "all 12 teams (click to show)" in section
    folded = section.split("<details>", 1)[1].split("</details>", 1)[0]
    assert len(re.findall(r"<tr><td>(?:t\d\d|" + LONG + ")</td>", folded)) == 12
