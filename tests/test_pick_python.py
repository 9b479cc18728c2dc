"""tools/pick-python, which the Makefile makes .venv from: it names a Python
3.11 that runs and can make a venv, preferring one with libpython linked in."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PICK = Path(__file__).parent.parent / "tools" / "pick-python"


def pick(path: str) -> str:
    out = subprocess.run(
        ["sh", str(PICK)], env={**os.environ, "PATH": path}, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_it_names_a_python_311_that_can_make_a_venv() -> None:
    exe = pick(os.environ["PATH"])
    v = subprocess.run(
        [exe, "-c", "import ensurepip, sys; print(sys.version_info[:2])"],
        capture_output=True,
        text=True,
    )
    assert v.returncode == 0 and v.stdout.strip() == "(3, 11)"


@pytest.mark.skipif(sys.platform != "linux" or not shutil.which("ldd"), reason="needs ldd")
def test_a_static_interpreter_is_preferred_to_a_shared_one(tmp_path: Path) -> None:
    """With a shared-libpython python3.11 first on the PATH and a static one
    after it, the static one is named."""
    static = _interpreter(shared=False)
    shared = _interpreter(shared=True)
    if static is None or shared is None:
        pytest.skip("needs both a static and a shared-libpython python3.11")
    first, second = tmp_path / "a", tmp_path / "b"
    for d, exe in ((first, shared), (second, static)):
        d.mkdir()
        (d / "python3.11").symlink_to(exe)
    tools = os.path.dirname(shutil.which("ldd") or "/usr/bin/ldd")
    both = pick(f"{first}:{second}:{tools}")
    assert Path(both).resolve() == Path(static).resolve()


def _interpreter(*, shared: bool) -> str | None:
    """A python3.11 on this machine linked to libpython as asked, if any."""
    seen = {sys.executable, shutil.which("python3.11") or "", "/usr/bin/python3.11"}
    for p in sorted(x for x in seen if x):
        exe = subprocess.run(
            [p, "-c", "import sys; print(sys.executable)"], capture_output=True, text=True
        ).stdout.strip()
        if not exe:
            continue
        real = str(Path(exe).resolve())
        ldd = subprocess.run(["ldd", real], capture_output=True, text=True).stdout
        if ("libpython" in ldd) == shared:
            return real
    return None
