"""`make demo` runs the compiled hot path when a C compiler is there and
falls back to the interpreted build, with a notice, when none is (issue
30.4). The fallback is what a test can run (the compile takes minutes; CI's
`make test-compiled` holds the compiled build to the same decisions)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).parent.parent.parent


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_demo_without_a_c_compiler_runs_interpreted_with_a_notice(tmp_path: Path) -> None:
    prefix = Path(sys.prefix)
    env = {
        **os.environ,
        "CC": str(tmp_path / "no-such-cc"),
        "KUOTA_PROGRESS_AFTER": "3600",
    }
    env.pop("PYTHONPATH", None)
    # This interpreter's environment stands for .venv, taken as installed (-o).
    made = subprocess.run(
        ["make", "-s", "-o", str(prefix / ".installed-stamp"), "demo", f"VENV={prefix}"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert made.returncode == 0, made.stderr[-2000:]
    assert "kuota: notice: no C compiler found: running the interpreted build" in made.stderr
    assert "compiling the hot path" not in made.stderr
    direct = subprocess.run(
        [sys.executable, "-m", "kuota.cli.main", "demo", "examples/quickstart"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert direct.returncode == 0, direct.stderr[-2000:]
    assert made.stdout == direct.stdout != ""
