"""The manager: a watch per cached resource feeds the informer caches, whose
handlers queue keys for the controllers; the manager runs reconciles until
nothing is left at the current instant, then lets the clock move to the next
timer. Single-threaded and deterministic: the same world in virtual time
gives the same run, event for event."""

from __future__ import annotations

import contextlib
import heapq
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final, Literal, Protocol

from kuota.runtime.clock import Clock
from kuota.runtime.informer import Informer
from kuota.runtime.recorder import EventRecorder
from kuota.runtime.workqueue import Ready, WorkQueue
from kuota.store.kinds import kind_info, resource_type
from kuota.store.protocol import Gone, ObjectStore, ResourceType, Watch

# Bound once (Final: a C static when compiled, not a module-dict lookup per call).
heappop: Final = heapq.heappop
heappush: Final = heapq.heappush


def _warn(event: str, **fields: str) -> None:
    # structlog is imported at the first warning only: importing it costs
    # about 0.1 s, which every command that reads the controllers would pay
    import structlog

    structlog.get_logger("kuota.runtime").warning(event, **fields)


class Controller(Protocol):
    name: str

    def setup(self, mgr: Manager) -> None:
        """Ask for informers and register the handlers that queue keys."""
        ...

    def reconcile(self, key: str) -> timedelta | None:
        """Bring one object to its desired state; return a delay to be called
        again for the same key (None: only when something changes)."""
        ...


IdleHook = Callable[[], bool]  # runs when no work is left; True if it did some
# "repeating": the control plane stopped a run that only repeats itself
# (kuota.embedded.repetition); the manager itself never returns it.
StopReason = Literal["idle", "until", "stopped", "max-steps", "repeating"]


@dataclass
class ReconcileError:
    controller: str
    key: str
    error: str
    at: datetime


@dataclass
class Stats:
    reconciles: int = 0
    events: int = 0
    rounds: int = 0
    errors: list[ReconcileError] = field(default_factory=list)


class Manager:
    def __init__(self, store: ObjectStore, clock: Clock, *, raise_errors: bool = False) -> None:
        self.store = store
        self.clock = clock
        self.raise_errors = raise_errors  # tests: a failing reconcile fails the test
        self.informers: dict[ResourceType, Informer] = {}
        # Informers that list and watch one namespace only (scope()).
        self.scopes: dict[ResourceType, str] = {}
        self.controllers: dict[str, Controller] = {}
        self.queues: dict[str, WorkQueue] = {}
        # The queues in the order they were added (the order a round visits
        # them in) and the board of those holding keys (bit i: _order[i]).
        self._order: list[tuple[str, WorkQueue]] = []
        self._ready = Ready()
        # Keys queued by enqueue_coalesced, in order, until the queues empty.
        self._deferred: dict[tuple[str, str], None] = {}
        self.idle_hooks: list[IdleHook] = []
        self.stats = Stats()
        self.recorder = EventRecorder(store, clock)
        self._timers: list[tuple[datetime, int, str, str]] = []
        self._timer_at: dict[tuple[str, str], datetime] = {}
        self._seq = 0  # (an int, not itertools.count: next() is a builtins lookup compiled)
        self._watch: Any = None  # the store's multiplexed watch (see _resync)
        self._watches: list[Watch] = []  # else one per informer
        self._started = False
        self._stop = False

    # ------------------------------------------------------------ wiring
    def informer(self, rtype: ResourceType) -> Informer:
        inf = self.informers.get(rtype)
        if inf is None:
            rtype = kind_info(rtype).rtype  # (any served version: one cache)
            inf = self.informers.get(rtype)
            if inf is None:
                if self._started:
                    raise RuntimeError(f"informer for {rtype} requested after start")
                inf = self.informers[rtype] = Informer(rtype)
        return inf

    def scope(self, rtype: ResourceType, namespace: str) -> Informer:
        """The informer of ``rtype``, listing and watching ``namespace``
        only, as Kueue reads Secrets in its own namespace (and so needs no
        right to read them elsewhere). A store with one multiplexed watch
        (the memory store's) still brings every namespace's objects: the
        controller filters, as it must anyway."""
        inf = self.informer(rtype)
        self.scopes[inf.rtype] = namespace
        return inf

    def add(self, controller: Controller) -> None:
        self.controllers[controller.name] = controller
        name = controller.name
        names = [n for n, _ in self._order]
        # (the same name again: its queue is replaced in place, as in the dict)
        i = names.index(name) if name in names else len(names)
        self._ready.mask &= ~(1 << i)
        q = self.queues[name] = WorkQueue(name, self._ready, i)
        if i == len(names):
            self._order.append((name, q))
        else:
            self._order[i] = (name, q)
        controller.setup(self)

    def on_idle(self, hook: IdleHook) -> None:
        self.idle_hooks.append(hook)

    def enqueue(self, controller: str, key: str) -> None:
        self.queues[controller].add(key)

    def enqueue_coalesced(self, controller: str, key: str) -> None:
        """Queue the key once every queue is empty at this instant. A sync
        that reads every object a key owns (a ReplicaSet's pods) is asked
        for this way on each owned object's write: a burst of pod writes
        then costs one sync instead of one per pod (O(pods²) otherwise), as
        kube's concurrent workers coalesce them. A change to the owner itself
        is still queued at once, so owners keep their order."""
        self._deferred[(controller, key)] = None

    def enqueue_at(self, controller: str, key: str, at: datetime) -> None:
        """Queue the key when the clock reaches ``at`` (the earliest request wins)."""
        if at <= self.clock.now():
            self.enqueue(controller, key)
            return
        prev = self._timer_at.get((controller, key))
        if prev is not None and prev <= at:
            return
        self._timer_at[(controller, key)] = at
        seq = self._seq
        self._seq = seq + 1
        heappush(self._timers, (at, seq, controller, key))

    def cancel_timer(self, controller: str, key: str) -> None:
        """Forget a pending enqueue_at: a timer nobody needs any more must not
        keep a run going (in real time it would wait for it)."""
        self._timer_at.pop((controller, key), None)  # its heap entry is skipped

    def enqueue_after(self, controller: str, key: str, delay: timedelta) -> None:
        try:
            at = self.clock.now() + delay
        except OverflowError:
            # Past year 9999, where the clock can never go: the timer never fires
            # (an object may be stamped at the end of time; that is no crash).
            return
        self.enqueue_at(controller, key, at)

    def stop(self) -> None:
        """Graceful shutdown: the current reconcile finishes, then run() returns."""
        self._stop = True

    # ------------------------------------------------------------ running
    def start(self) -> None:
        if self._started:
            return
        self._started = True
        self.recorder.resume()
        self._resync()

    def _resync(self) -> None:
        """List every cached resource and watch it from that list on. A store
        that offers one multiplexed watch of every resource (the memory
        store's ``watch_all``) is watched through it instead: only that store
        can interleave the resources' events in the order it wrote them, and
        the handlers must see them in that order for a run to be the same
        run, event for event (and the settle loop counts every write)."""
        watch_all = getattr(self.store, "watch_all", None)
        for old in self._watches:
            old.close()  # (a real API server's streams stay open until closed)
        self._watch = watch_all() if watch_all is not None else None  # (before the lists)
        self._watches = []
        for rtype, inf in self.informers.items():
            ns = self.scopes.get(rtype) if watch_all is None else None
            listed = self.store.list(rtype, ns)
            seen = set()
            for obj in listed.items:
                inf.apply("MODIFIED", obj)
                seen.add(id(obj))
            for key, obj in list(inf.objects.items()):
                if id(obj) not in seen:
                    inf.apply("DELETED", obj)
                    inf.objects.pop(key, None)
            if watch_all is None:
                self._watches.append(self.store.watch(rtype, listed.resource_version, namespace=ns))

    @property
    def watches(self) -> list[Any]:
        """The open per-resource watches (none over a store's ``watch_all``)."""
        return self._watches

    def resync(self) -> None:
        """List every cached resource again and hand each object to the
        handlers (client-go's periodic resync; the watches restart from the
        new lists)."""
        self._resync()

    def _poll(self) -> list[Any]:
        if self._watch is not None:
            events: list[Any] = self._watch.poll()
            return events
        out: list[Any] = []
        for w in self._watches:
            out.extend(w.poll())
        return out

    def pump(self) -> int:
        """Deliver the store's new events to the informers."""
        try:
            events = self._poll()
        except Gone:
            self._resync()
            return 1
        for ev in events:
            if ev.type == "BOOKMARK":
                continue
            inf = self.informers.get(resource_type(ev.object))
            if inf is not None:
                inf.apply(ev.type, ev.object)
        self.stats.events += len(events)
        return len(events)

    def _batch(self) -> contextlib.AbstractContextManager[Any]:
        batch = getattr(self.store, "batch", None)
        return batch() if batch is not None else contextlib.nullcontext()

    def run_until_idle(self, max_steps: int = 10_000_000, until: float = 0.0) -> bool:
        """Reconcile until no event, key or idle hook has work at this instant.
        Returns False if ``max_steps`` ran out first (a controller loops), or
        ``until`` (a ``time.monotonic()`` reading; 0: none) passed: a server
        answers its clients meanwhile and calls again."""
        self.start()
        steps = 0
        order = self._order
        ready = self._ready
        with self._batch():
            while not self._stop:
                self.pump()
                did = False
                # One pass: each queue in turn gives one key, as if every
                # queue were asked, but only those with keys are visited
                # (the board's bits above the last one visited).
                pos = 0
                while True:
                    rest = ready.mask >> pos
                    if not rest:
                        break
                    i = pos + (rest & -rest).bit_length() - 1
                    pos = i + 1
                    name, q = order[i]
                    key = q.get()
                    if key is None:  # (cannot happen: its bit says it holds keys)
                        continue
                    did = True
                    steps += 1
                    self._reconcile(name, q, key)
                    self.pump()
                if did:
                    if steps >= max_steps:
                        return False
                    if until and time.monotonic() >= until:
                        return False
                    continue
                if self._deferred:
                    deferred = self._deferred
                    self._deferred = {}
                    for name, key in deferred:
                        self.queues[name].add(key)
                    continue
                # In real time the clock runs while a round works: what came
                # due meanwhile (a job's finish) joins this round before the
                # next scheduling cycle, as in a live controller, instead of
                # waiting for the round to end. A virtual clock stands still.
                if not self.clock.virtual and self.fire_due():
                    continue
                if any([hook() for hook in self.idle_hooks]):
                    continue
                if self.pump() == 0:
                    break
        self.stats.rounds += 1
        return True

    def _reconcile(self, name: str, q: WorkQueue, key: str) -> None:
        self.stats.reconciles += 1
        try:
            again = self.controllers[name].reconcile(key)
        except Exception as err:
            if self.raise_errors:
                q.done(key)
                raise
            delay = q.backoff(key)
            self.stats.errors.append(
                ReconcileError(name, key, f"{type(err).__name__}: {err}", self.clock.now())
            )
            _warn("reconcile failed", controller=name, key=key, error=str(err))
            q.done(key)
            self.enqueue_after(name, key, delay)
            return
        q.forget(key)
        q.done(key)
        if again is not None:
            self.enqueue_after(name, key, again)

    def next_timer(self) -> datetime | None:
        while self._timers:
            at, _, ctrl, key = self._timers[0]
            if self._timer_at.get((ctrl, key)) == at:
                return at
            heappop(self._timers)  # superseded by an earlier request
        return None

    def fire_due(self) -> int:
        now = self.clock.now()
        n = 0
        while self._timers and self._timers[0][0] <= now:
            at, _, ctrl, key = heappop(self._timers)
            if self._timer_at.get((ctrl, key)) == at:
                del self._timer_at[(ctrl, key)]
                self.enqueue(ctrl, key)
                n += 1
        return n

    def run(
        self,
        until: datetime | None = None,
        *,
        on_round: Callable[[], None] | None = None,
        on_tick: Callable[[], None] | None = None,
        max_steps: int = 10_000_000,
    ) -> StopReason:
        """Run until nothing more can happen (no work, no timer), until the
        clock passes ``until``, or until stop() is called. ``on_round`` runs
        when an instant has settled, ``on_tick`` when the clock has moved and
        before anything happens at the new instant."""
        self.start()
        ticked = False
        while True:
            # An instant is one group commit, from the tick on: what on_tick
            # writes (the clock) is durable with the instant's writes or not
            # at all, so a run killed before the instant's commit resumes at
            # the previous, settled instant and comes to this one as this
            # run did, by its timers, instead of rebuilding in the middle of it.
            with self._batch():
                if ticked:
                    if on_tick is not None:
                        on_tick()
                    self.fire_due()
                if not self.run_until_idle(max_steps):
                    return "max-steps"
            if on_round is not None:
                on_round()
            if self._stop:
                return "stopped"
            at = self.next_timer()
            if at is None:
                return "idle"
            if until is not None and at > until:
                self.clock.wait_until(until)
                if self.clock.now() >= until:
                    return "until"
                ticked = False
                continue
            self.clock.wait_until(at)
            ticked = True

    def timers(self) -> Iterator[tuple[datetime, str, str]]:
        for (ctrl, key), at in sorted(self._timer_at.items(), key=lambda kv: kv[1]):
            yield at, ctrl, key
