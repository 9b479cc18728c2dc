"""``kuota serve --without-kueue``'s clock, paced on the controller's
acknowledgements (the rule and the two Leases: runtime/pacing.py).

Until a controller acknowledges, the clock runs freely as any ``--speed``
clock does; from its first acknowledgement the clock is held at an
instant and stepped, on the server's loop, only when the instant has
settled on both sides."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from typing import Any

import msgspec
import structlog

from kuota.api.k8s.coordination import Lease, LeaseSpec
from kuota.api.meta import ObjectMeta
from kuota.runtime.pacing import (
    ACK_KEY,
    CLOCK,
    HEADS,
    NAMESPACE,
    NEXT_TIMER,
    SEEN,
    SETTLED,
    PacedClock,
    decode_seen,
    encode_heads,
    micro,
    parse_micro,
    resource_key,
)
from kuota.store.kinds import resource_for, resource_type
from kuota.store.protocol import NotFound, StoreError

log = structlog.get_logger("kuota.server")
_LEASE = resource_for("coordination.k8s.io/v1", "Lease")
_MAX_SLEEP = 0.25


class Stepper:
    def __init__(self, hub: Any, cp: Any, clock: PacedClock) -> None:
        self.hub = hub
        self.cp = cp
        self.clock = clock
        self._cursor = cp.store.watch_all()
        self._last: dict[str, int] = {}  # group/resource -> newest revision written
        self._last_ns: dict[tuple[str, str], int] = {}
        self._holder = ""
        self._seen: dict[tuple[str, str], int] = {}
        self._ctl_next: datetime | None = None
        self._fired = True  # this instant's own timers fired
        self._unsettled: int | None = None  # the revision of an unsettled publication
        self._anchor: tuple[datetime, float] | None = None  # (instant, monotonic)
        self.steps = 0
        self._newcomer = False
        self._paced_once = False

    # ------------------------------------------------------------ reading the store
    def _absorb(self) -> None:
        for ev in self._cursor.poll():
            obj = ev.object
            if obj is None:
                continue
            m = obj.metadata
            key = resource_key(resource_type(obj))
            if key == "coordination.k8s.io/leases" and f"{m.namespace}/{m.name}" == ACK_KEY:
                self._read_ack(obj, ev.type)
                continue
            rv = int(ev.resource_version)
            self._last[key] = rv
            self._last_ns[(key, m.namespace or "")] = rv

    def _read_ack(self, lease: Any, etype: str) -> None:
        holder = "" if etype == "DELETED" else (lease.spec.holder_identity or "")
        ann = lease.metadata.annotations or {}
        if holder and holder != self._holder:
            self._newcomer = True  # (a new controller waits for the instant)
        self._holder = holder
        try:
            self._seen = decode_seen(ann.get(SEEN, ""))
            nxt = ann.get(NEXT_TIMER) or ""
            self._ctl_next = parse_micro(nxt) if nxt else None
        except (ValueError, TypeError):
            self._seen, self._ctl_next = {}, None  # (not ours to judge: nothing seen)

    def _caught_up(self) -> bool:
        """Every write on what the controller watches is one it has handled."""
        if not self._seen:
            return False
        for (res, ns), seen in self._seen.items():
            last = self._last_ns.get((res, ns), 0) if ns else self._last.get(res, 0)
            if last > seen:
                return False
        return True

    def _has_instant(self) -> bool:
        """The controller has seen the unsettled instant's publication."""
        assert self._unsettled is not None
        key = (resource_key(_LEASE), NAMESPACE)
        return self._seen.get(key, 0) >= self._unsettled

    # ------------------------------------------------------------ writing the instant
    def _publish(self, at: datetime, settled: bool) -> int:
        """The instant written; the clock Lease's revision."""
        store = self.cp.store
        self._absorb()
        ann = {HEADS: encode_heads(self._last), SETTLED: "true" if settled else "false"}
        self.hub.begin_write()  # (joins the group commit: no fsync of its own)
        try:
            cur = store.get(_LEASE, NAMESPACE, CLOCK)
            meta = msgspec.structs.replace(
                cur.metadata, annotations={**(cur.metadata.annotations or {}), **ann}
            )
            out = store.update(
                msgspec.structs.replace(
                    cur,
                    metadata=meta,
                    spec=msgspec.structs.replace(cur.spec, renew_time=micro(at)),
                )
            )
        except NotFound:
            out = store.create(
                Lease(
                    api_version="coordination.k8s.io/v1",
                    kind="Lease",
                    metadata=ObjectMeta(name=CLOCK, namespace=NAMESPACE, annotations=ann),
                    spec=LeaseSpec(holder_identity="kuota-serve", renew_time=micro(at)),
                )
            )
        self.hub.notify()
        return int(out.metadata.resource_version)

    # ------------------------------------------------------------ the loop
    async def run(self) -> None:
        hub, cp, clock = self.hub, self.cp, self.clock
        speed = clock.speed or 1.0
        while not hub.stopping:
            hub.save_clock_now_and_then()
            self._absorb()
            if not self._holder and not self._paced_once:
                # The world waits at its start for the controller.
                await hub.wait(_MAX_SLEEP)
                continue
            if not self._holder:
                # The controller stopped cleanly: nobody paces, the clock
                # runs freely.
                if clock.held is not None:
                    clock.release()
                    self._anchor = None
                await self._free_tick(speed)
                continue
            self._paced_once = True
            try:
                if self._newcomer and clock.held is not None:
                    self._newcomer = False
                    if self._anchor is None:
                        self._anchor = (clock.held, time.monotonic())
                    self._publish(clock.held, settled=True)
                    continue
                if clock.held is None:
                    self._newcomer = False
                    now = clock.now()
                    clock.hold(now)
                    self._anchor = (now, time.monotonic())
                    self._publish(now, settled=True)
                    continue
                # Published unsettled, the instant needs only the
                # controller's word that it has it: it handles nothing new
                # until the instant is settled (clustermode/pace_acks.py), so
                # waiting for it to catch up with another client's write
                # made meanwhile would wait forever.
                has_it = self._unsettled is not None and self._has_instant()
                if not has_it and not self._caught_up():
                    await hub.wait(_MAX_SLEEP)
                    continue
                if not self._fired:
                    # The controller has the instant: now what the cluster
                    # itself has due at it.
                    self._fired = True
                    self._unsettled = None
                    if cp.mgr.fire_due():
                        hub._settle(whole=True)
                    # The heads the controller waits for; its own timers may fire.
                    self._publish(clock.held, settled=True)
                    continue
                nxt = min(
                    (t for t in (cp.mgr.next_timer(), self._ctl_next) if t is not None),
                    default=None,
                )
                if nxt is None:
                    await hub.wait(_MAX_SLEEP)
                    continue
                assert self._anchor is not None
                t0, w0 = self._anchor
                left = w0 + max((nxt - t0).total_seconds(), 0.0) / speed - time.monotonic()
                if left > 0:
                    # --speed: no sooner in real time than the world's pace
                    # (a write meanwhile is looked at first).
                    await hub.wait(min(left, _MAX_SLEEP))
                    continue
                if nxt > clock.now():
                    clock.hold(nxt)
                    self.steps += 1
                    self._fired = False
                    self._unsettled = self._publish(nxt, settled=False)
                else:
                    self._fired = False  # (a timer at this very instant)
            except StoreError as err:  # (a refused write of the clock: try again)
                log.warning("sim clock step failed", error=str(err))
                await asyncio.sleep(_MAX_SLEEP)

    async def _free_tick(self, speed: float) -> None:
        hub, cp, clock = self.hub, self.cp, self.clock
        at = cp.mgr.next_timer()
        delay = _MAX_SLEEP
        if at is not None:
            delay = min(_MAX_SLEEP, max(0.0, (at - clock.now()).total_seconds() / speed))
        if delay > 0:
            await hub.wait_kick(delay)
        if cp.mgr.fire_due():
            hub._settle(whole=True)
