"""The bridge between the synchronous store protocol and lightkube's async
client: one asyncio loop in a thread of its own.

The manager and the controllers are synchronous and single-threaded (the
pure core must stay so), while lightkube is async. Running the loop on the
manager's thread would mean either an async manager or blocking calls
inside the loop; instead every HTTP exchange happens on this I/O thread:
watch streams run there continuously (filling the watches' queues while
the manager reconciles), and a synchronous write or read submits its
coroutine and waits for the answer (``call``), as client-go's
synchronous clients do. Only the queues and a wake-up event cross
threads."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class IoThread:
    def __init__(self, name: str = "kuota-kube-io") -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()
        # Stopped: let cancelled tasks see their cancellation, then close.
        pending = asyncio.all_tasks(self.loop)
        for task in pending:
            task.cancel()
        if pending:
            self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        self.loop.close()

    def call(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the I/O loop and wait for its result (or exception)."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Future[Any]:
        """Start ``coro`` on the I/O loop; returns at once."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)  # type: ignore[return-value]

    def stop(self) -> None:
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)
