"""Paced time for a simulated cluster and a Kueue in another process.

``kuota run`` decides at instants: everything an instant causes (the
cluster's reactions and Kueue's) settles before virtual time moves on. Two
processes on a free-running sped-up clock cannot: the simulated clock runs
on while the controller still reacts, so a Job's admission lands seconds
(simulated) late, pods finish later, and arrivals overtake decisions. The
rule that makes them decide alike is causal, not a sleep: the cluster's
clock (``kuota serve --without-kueue``) does not step past an instant
while writes caused by it may still come, i.e. until the controller says
it has seen every write so far and its work queue is drained. ``--speed``
then only says how fast the steps may follow each other in real time.

The two talk through two Leases in Kueue's namespace, over the API server
as everything else:

* ``kuota-sim-clock`` (the cluster writes it): ``spec.renewTime`` is the
  simulated instant; the controller's clock reads it, so both see the same
  instant, never one in between. ``kuota.dev/heads``: the newest revision
  written on each resource when it was published (after the cluster's own
  timers of the instant settled): the controller starts no round before
  its watches have brought those, so it sees an instant's arrivals and
  completions together, as one manager does embedded, and not the first
  of them alone. ``kuota.dev/settled``: "true" once the cluster's own
  timers of the instant have fired and settled; the controller takes the
  new instant, runs rounds and fires its own timers of it only then, so it
  handles the instant's completions on the instant's clock and a Kueue
  timer (a requeue, a scheduling retry) sees them as it does embedded.
  While the instant is unsettled it only acknowledges having seen it,
  and the cluster then fires its timers without waiting for the
  controller to catch up with anything else.
* ``kuota-sim-clock-ack`` (the controller writes it when drained):
  ``spec.holderIdentity`` (empty: nobody paces, the clock runs freely, as
  after a clean stop), the resourceVersion each of its watches has
  delivered and its manager has handled (``kuota.dev/seen``), and its next
  timer (``kuota.dev/next-timer``), so the clock also stops at Kueue's own
  instants (backoffs, timeouts).

The cluster steps when its own controllers are idle and every write on a
resource the controller watches is at or below what the acknowledgement
says was seen (the acknowledgement itself excepted); then it moves to the
earliest of its own and the controller's next timers, no sooner in real
time than ``--speed`` allows. It publishes the new instant first and
fires its own timers only once the controller has seen it, so the
controller never handles an instant's events on the previous instant's
clock."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from typing import Any

NAMESPACE = "kueue-system"
CLOCK = "kuota-sim-clock"
ACK = "kuota-sim-clock-ack"
SEEN = "kuota.dev/seen"
NEXT_TIMER = "kuota.dev/next-timer"
HEADS = "kuota.dev/heads"
SETTLED = "kuota.dev/settled"
ACK_KEY = f"{NAMESPACE}/{ACK}"


class PacedClock:
    """A sped-up real clock (as ``RealClock``) that can be held at an
    instant: while held, ``now()`` is that instant exactly, as a virtual
    clock's is; released, it runs on from there at ``speed``."""

    def __init__(
        self, start: datetime | None = None, speed: float = 1.0, held: bool = False
    ) -> None:
        self._origin = start or datetime.now(UTC)
        self._t0 = time.monotonic()
        self.speed = speed
        self.held: datetime | None = self._origin if held else None

    @property
    def virtual(self) -> bool:
        """Held, an instant settles as a virtual one does: nothing comes due
        in the middle of a round."""
        return self.held is not None

    def now(self) -> datetime:
        if self.held is not None:
            return self.held
        return self._origin + timedelta(0, (time.monotonic() - self._t0) * self.speed)

    def hold(self, at: datetime) -> None:
        self.held = at

    def release(self) -> None:
        if self.held is not None:
            self.resume_at(self.held)
            self.held = None

    def resume_at(self, at: datetime) -> None:
        self._origin = at
        self._t0 = time.monotonic()
        if self.held is not None:
            self.held = at

    def wait_until(self, at: datetime) -> None:
        if self.held is not None:
            time.sleep(0.01)  # (a held clock moves only when the cluster steps)
            return
        delay = (at - self.now()).total_seconds() / self.speed
        if delay > 0:
            time.sleep(min(delay, 0.25))


def micro(at: datetime) -> str:
    """metav1.MicroTime's text."""
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_micro(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def resource_key(rtype: tuple[str, ...]) -> str:
    """group/resource: the same whatever version either side watches."""
    return f"{rtype[0]}/{rtype[-1]}"


def encode_seen(seen: dict[tuple[str, str], int]) -> str:
    return json.dumps(sorted([res, ns, rv] for (res, ns), rv in seen.items()))


def encode_heads(heads: dict[str, int]) -> str:
    return json.dumps(heads, sort_keys=True)


def decode_heads(text: str) -> dict[str, int]:
    return {str(k): int(v) for k, v in json.loads(text or "{}").items()}


def decode_seen(text: str) -> dict[tuple[str, str], int]:
    """(group/resource, namespace or "" for all) -> revision seen."""
    out: dict[tuple[str, str], int] = {}
    for res, ns, rv in json.loads(text or "[]"):
        out[(str(res), str(ns))] = int(rv)
    return out


def ack_body(
    identity: str, at: datetime, seen: dict[tuple[str, str], int], next_timer: datetime | None
) -> dict[str, Any]:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {
            "name": ACK,
            "namespace": NAMESPACE,
            "annotations": {
                SEEN: encode_seen(seen),
                NEXT_TIMER: micro(next_timer) if next_timer is not None else "",
            },
        },
        "spec": {"holderIdentity": identity, "renewTime": micro(at)},
    }
