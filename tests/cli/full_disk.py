"""``python full_disk.py BYTES kuota ARGS...``: kuota on a disk that takes
BYTES more bytes into files under a directory named ``state*`` and then
refuses every write with ENOSPC, as a full disk does (the test cannot make a
small filesystem: it injects the refusal at ``os.write``)."""

from __future__ import annotations

import errno
import os
import sys

_real_write = os.write
_left = int(sys.argv[1])


def _write(fd: int, data: bytes) -> int:
    global _left
    if fd > 2 and "/state" in os.readlink(f"/proc/self/fd/{fd}"):
        n = min(len(data), _left)
        if n == 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        _left -= n
        return _real_write(fd, bytes(data)[:n])
    return _real_write(fd, data)


if __name__ == "__main__":
    os.write = _write
    from kuota.cli.main import main

    sys.argv = sys.argv[2:]
    main()
