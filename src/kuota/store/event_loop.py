"""The event loop kuota's network I/O runs on: ``kuota serve``'s, the kube
store's I/O thread's. uvloop's (libuv, its TLS in Cython) when it is
installed, else asyncio's own; ``KUOTA_UVLOOP=0`` asks for asyncio's (to
compare the two, or to rule the loop out).

Why: TLS per record and a socket send per response are most of a request's
fixed cost on both sides of cluster mode (py-spy of the cluster bench:
serve's TLS 24 %, its sends 15 %), and asyncio's SSL protocol runs in
Python where uvloop's does not."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def _factory() -> Callable[[], asyncio.AbstractEventLoop]:
    if os.environ.get("KUOTA_UVLOOP", "1") != "0":
        try:
            import uvloop
        except ImportError:  # (an optional speed-up: asyncio's loop does the same work)
            pass
        else:
            return uvloop.new_event_loop
    return asyncio.new_event_loop


def new_event_loop() -> asyncio.AbstractEventLoop:
    """A new loop of the kind above (not set as the thread's current loop)."""
    return _factory()()


def loop_name(loop: asyncio.AbstractEventLoop) -> str:
    """``uvloop`` or ``asyncio``: which loop serves (a structural check)."""
    return "uvloop" if type(loop).__module__.startswith("uvloop") else "asyncio"


def run(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run`` on a loop of the kind above."""
    with asyncio.Runner(loop_factory=new_event_loop) as runner:
        return runner.run(main)
