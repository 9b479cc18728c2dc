"""kuota: Kueue-compatible queueing, quota and gang admission for AI/ML workloads."""

__version__ = "0.1.0"


def build() -> str:
    """ "mypyc" when the scheduling core runs compiled (the ``make compiled``
    overlay, build/mypyc, first on PYTHONPATH), else "interpreted"."""
    from kuota.scheduler.admission import admission_core as core

    return "interpreted" if (core.__file__ or "").endswith(".py") else "mypyc"


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
