"""Reading traces and node lists: typed rows, and every bad input an
InputError naming the file, line and column of the problem."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from kuota.sim.trace import InputError, read_nodes, read_trace

ROOT = Path(__file__).parent.parent.parent
HEADER = "job_id,submit_s,duration_s,team,user,gpus,gpu_model,cpus,memory_mib,pods,status\n"


def write(tmp_path: Path, text: str, name: str = "t.csv") -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def error(path: str, reader=read_trace) -> InputError:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError) as exc:
        reader(path)
    return exc.value


def test_rows_are_typed_and_sorted_by_submission(tmp_path: Path) -> None:
    p = write(
        tmp_path,
        HEADER + "b,20,5,BE,,0.46,,6,12288,1,Running\n"
        "a,10,7,LS,u1,1,T4,12,16384,2,Failed\n"
        "c,20,1,LS,,0,,1.5,100,1,\n",
    )
    t = read_trace(p)
    assert [r.job_id for r in t.rows] == ["a", "b", "c"]  # ties keep file order
    a = t.rows[0]
    assert (a.line, a.submit_s, a.duration_s, a.team, a.user) == (3, 10, 7, "LS", "u1")
    assert (a.gpus, a.gpu_model, a.cpus, a.memory_mib, a.pods, a.status) == (
        1,
        "T4",
        12,
        16384,
        2,
        "Failed",
    )
    assert t.rows[1].gpus == Decimal("0.46")
    assert t.col(t.rows[1], "team") == len("b,20,5,") + 1
    assert t.name == "t"


def test_optional_columns_default_and_order_is_free(tmp_path: Path) -> None:
    p = write(tmp_path, "team,gpus,job_id,duration_s,submit_s,extra\nLS,1,a,5,0,x\n")
    r = read_trace(p).rows[0]
    assert (r.cpus, r.memory_mib, r.pods, r.gpu_model, r.status) == (0, 0, 1, "", "")


def test_quoted_fields_and_comments(tmp_path: Path) -> None:
    p = write(tmp_path, "# a comment\n" + HEADER + '"a,""1""",0,5,"L S",,1,,1,1,1,\n')
    r = read_trace(p).rows[0]
    assert (r.job_id, r.team, r.line) == ('a,"1"', "L S", 3)


@pytest.mark.parametrize(
    ("text", "line", "col", "reason"),
    [
        ("", 1, 1, "empty file"),
        ("\n\n", 1, 1, "empty file"),
        (HEADER, 2, 1, "no jobs"),
        ("job_id,submit_s,team,gpus\na,0,LS,1\n", 1, 26, "missing column duration_s"),
        ("job_id,team\na,LS\n", 1, 12, "missing columns submit_s, duration_s, gpus"),
        (HEADER + "a,0,-5,LS,,1,,1,1,1,\n", 2, 5, "duration_s: -5 must not be negative"),
        (HEADER + "a,-1,5,LS,,1,,1,1,1,\n", 2, 3, "submit_s: -1 must not be negative"),
        (HEADER + "a,0,1e400,LS,,1,,1,1,1,\n", 2, 5, "duration_s: 1e400 is more than"),
        (HEADER + "a,9223372037,5,LS,,1,,1,1,1,\n", 2, 3, "submit_s: 9223372037 is more than"),
        (HEADER + "a,0,5,LS,,lots,,1,1,1,\n", 2, 11, 'gpus: "lots" is not a number'),
        (HEADER + "a,0,5,LS,,nan,,1,1,1,\n", 2, 11, 'gpus: "nan" is not a number'),
        (HEADER + "a,0,5,LS,,1,,1,1,0,\n", 2, 18, "pods: must be at least 1"),
        (HEADER + "a,0,5,LS,,1,,1,1,1.5,\n", 2, 18, "pods: 1.5 must be a whole number"),
        (HEADER + "a,0,5,,,1,,1,1,1,\n", 2, 7, "team: must not be empty"),
        (HEADER + "a,0,,LS,,1,,1,1,1,\n", 2, 5, "duration_s: must not be empty"),
        (HEADER + "a,0,5,LS,,1,,1,1,1\n", 2, 19, "expected 11 fields as in the header, found 10"),
        (
            HEADER + "a,0,5,LS,,1,,1,1,1,,x\n",
            2,
            21,
            "expected 11 fields as in the header, found 12",
        ),
        (HEADER + '"a,0,5,LS,,1,,1,1,1,\n', 2, 1, "unterminated quoted field"),
        ("job_id,job_id\n", 1, 8, 'column "job_id" appears twice'),
    ],
)
def test_bad_traces_name_line_and_column(
    tmp_path: Path, text: str, line: int, col: int, reason: str
) -> None:
    p = write(tmp_path, text)
    err = error(p)
    assert (err.file, err.line, err.col) == (p, line, col)
    assert reason in err.reason
    assert str(err).startswith(f"{p}:{line}:{col}: ")


def test_not_utf8_and_missing_file(tmp_path: Path) -> None:
    p = tmp_path / "bin.csv"
    p.write_bytes(HEADER.encode() + b"a,0,5,L\xff,,1,,1,1,1,\n")
    err = error(str(p))
    assert (err.line, err.col, err.reason) == (2, 8, "not UTF-8 text")
    err = error(str(tmp_path / "nope.csv"))
    assert (err.line, err.col) == (1, 1) and "cannot read" in err.reason
    err = error(str(tmp_path))
    assert "directory" in err.reason


def test_node_list(tmp_path: Path) -> None:
    p = write(
        tmp_path, "node_id,gpu_model,gpus,cpus,memory_mib\nn1,G2,8,96,393216\nn2,,0,32,1024\n"
    )
    nodes = read_nodes(p)
    assert [(n.node_id, n.gpu_model, n.gpus) for n in nodes] == [("n1", "G2", 8), ("n2", "", 0)]
    p = write(tmp_path, "node_id,gpu_model,gpus,cpus,memory_mib\nn1,G2,0.5,96,1\n", "n.csv")
    err = error(p, read_nodes)
    assert (err.line, err.col, err.reason) == (2, 7, "gpus: 0.5 must be a whole number")
    p = write(tmp_path, "node_id,gpus,cpus,memory_mib\nn1,1,1,1\nn1,1,1,1\n", "d.csv")
    err = error(p, read_nodes)
    assert (err.line, err.col) == (3, 1) and "already on line 2" in err.reason
    p = write(tmp_path, "node_id,gpu_model,gpus\nn1,G2,1\n", "m.csv")
    assert "missing columns cpus, memory_mib" in error(p, read_nodes).reason


def test_plain_rows_read_as_their_quoted_spelling(tmp_path: Path) -> None:
    # Plain rows take a shorter way than quoted ones: the same values either way.
    rows = [
        "a,0,5,LS,u1,1,T4,12,16384,2,Failed",
        " b , 10.50 ,1e3,BE,,0.46,, 6 ,12288.0,,",
        "c,10,0,LS,,0,,,,3,x",
    ]
    plain = write(tmp_path, HEADER + "\n".join(rows) + "\n", "plain.csv")
    quoted_rows = [",".join(f'"{v}"' for v in r.split(",")) for r in rows]
    quoted = write(tmp_path, HEADER + "\n".join(quoted_rows) + "\n", "quoted.csv")
    for p, q in zip(read_trace(plain).rows, read_trace(quoted).rows, strict=True):
        assert (p.job_id, p.submit_s, p.duration_s, p.team, p.user, p.gpus) == (
            q.job_id,
            q.submit_s,
            q.duration_s,
            q.team,
            q.user,
            q.gpus,
        )
        assert (p.gpu_model, p.cpus, p.memory_mib, p.pods, p.status, p.line) == (
            q.gpu_model,
            q.cpus,
            q.memory_mib,
            q.pods,
            q.status,
            q.line,
        )
    t = read_trace(plain)
    b = next(r for r in t.rows if r.job_id == "b")
    assert (b.submit_s, b.duration_s, b.memory_mib, b.pods) == (Decimal("10.50"), 1000, 12288, 1)
    assert t.col(b, "gpus") == len(" b , 10.50 ,1e3,BE,,") + 1


def test_checking_a_design_reads_no_row_again(tmp_path: Path, monkeypatch: Any) -> None:
    """read_trace gathers what a design's checks need: checking a design
    against a trace in submission order opens it no more (the replay reads
    it once); one out of order is read once more, in that order."""
    import kuota.sim.trace as trace_mod
    from kuota.cli.world import load_world
    from kuota.sim.mapping import Mapping
    from kuota.sim.simulate import Design, prepare

    world = ROOT / "examples" / "traces" / "openb" / "shared-pool.yaml"
    w = load_world([str(world)])
    design = Design(world.stem, str(world), w.objects, w.config, w.openshift, w.scheduler)
    rows = ROOT / "tests" / "data" / "sim" / "openb-slice.csv"
    lines = rows.read_text().splitlines()
    shuffled = write(tmp_path, "\n".join([lines[0], *reversed(lines[1:])]) + "\n")
    opened: list[str] = []
    real_open = trace_mod._open

    def counting_open(path: str) -> Any:
        opened.append(path)
        return real_open(path)

    for path, opens in ((str(rows), 0), (shuffled, 1)):
        t = read_trace(path)
        opened.clear()
        monkeypatch.setattr(trace_mod, "_open", counting_open)
        plan = prepare(t, design, Mapping())
        monkeypatch.setattr(trace_mod, "_open", real_open)
        assert len(opened) == opens, path
        assert sum(tp.jobs for tp in plan.teams.values()) == t.count
