"""The core's timers firing as time passes: maximum execution time,
PodsReady timeouts with requeue backoff, the end of a backoff, and the
LocalQueues' sampling ticks."""

from __future__ import annotations

import heapq
from datetime import datetime, timedelta
from typing import Final

from kuota.api.conditions import find_condition, is_true
from kuota.api.kueue import types as kt
from kuota.quota.workload import WorkloadInfo
from kuota.scheduler.admission.admission_fair_sharing import AdmissionFairSharing
from kuota.scheduler.admission.state import CoreState
from kuota.scheduler.admission.timers import TimerIndex, timer_conds
from kuota.scheduler.admission.workloads import WorkloadController, deactivate

# Bound once (Final: a C static when compiled, not a module-dict lookup per call).
heappop: Final = heapq.heappop
heappush: Final = heapq.heappush


class Timeouts:
    def __init__(
        self,
        state: CoreState,
        fair: AdmissionFairSharing,
        timers: TimerIndex,
        wlc: WorkloadController,
    ) -> None:
        self.state = state
        self.fair = fair
        self.timers = timers
        self.wlc = wlc

    def fire(self) -> None:
        w = self.state.config.wait_for_pods_ready
        now = self.state.now
        retry = self.state.second_pass_at
        for key in [k for k, t in retry.items() if t <= now]:
            del retry[key]  # (a delayed topology's second pass: tried in the next cycle)
        due: list[WorkloadInfo] = []
        while (nd := self.timers.next_deadline()) is not None and nd[0] <= now:
            heappop(self.timers.heap)
            del self.timers.deadlines[nd[1]]
            due.append(self.state.infos[nd[1]])
        due.sort(key=lambda i: i.key)  # in key order, as every timer of an instant
        for info in due:
            key = info.key
            if self.state.infos.get(key) is not info:
                continue  # changed by an earlier timer of this instant
            wl = info.obj
            c = timer_conds(wl)
            m = self.timers.max_execution_deadline(wl, c[0])
            if m is not None and m <= now:
                deactivate(wl)
                assert wl.status is not None
                wl.status.accumulated_past_execution_time_seconds = None
                wl.status.requeue_state = None
                self.wlc.evict(
                    key,
                    "DeactivatedDueToMaximumExecutionTimeExceeded",
                    "The workload is deactivated due to exceeding the maximum execution time",
                )
                continue
            if w is not None and is_true(c[0]) and not is_true(c[1]):
                d = self.timers.pods_ready_deadline(wl, c)
                if d is not None and d <= now:
                    self.pods_ready_timeout(key, wl)
                    continue
            rs = wl.status.requeue_state if wl.status is not None else None
            if (
                rs is not None
                and rs.requeue_at is not None
                and rs.requeue_at <= now
                and not is_true(c[3])
            ):
                rs.requeue_at = None
                rq = find_condition(wl, "Requeued")
                if (
                    rq is not None
                    and rq.status == "False"
                    and rq.reason in ("PodsReadyTimeout", "AdmissionCheck")
                ):
                    self.state.cond(
                        wl,
                        "Requeued",
                        "True",
                        "BackoffFinished",
                        "The workload backoff was finished",
                        now,
                    )
                self.wlc.sync(key)
        # LocalQueue sampling ticks, after the workload timers of the same instant.
        for lq in sorted(k for k, t in self.fair.due.items() if t <= now):
            self.fair.reconcile(lq)

    def pods_ready_timeout(self, key: str, wl: kt.Workload) -> None:
        w = self.state.config.wait_for_pods_ready
        assert w is not None
        rs = w.requeuing_strategy
        if wl.status is None:
            wl.status = kt.WorkloadStatus()
        state = wl.status.requeue_state or kt.RequeueState()
        count = (state.count or 0) + 1
        if rs.backoff_limit_count is not None and count > rs.backoff_limit_count:
            deactivate(wl)
            wl.status.requeue_state = None
            self.wlc.evict(
                key,
                "DeactivatedDueToRequeuingLimitExceeded",
                "The workload is deactivated due to exceeding the maximum number of "
                "re-queuing retries",
            )
            return
        base, cap = rs.backoff_base_seconds, rs.backoff_max_seconds
        # Kueue jitters by up to 0.01 %; kuota uses none so runs are repeatable.
        delay = base if count == 1 else min(base * 2 ** (count - 1), cap)
        at = self.state.now + timedelta(seconds=delay)
        if state.requeue_at is not None and state.requeue_at > at:
            at = state.requeue_at
        wl.status.requeue_state = kt.RequeueState(count=count, requeue_at=at)
        self.wlc.evict(key, "PodsReadyTimeout", f"Exceeded the PodsReady timeout {key}")

    def advance(self, to: datetime) -> bool:
        """Fire every timer due by ``to``; report whether any was."""
        fired = False
        while True:
            due = self.timers.next_timer()
            if due is None or due > to:
                break
            self.state.now = max(self.state.now, due)
            self.fire()
            fired = True
        self.state.now = max(self.state.now, to)
        return fired
