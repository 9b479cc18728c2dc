"""Tables as ``kubectl get`` prints them: left-aligned columns three spaces
apart (its tabwriter), sized to the terminal. A line too long for the terminal
has its last column (a message, a list of names) cut, never a column dropped;
a pipe gets full lines."""

from __future__ import annotations

import os
import shutil
import sys
from typing import Final

GAP: Final = 3  # kubectl's tabwriter padding
CUT: Final = "..."


def output_width() -> int | None:
    """$COLUMNS when set, else the terminal's width; None (no limit) for a pipe."""
    cols = os.environ.get("COLUMNS", "")
    if cols.isdigit() and int(cols) > 0:
        return int(cols)
    if sys.stdout.isatty():
        return shutil.get_terminal_size().columns
    return None


def render(head: list[str], rows: list[list[str]], width: int | None) -> str:
    """The table as text, one line per row after the header."""
    rows = [[" ".join(c.split("\n")) for c in r] for r in rows]
    cols = len(head)
    widths = [
        max(len(head[i]), *(len(r[i]) for r in rows)) if rows else len(head[i]) for i in range(cols)
    ]
    lead = sum(widths[:-1]) + GAP * (cols - 1)  # where the last column starts
    room = None if width is None else max(len(head[-1]), width - lead)
    out = []
    for r in [head, *rows]:
        last = r[-1]
        if room is not None and len(last) > room:
            last = last[: max(room - len(CUT), 0)] + CUT
        cells = [c.ljust(w) for c, w in zip(r[:-1], widths[:-1], strict=True)]
        out.append((" " * GAP).join([*cells, last]).rstrip())
    return "\n".join(out)
