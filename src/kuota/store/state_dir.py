"""The state directory as kuota's: its mark, its writer's lock.

A state directory carries a mark (``KUOTA-STATE``: this is a kuota state, of
journal format N), written when kuota makes the state in a new or empty
directory. kuota refuses any other directory that holds files: it never
writes into, nor removes from, a directory it did not make a state.

One process writes a state at a time: it holds an exclusive ``flock`` on the
directory itself for as long as it has the state open, and the kernel
releases it when the process ends, however it ends. Removing or replacing a
file does not release it (a lock on a file whose presence is the lock would
be). ``OWNER`` says which pid and command hold it, for the message a second
writer gets. Readers take no lock: they read what is acknowledged.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shlex
import sys
from pathlib import Path

from kuota.store.journal_errors import JournalError, locked, write_failed
from kuota.store.journal_format import FORMAT, FORMAT_1, MARK, MARK_TEXT, OWNER, TEMPORARY


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _format_of(directory: Path) -> int:
    """The journal format the mark names; an error for a mark kuota did not write."""
    path = directory / MARK
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as err:
        raise JournalError(f"{path}: cannot read the mark: {err.strerror or err}") from None
    first, _, rest = text.partition("\n")
    word, _, number = rest.strip().partition(" ")
    if first != "kuota state directory" or word != "format" or not number.isdigit():
        raise JournalError(
            f"{path}: not a kuota state mark (it should read {MARK_TEXT!r}); "
            "kuota uses only directories it made a state"
        )
    return int(number)


def _unmarked(directory: Path, names: list[str]) -> JournalError:
    """The error for a directory with files but no mark."""
    journal = [n for n in names if FORMAT_1.match(n) and n != "LOCK"]
    if "LOCK" in names and journal:  # format 1 had a LOCK file, and no mark
        return JournalError(
            f"{directory}: a kuota state of journal format 1 (written before kuota "
            f"marked its state directories); this kuota reads format {FORMAT} only: "
            "run the world again into a new directory (or read it with the kuota that wrote it)"
        )
    if journal or OWNER in names:
        return JournalError(
            f"{directory}: holds kuota's journal files but no {MARK} mark (removed?); "
            "kuota reads or writes a directory as a state only with its mark"
        )
    shown = ", ".join(sorted(names)[:3]) + (", ..." if len(names) > 3 else "")
    return JournalError(
        f"{directory}: not a kuota state directory (no {MARK} mark, and it holds "
        f"{len(names)} file(s) kuota did not write: {shown}); give a new or empty "
        "directory, kuota never writes into another"
    )


def check_format(directory: Path, names: list[str]) -> None:
    """Refuse a directory that is not a kuota state of this format."""
    if MARK not in names:
        theirs = [n for n in names if not TEMPORARY.match(n)]
        if not theirs:
            raise JournalError(f"{directory}: holds no kuota state (no {MARK} mark)")
        raise _unmarked(directory, theirs)
    found = _format_of(directory)
    if found != FORMAT:
        newer = "a newer" if found > FORMAT else "an older"
        raise JournalError(
            f"{directory / MARK}: a state of journal format {found} ({newer} kuota's); "
            f"this kuota reads format {FORMAT} only"
        )


def _mark(directory: Path) -> None:
    tmp = directory / f"{MARK}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, MARK_TEXT.encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(tmp, directory / MARK)
    fsync_dir(directory)


def _lock(directory: Path) -> int:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        owner = ""
        with contextlib.suppress(OSError):
            owner = (directory / OWNER).read_text(encoding="utf-8", errors="replace")
        raise locked(directory, owner) from None
    except BaseException:
        os.close(fd)
        raise
    return fd


def claim(directory: Path) -> int:
    """Open ``directory`` for writing: made (and marked) if new or empty,
    checked if marked, refused otherwise; locked for this process's life.
    Returns the descriptor that holds the lock (closing it releases it)."""
    if directory.exists() and not directory.is_dir():
        raise NotADirectoryError(
            errno.ENOTDIR, "not a directory (the state is a directory of journal files)"
        )
    directory.mkdir(parents=True, exist_ok=True)
    fd = _lock(directory)
    try:
        names = os.listdir(directory)
        if MARK not in names and not [n for n in names if not TEMPORARY.match(n)]:
            for n in names:  # a mark that never got renamed into place
                (directory / n).unlink()
            try:
                _mark(directory)
            except OSError as err:
                raise write_failed(directory, MARK, err) from None
        else:
            check_format(directory, names)
        _write_owner(directory)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _write_owner(directory: Path) -> None:
    # Informational (the lock is the flock): not fsynced, a crash may lose it.
    command = shlex.join([Path(sys.argv[0]).name, *sys.argv[1:]]) if sys.argv else ""
    text = f"{os.getpid()}\n{command[:300]}\n"
    try:
        fd = os.open(directory / OWNER, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)
    except OSError as err:
        raise write_failed(directory, OWNER, err) from None
