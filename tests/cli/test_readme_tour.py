"""The README's tour works as printed: every command of its block, in order,
from a clone's root after `make demo` (here: a fresh directory holding the
clone's files, so the tour's state and report land there), exits 0."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).parent.parent.parent
README = REPO / "README.md"


def tour_commands() -> list[str]:
    text = README.read_text()
    section = text.split("## A three-minute tour", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, "the tour has no sh block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_the_readme_opens_with_the_two_commands() -> None:
    first = re.search(r"```sh\n(.*?)```", README.read_text(), re.S)
    assert first is not None
    assert [line.split()[:2] for line in first.group(1).splitlines()] == [
        ["make", "demo"],
        ["make", "test"],
    ]
    assert "(docs/features.md)" in README.read_text()
    assert (REPO / "docs" / "features.md").exists()


def test_every_command_of_the_tour_exits_0(tmp_path: Path) -> None:
    commands = tour_commands()
    assert len(commands) >= 6
    # the clone, as the tour sees it: its files, and .venv as `make demo` made it
    for name in ("examples", "tests", "docs", "README.md"):
        (tmp_path / name).symlink_to(REPO / name)
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    kuota = Path(sys.executable).with_name("kuota")  # this environment's entry point
    (tmp_path / ".venv" / "bin" / "kuota").symlink_to(kuota)
    env = {k: v for k, v in os.environ.items() if k != "KUOTA_STATE"}
    for line in commands:
        argv = shlex.split(line, comments=True)
        assert argv[0] == ".venv/bin/kuota", f"not a kuota command: {line}"
        proc = subprocess.run(
            argv, cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env
        )
        assert proc.returncode == 0, f"{line}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
