"""A run's report is the run's, not its last segment's: ``kuota run --state A
--until 3h`` then ``--until 30m`` on A prints the summary one ``--until
3h30m`` run prints, and keeps the same objects."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
from click.testing import CliRunner

from kuota.api.decode import to_wire
from kuota.cli.main import main
from kuota.store import open_readonly
from kuota.store.kinds import registered_kinds
from kuota.store.resources import EVENT

QUICKSTART = Path(__file__).parent.parent.parent / "examples" / "quickstart"


def _run(state: Path, until: str) -> str:
    r = CliRunner().invoke(
        main, ["run", str(QUICKSTART), "--state", str(state), "--until", until, "--no-live"]
    )
    assert r.exit_code == 0, r.output
    # stdout only: progress lines go to stderr once a run takes a second of
    # wall time, which a loaded machine decides, not the run.
    return r.stdout


def _no_rv(o: Any) -> Any:
    """The object without resourceVersions (the store's counters, which a
    resumed run's rebuilding writes move on)."""
    if isinstance(o, dict):
        return {k: _no_rv(v) for k, v in o.items() if k != "resourceVersion"}
    if isinstance(o, list):
        return [_no_rv(x) for x in o]
    return o


def _objects(state: Path) -> dict[tuple[Any, ...], Any]:
    with open_readonly(state) as store:
        return {
            (rtype, o.metadata.namespace, o.metadata.name): _no_rv(
                msgspec.json.decode(msgspec.json.encode(to_wire(o)))
            )
            for rtype in registered_kinds()
            for o in store.list(rtype).items
        }


def test_a_resumed_run_reports_and_keeps_what_one_run_does(tmp_path: Path) -> None:
    cut, whole = tmp_path / "cut", tmp_path / "whole"
    _run(cut, "3h")
    resumed = _run(cut, "30m")  # 30 more minutes of the kept run
    once = _run(whole, "3h30m")
    assert "summary: 3.5h of virtual time" in once
    assert resumed == once  # headline, per-team waits, borrowing, evictions alike
    a, b = _objects(cut), _objects(whole)
    assert {k: v for k, v in a.items() if k[0] != EVENT} == {
        k: v for k, v in b.items() if k[0] != EVENT
    }
    # Events expire and are named alike; the resumed run's first scheduling
    # cycle (every pending head tried again, as a restarted Kueue does) may
    # add a Warning at the instant it resumed, and nothing else.
    events_a = {k: v for k, v in a.items() if k[0] == EVENT}
    events_b = {k: v for k, v in b.items() if k[0] == EVENT}
    assert {k: events_a[k] for k in events_b if k in events_a} == events_b
    extra = [events_a[k] for k in events_a.keys() - events_b.keys()]
    assert all(
        e["type"] == "Warning" and e["firstTimestamp"] == "2026-01-01T11:08:00Z" for e in extra
    )


def test_a_kept_run_resumes_without_its_world_and_says_what_is_missing(tmp_path: Path) -> None:
    state = tmp_path / "state"
    _run(state, "1h")
    r = CliRunner().invoke(main, ["run", "--state", str(state), "--until", "1h", "--no-live"])
    assert r.exit_code == 0, r.output
    assert "summary: 2.0h of virtual time" in r.output
    r = CliRunner().invoke(main, ["run", "--no-live"], env={"KUOTA_STATE": ""})
    assert r.exit_code == 2
    assert "give the world's PATHS, or --state DIR of a kept run" in r.output
    r = CliRunner().invoke(main, ["run", "--state", str(tmp_path / "none"), "--no-live"])
    assert r.exit_code == 2 and "no kept run there" in r.output
