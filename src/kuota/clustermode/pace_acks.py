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
    NAMESPACE,
    PacedClock,
    ack_body,
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
        self.acks = 0
        store.seen_ignores = ACK_KEY  # (before any watch opens)

    def open(self) -> None:
        """After the manager's lists: the clock Lease listed, then watched."""
        listed = self.store.list(LEASE, NAMESPACE)
        for lease in listed.items:
            self._read(lease)
        self._watch = self.store.watch(LEASE, listed.resource_version, namespace=NAMESPACE)

    def _read(self, lease: Any) -> None:
        m = lease.metadata
        if m.name == CLOCK and m.namespace == NAMESPACE and lease.spec.renew_time:
            self.clock.hold(parse_micro(lease.spec.renew_time))
        elif m.name == ACK and m.namespace == NAMESPACE:
            self._created = True

    def tick(self) -> None:
        """Before a round: the newest instant the cluster published."""
        for ev in self._watch.poll():
            if ev.object is not None and ev.type != "DELETED":
                self._read(ev.object)

    def ack(self, next_timer: datetime | None) -> None:
        """After a round, if nothing waits: say what was seen (only when it
        changed: an acknowledgement is a write)."""
        watches = [*self.mgr.watches, self._watch]
        if any(w.pending for w in watches):
            return
        seen: dict[tuple[str, str], int] = {}
        for w in watches:
            key = (resource_key(w.info.rtype), w.namespace or "")
            seen[key] = min(seen.get(key, w.seen), w.seen)
        mark = (sorted(seen.items()), next_timer, self.clock.now())
        if mark == self._last:
            return
        self._write(ack_body(self.identity, self.clock.now(), seen, next_timer))
        self._last = mark
        self.acks += 1

    def release(self) -> None:
        """A clean stop: nobody paces the cluster's clock any more."""
        if self._created:
            self.store.patch(LEASE, NAMESPACE, ACK, {"spec": {"holderIdentity": ""}})

    def _write(self, body: dict[str, Any]) -> None:
        if not self._created:
            try:
                meta, spec = body["metadata"], body["spec"]
                self.store.create(
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
                return
            except AlreadyExists:
                self._created = True
        try:
            self.store.patch(
                LEASE, NAMESPACE, ACK, {"metadata": body["metadata"], "spec": body["spec"]}
            )
        except NotFound:
            self._created = False
            self._write(body)
