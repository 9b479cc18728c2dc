"""The wheel users install (issue 30.4): ``pip wheel`` of the repository
compiles the hot path with mypyc when a C compiler is there, as black and mypy
ship theirs, and builds the pure wheel with a notice when none is.

The whole HOT list compiles in minutes; to stay within a minute, the compiled
test sets KUOTA_MYPYC_MODULES to one module (the admission core, the file
``kuota.build()`` looks for), so it proves the mechanism (HOT paths into
mypycify, the extension modules in the wheel, the installed build naming
itself), not the full list's compile. Offline: the .venv's setuptools and
mypy, no build isolation, no index."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORE = "kuota/scheduler/admission/admission_core.py"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "KUOTA_MYPYC")}
    return {**env, **extra}


def _checkout(tmp: Path) -> Path:
    """What an sdist holds, copied so that the build writes nothing in the repo."""
    src = tmp / "kuota-src"
    src.mkdir()
    for name in ("setup.py", "pyproject.toml", "Makefile", "README.md"):
        if (ROOT / name).exists():
            shutil.copy(ROOT / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.so")
    shutil.copytree(ROOT / "src", src / "src", ignore=ignore)
    return src


def _wheel(tmp: Path, **env: str) -> tuple[Path, str]:
    src = _checkout(tmp)
    r = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-v", "--no-build-isolation", "--no-deps",
         "--no-index", "--disable-pip-version-check", "-w", str(tmp / "dist"), str(src)],
        capture_output=True, text=True, env=_env(**env), timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    (whl,) = (tmp / "dist").glob("kuota-*.whl")
    return whl, r.stdout + r.stderr


def _installed_version(tmp: Path, whl: Path) -> str:
    """``kuota --version`` of the wheel installed into a fresh venv (its
    dependencies seen through the test's own site-packages)."""
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
         "-q", "--no-deps", "--no-index", "--disable-pip-version-check", str(whl)],
        check=True, env=_env(),
    )  # fmt: skip
    site = subprocess.run(
        [venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    Path(site, "kuota-test-deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    r = subprocess.run(
        [venv / "bin" / "kuota", "--version"], capture_output=True, text=True, env=_env(), cwd=tmp
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


def _has_cc() -> bool:
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    return shutil.which(cc.split()[0]) is not None


@pytest.mark.skipif(not _has_cc(), reason="no C compiler: the pure-wheel test covers this host")
def test_wheel_with_a_compiler_holds_the_compiled_hot_path(tmp_path: Path) -> None:
    whl, log = _wheel(tmp_path, KUOTA_MYPYC_MODULES=CORE)
    assert "linux" in whl.name or "macosx" in whl.name or "win" in whl.name, whl.name
    names = zipfile.ZipFile(whl).namelist()
    core = CORE.removesuffix(".py")
    assert any(n.startswith(core + ".") and n.endswith((".so", ".pyd")) for n in names), names
    assert "kuota: notice" not in log
    assert "mypyc build" in _installed_version(tmp_path, whl)


def test_wheel_without_a_compiler_is_pure_with_a_notice(tmp_path: Path) -> None:
    whl, log = _wheel(tmp_path, CC="false")
    assert whl.name.endswith("-py3-none-any.whl"), whl.name
    assert not [n for n in zipfile.ZipFile(whl).namelist() if n.endswith((".so", ".pyd"))]
    assert "kuota: notice: no working C compiler: building the interpreted" in log
    assert "interpreted build" in _installed_version(tmp_path, whl)
