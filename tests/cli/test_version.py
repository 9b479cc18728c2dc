"""`kuota --version` names the build that runs (issue 30.4): interpreted, or
with the hot path compiled by mypyc, as the imported core actually is."""

from __future__ import annotations

import subprocess
import sys

import kuota
from kuota.scheduler.admission import admission_core


def test_version_names_the_build_that_runs() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "kuota.cli.main", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    # The build the core was really imported as, not what --version reads.
    running = "interpreted" if (admission_core.__file__ or "").endswith(".py") else "mypyc"
    line = proc.stdout.strip()
    assert line.startswith(f"kuota, version {kuota.__version__} ({running} build, CPython "), line
    assert kuota.build() == running
