"""Job traces for ``kuota simulate``: the CSV format of the shared traces
(``job_id,submit_s,duration_s,team,user,gpus,gpu_model,cpus,memory_mib,pods,status``)
and their node lists (``node_id,gpu_model,gpus,cpus,memory_mib``).

Every problem is an :class:`InputError` naming the file, the line and the
column (1-based, in characters) where it is: a missing column points at the
header, a bad value at the value. Columns may come in any order; unknown
columns are ignored. Required: ``job_id``, ``submit_s``, ``duration_s``,
``team``, ``gpus``; the others default (``cpus`` and ``memory_mib`` to 0,
``pods`` to 1, ``user``, ``gpu_model`` and ``status`` to empty).
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import BinaryIO, Final

__all__ = [
    "JOB_COLUMNS",
    "NODE_COLUMNS",
    "InputError",
    "NodeRow",
    "SummaryBuilder",
    "Trace",
    "TraceRow",
    "TraceSummary",
    "read_nodes",
    "read_trace",
]

JOB_COLUMNS = (
    "job_id",
    "submit_s",
    "duration_s",
    "team",
    "user",
    "gpus",
    "gpu_model",
    "cpus",
    "memory_mib",
    "pods",
    "status",
)
_JOB_REQUIRED = ("job_id", "submit_s", "duration_s", "team", "gpus")
NODE_COLUMNS = ("node_id", "gpu_model", "gpus", "cpus", "memory_mib")
_NODE_REQUIRED = ("node_id", "gpus", "cpus", "memory_mib")
MAX_BYTES = 1 << 30
# The longest time a Go time.Duration holds (about 292 years): a duration
# becomes the pod's run time and a submission its creation time.
MAX_SECONDS = Decimal(9_223_372_036)


class InputError(Exception):
    """Bad input for ``kuota simulate``: ``file:line:col: reason``."""

    def __init__(self, file: str, line: int, col: int, reason: str) -> None:
        super().__init__(f"{file}:{line}:{col}: {reason}")
        self.file, self.line, self.col, self.reason = file, line, col, reason


@dataclass(frozen=True, slots=True)
class TraceRow:
    """One job of a trace. ``line`` is its line in the file; ``cols`` the
    column of each field, in the header's order (for errors: :meth:`Trace.col`)."""

    line: int
    job_id: str
    submit_s: Decimal
    duration_s: Decimal
    team: str
    user: str
    gpus: Decimal  # per pod; a fraction is a GPU-sharing pod
    gpu_model: str
    cpus: Decimal  # per pod
    memory_mib: Decimal  # per pod
    pods: int
    status: str
    cols: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class TraceSummary:
    """What checking a trace against a design needs of its rows, gathered as
    the trace is read (in submission order), so that checking a design reads
    no row again: each team's first row and job count, the first row of each
    (team, GPU model) asking for GPUs, and the first row of each (team,
    column) asking for a positive amount of ``gpus``, ``cpus`` or
    ``memory_mib``. Dicts in the order the rows came."""

    first: dict[str, TraceRow]
    jobs: dict[str, int]
    pairs: dict[tuple[str, str], TraceRow]
    needs: dict[tuple[str, str], TraceRow]


class SummaryBuilder:
    """Builds a TraceSummary row by row."""

    __slots__ = ("first", "jobs", "needs", "pairs")

    def __init__(self) -> None:
        self.first: dict[str, TraceRow] = {}
        self.jobs: dict[str, int] = {}
        self.pairs: dict[tuple[str, str], TraceRow] = {}
        self.needs: dict[tuple[str, str], TraceRow] = {}

    def add(self, r: TraceRow) -> None:
        team = r.team
        if team not in self.first:
            self.first[team] = r
        self.jobs[team] = self.jobs.get(team, 0) + 1
        if r.gpus > 0:
            self.pairs.setdefault((team, r.gpu_model), r)
            self.needs.setdefault((team, "gpus"), r)
        if r.cpus > 0:
            self.needs.setdefault((team, "cpus"), r)
        if r.memory_mib > 0:
            self.needs.setdefault((team, "memory_mib"), r)

    def done(self) -> TraceSummary:
        return TraceSummary(self.first, self.jobs, self.pairs, self.needs)


@dataclass(frozen=True, slots=True)
class Trace:
    """A checked trace file. Its rows are not held: iterating the trace reads
    them again, in submission order (a million rows stay on disk, not in
    memory). ``order`` is None when the file is already in submission order,
    else the (byte offset, line) of each row in that order."""

    path: str
    header: tuple[str, ...]
    width: int
    count: int
    first_submit_s: Decimal
    last_submit_s: Decimal
    horizon_s: float  # from the first submission to the last end if no job waited
    last_line: int  # the file's last row's line
    order: tuple[tuple[int, int], ...] | None = None
    # Gathered while the file was read when it is in submission order (else
    # None: checking reads the rows again, in that order).
    summary: TraceSummary | None = None

    def __iter__(self) -> Iterator[TraceRow]:
        cols = {name: i for i, name in enumerate(self.header)}
        layout = _layout(cols)
        if self.order is None:
            for n, _, text in _scan(self.path, skip_header=True):
                yield _trace_row(self.path, n, text, cols, self.width, layout)
            return
        with _open(self.path) as f:
            for offset, n in self.order:
                f.seek(offset)
                text = _decode_line(self.path, n, f.readline())
                yield _trace_row(self.path, n, text, cols, self.width, layout)

    def __len__(self) -> int:
        return self.count

    @property
    def rows(self) -> tuple[TraceRow, ...]:
        """Every row, in submission order (ties keep file order): for small traces."""
        return tuple(self)

    def col(self, row: TraceRow, column: str) -> int:
        """The column (1-based, in characters) of ``row``'s field ``column``;
        for a column the file does not have, just past the end of the line."""
        try:
            return row.cols[self.header.index(column)]
        except (ValueError, IndexError):
            return row.cols[-1] + 1 if row.cols else 1

    @property
    def name(self) -> str:
        return Path(self.path).stem


@dataclass(frozen=True, slots=True)
class NodeRow:
    line: int
    node_id: str
    gpu_model: str
    gpus: int
    cpus: Decimal
    memory_mib: Decimal


# ---------------------------------------------------------------------- CSV
def _fields(text: str, file: str, line: int) -> list[tuple[str, int]]:
    """Split one CSV line (RFC 4180 quoting, no line breaks inside quotes)
    into (value, 1-based column) pairs."""
    out: list[tuple[str, int]] = []
    i, n = 0, len(text)
    while True:
        start = i
        if i < n and text[i] == '"':
            buf: list[str] = []
            i += 1
            while True:
                j = text.find('"', i)
                if j < 0:
                    raise InputError(file, line, start + 1, "unterminated quoted field")
                buf.append(text[i:j])
                if j + 1 < n and text[j + 1] == '"':
                    buf.append('"')
                    i = j + 2
                    continue
                i = j + 1
                break
            if i < n and text[i] != ",":
                raise InputError(file, line, i + 1, 'expected "," after a quoted field')
            out.append(("".join(buf), start + 1))
        else:
            j = text.find(",", i)
            if j < 0:
                j = n
            out.append((text[i:j], start + 1))
            i = j
        if i >= n:
            return out
        i += 1  # the comma
        if i == n:
            out.append(("", n + 1))
            return out


@contextmanager
def _open(path: str) -> Iterator[BinaryIO]:
    p = Path(path)
    try:
        if p.is_dir():
            raise InputError(path, 1, 1, "is a directory, not a CSV file")
        size = p.stat().st_size
        if size > MAX_BYTES:
            raise InputError(path, 1, 1, f"{size} bytes is more than kuota reads ({MAX_BYTES})")
        f = p.open("rb")
    except OSError as err:
        raise InputError(path, 1, 1, f"cannot read: {err.strerror or err}") from None
    with f:
        yield f


def _decode_line(path: str, n: int, raw: bytes) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(path, n, err.start + 1, "not UTF-8 text") from None
    return text.rstrip("\n").rstrip("\r")


def _scan(path: str, *, skip_header: bool = False) -> Iterator[tuple[int, int, str]]:
    """The file's non-blank lines, one at a time, as (line number, byte
    offset, text); ``#`` lines are comments. With ``skip_header``, from the
    line after the first."""
    with _open(path) as f:
        offset = 0
        header = skip_header
        for n, raw in enumerate(f, 1):
            start = offset
            offset += len(raw)
            if n == 1 and raw.startswith(codecs.BOM_UTF8):
                raw, start = raw[3:], start + 3
            s = _decode_line(path, n, raw)
            if s.strip() and not s.lstrip().startswith("#"):
                if header:
                    header = False
                    continue
                yield n, start, s


def _lines(path: str) -> list[tuple[int, str]]:
    return [(n, s) for n, _, s in _scan(path)]


def _header(
    path: str, first: tuple[int, str] | None, required: tuple[str, ...], what: str
) -> tuple[dict[str, int], int, int]:
    """Column name -> index, the header's line, and its width."""
    if first is None:
        raise InputError(path, 1, 1, f"empty file: expected a header line ({','.join(required)})")
    n, text = first
    cols: dict[str, int] = {}
    for idx, (name, col) in enumerate(_fields(text, path, n)):
        name = name.strip()
        if name in cols:
            raise InputError(path, n, col, f'column "{name}" appears twice')
        cols[name] = idx
    missing = [c for c in required if c not in cols]
    if missing:
        plural = "s" if len(missing) > 1 else ""
        raise InputError(
            path,
            n,
            len(text) + 1,
            f"missing column{plural} {', '.join(missing)} in the header "
            f"(a {what} needs {', '.join(required)})",
        )
    return cols, n, len(cols)


class _Row:
    """One data line: values by column name, with their columns for errors."""

    __slots__ = ("cells", "cols", "end", "line", "path")

    def __init__(self, path: str, line: int, text: str, cols: dict[str, int], width: int) -> None:
        fields = _fields(text, path, line)
        if len(fields) != width:
            col = fields[width][1] if len(fields) > width else len(text) + 1
            raise InputError(
                path, line, col, f"expected {width} fields as in the header, found {len(fields)}"
            )
        self.path, self.line, self.cols, self.end = path, line, cols, len(text) + 1
        self.cells = fields

    def col(self, name: str) -> int:
        i = self.cols.get(name)
        return self.cells[i][1] if i is not None else self.end

    def text(self, name: str, default: str = "") -> str:
        i = self.cols.get(name)
        return self.cells[i][0].strip() if i is not None else default

    def nonempty(self, name: str) -> str:
        v = self.text(name)
        if not v:
            raise InputError(self.path, self.line, self.col(name), f"{name}: must not be empty")
        return v

    def number(self, name: str, default: Decimal | None = None) -> Decimal:
        raw = self.text(name)
        if not raw:
            if default is not None:
                return default
            raise InputError(self.path, self.line, self.col(name), f"{name}: must not be empty")
        try:
            v = Decimal(raw)
        except InvalidOperation:
            v = None
        if v is None or not v.is_finite():
            raise InputError(
                self.path, self.line, self.col(name), f'{name}: "{raw}" is not a number'
            )
        if v < 0:
            raise InputError(
                self.path, self.line, self.col(name), f"{name}: {raw} must not be negative"
            )
        return v

    def seconds(self, name: str) -> Decimal:
        v = self.number(name)
        if v > MAX_SECONDS:
            raise InputError(
                self.path,
                self.line,
                self.col(name),
                f"{name}: {self.text(name)} is more than {MAX_SECONDS} s (about 292 years, "
                "the longest duration Kubernetes can hold)",
            )
        return v

    def integer(self, name: str, default: int | None = None) -> int:
        raw = self.text(name)
        v = self.number(name, Decimal(default) if default is not None else None)
        if v != v.to_integral_value():
            raise InputError(
                self.path, self.line, self.col(name), f"{name}: {raw} must be a whole number"
            )
        return int(v)


_Layout = tuple[int, ...]  # each of JOB_COLUMNS' index in a row, -1 if absent
_ZERO: Final = Decimal(0)
_ONE: Final = Decimal(1)


def _layout(cols: dict[str, int]) -> _Layout:
    return tuple(cols.get(c, -1) for c in JOB_COLUMNS)


def _number(raw: str) -> Decimal | None:
    """A plain row's number: None when empty or anything a check refuses."""
    raw = raw.strip()
    if not raw:
        return None
    try:
        v = Decimal(raw)
    except InvalidOperation:
        return None
    if not v.is_finite() or v < 0:
        return None
    return v


def _plain_row(n: int, text: str, layout: _Layout, width: int) -> TraceRow | None:
    """The row of a line without quotes, if every check passes; None sends
    the line through _checked_row, which says what is wrong (most rows of a
    trace are plain: each is read once to check the file and once more per
    design's replay)."""
    cells = text.split(",")
    if len(cells) != width:
        return None
    i_id, i_sub, i_dur, i_team, i_user, i_gpus, i_model, i_cpus, i_mem, i_pods, i_st = layout
    job_id = cells[i_id].strip()
    team = cells[i_team].strip()
    submit = _number(cells[i_sub])
    duration = _number(cells[i_dur])
    gpus = _number(cells[i_gpus])
    if (
        not job_id
        or not team
        or submit is None
        or duration is None
        or gpus is None
        or submit > MAX_SECONDS
        or duration > MAX_SECONDS
    ):
        return None
    cpus = memory = _ZERO
    if i_cpus >= 0 and cells[i_cpus].strip():
        v = _number(cells[i_cpus])
        if v is None:
            return None
        cpus = v
    if i_mem >= 0 and cells[i_mem].strip():
        v = _number(cells[i_mem])
        if v is None:
            return None
        memory = v
    pods = 1
    if i_pods >= 0 and cells[i_pods].strip():
        v = _number(cells[i_pods])
        if v is None or v != v.to_integral_value() or v < 1:
            return None
        pods = int(v)
    col = 1
    cols: list[int] = []
    for c in cells:
        cols.append(col)
        col += len(c) + 1
    return TraceRow(
        line=n,
        job_id=job_id,
        submit_s=submit,
        duration_s=duration,
        team=team,
        user=cells[i_user].strip() if i_user >= 0 else "",
        gpus=gpus,
        gpu_model=cells[i_model].strip() if i_model >= 0 else "",
        cpus=cpus,
        memory_mib=memory,
        pods=pods,
        status=cells[i_st].strip() if i_st >= 0 else "",
        cols=tuple(cols),
    )


def _trace_row(
    path: str,
    n: int,
    text: str,
    cols: dict[str, int],
    width: int,
    layout: _Layout | None = None,
) -> TraceRow:
    if '"' not in text:
        row = _plain_row(n, text, layout or _layout(cols), width)
        if row is not None:
            return row
    return _checked_row(path, n, text, cols, width)


def _checked_row(path: str, n: int, text: str, cols: dict[str, int], width: int) -> TraceRow:
    r = _Row(path, n, text, cols, width)
    pods = r.integer("pods", 1)
    if pods < 1:
        raise InputError(path, n, r.col("pods"), "pods: must be at least 1")
    return TraceRow(
        line=n,
        job_id=r.nonempty("job_id"),
        submit_s=r.seconds("submit_s"),
        duration_s=r.seconds("duration_s"),
        team=r.nonempty("team"),
        user=r.text("user"),
        gpus=r.number("gpus"),
        gpu_model=r.text("gpu_model"),
        cpus=r.number("cpus", Decimal(0)),
        memory_mib=r.number("memory_mib", Decimal(0)),
        pods=pods,
        status=r.text("status"),
        cols=tuple(c for _, c in r.cells),
    )


def read_trace(path: str | Path, progress: Callable[[int, int], None] | None = None) -> Trace:
    """Check every row of a trace file, one at a time, and remember only
    their order (``progress(bytes read, file size)`` now and then)."""
    path = str(path)
    lines = _scan(path)
    first = next(lines, None)
    cols, _, width = _header(path, (first[0], first[2]) if first else None, _JOB_REQUIRED, "trace")
    size = max(Path(path).stat().st_size, 1)
    count = 0
    in_order = True
    last_line = 0
    first_s = last_s = prev = Decimal(0)
    end = Decimal(0)
    layout = _layout(cols)
    summing = SummaryBuilder()
    for n, offset, text in lines:
        row = _trace_row(path, n, text, cols, width, layout)
        summing.add(row)
        submit = row.submit_s
        if count == 0:
            first_s = last_s = prev = submit
        elif submit < prev:
            in_order = False
        first_s, last_s = min(first_s, submit), max(last_s, submit)
        prev = submit
        end = max(end, submit + row.duration_s)
        count += 1
        last_line = n
        if progress is not None and count % 4096 == 0:
            progress(offset, size)
    if progress is not None:
        progress(size, size)
    if count == 0:
        assert first is not None
        raise InputError(path, first[0] + 1, 1, "no jobs: the file has only its header")
    order = None
    if not in_order:
        # Only then is anything kept per row: each one's submission and place.
        order = _sorted_order(path, cols, width)
    header = tuple(sorted(cols, key=lambda k: cols[k]))
    horizon = float(end - first_s)
    summary = summing.done() if in_order else None
    return Trace(path, header, width, count, first_s, last_s, horizon, last_line, order, summary)


def _sorted_order(path: str, cols: dict[str, int], width: int) -> tuple[tuple[int, int], ...]:
    keys: list[tuple[Decimal, int, int]] = []
    layout = _layout(cols)
    for n, offset, text in _scan(path, skip_header=True):
        keys.append((_trace_row(path, n, text, cols, width, layout).submit_s, offset, n))
    keys.sort(key=lambda k: k[0])  # stable: ties keep file order
    return tuple((offset, n) for _, offset, n in keys)


def read_nodes(path: str | Path) -> list[NodeRow]:
    """The nodes of a node list (``node_id,gpu_model,gpus,cpus,memory_mib``)."""
    path = str(path)
    lines = _lines(path)
    cols, _, width = _header(path, lines[0] if lines else None, _NODE_REQUIRED, "node list")
    if len(lines) < 2:
        raise InputError(path, lines[0][0] + 1, 1, "no nodes: the file has only its header")
    out: list[NodeRow] = []
    seen: dict[str, int] = {}
    for n, text in lines[1:]:
        r = _Row(path, n, text, cols, width)
        node_id = r.nonempty("node_id")
        if node_id in seen:
            raise InputError(
                path, n, r.col("node_id"), f'node_id "{node_id}" is already on line {seen[node_id]}'
            )
        seen[node_id] = n
        out.append(
            NodeRow(
                line=n,
                node_id=node_id,
                gpu_model=r.text("gpu_model"),
                gpus=r.integer("gpus"),
                cpus=r.number("cpus"),
                memory_mib=r.number("memory_mib"),
            )
        )
    return out
