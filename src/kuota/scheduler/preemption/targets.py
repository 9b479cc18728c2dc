"""What a preemption search hands the cycle: the victims (Target) and why,
the reasons' names and messages, and the policy test both searches share
(Kueue's pkg/scheduler/preemption/common)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kuota.quota.workload import WorkloadInfo, queue_order_timestamp
from kuota.scheduler.cache import ClusterQueueState

IN_CLUSTER_QUEUE: Final = "InClusterQueue"
IN_COHORT_RECLAMATION: Final = "InCohortReclamation"
IN_COHORT_FAIR_SHARING: Final = "InCohortFairSharing"
IN_COHORT_RECLAIM_WHILE_BORROWING: Final = "InCohortReclaimWhileBorrowing"

HUMAN_REASONS: Final = {
    IN_CLUSTER_QUEUE: "prioritization in the ClusterQueue",
    IN_COHORT_RECLAMATION: "reclamation within the cohort",
    IN_COHORT_FAIR_SHARING: "Fair Sharing within the cohort",
    IN_COHORT_RECLAIM_WHILE_BORROWING: "reclamation within the cohort while borrowing",
}

# Preemption possibilities the flavor assigner asks about.
NO_CANDIDATES: Final = 0
PREEMPT: Final = 1
RECLAIM: Final = 2


@dataclass(slots=True, init=False)
class Target:
    info: WorkloadInfo
    reason: str
    cq: ClusterQueueState

    # A hand-written __init__ (init=False): compiled (mypyc), the one dataclasses
    # generates stays interpreted, and these are made in every cycle.
    def __init__(self, info: WorkloadInfo, reason: str, cq: ClusterQueueState) -> None:
        self.info = info
        self.reason = reason
        self.cq = cq


def satisfies_policy(
    preemptor: WorkloadInfo, candidate: WorkloadInfo, policy: str, eviction_ts: int
) -> bool:
    if policy == "LowerPriority":
        return preemptor.priority > candidate.priority
    if policy == "LowerOrNewerEqualPriority":
        if preemptor.priority > candidate.priority:
            return True
        return preemptor.priority == candidate.priority and queue_order_timestamp(
            preemptor.obj, eviction_ts
        ) < queue_order_timestamp(candidate.obj, eviction_ts)
    return policy == "Any"


def cq_path(cq: ClusterQueueState) -> str:
    parts = [a.name for a in cq.node.path_to_root()]
    parts.reverse()
    return "/" + "/".join([*parts, cq.name])


def preemption_message(
    preemptor: WorkloadInfo,
    reason: str,
    preemptor_cq: ClusterQueueState,
    target_cq: ClusterQueueState,
) -> str:
    job_uid = (preemptor.obj.metadata.labels or {}).get("kueue.x-k8s.io/job-uid") or "UNKNOWN"
    return (
        f"Preempted to accommodate a workload (UID: {preemptor.uid or 'UNKNOWN'}, "
        f"JobUID: {job_uid}) due to {HUMAN_REASONS.get(reason, 'UNKNOWN')}; "
        f"preemptor path: {cq_path(preemptor_cq)}; preemptee path: {cq_path(target_cq)}"
    )
