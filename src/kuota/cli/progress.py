"""Progress of a long command (run, simulate, bench, validate) on stderr.

Nothing shows for a command that ends within a second (``KUOTA_PROGRESS_AFTER``
seconds, default 1). After that: a rich bar when stderr is a terminal, or,
when it is piped, one plain line per whole percent a task advances
(``label: 37% detail``), so logs and CI show a long run moving. Never on
stdout: a command's output there (``--json``) stays clean.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, TextIO

AFTER_ENV = "KUOTA_PROGRESS_AFTER"
DEFAULT_AFTER_S = 1.0


def _after_s() -> float:
    raw = os.environ.get(AFTER_ENV, "")
    try:
        return max(0.0, float(raw)) if raw else DEFAULT_AFTER_S
    except ValueError:
        return DEFAULT_AFTER_S


class _Task:
    __slots__ = ("completed", "detail", "label", "printed", "rich_id", "total")

    def __init__(self, label: str, total: float) -> None:
        self.label, self.total = label, total
        self.completed = 0.0
        self.detail = ""
        self.printed = -1  # the last whole percent written as a line
        self.rich_id: Any = None


class Progress:
    """Tasks that advance from 0 to their total; shown only once the command
    has taken longer than the delay. Use as a context manager."""

    def __init__(
        self, *, enabled: bool = True, stream: TextIO | None = None, after_s: float | None = None
    ) -> None:
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.after_s = _after_s() if after_s is None else after_s
        self.started = time.monotonic()
        self.tasks: list[_Task] = []
        self._bar: Any = None  # rich's Progress, on a terminal, once shown
        self._shown = False
        self._tty = _isatty(self.stream)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add(self, label: str, total: float = 1.0) -> int:
        self.tasks.append(_Task(label, max(total, 1e-9)))
        return len(self.tasks) - 1

    def update(
        self, task: int, completed: float, total: float | None = None, detail: str = ""
    ) -> None:
        if not self.enabled:
            return
        t = self.tasks[task]
        if total is not None and total > 0:
            t.total = total
        t.completed = min(max(completed, 0.0), t.total)
        t.detail = detail
        if not self._shown:
            if time.monotonic() - self.started < self.after_s:
                return
            self._show()
        if self._bar is not None:
            for x in self.tasks:
                self._bar.update(x.rich_id, completed=x.completed, total=x.total, detail=x.detail)
        else:
            self._line(t)

    def _show(self) -> None:
        self._shown = True
        if not self._tty:
            return
        from rich.console import Console
        from rich.progress import BarColumn, TaskProgressColumn, TextColumn, TimeElapsedColumn
        from rich.progress import Progress as RichProgress

        self._bar = RichProgress(
            TextColumn("{task.description}"),
            BarColumn(),
            TaskProgressColumn(),
            TextColumn("{task.fields[detail]}"),
            TimeElapsedColumn(),
            console=Console(file=self.stream, highlight=False),
            transient=True,
        )
        for x in self.tasks:
            x.rich_id = self._bar.add_task(x.label, total=x.total, detail=x.detail)
        self._bar.start()

    def _line(self, t: _Task) -> None:
        pct = int(100 * t.completed / t.total)
        if pct <= t.printed:
            return
        t.printed = pct
        detail = f" {t.detail}" if t.detail else ""
        try:
            self.stream.write(f"{t.label}: {pct}%{detail}\n")
            self.stream.flush()
        except (OSError, ValueError):  # stderr closed: progress is not worth failing for
            self.enabled = False

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
