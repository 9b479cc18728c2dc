"""The Events Kueue records on a Workload, read off its status change.

Kueue's scheduler and workload controller record an event at each step of a
workload's life; kuota's core changes conditions instead, so the controller
compares the stored status with the one it is about to write and records the
same events: QuotaReserved, Admitted, EvictedDueTo<reason>, Preempted, and a
Warning with the reason a workload still waits (only when that reason changes:
Kueue repeats it every cycle and the API server folds the repeats into a count).
"""

from __future__ import annotations

from datetime import datetime

from kuota.api.kueue import types as kt
from kuota.api.meta import Condition
from kuota.scheduler.unadmitted import controller_only

Emitted = tuple[str, str, str]  # (type, reason, message)


def _conds(st: kt.WorkloadStatus | None) -> dict[str, Condition]:
    return {c.type: c for c in (st.conditions if st is not None else None) or ()}


def _seconds(now: datetime, since: datetime | None) -> int:
    return round((now - since).total_seconds()) if since is not None else 0


def workload_events(
    wl: kt.Workload,
    before: kt.WorkloadStatus | None,
    after: kt.WorkloadStatus | None,
    now: datetime,
) -> list[Emitted]:
    old, new = _conds(before), _conds(after)

    def turned(ctype: str, status: str = "True") -> Condition | None:
        c = new.get(ctype)
        if c is None or c.status != status:
            return None
        o = old.get(ctype)
        if (
            o is not None
            and o.status == status
            and o.last_transition_time == c.last_transition_time
        ):
            return None
        return c

    out: list[Emitted] = []
    cq = after.admission.cluster_queue if after is not None and after.admission else ""
    qr = turned("QuotaReserved")
    if qr is not None:
        # Kueue's QueuedWaitTime: since the last requeue, else since creation.
        rq = new.get("Requeued")
        since = rq.last_transition_time if rq is not None else wl.metadata.creation_timestamp
        out.append(
            (
                "Normal",
                "QuotaReserved",
                f"Quota reserved in ClusterQueue {cq}, "
                f"wait time since queued was {_seconds(now, since)}s",
            )
        )
    if turned("Admitted") is not None:
        res = new.get("QuotaReserved")
        waited = _seconds(now, res.last_transition_time if res is not None else None)
        out.append(
            (
                "Normal",
                "Admitted",
                f"Admitted by ClusterQueue {cq}, wait time since reservation was {waited}s",
            )
        )
    pre = turned("Preempted")
    if pre is not None:
        out.append(("Normal", "Preempted", pre.message))
    ev = turned("Evicted")
    if ev is not None:
        out.append(("Normal", f"EvictedDueTo{ev.reason}", ev.message))
    pending = new.get("QuotaReserved")
    if pending is not None and pending.status == "False":
        o = old.get("QuotaReserved")
        evicted = new.get("Evicted")
        echo = evicted is not None and evicted.message == pending.message  # eviction's copy
        if (
            pending.message
            and not echo
            and (o is None or o.message != pending.message)
            and not controller_only(pending.reason, pending.message)
        ):
            # Kueue records the condition's reason (Pending, WaitingForQuota...).
            out.append(("Warning", pending.reason, pending.message))
    return out
