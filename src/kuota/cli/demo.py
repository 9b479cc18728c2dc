"""``make demo``: kuota's main job on the embedded default.

Runs the quickstart world (flavors, a cohort of two teams, nodes, a morning's
stream of Jobs) in the embedded control plane in virtual time, with a live
table, then prints what happened: per team admitted / finished, mean and p95
wait, borrowed GPU-hours, preemptions, and the GPUs' utilization.
"""

from __future__ import annotations

import sys
from pathlib import Path

from rich.console import Console

from kuota.cli.run import run_world


def run_demo(directory: Path, live: bool = True) -> int:
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 120)
    console.rule(f"kuota demo: {directory} in the embedded control plane (virtual time)")
    return run_world(
        [str(directory)],
        state=None,
        until=None,
        real_time=False,
        speed=1.0,
        live=live,
        console=console,
    )
