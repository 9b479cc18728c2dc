"""kuota: Kueue-compatible queueing, quota and gang admission for AI/ML workloads."""

__version__ = "0.1.0"


def build() -> str:
    """ "mypyc" when the scheduling core runs compiled (the ``make compiled``
    overlay, build/mypyc, first on PYTHONPATH), else "interpreted".

    Read from the files, not by importing the core (``kuota --version`` names
    the build and imports no command): Python's import takes an extension
    module before the ``.py`` beside it, so the core is compiled exactly when
    its extension module is there."""
    import os
    from importlib.machinery import EXTENSION_SUFFIXES

    core = os.path.join(os.path.dirname(__file__), "scheduler", "admission", "admission_core")
    return "mypyc" if any(os.path.exists(core + s) for s in EXTENSION_SUFFIXES) else "interpreted"


def version() -> str:
    """What ``kuota --version`` prints after the name: the version and the
    build that runs (interpreted or mypyc-compiled) on which Python."""
    return f"{__version__} ({build()} build, {interpreter()})"


def interpreter() -> str:
    """The Python running kuota, as a bench names it: its version, and whether
    its executable has libpython linked in ("static") or loads the shared
    library ("shared libpython"), which is slower (see tools/pick-python)."""
    import platform

    kind = "unknown"
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            kind = "shared libpython" if any("libpython" in line for line in maps) else "static"
    except OSError:
        pass  # not Linux: not said
    return f"CPython {platform.python_version()} ({kind})"
