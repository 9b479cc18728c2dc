"""The loop's heartbeat: the control plane's manager is pumped on the server's
asyncio loop (never from another thread), after writes and when its timers
come due, and every watch is woken when the store moves.

A write schedules one settle (``run_until_idle``) on the loop rather than
running it inline, so a burst of concurrent writes is answered first and
reconciled together; watches are woken after the write and after the
settle.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

import structlog

from kuota.runtime.pacing import PacedClock
from kuota.server.stepping import Stepper

log = structlog.get_logger("kuota.server")

_MAX_SLEEP = 0.25  # the longest the timer task sleeps (a stop is noticed this fast)
# A settle reconciles for at most this long before the loop serves the
# requests waiting: a set of a million replicas is created over many turns,
# the API answering meanwhile.
_SETTLE_SLICE = 0.05
_SAVE_CLOCK_EVERY = 1.0  # seconds between journaled clock readings
_PRUNE_AT = 4096  # waiters kept before the finished ones are dropped
# A watch writes at most once per this many seconds while events keep coming:
# the first event after a quiet spell goes at once, a burst's rest together.
# Each write is a socket send that wakes the client, which on a VM costs far
# more than the bytes (py-spy of serve under the cluster bench: a third of
# its main thread in the watches' sends, one event or two each).
# Paced runs hold too: the controller handles nothing of an unsettled
# instant (clustermode/pace_acks.py), so the order in which watches deliver
# cannot stamp an instant's completions on the previous instant.
COALESCE_S = 0.005


def _expire(w: asyncio.Future[None]) -> None:
    if not w.done():
        w.set_result(None)


def _resolve(waiting: list[asyncio.Future[None]]) -> int:
    n = 0
    for w in waiting:
        if not w.done():  # (a cancelled watch's, or one that timed out)
            w.set_result(None)
            n += 1
    return n


class _Writer:
    """One long-lived thread that writes and fsyncs the journal's groups, one
    at a time, and hands each outcome back to the loop with a single
    ``call_soon_threadsafe``. (``run_in_executor`` cost a concurrent future,
    an asyncio future chained to it and a pool wake-up per group: ~10 % of
    serve's CPU under the cluster bench, py-spy.)"""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, done: Callable[[Exception | None], None]
    ) -> None:
        self._loop = loop
        self._done = done
        self._jobs: queue.SimpleQueue[tuple[Callable[[bytes], None], bytes] | None] = (
            queue.SimpleQueue()
        )
        self._thread = threading.Thread(target=self._run, name="kuota-journal", daemon=True)
        self._thread.start()

    def submit(self, write: Callable[[bytes], None], data: bytes) -> None:
        self._jobs.put((write, data))

    def close(self) -> None:
        self._jobs.put(None)
        self._thread.join(timeout=5.0)

    def _run(self) -> None:
        get = self._jobs.get
        while (job := get()) is not None:
            write, data = job
            err: Exception | None = None
            try:
                write(data)
            except Exception as e:  # (handed to the loop: the store fails there)
                err = e
            try:
                self._loop.call_soon_threadsafe(self._done, err)
            except RuntimeError:  # the loop is closed: nobody waits any more
                return


class Hub:
    def __init__(self, cp: Any) -> None:
        self.cp = cp
        self.loop = asyncio.get_running_loop()
        # The waiting watches by the resource they watch (None: any): one
        # future each, resolved when that resource changes; a write wakes
        # only its resource's watches. [lowest revision seen, futures].
        self._waiting: dict[Any, tuple[list[int], list[asyncio.Future[None]]]] = {}
        self._settle_scheduled = False
        self._kick: asyncio.Future[None] = self.loop.create_future()
        self._last_rv: tuple[int, int] = (-1, -1)
        # Reads waiting for a revision to be durable (until_durable): the
        # lowest revision any waits for, and (revision, future) each.
        self._readers: list[tuple[int, asyncio.Future[None]]] = []
        self._readers_low = 0
        self.woken = 0  # watches woken or written to by a change (a structural count)
        self._stopping = False
        self._clock_saved = 0.0
        # Group commit: the writes of one loop iteration share one journal
        # flush (one fsync); each is answered once it is durable.
        self._batch: Any = None
        self._durable: asyncio.Future[None] = self.loop.create_future()
        self._commit_scheduled = False
        self._syncing = False  # a group's write and fsync run on a thread
        self._joined = False  # a client's write waits for self._durable
        self._writer: _Writer | None = None  # started at the first group
        # The group in flight: its future, its bytes and where they end.
        self._in_flight: tuple[asyncio.Future[None], Any, Any] | None = None
        # The open watch streams by resource (server/watching.py): the hub
        # writes their events itself, one pass over them per flush, rather
        # than waking a task per watch (a future, a timer and a task step
        # each, per event, for 100 watchers).
        self._streams: dict[Any, dict[Any, None]] = {}
        self._flush_handle: asyncio.Handle | None = None
        self._last_flush = 0.0

    # ---------------------------------------------------------------- watches
    @property
    def coalesce_s(self) -> float:
        """How long a watch holds events after a write (server/watching.py)."""
        return COALESCE_S

    def notify(self) -> None:
        """Wake the watches waiting for a change of what changed, and have
        the watch streams' new events written (at once after a quiet spell,
        else with the rest of the burst, ``coalesce_s`` after the last)."""
        store = self.cp.store
        rv = store.resource_version
        durable = store.durable_revision
        if (rv, durable) == self._last_rv:
            return
        self._last_rv = (rv, durable)
        if self._readers and durable >= self._readers_low:
            self._release_readers(durable)
        for rtype, (seen, waiting) in list(self._waiting.items()):
            if rtype is None or store.revision_of(rtype) > seen[0]:
                del self._waiting[rtype]
                self.woken += _resolve(waiting)
        if self._streams and self._flush_handle is None:
            delay = self._last_flush + self.coalesce_s - time.monotonic()
            if delay > 0:
                self._flush_handle = self.loop.call_later(delay, self._flush)
            else:
                self._flush_handle = self.loop.call_soon(self._flush)

    def add_stream(self, rtype: Any, stream: Any) -> None:
        """Write ``stream``'s events from now on: ``stream.pump()`` is called
        when its resource moved past ``stream.position`` and returns whether it
        wrote; ``stream.close()`` when the hub stops."""
        self._streams.setdefault(rtype, {})[stream] = None

    def remove_stream(self, rtype: Any, stream: Any) -> None:
        streams = self._streams.get(rtype)
        if streams is not None:
            streams.pop(stream, None)
            if not streams:
                del self._streams[rtype]

    def _flush(self) -> None:
        self._flush_handle = None
        store = self.cp.store
        durable = store.durable_revision  # (a watch sends no more: MemoryStore.watch)
        wrote = False
        for rtype, streams in list(self._streams.items()):
            rev = min(store.revision_of(rtype), durable)
            for stream in list(streams):
                if rev > stream.position and stream.pump():
                    # (a pump may find nothing: the durable revision moved
                    # past the stream for other resources' writes only)
                    self.woken += 1
                    wrote = True
        if wrote:
            self._last_flush = time.monotonic()

    def _wake_all(self) -> None:
        groups, self._waiting = self._waiting, {}
        for _, waiting in groups.values():
            _resolve(waiting)
        readers, self._readers = self._readers, []
        for _, w in readers:
            if not w.done():
                w.set_result(None)
        streams, self._streams = self._streams, {}
        for group in streams.values():
            for stream in group:
                stream.close()

    async def wait(self, timeout: float, rtype: Any = None, seen: int = 0) -> None:
        """Until the store moves (or ``timeout`` seconds pass); with
        ``rtype``: until that resource moves past revision ``seen`` (the
        watch's own position: it may have moved while the watch wrote)."""
        if timeout <= 0 or self._stopping:
            return
        if rtype is not None and self.cp.store.revision_of(rtype) > seen:
            return
        w = self.loop.create_future()
        group = self._waiting.get(rtype)
        if group is None:
            self._waiting[rtype] = ([seen], [w])
        else:
            low, waiting = group
            low[0] = min(low[0], seen)
            if len(waiting) >= _PRUNE_AT:
                waiting[:] = [x for x in waiting if not x.done()]
            waiting.append(w)
        timer = self.loop.call_later(timeout, _expire, w)
        try:
            await w
        finally:
            timer.cancel()

    # ---------------------------------------------------------------- durability
    # A client is shown nothing a crash could take back: watches send events
    # up to the store's durable revision only (MemoryStore.watch durable=),
    # and a read that saw newer writes is answered once they are durable,
    # as kube-apiserver shows only what etcd has committed.
    async def until_durable(self, rv: int) -> None:
        """Until every write up to revision ``rv`` is on disk."""
        store = self.cp.store
        if store.durable_revision >= rv or self._stopping:
            return
        if not self._syncing:
            self._schedule_commit()  # (buffered writes with no group yet)
        w = self.loop.create_future()
        if not self._readers or rv < self._readers_low:
            self._readers_low = rv
        self._readers.append((rv, w))
        await w

    def _release_readers(self, durable: int) -> None:
        keep = []
        for rv, w in self._readers:
            if rv <= durable:
                if not w.done():
                    w.set_result(None)
            else:
                keep.append((rv, w))
        self._readers = keep
        self._readers_low = min((rv for rv, _ in keep), default=0)

    def begin_write(self) -> asyncio.Future[None]:
        """Before a client's write: join the open group commit (opening one
        if none is); the future resolves when the write is on disk."""
        if self._batch is None:
            self._batch = self.cp.store.batch()
            self._batch.__enter__()
        self._joined = True
        self._schedule_commit()
        return self._durable

    def _schedule_commit(self) -> None:
        if not self._commit_scheduled:
            self._commit_scheduled = True
            self.loop.call_soon(self._commit)

    def _commit(self) -> None:
        # The clients' writes go to disk first; the controllers' reactions
        # to them (the settle, called just after) are buffered meanwhile and
        # join the next group: a client waits for its own fsync, not for the
        # reconcile round its write caused.
        self._commit_scheduled = False
        if self._syncing:
            return  # (committed when the fsync in flight is done)
        journal = self.cp.store.journal
        fut, self._durable = self._durable, self.loop.create_future()
        self._joined = False
        if journal is None or not journal.pending or journal.snapshot_due:
            self._close_batch(fut)
            return
        # Pipelined: the write and fsync run on a thread while this loop
        # keeps answering; the batch stays open meanwhile, so the writes that
        # arrive are only buffered (the next group) and never flushed ahead.
        data, mark = journal.detach()
        self._syncing = True
        self._in_flight = (fut, data, mark)
        if self._writer is None:
            self._writer = _Writer(self.loop, self._synced)
        self._writer.submit(journal.write_out, data)

    def _synced(self, err: Exception | None) -> None:
        assert self._in_flight is not None
        fut, data, mark = self._in_flight
        self._in_flight = None
        self._syncing = False
        store = self.cp.store
        journal = store.journal
        if err is not None:
            failure = journal.lost(err) if isinstance(err, OSError) else err
            store.journal_failed(failure)
            for waiting in (fut, self._durable):
                if not waiting.done():
                    waiting.set_exception(failure)
                    waiting.exception()  # (retrieved: a write nobody awaits logs nothing)
            self._batch = None  # abandoned: the store refuses writes now
            return
        journal.acknowledge(data, mark)
        fut.set_result(None)
        self.notify()  # (watches may send what just became durable)
        if journal.pending or self._joined:
            self._schedule_commit()
        else:
            self._close_batch(self._durable)
            self._durable = self.loop.create_future()

    def _close_batch(self, fut: asyncio.Future[None]) -> None:
        """End the open batch (its flush, synchronous, and a snapshot when
        one is due) and answer ``fut``."""
        batch, self._batch = self._batch, None
        try:
            if batch is not None:
                batch.__exit__(None, None, None)
        except Exception as err:
            if not fut.done():
                fut.set_exception(err)
                fut.exception()
            return
        if not fut.done():
            fut.set_result(None)
        self.notify()

    async def drain(self) -> None:
        """Until no group commit is in flight or open (before the store closes)."""
        while self._syncing or self._batch is not None:
            if not self._syncing:
                self._commit()  # closes the batch, or starts its last fsync
            else:
                await asyncio.sleep(0.005)
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    # ---------------------------------------------------------------- manager
    def written(self) -> None:
        """A client wrote: reconcile soon, wake watches (they run after the
        reconcile round, so its writes go out with the client's, in one
        write per watch)."""
        if not self._settle_scheduled:
            self._settle_scheduled = True
            self.loop.call_soon(self._settle_if_due)
        self.notify()

    def _settle_if_due(self) -> None:
        if self._settle_scheduled:  # (not yet run by a commit)
            self._settle()

    def _settle(self, whole: bool = False) -> None:
        """A reconcile round: until idle, for _SETTLE_SLICE at most, the rest
        scheduled after the requests waiting meanwhile (``whole``: until idle,
        however long: a paced instant is published settled)."""
        self._settle_scheduled = False
        if self._stopping:
            return
        idle = True
        try:
            until = 0.0 if whole else time.monotonic() + _SETTLE_SLICE
            idle = self.cp.mgr.run_until_idle(until=until)
        except Exception:  # a controller bug must not stop the API server
            log.exception("reconcile round failed")
        if not idle and not self._settle_scheduled:
            # More work than one turn: the rest after the requests waiting.
            self._settle_scheduled = True
            self.loop.call_soon(self._settle_if_due)
        self.notify()
        if not self._kick.done():
            self._kick.set_result(None)  # new timers may be sooner

    async def run_timers(self) -> None:
        """Fire the manager's timers as the (real, maybe sped-up) clock reaches them."""
        cp = self.cp
        clock = cp.clock
        speed = getattr(clock, "speed", 1.0) or 1.0
        self._settle()
        if isinstance(clock, PacedClock):  # (serve --without-kueue: server/stepping.py)
            await Stepper(self, cp, clock).run()
            return
        while not self._stopping:
            at = cp.mgr.next_timer()
            delay = _MAX_SLEEP
            if at is not None:
                delay = min(_MAX_SLEEP, max(0.0, (at - clock.now()).total_seconds() / speed))
            await self.wait_kick(delay)
            if self._stopping:
                break
            if cp.mgr.fire_due():
                self._settle()
            self.save_clock_now_and_then()

    async def wait_kick(self, delay: float) -> None:
        """Until a settle may have brought sooner timers (or ``delay`` seconds)."""
        if self._kick.done():
            self._kick = self.loop.create_future()
        if delay > 0:
            await asyncio.wait([self._kick], timeout=delay)

    def save_clock_now_and_then(self) -> None:
        t = time.monotonic()
        if t - self._clock_saved >= _SAVE_CLOCK_EVERY:
            self._clock_saved = t
            self.cp.save_clock()

    def stop(self) -> None:
        self._stopping = True
        if not self._kick.done():
            self._kick.set_result(None)
        self._wake_all()

    @property
    def stopping(self) -> bool:
        return self._stopping
