"""Which workloads need time to pass, and when: PodsReady timeouts, maximum
execution time, requeue backoff (and the LocalQueues' sampling ticks). A
heap of deadlines kept for the workloads that changed since the last look,
so the next timer costs what changed, not every admitted workload."""

from __future__ import annotations

import heapq
from datetime import datetime, timedelta
from typing import Final

from kuota.api.conditions import condition_true, is_true
from kuota.api.kueue import types as kt
from kuota.api.meta import Condition
from kuota.quota.workload import WorkloadInfo, is_admitted
from kuota.scheduler.admission.admission_fair_sharing import AdmissionFairSharing
from kuota.scheduler.admission.state import CoreState

# Bound once (Final: a C static when compiled, not a module-dict lookup per call).
heappop: Final = heapq.heappop
heappush: Final = heapq.heappush

# A workload's first Admitted, PodsReady, Evicted and QuotaReserved conditions.
TimerConds = tuple[Condition | None, Condition | None, Condition | None, Condition | None]
NO_TIMER_CONDS: Final[TimerConds] = (None, None, None, None)


def timer_conds(wl: kt.Workload) -> TimerConds:
    """What a workload's timers read of its conditions, in one walk of them
    (the first of each type, as find_condition): each status change asks."""
    st = wl.status
    conds = st.conditions if st is not None else None
    if not conds:
        return NO_TIMER_CONDS
    adm = ready = evicted = reserved = None
    for c in conds:
        t = c.type
        if t == "Admitted":
            if adm is None:
                adm = c
        elif t == "PodsReady":
            if ready is None:
                ready = c
        elif t == "Evicted":
            if evicted is None:
                evicted = c
        elif t == "QuotaReserved" and reserved is None:
            reserved = c
    return adm, ready, evicted, reserved


class TimerIndex:
    def __init__(self, state: CoreState, fair: AdmissionFairSharing) -> None:
        self.state = state
        self.fair = fair
        self.timed: set[str] = set()  # workloads that may have a timer
        # Their next deadlines, and a heap of (deadline, key) over them (an
        # entry counts while it is the key's deadline).
        self.deadlines: dict[str, datetime] = {}
        self.heap: list[tuple[datetime, str]] = []

    def may_have_timer(self, wl: kt.Workload, c: TimerConds) -> bool:
        """Could the workload need time to pass (a superset of the timers
        next_timer finds)? ``c``: its timer_conds."""
        st = wl.status
        if st is not None and st.requeue_state is not None:
            return True
        if not is_true(c[0]):
            return False
        if wl.spec.maximum_execution_time_seconds is not None:
            return True
        # A PodsReady timer runs only while PodsReady is not True; any change
        # of it is a status change, which puts the workload back in timer_dirty.
        return self.state.config.wait_for_pods_ready is not None and not is_true(c[1])

    def refresh(self) -> None:
        """Re-examine the workloads changed since the last look: whether they
        may have a timer, and their next deadline."""
        deadlines = self.deadlines
        for key in self.state.timer_dirty:
            info = self.state.infos.get(key)
            t: datetime | None = None
            c = timer_conds(info.obj) if info is not None else NO_TIMER_CONDS
            if info is not None and self.may_have_timer(info.obj, c):
                self.timed.add(key)
                t = self.deadline(info.obj, c)
            else:
                self.timed.discard(key)
            if t is None:
                deadlines.pop(key, None)
            elif deadlines.get(key) != t:
                deadlines[key] = t
                heappush(self.heap, (t, key))
        self.state.timer_dirty.clear()

    def timed_infos(self) -> list[WorkloadInfo]:
        """The workloads that may have a timer, by key."""
        self.refresh()
        out = []
        for key in sorted(self.timed):
            info = self.state.infos.get(key)
            if info is None:
                self.timed.discard(key)
            else:
                out.append(info)
        return out

    def deadline(self, wl: kt.Workload, c: TimerConds) -> datetime | None:
        """The workload's next timer: PodsReady timeout, maximum execution
        time or the end of its requeue backoff, whichever comes first."""
        w = self.state.config.wait_for_pods_ready
        t: datetime | None = None
        if w is not None and is_true(c[0]) and not is_true(c[1]):
            t = self.pods_ready_deadline(wl, c)
        m = self.max_execution_deadline(wl, c[0])
        if m is not None and (t is None or m < t):
            t = m
        rs = wl.status.requeue_state if wl.status is not None else None
        if rs is not None and rs.requeue_at is not None and not is_true(c[3]):
            t = rs.requeue_at if t is None else min(t, rs.requeue_at)
        return t

    def next_deadline(self) -> tuple[datetime, str] | None:
        self.refresh()
        heap, deadlines = self.heap, self.deadlines
        while heap:
            t, key = heap[0]
            if deadlines.get(key) == t and key in self.state.infos:
                return heap[0]
            heappop(heap)  # superseded, or the workload is gone
        return None

    def next_timer(self) -> datetime | None:
        nd = self.next_deadline()
        best = nd[0] if nd is not None else None
        if self.fair.due:
            t = min(self.fair.due.values())
            if best is None or t < best:
                best = t
        if self.state.second_pass_at:
            t = min(self.state.second_pass_at.values())
            if best is None or t < best:
                best = t
        return best

    @staticmethod
    def max_execution_deadline(wl: kt.Workload, adm: Condition | None) -> datetime | None:
        """When an admitted workload exhausts maximumExecutionTimeSeconds: the
        limit less the seconds of earlier admissions, from this admission.
        ``adm``: its (first) Admitted condition."""
        limit = wl.spec.maximum_execution_time_seconds
        if limit is None or wl.status is None or not wl.spec.active:
            return None
        if adm is None or adm.status != "True" or adm.last_transition_time is None:
            return None
        past = wl.status.accumulated_past_execution_time_seconds or 0
        return adm.last_transition_time + timedelta(seconds=limit - past)

    def pods_ready_deadline(self, wl: kt.Workload, c: TimerConds) -> datetime | None:
        w = self.state.config.wait_for_pods_ready
        if w is None or not wl.spec.active or is_true(c[2]):
            # Kueue's reconcileNotReadyTimeout: an evicted (still releasing its
            # quota) or deactivated workload is not timed out again.
            return None
        pr = c[1]
        if pr is not None and pr.reason == "WaitForRecovery":
            if not w.recovery_timeout or pr.last_transition_time is None:
                return None
            return pr.last_transition_time + w.recovery_timeout
        adm = c[0]
        if adm is None or adm.last_transition_time is None:
            return None
        return adm.last_transition_time + w.timeout

    def blocked_by_pods_ready(self) -> bool:
        w = self.state.config.wait_for_pods_ready
        if w is None or not w.block_admission:
            return False
        for info in self.timed_infos():  # every admitted workload, with waitForPodsReady
            wl = info.obj
            if is_admitted(wl) and not condition_true(wl, "PodsReady"):
                return True
        return False
