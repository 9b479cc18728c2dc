"""``--state`` at the command line: an empty one is none, a directory that is
not a kuota state is refused untouched, a damaged state is named, a full
disk is one line and resumes, and a state a live ``kuota run`` holds reads
while writes say who owns it and what to do."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from kuota.cli.main import main

WORLD = Path(__file__).parent.parent / "fixtures" / "worlds" / "small.yaml"
KUOTA = str(Path(sys.executable).with_name("kuota"))
FULL_DISK = str(Path(__file__).with_name("full_disk.py"))


def cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args), env=env)
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r.exit_code, r.output


def tree(path: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(path)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(path.rglob("*"))
        if p.is_file()
    }


def test_an_empty_state_is_no_state_for_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "keep.tmp").write_text("the user's")
    (tmp_path / "notes.txt").write_text("the user's")
    before = tree(tmp_path)
    code, out = cli("run", str(WORLD), "--state", "", "--no-live")
    assert code == 0, out
    code, out = cli("run", str(WORLD), "--no-live", env={"KUOTA_STATE": ""})
    assert code == 0, out
    assert tree(tmp_path) == before  # nothing written to, nothing removed from, the cwd


def test_empty_state_for_reads_and_writes_is_a_usage_error(tmp_path: Path) -> None:
    for args in (
        ["get", "nodes", "--state", ""],
        ["describe", "workload", "w", "--state", ""],
        ["node", "cordon", "n1", "--state", ""],
    ):
        code, out = cli(*args)
        assert code == 2 and "no state directory" in out, (args, out)


def test_a_directory_that_is_not_a_state_is_refused_untouched(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("years of work")
    (mine / "thesis.tmp").write_text("the editor's swap file")
    before = tree(mine)
    for args in (
        ["get", "nodes"],
        ["describe", "workload", "w"],
        ["capacity", "--pod", str(WORLD), "--state", str(mine)],
        ["node", "cordon", "n1"],
        ["node", "drain", "n1"],
        ["run", str(WORLD), "--no-live"],
    ):
        full = args if "--state" in args else [*args, "--state", str(mine)]
        code, out = cli(*full)
        assert code == 2, (args, out)
        assert f"{mine}: not a kuota state directory" in out, (args, out)
        assert "Traceback" not in out
    assert tree(mine) == before


def test_reads_of_a_state_change_nothing(tmp_path: Path) -> None:
    state = tmp_path / "state"
    code, out = cli("run", str(WORLD), "--state", str(state), "--no-live")
    assert code == 0, out
    before = tree(state)
    for args in (["get", "workloads", "-A"], ["get", "nodes"], ["describe", "job", "ok"]):
        code, out = cli(*args, "--state", str(state))
        assert code == 0, (args, out)
    assert tree(state) == before


def test_a_damaged_state_is_named_by_file_and_record(tmp_path: Path) -> None:
    state = tmp_path / "state"
    code, out = cli("run", str(WORLD), "--state", str(state), "--no-live")
    assert code == 0, out
    snapshot = state / "snapshot-000000000001"
    lines = snapshot.read_bytes().splitlines(keepends=True)
    snapshot.write_bytes(b"".join(lines[:3] + lines[4:]))  # an object removed
    for args in (["get", "nodes"], ["node", "cordon", "n1"], ["run", str(WORLD), "--no-live"]):
        code, out = cli(*args, "--state", str(state))
        assert code == 2, (args, out)
        assert f"{snapshot}: line 4: does not follow line 3" in out, (args, out)


# ------------------------------------------------------------------ a disk that refuses
def _run_limited(args: list[str], limit: int) -> subprocess.CompletedProcess[str]:
    def lower() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [KUOTA, *args], preexec_fn=lower, capture_output=True, text=True, timeout=120
    )


def test_file_too_large_is_one_line_and_the_state_resumes(tmp_path: Path) -> None:
    """A real EFBIG: the process may write no file past 8,000 bytes (ulimit -f)."""
    state = tmp_path / "state"
    r = _run_limited(["run", str(WORLD), "--state", str(state), "--no-live"], 8000)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    errors = [line for line in (r.stdout + r.stderr).splitlines() if line.strip()]
    assert errors == [
        f"error: the state {state}: cannot write segment-000000000000: File too large "
        "(EFBIG): a file would exceed the size limit (ulimit -f, or the filesystem's); "
        "every write acknowledged before is kept, and the state resumes from there once "
        "it can be written"
    ]
    r = _run_limited(["get", "nodes", "--state", str(state)], 0)  # reads never write
    assert r.returncode == 0 and "n1" in r.stdout, r.stdout + r.stderr
    code, out = cli("run", str(WORLD), "--state", str(state), "--no-live")  # room again
    assert code == 0, out
    code, out = cli("get", "jobs", "--state", str(state))
    assert code == 0 and "ok" in out and "free" in out, out


def test_disk_full_is_one_line_and_reads_still_print(tmp_path: Path) -> None:
    state = tmp_path / "state"
    r = subprocess.run(
        [sys.executable, FULL_DISK, "8000", "kuota", "run", str(WORLD), "--state", str(state)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = r.stdout + r.stderr
    assert r.returncode == 1 and "Traceback" not in out, out
    assert [line for line in out.splitlines() if line.strip()] == [
        f"error: the state {state}: cannot write segment-000000000000: No space left on "
        "device (ENOSPC): the disk is full: free space; every write acknowledged before is "
        "kept, and the state resumes from there once it can be written"
    ]
    r = subprocess.run(
        [sys.executable, FULL_DISK, "0", "kuota", "get", "nodes", "--state", str(state)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0 and "n1" in r.stdout, r.stdout + r.stderr


# ------------------------------------------------------------------ a live run's state
def test_a_live_runs_state_reads_and_refuses_writes_naming_the_owner(tmp_path: Path) -> None:
    state = tmp_path / "state"
    run = subprocess.Popen(
        [KUOTA, "run", str(WORLD), "--state", str(state), "--real-time", "--until", "1h"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:  # until the run has acknowledged its first writes
            code, out = cli("get", "workloads", "--state", str(state))
            if code == 0 and "ok" in out:
                break
            assert run.poll() is None, run.communicate()[0]
            assert time.monotonic() < deadline, out
            time.sleep(0.2)
        code, out = cli("get", "nodes", "--state", str(state))
        assert code == 0 and "n1" in out, out
        code, out = cli("describe", "job", "ok", "--state", str(state))
        assert code == 0 and "ok" in out, out
        for args in (
            ["node", "cordon", "n1"],
            ["node", "drain", "n1", "--force"],
            ["run", str(WORLD), "--no-live"],
        ):
            code, out = cli(*args, "--state", str(state))
            assert code == 2, (args, out)
            assert f"the state {state} is in use" in out, (args, out)
            assert f"pid {run.pid}" in out and f"kill {run.pid}" in out, (args, out)
            assert "wait for it to finish" in out, (args, out)
        (state / "OWNER").unlink()  # the lock is no file's presence
        code, out = cli("node", "cordon", "n1", "--state", str(state))
        assert code == 2 and "is in use: another kuota process holds it" in out, out
        assert run.poll() is None  # the run was not disturbed
    finally:
        run.send_signal(signal.SIGTERM)  # it saves the state and exits
        output = run.communicate(timeout=60)[0]
    assert run.returncode == 0, output
    code, out = cli("node", "cordon", "n1", "--state", str(state))  # the state is free again
    assert code == 0 and "cordoned" in out, out
    code, out = cli("get", "nodes", "--state", str(state))
    assert "SchedulingDisabled" in out, out
    assert os.path.exists(state / "KUOTA-STATE")
