"""kuota's wheel: the hot path compiled with mypyc when it can be, as black and
mypy ship theirs; else the pure (interpreted) wheel, with a notice.

The compiled modules are the Makefile's HOT list (read from there, so that
``make compiled`` and the wheel compile the same set). mypyc needs mypy (a
build requirement, pinned as in requirements.lock) and a working C compiler
(probed by compiling a one-line C file, so CC=false counts as none). pip's
wheel cache keeps the built wheel: compiled once per version and Python.

Environment: ``KUOTA_MYPYC=0`` builds the pure wheel; ``KUOTA_MYPYC_MODULES``
(paths as in HOT, space-separated) compiles only those, which the build test
uses to stay within a minute (the whole list takes minutes). An editable
install (``pip install -e``, the checkout's .venv) stays interpreted: the
checkout's compiled build is the ``make compiled`` overlay.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).resolve().parent


def hot_modules() -> list[str]:
    """The Makefile's ``HOT :=`` list, its continuation lines joined."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    m = re.search(r"^HOT :=((?:.*\\\n)*.*)$", text, re.M)
    if m is None:
        raise SystemExit("setup.py: no HOT := list in the Makefile")
    return m.group(1).replace("\\\n", " ").split()


def notice(why: str) -> None:
    print(
        f"kuota: notice: {why}: building the interpreted (pure Python) wheel;"
        " with a C compiler (gcc or clang) and mypy the hot path is compiled with mypyc",
        file=sys.stderr,
    )


def compiler_works() -> bool:
    """Whether the compiler setuptools would use (CC, else Python's own)
    compiles a C file."""
    from setuptools._distutils.ccompiler import new_compiler
    from setuptools._distutils.errors import CCompilerError, DistutilsError
    from setuptools._distutils.sysconfig import customize_compiler

    cc = new_compiler()
    customize_compiler(cc)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp, "probe.c")
        src.write_text("int kuota_probe(void) { return 0; }\n")
        try:
            cc.compile([str(src)], output_dir=tmp)
        except (CCompilerError, DistutilsError, OSError):
            return False
    return True


# the commands that build code; the metadata steps pip runs first (egg_info,
# dist_info) and sdist need no compile
BUILDS = {"bdist_wheel", "build", "build_ext", "install"}


def ext_modules() -> list:
    if not BUILDS.intersection(sys.argv) or "editable_wheel" in sys.argv:
        return []  # an editable checkout runs its source; `make compiled` builds its overlay
    if os.environ.get("KUOTA_MYPYC") == "0":
        notice("KUOTA_MYPYC=0")
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        notice("mypy (mypyc) is not installed")
        return []
    if not compiler_works():
        notice("no working C compiler")
        return []
    only = os.environ.get("KUOTA_MYPYC_MODULES", "").split()
    paths = [f"src/{p}" for p in (only or hot_modules())]
    print(f"kuota: compiling the hot path with mypyc ({len(paths)} paths)", file=sys.stderr)
    # the flags `make compiled` passes: the modules they import stay interpreted
    return mypycify(["--follow-imports=silent", "--ignore-missing-imports", *paths])


setup(ext_modules=ext_modules())
