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

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

__all__ = [
    "JOB_COLUMNS",
    "NODE_COLUMNS",
    "InputError",
    "NodeRow",
    "Trace",
    "TraceRow",
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
class Trace:
    path: str
    rows: tuple[TraceRow, ...]  # in submission order (ties keep file order)
    header: tuple[str, ...] = JOB_COLUMNS

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

    @property
    def horizon_s(self) -> float:
        """From the first submission to the last end if no job waited."""
        start = self.rows[0].submit_s
        return float(max(r.submit_s + r.duration_s for r in self.rows) - start)


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


def _lines(path: str) -> list[tuple[int, str]]:
    """The file's non-blank lines as (line number, text); ``#`` lines are comments."""
    p = Path(path)
    try:
        if p.is_dir():
            raise InputError(path, 1, 1, "is a directory, not a CSV file")
        size = p.stat().st_size
        if size > MAX_BYTES:
            raise InputError(path, 1, 1, f"{size} bytes is more than kuota reads ({MAX_BYTES})")
        data = p.read_bytes()
    except OSError as err:
        raise InputError(path, 1, 1, f"cannot read: {err.strerror or err}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        col = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise InputError(path, line, col, "not UTF-8 text") from None
    out = []
    for n, raw in enumerate(text.split("\n"), 1):
        s = raw.rstrip("\r")
        if s.strip() and not s.lstrip().startswith("#"):
            out.append((n, s))
    return out


def _header(
    path: str, lines: list[tuple[int, str]], required: tuple[str, ...], what: str
) -> tuple[dict[str, int], int, int]:
    """Column name -> index, the header's line, and its width."""
    if not lines:
        raise InputError(path, 1, 1, f"empty file: expected a header line ({','.join(required)})")
    n, text = lines[0]
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


def read_trace(path: str | Path) -> Trace:
    """The jobs of a trace file, sorted by submission time (stable)."""
    path = str(path)
    lines = _lines(path)
    cols, _, width = _header(path, lines, _JOB_REQUIRED, "trace")
    if len(lines) < 2:
        raise InputError(path, lines[0][0] + 1, 1, "no jobs: the file has only its header")
    rows: list[TraceRow] = []
    for n, text in lines[1:]:
        r = _Row(path, n, text, cols, width)
        pods = r.integer("pods", 1)
        if pods < 1:
            raise InputError(path, n, r.col("pods"), "pods: must be at least 1")
        rows.append(
            TraceRow(
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
        )
    rows.sort(key=lambda x: x.submit_s)
    header = tuple(sorted(cols, key=lambda k: cols[k]))
    return Trace(path, tuple(rows), header)


def read_nodes(path: str | Path) -> list[NodeRow]:
    """The nodes of a node list (``node_id,gpu_model,gpus,cpus,memory_mib``)."""
    path = str(path)
    lines = _lines(path)
    cols, _, width = _header(path, lines, _NODE_REQUIRED, "node list")
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
