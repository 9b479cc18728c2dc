"""A paced controller's side (runtime/pacing.py): its clock is held at the
instant of the cluster's clock Lease, and when its manager has drained
every watch and work queue it acknowledges what it has seen and its next
timer, so the cluster steps on only then."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kuota.api.k8s.coordination import Lease, LeaseSpec
from kuota.api.meta import ObjectMeta
from kuota.runtime.pacing import (
    ACK,
    ACK_KEY,
    CLOCK,
    HEADS,
    NAMESPACE,
    SETTLED,
    PacedClock,
    ack_body,
    decode_heads,
    parse_micro,
    resource_key,
)
from kuota.store.kinds import resource_for
from kuota.store.kube import KubeStore
from kuota.store.protocol import AlreadyExists, NotFound

LEASE = resource_for("coordination.k8s.io/v1", "Lease")


class Acknowledger:
    def __init__(self, store: KubeStore, mgr: Any, clock: PacedClock, identity: str) -> None:
        self.store = store
        self.mgr = mgr
        self.clock = clock
        self.identity = identity
        self._watch: Any = None
        self._last: Any = None
        self._created = False
        self._registered = 0  # the revision of this controller's first acknowledgement
        self.ready = False  # the cluster has published its instant since
        self._heads: dict[str, int] = {}
        self.settled = False  # the cluster's own timers of the instant have fired
        self.acks = 0
        store.seen_ignores = ACK_KEY  # (before any watch opens)

    def open(self) -> None:
        """After the manager's lists: the clock Lease watched, and this
        controller registered (an acknowledgement of what it listed). It
        runs no round before the cluster has answered with its instant: a
        round on a clock that still runs freely would not be the
        cluster's instant."""
        listed = self.store.list(LEASE, NAMESPACE)
        self._created = any(x.metadata.name == ACK for x in listed.items)
        self._watch = self.store.watch(LEASE, listed.resource_version, namespace=NAMESPACE)
        self._registered = int(self.ack(None, force=True) or 0)

    def _read(self, lease: Any, rv: str) -> None:
        m = lease.metadata
        if m.name == CLOCK and m.namespace == NAMESPACE and lease.spec.renew_time:
            self.settled = (m.annotations or {}).get(SETTLED, "true") == "true"
            # The new instant only once the cluster's own timers of it have
            # fired: before, a round on it (the idle scheduler's catch-up of
            # Kueue's own deadlines) would act on it without the instant's
            # completions, and unlike a fired timer, unflushed until the next
            # event (a PodsReady timeout written one step late).
            if self.settled or self.clock.held is None:
                self.clock.hold(parse_micro(lease.spec.renew_time))
            try:
                self._heads = decode_heads((m.annotations or {}).get(HEADS, ""))
            except (ValueError, TypeError, AttributeError):
                self._heads = {}
            if rv.isdigit() and int(rv) > self._registered:
                self.ready = True

    def tick(self) -> None:
        """Before a round: the newest instant the cluster published."""
        for ev in self._watch.poll():
            if ev.object is not None and ev.type != "DELETED":
                self._read(ev.object, ev.resource_version)

    def synced(self) -> bool:
        """The watches have brought every write the cluster had made when it
        last published its instant (its heads)."""
        for w in self.mgr.watches:
            if w.namespace is None and w.received < self._heads.get(resource_key(w.info.rtype), 0):
                return False
        return True

    @property
    def unsettled(self) -> bool:
        """The cluster has published a new instant and not yet fired its own
        timers of it."""
        return self.ready and not self.settled and self.clock.held is not None

    def ack_instant(self, next_timer: datetime | None) -> str | None:
        """While the instant is unsettled: only say the new instant has been
        seen. No round runs: what arrives now (the instant's completions,
        another client's writes) belongs to the new instant, and is handled
        on its clock once the cluster publishes it settled, with its heads;
        before, a round on the old clock would stamp it one step early."""
        return self.ack(next_timer, waiting=True)

    def ack(
        self, next_timer: datetime | None, force: bool = False, waiting: bool = False
    ) -> str | None:
        """After a round, if nothing waits: say what was seen (only when it
        changed: an acknowledgement is a write); its resourceVersion.
        ``waiting``: events may wait unhandled (an unsettled instant's)."""
        watches = [*self.mgr.watches, self._watch]
        if not force and (not self.ready or (not waiting and any(w.pending for w in watches))):
            return None
        seen: dict[tuple[str, str], int] = {}
        for w in watches:
            key = (resource_key(w.info.rtype), w.namespace or "")
            seen[key] = min(seen.get(key, w.seen), w.seen)
        mark = (sorted(seen.items()), next_timer, self.clock.now())
        if mark == self._last and not force:
            return None
        rv = self._write(ack_body(self.identity, self.clock.now(), seen, next_timer))
        self._last = mark
        self.acks += 1
        return rv

    def release(self) -> None:
        """A clean stop: nobody paces the cluster's clock any more."""
        if self._created:
            self.store.patch(LEASE, NAMESPACE, ACK, {"spec": {"holderIdentity": ""}})

    def _write(self, body: dict[str, Any]) -> str:
        if not self._created:
            try:
                meta, spec = body["metadata"], body["spec"]
                made = self.store.create(
                    Lease(
                        api_version=body["apiVersion"],
                        kind="Lease",
                        metadata=ObjectMeta(
                            name=ACK, namespace=NAMESPACE, annotations=meta["annotations"]
                        ),
                        spec=LeaseSpec(
                            holder_identity=spec["holderIdentity"], renew_time=spec["renewTime"]
                        ),
                    )
                )
                self._created = True
                return str(made.metadata.resource_version)
            except AlreadyExists:
                self._created = True
        try:
            out = self.store.patch(
                LEASE, NAMESPACE, ACK, {"metadata": body["metadata"], "spec": body["spec"]}
            )
        except NotFound:
            self._created = False
            return self._write(body)
        return str(out.metadata.resource_version)
