"""kuota: Kueue-compatible queueing, quota and gang admission for AI/ML workloads."""

__version__ = "0.1.0"


def build() -> str:
    """ "mypyc" when the scheduling core runs compiled (the ``make compiled``
    overlay, build/mypyc, first on PYTHONPATH), else "interpreted"."""
    from kuota.scheduler import core

    return "interpreted" if (core.__file__ or "").endswith(".py") else "mypyc"
