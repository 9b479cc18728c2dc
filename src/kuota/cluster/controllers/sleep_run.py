"""How long a pod runs when its containers only sleep.

Kueue's and LWS's samples run ``sleep 30`` (or ``sh -c "sleep 30"``) in
their containers, or agnhost's ``entrypoint-tester`` (which prints its
arguments and exits): without ``kuota.dev/duration`` such a pod runs as
long as its longest sleep, as it would on a node, so the samples finish as
their docs say. Any other command (or none: the image's own) says nothing about
how long it runs, and the pod runs until it is deleted.
"""

from __future__ import annotations

import functools
import re
import shlex
from datetime import timedelta
from typing import Any, Final

__all__ = ["sleep_duration"]

# coreutils/busybox sleep: NUMBER[SUFFIX] ..., the arguments summed.
_ARG: Final = re.compile(r"^(\d+(?:\.\d*)?|\.\d+)([smhd]?)$")
_UNIT: Final = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_SHELLS: Final = frozenset({"sh", "bash", "ash", "dash", "zsh"})
_QUICK: Final = frozenset({"echo", "printf", "true", "date", "hostname", "env", ":"})
# Kubernetes' e2e image (its entrypoint is /agnhost), in Kueue's samples as
# `args: ["entrypoint-tester", "hello", "world"]`.
_AGNHOST: Final = "e2e-test-images/agnhost"
_AGNHOST_QUICK: Final = frozenset({"entrypoint-tester"})


def _sleep_args(args: list[str]) -> timedelta | None:
    if not args:
        return None
    total = 0.0
    for a in args:
        m = _ARG.match(a)
        if m is None:
            return None  # "infinity", a variable, another word: unknown
        total += float(m.group(1)) * _UNIT[m.group(2)]
    return timedelta(seconds=total)


@functools.lru_cache(maxsize=1024)
def _argv_duration(argv: tuple[str, ...]) -> timedelta | None:
    if not argv:
        return None
    prog = argv[0].rsplit("/", 1)[-1]
    if prog == "sleep":
        return _sleep_args(list(argv[1:]))
    if prog in _SHELLS and len(argv) == 3 and argv[1] == "-c":
        return _script_duration(argv[2])
    return None


def _script_duration(script: str) -> timedelta | None:
    """A script of sleeps and prints joined by ``&&`` or ``;`` (``echo hi &&
    sleep 3``): its sleeps summed; anything else is unknown."""
    try:
        lex = shlex.shlex(script, posix=True, punctuation_chars=";&")
        words = list(lex)
    except ValueError:
        return None
    total, steps, cmd = timedelta(0), 0, []
    for w in [*words, ";"]:
        if w not in (";", "&&"):
            cmd.append(w)
            continue
        if not cmd:
            return None
        if cmd[0] == "sleep":
            d = _sleep_args(cmd[1:])
            if d is None:
                return None
            total += d
        elif cmd[0] not in _QUICK:
            return None
        steps, cmd = steps + 1, []
    return total if steps else None


def sleep_duration(spec: Any) -> timedelta | None:
    """The longest sleep of the pod's containers, if every one of them only
    sleeps; None when any does something else (or runs its image's command)."""
    containers = getattr(spec, "containers", None) or ()
    longest: timedelta | None = None
    for c in containers:
        argv = (*(c.command or ()), *(c.args or ()))
        if not c.command and _AGNHOST in (c.image or "") and c.args and c.args[0] in _AGNHOST_QUICK:
            d: timedelta | None = timedelta(0)  # prints its arguments and exits
        else:
            d = _argv_duration(argv)
        if d is None:
            return None
        longest = d if longest is None or d > longest else longest
    return longest
