"""``kuota run`` under a fault injector, for the kill campaign: the process
SIGKILLs itself at a chosen file-system operation on its state directory.

    python kill_run.py STATE PHASE N FRACTION SNAPSHOT_EVERY LOG -- WORLD [kuota run options]

Every operation that changes the state directory (a file created, written,
synced, truncated, renamed or unlinked) is an event. Events are numbered
per phase: ``recovery`` (from the start until the run's first instant has
settled: the journal's recovery and the controllers rebuilding from it),
``snapshot`` (anything on a snapshot's temporary file, its rename, and the
unlinks of the files it replaces), ``any`` (every event). The process dies
at event ``N`` of ``PHASE`` (0: never): a write first writes ``FRACTION`` of
its bytes (a torn write, as the kernel may leave one), any other operation
happens first when ``FRACTION >= 0.5``. Killing between two events leaves the
same files as killing at the next one, so these points reach every state a
crash can leave on disk (a process kill keeps what the page cache holds).

``SNAPSHOT_EVERY`` lowers the journal's snapshot interval (records) so that
snapshots happen during the run, not only at its end. ``LOG``: a JSON file
written at a normal exit with the events counted per phase.

With ``KILL_TRACE=FILE`` in the environment every event is appended to FILE
(its number, whether recovering, the operation, the file): to see where a
kill point falls.

The hooks are installed before kuota is imported: the journal binds
``os.fdatasync`` at import.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def main() -> None:
    sep = sys.argv.index("--")
    state, phase, n, fraction, snapshot_every, log = sys.argv[1:sep]
    run_args = sys.argv[sep + 1 :]
    root = os.path.realpath(state)
    kill_at, frac = int(n), float(fraction)
    counts = {"any": 0, "recovery": 0, "snapshot": 0}
    recovering = [True]
    paths: dict[int, str] = {}  # fd -> path, for the fds opened in the state

    def inside(path: Any) -> str | None:
        if isinstance(path, int):
            return paths.get(path)
        p = os.path.realpath(os.fspath(path))
        return p if p == root or p.startswith(root + os.sep) else None

    def event(path: str, op: str) -> bool:
        """Count the event; True when the process is to die at it."""
        snap = op in ("rename", "unlink") or path.endswith(".tmp")
        die = False
        if os.environ.get("KILL_TRACE"):
            with open(os.environ["KILL_TRACE"], "a") as t:
                t.write(f"{counts['any'] + 1} {recovering[0]} {op} {os.path.basename(path)}\n")
        for ph, on in (("any", True), ("recovery", recovering[0]), ("snapshot", snap)):
            if on:
                counts[ph] += 1
                die |= ph == phase and counts[ph] == kill_at
        return die

    def die() -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    def hook(name: str, wrap: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
        real = getattr(os, name, None)
        if real is not None:
            setattr(os, name, wrap(real))

    def opened(real: Callable[..., Any]) -> Callable[..., Any]:
        def open_(path: Any, flags: int, mode: int = 0o777, **kw: Any) -> int:
            p = inside(path)
            if p is not None and flags & os.O_CREAT and event(p, "create"):
                if frac >= 0.5:
                    real(path, flags, mode, **kw)
                die()
            fd: int = real(path, flags, mode, **kw)
            if p is not None:
                paths[fd] = p
            return fd

        return open_

    def closed(real: Callable[..., Any]) -> Callable[..., Any]:
        def close(fd: int) -> None:
            paths.pop(fd, None)
            real(fd)

        return close

    def written(real: Callable[..., Any]) -> Callable[..., Any]:
        def write(fd: int, data: Any) -> int:
            p = paths.get(fd)
            if p is not None and event(p, "write"):
                part = bytes(data)[: int(len(data) * frac)]
                if part:
                    real(fd, part)
                die()
            n: int = real(fd, data)
            return n

        return write

    def simple(op: str, npaths: int = 1) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def wrap(real: Callable[..., Any]) -> Callable[..., Any]:
            def call(*args: Any, **kw: Any) -> Any:
                p = next((q for a in args[:npaths] if (q := inside(a)) is not None), None)
                if p is not None and event(p if op != "rename" else inside(args[0]) or p, op):
                    if frac >= 0.5:
                        real(*args, **kw)
                    die()
                return real(*args, **kw)

            return call

        return wrap

    hook("open", opened)
    hook("close", closed)
    hook("write", written)
    for name in ("fsync", "fdatasync", "ftruncate"):
        hook(name, simple(name))
    hook("truncate", simple("truncate"))
    hook("unlink", simple("unlink"))
    hook("rename", simple("rename", 2))
    hook("replace", simple("rename", 2))

    import kuota.embedded.controlplane as controlplane
    import kuota.store as store_package

    open_store = store_package.open_store

    def open_store_often(*args: Any, **kw: Any) -> Any:
        kw["snapshot_every"] = int(snapshot_every)
        return open_store(*args, **kw)

    controlplane.open_store = open_store_often  # type: ignore[assignment]
    save_clock = controlplane.ControlPlane.save_clock

    def save_clock_then_run(self: Any) -> None:
        save_clock(self)
        recovering[0] = False  # the first instant has settled

    controlplane.ControlPlane.save_clock = save_clock_then_run  # type: ignore[method-assign]

    from kuota.cli.main import main as kuota_main

    sys.argv = ["kuota", "run", *run_args, "--state", state, "--no-live"]
    try:
        kuota_main()
    finally:
        Path(log).write_text(json.dumps(counts))


if __name__ == "__main__":
    main()
