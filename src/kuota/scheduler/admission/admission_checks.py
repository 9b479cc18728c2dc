"""The workload controller's admission checks (Kueue's
reconcileSyncAdmissionChecks, SyncAdmittedCondition, NeedsRequeueAtUpdate):
a reserving workload's check states follow its ClusterQueue's rules, and the
Admitted condition follows them."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from kuota.api.conditions import condition_true, find_condition
from kuota.api.kueue import types as kt
from kuota.quota.workload import is_admitted
from kuota.scheduler.admission.state import CoreState


def checks_message(checks: list[kt.AdmissionCheckState], state: str) -> str:
    """Kueue's buildAdmissionChecksMessage: the checks in a state, by name."""
    parts = [
        f'"{c.name}" ({c.message})' if c.message else f'"{c.name}"'
        for c in sorted(checks, key=lambda c: c.name)
    ]
    noun = "AdmissionChecks" if len(checks) > 1 else "AdmissionCheck"
    return f"{noun} in {state} state: {'; '.join(parts)}"


def topology_pending(wl: kt.Workload) -> bool:
    """HasTopologyAssignmentsPending: a pod set whose topology is delayed
    (DelayedTopologyRequest Pending) and not assigned yet."""
    adm = wl.status.admission if wl.status is not None else None
    return adm is not None and any(
        p.topology_assignment is None and p.delayed_topology_request == "Pending"
        for p in adm.pod_set_assignments
    )


class AdmissionChecks:
    def __init__(self, state: CoreState) -> None:
        self.state = state

    def retry_delay(self, key: str, wl: kt.Workload) -> None:
        """Kueue's NeedsRequeueAtUpdate: a check in Retry with
        requeueAfterSeconds holds the workload back until the latest of their
        lastTransitionTime + requeueAfterSeconds (never moving requeueAt
        earlier)."""
        st = wl.status
        if st is None or not st.admission_checks:
            return
        at: datetime | None = None
        for c in st.admission_checks:
            if (
                c.state == "Retry"
                and c.requeue_after_seconds is not None
                and c.last_transition_time is not None
            ):
                t = c.last_transition_time + timedelta(seconds=c.requeue_after_seconds)
                if at is None or t > at:
                    at = t
        if at is None or at <= self.state.now:
            return
        rs = st.requeue_state
        if rs is not None and rs.requeue_at is not None and rs.requeue_at >= at:
            return
        if rs is None:
            rs = st.requeue_state = kt.RequeueState()
        rs.requeue_at = at
        self.state.touched.add(key)
        self.state.timer_dirty.add(key)

    def sync_checks(self, key: str, wl: kt.Workload, cq_name: str) -> None:
        """Kueue's reconcileSyncAdmissionChecks for a reserving workload: the
        check states are exactly the checks its ClusterQueue requires for its
        flavors (a new one Pending), in name order."""
        checks = self.required_checks(wl, cq_name)
        if checks is None:
            return
        assert wl.status is not None
        if not checks and not wl.status.admission_checks:
            return  # none required, none there
        required = set(checks)
        current = list(wl.status.admission_checks or ())
        names = {s.name for s in current}
        if names == required:
            return
        kept = [s for s in current if s.name in required]
        kept += [
            kt.AdmissionCheckState(name=n, state="Pending", last_transition_time=self.state.now)
            for n in required - names
        ]
        wl.status.admission_checks = sorted(kept, key=lambda s: s.name) or None
        self.state.touched.add(key)

    def required_checks(self, wl: kt.Workload, cq_name: str) -> Iterable[str] | None:
        """The admission checks the ClusterQueue requires for the flavors the
        workload holds (None: no such queue, or no admission)."""
        st = self.state.snap.cqs.get(cq_name)
        if st is None or wl.status is None or wl.status.admission is None:
            return None
        if not st.admission_checks:
            return ()  # (what checks_for says, without the flavors: at every filing)
        flavors = {
            f for p in wl.status.admission.pod_set_assignments for f in (p.flavors or {}).values()
        }
        return st.checks_for(flavors)

    def sync_admitted(self, wl: kt.Workload, cq_name: str) -> None:
        """The workload controller's SyncAdmittedCondition: a reservation with
        every required admission check Ready is an admission."""
        if is_admitted(wl) or condition_true(wl, "Evicted"):
            return
        checks = self.required_checks(wl, cq_name)
        if checks is None:
            return
        assert wl.status is not None
        states = {s.name: s.state for s in wl.status.admission_checks or ()}
        self.checks_decided(wl, all(states.get(n) == "Ready" for n in checks))

    def checks_decided(self, wl: kt.Workload, all_ready: bool) -> None:
        """SyncAdmittedCondition for a reservation: admitted once every check
        is Ready and no delayed topology request is Pending."""
        if not all_ready:
            self.not_ready(wl)
        elif topology_pending(wl):
            if self.state.gate("UnadmittedWorkloadsObservability"):
                self.state.cond(
                    wl,
                    "Admitted",
                    "False",
                    "PendingDelayedTopologyRequests",
                    "There are pending delayed topology requests",
                    self.state.now,
                    if_changed=True,
                )
        else:
            self.state.cond(
                wl, "Admitted", "True", "Admitted", "The workload is admitted", self.state.now
            )

    def not_ready(self, wl: kt.Workload) -> None:
        """SyncAdmittedCondition for a reservation whose checks are not all
        Ready (with UnadmittedWorkloadsObservability; without it Kueue leaves
        the condition as it is)."""
        if self.state.gate("UnadmittedWorkloadsObservability"):
            self.state.cond(
                wl,
                "Admitted",
                "False",
                "UnsatisfiedAdmissionChecks",
                "The workload has not all checks ready",
                self.state.now,
                if_changed=True,
            )

    def no_reservation(self, wl: kt.Workload) -> None:
        """The Admitted condition of a workload that lost its reservation
        (SyncAdmittedCondition)."""
        adm = find_condition(wl, "Admitted")
        if adm is None:
            return
        if adm.status == "True" and adm.last_transition_time is not None and wl.status:
            # Kueue accumulates whole admitted seconds (truncated) for
            # maximumExecutionTimeSeconds each time Admitted turns False.
            ran = int((self.state.now - adm.last_transition_time).total_seconds())
            past = wl.status.accumulated_past_execution_time_seconds or 0
            wl.status.accumulated_past_execution_time_seconds = past + ran
        self.state.no_reservation(wl)
