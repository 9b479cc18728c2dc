"""A work queue as client-go has it: keys, not events, are queued, so a burst
of changes to one object costs one reconcile; a key being processed is never
handed out twice; failures are retried with per-key exponential backoff.

The queues of one manager share a ``Ready`` board: a bit per queue, set
while the queue holds keys, so the manager visits only the queues with work
instead of asking every queue each time round."""

from __future__ import annotations

from collections import deque
from datetime import timedelta
from typing import Final

# client-go's default per-item backoff: 5 ms doubling up to 1000 s.
BASE_DELAY: Final = timedelta(milliseconds=5)
MAX_DELAY: Final = timedelta(seconds=1000)
# The first failure count whose delay reaches the maximum (18: 5 ms * 2**18 > 1000 s).
_CAPPED_FROM: Final = next(n for n in range(64) if BASE_DELAY * 2**n >= MAX_DELAY)


class Ready:
    """Which of a manager's queues hold keys: bit i for its i-th queue."""

    def __init__(self) -> None:
        self.mask = 0


class WorkQueue:
    def __init__(self, name: str, board: Ready | None = None, index: int = 0) -> None:
        self.name = name
        self._board = board if board is not None else Ready()
        self._bit = 1 << index
        self._queue: deque[str] = deque()
        self._dirty: set[str] = set()  # queued, or to be re-queued when done
        self._processing: set[str] = set()
        self._failures: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._queue)

    def add(self, key: str) -> None:
        if key in self._dirty:
            return
        self._dirty.add(key)
        if key not in self._processing:
            self._push(key)

    def _push(self, key: str) -> None:
        if not self._queue:
            board = self._board
            board.mask |= self._bit
        self._queue.append(key)

    def get(self) -> str | None:
        queue = self._queue
        if not queue:
            return None
        key = queue.popleft()
        if not queue:
            board = self._board
            board.mask &= ~self._bit
        self._processing.add(key)
        self._dirty.discard(key)
        return key

    def done(self, key: str) -> None:
        self._processing.discard(key)
        if key in self._dirty:
            self._push(key)

    def backoff(self, key: str) -> timedelta:
        """The delay before retrying a failed key: client-go's
        ItemExponentialFailureRateLimiter, base * 2**failures, at most the
        maximum. Past the maximum the delay is the maximum without computing
        the power (which would overflow a timedelta after some 50 failures)."""
        n = self._failures.get(key, 0)
        self._failures[key] = n + 1
        if n >= _CAPPED_FROM:
            return MAX_DELAY
        return min(BASE_DELAY * (2**n), MAX_DELAY)

    def forget(self, key: str) -> None:
        self._failures.pop(key, None)
