"""``kuota recommend --ray``: a local Ray head (one CPU, bound to 127.0.0.1,
started and stopped here) gives the search of one process and of --jobs 2,
file for file. Skipped, with the reason, where Ray is not installed (it is
the optional extra ``kuota[ray]``; .ci/run installs it, best effort)."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.sim.test_recommend import four_gpu_cohort, waves

RAY = Path(sys.executable).parent / "ray"
KUOTA = Path(sys.executable).parent / "kuota"

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ray") is None or not RAY.exists(),
    reason="Ray is not installed (the optional extra: pip install 'kuota[ray]')",
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env() -> dict[str, str]:
    return {
        **os.environ,
        "RAY_USAGE_STATS_ENABLED": "0",
        # Ray's own switch for a one-machine cluster: every server binds 127.0.0.1
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    }


@pytest.fixture
def ray_head() -> Iterator[str]:
    port = _free_port()
    tmp = tempfile.mkdtemp(prefix="kr", dir="/tmp")  # short: Ray's unix sockets live in it
    log = Path(tmp) / "head.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(RAY), "start", "--head", f"--port={port}", "--num-cpus=1",
             "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={tmp}", "--block"],
            stdout=out, stderr=subprocess.STDOUT, env=_env(), start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                pytest.fail(f"ray start exited {proc.returncode}: {log.read_text()[-2000:]}")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if time.monotonic() > deadline:
                pytest.fail(f"the Ray head did not listen within 90 s: {log.read_text()[-2000:]}")
            time.sleep(0.5)
        yield f"127.0.0.1:{port}"
    finally:
        # The head and everything it started are in the session made for it.
        os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def test_ray_gives_the_search_of_one_process_and_of_two(tmp_path: Path, ray_head: str) -> None:
    trace = waves(tmp_path / "t.csv", waves=5, width=3)
    base = four_gpu_cohort(tmp_path)
    args = ["--trace", trace, "--world", base, "--goal", "p95-wait<=60s", "--goal",
            "utilization>=0.5", "--candidates", "4", "--finalists", "1", "--budget", "8",
            "--no-progress"]  # fmt: skip
    got = {}
    for name, extra in (("serial", []), ("jobs", ["--jobs", "2"]), ("ray", ["--ray", ray_head])):
        out = tmp_path / name
        r = subprocess.run(
            [str(KUOTA), "recommend", *args, "--out", str(out), *extra],
            capture_output=True, text=True, env=_env(), timeout=300,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr + r.stdout
        assert "Traceback" not in r.stderr
        got[name] = {p.name: p.read_text() for p in sorted(out.iterdir())}
        # the same but for where it ran, its CPU time and the directory written
        got[name]["stdout"] = "\n".join(
            line
            for line in r.stdout.splitlines()
            if "s of CPU in the evaluations" not in line and not line.startswith("wrote ")
        )
    assert sorted(got["ray"]) == ["pareto.svg", "recommended.yaml", "report.html", "search.json",
                                  "stdout"]  # fmt: skip
    assert got["ray"] == got["serial"] == got["jobs"]


def test_an_unreachable_ray_cluster_is_one_clear_line(tmp_path: Path) -> None:
    trace = waves(tmp_path / "t.csv", waves=5, width=3)
    port = _free_port()  # nothing listens there
    r = subprocess.run(
        [str(KUOTA), "recommend", "--trace", trace, "--world", four_gpu_cohort(tmp_path),
         "--goal", "p95-wait<=60s", "--candidates", "4", "--finalists", "1", "--budget", "8",
         "--ray", f"127.0.0.1:{port}", "--no-progress"],
        capture_output=True, text=True, env=_env(),
        timeout=300,
    )  # fmt: skip
    assert r.returncode == 2, r.stderr
    assert f"error: --ray 127.0.0.1:{port}: cannot connect to a Ray cluster" in r.stderr
    assert "Traceback" not in r.stderr
