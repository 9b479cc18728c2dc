"""examples/pod-groups runs as its README says: the second group waits whole
(all its pods SchedulingGated, none on a node, though a node has room) while
the first runs, then starts whole when the first ends."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from kuota.cli.main import main

WORLD = Path(__file__).parents[2] / "examples" / "pod-groups" / "world.yaml"


def cli(*args: str) -> str:
    r = CliRunner().invoke(main, list(args))
    assert r.exit_code == 0, r.output
    assert "Traceback" not in r.output
    return r.output


def test_the_pod_groups_example(tmp_path: Path) -> None:
    state = str(tmp_path / "state")
    cli("run", str(WORLD), "--state", state, "--no-live", "--until", "10m")
    rows = [line.split() for line in cli("get", "pods", "-n", "ml", "--state", state).splitlines()]
    status = {row[0]: row[2] for row in rows[1:] if len(row) >= 3 and row[0][:2] in ("a-", "b-")}
    assert status == {
        **{f"a-{i}": "Running" for i in range(4)},
        **{f"b-{i}": "SchedulingGated" for i in range(4)},
    }
    out = cli("describe", "pod", "b-0", "-n", "ml", "--state", state)
    assert "group-b (pending)" in out and "group-b (pods 4/4 created, 4 gated)" in out
    out = cli("run", str(WORLD), "--state", state, "--no-live")
    out = cli("get", "workloads", "-n", "ml", "--state", state)
    rows = [line.split() for line in out.splitlines()[1:]]
    assert [(r[0], r[3], r[4]) for r in rows] == [
        ("group-a", "True", "True"),
        ("group-b", "True", "True"),
    ]
