"""What can go wrong with a state directory, each error one line that names
the state (or its file) and the cause."""

from __future__ import annotations

import errno
from pathlib import Path

from kuota.store.protocol import StoreError


class JournalError(StoreError):
    """The journal directory cannot be used."""


class JournalLocked(JournalError):
    """Another process holds the state for writing."""

    code, reason = 409, "Conflict"


class JournalCorrupt(JournalError):
    """The state on disk is damaged where no crash could have damaged it."""


class JournalWriteError(JournalError):
    """A write to the state failed (disk full, file too large, read-only...):
    nothing after the last acknowledged write is kept."""

    code, reason = 507, "InsufficientStorage"


# What to do about the usual causes; any other errno gets its strerror only.
_ADVICE = {
    errno.ENOSPC: "the disk is full: free space",
    errno.EDQUOT: "the disk quota is exceeded: free space or raise the quota",
    errno.EFBIG: "a file would exceed the size limit (ulimit -f, or the filesystem's)",
    errno.EROFS: "the filesystem is read-only",
    errno.EIO: "the disk reported an I/O error",
}


def write_failed(state: Path, what: str, err: OSError) -> JournalWriteError:
    """The error for a failed write of ``what`` (a file of the state)."""
    name = errno.errorcode.get(err.errno or 0, "")
    cause = f"{err.strerror or err}" + (f" ({name})" if name else "")
    advice = _ADVICE.get(err.errno or 0)
    return JournalWriteError(
        f"the state {state}: cannot write {what}: {cause}"
        + (f": {advice}" if advice else "")
        + "; every write acknowledged before is kept, and the state resumes from there "
        "once it can be written"
    )


def locked(state: Path, owner: str) -> JournalLocked:
    """The error for a state another process holds; ``owner`` is what its
    owner file says (pid, command), "" when unknown."""
    pid, _, command = owner.partition("\n")
    pid, command = pid.strip(), command.strip()
    if pid.isdigit():
        who = f"a kuota process (pid {pid}" + (f", {command})" if command else ")")
        stop = f"stop it (kill {pid}, or Ctrl-C where it runs: it saves the state and exits)"
    else:
        who = "another kuota process"
        stop = "stop it (it saves the state and exits)"
    return JournalLocked(
        f"the state {state} is in use: {who} holds it for writing until it ends; "
        f"wait for it to finish or {stop}, then retry "
        "(kuota get and describe read it meanwhile)"
    )
