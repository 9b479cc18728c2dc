"""Events leave the controller off its critical path, as client-go's event
broadcaster sends them: the recorder's write is queued and returns at once,
and one thread sends the queue in order (a repeat's patch after the create
it bumps). An Event is best effort: a refused or lost one is logged, never
retried by the reconcile that recorded it. Kueue records two Events per
admission; sent in line, each cost the scheduler a round trip to the API
server before its next decision."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any

_STOP = object()


class EventSink:
    def __init__(self, name: str = "kuota-kube-events", limit: int = 10_000) -> None:
        # Bounded as client-go's broadcaster channel is: when the API server
        # cannot keep up, new Events are dropped rather than held in memory.
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=limit)
        self.dropped = 0
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, send: Callable[[], Any]) -> None:
        try:
            self._queue.put_nowait(send)
        except queue.Full:
            self.dropped += 1

    def _run(self) -> None:
        while True:
            send = self._queue.get()
            try:
                if send is _STOP:
                    return
                send()
            except Exception as err:  # best effort: never stops the sink
                _log().warning("event not recorded", error=str(err))
            finally:
                self._queue.task_done()

    def flush(self, timeout: float) -> bool:
        """Wait until every queued Event has been sent (or ``timeout``)."""
        deadline = time.monotonic() + timeout
        done = self._queue.all_tasks_done
        with done:
            while self._queue.unfinished_tasks:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                done.wait(left)
        return True

    def close(self, timeout: float = 5.0) -> None:
        """Send what is queued (for up to ``timeout`` seconds), then stop."""
        self.flush(timeout)
        try:
            self._queue.put_nowait(_STOP)
        except queue.Full:
            return  # still sending: the daemon thread ends with the process
        self._thread.join(timeout)


def _log() -> Any:
    import structlog

    return structlog.get_logger("kuota.store.kube")
