"""The one-line notice an interpreted kuota prints on its heavy commands:
they run several times faster on the compiled build, and how to get it.
Printed once the work has run (an input error stays one line), on stderr."""

from __future__ import annotations

import click

import kuota

# the commands whose run time the compiled hot path decides
HEAVY = frozenset({"simulate", "recommend", "bench"})


def warn_if_interpreted(command: str) -> None:
    """On stderr, so that a command's output (--json included) stays clean."""
    if command not in HEAVY or kuota.build() != "interpreted":
        return
    click.echo(
        f"kuota: notice: {command} runs on the interpreted build (several times slower than"
        " the compiled hot path): with a C compiler (gcc or clang), `pip install"
        " --force-reinstall --no-cache-dir kuota` compiles it; in a checkout, `make compiled`"
        " and PYTHONPATH=build/mypyc",
        err=True,
    )
