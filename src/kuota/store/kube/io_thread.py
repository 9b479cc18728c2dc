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
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from kuota.store.event_loop import new_event_loop

T = TypeVar("T")


class IoThread:
    def __init__(self, name: str = "kuota-kube-io") -> None:
        self.loop = new_event_loop()  # (uvloop's when installed: store/event_loop.py)
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
        """Run ``coro`` on the I/O loop and wait for its result (or exception);
        TimeoutError after ``timeout`` seconds (the coroutine goes on).

        The caller waits on a plain lock the loop releases, not on
        run_coroutine_threadsafe's concurrent Future, whose Condition's
        notify (Python code, on the loop thread) cost the cluster bench's
        controller a tenth of its CPU (py-spy: 9% in _chain_future's
        set_result alone) at one call per write."""
        done = threading.Lock()
        done.acquire()
        box: list[asyncio.Task[T]] = []

        def finished(task: asyncio.Task[T]) -> None:
            box.append(task)
            done.release()

        def start() -> None:
            task = self.loop.create_task(coro)
            task.add_done_callback(finished)

        self.loop.call_soon_threadsafe(start)
        if not done.acquire(timeout=-1 if timeout is None else timeout):
            raise TimeoutError(f"no answer from the I/O loop in {timeout} s")
        task = box[0]
        if task.cancelled():  # (the loop stopped: as run_coroutine_threadsafe raised it)
            raise concurrent.futures.CancelledError()
        return task.result()

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Future[Any]:
        """Start ``coro`` on the I/O loop; returns at once."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)  # type: ignore[return-value]

    def stop(self) -> None:
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)
