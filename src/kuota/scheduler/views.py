"""What the admission core shows the outside: read-only views of workloads and
queues, and the decisions a step produced. Runners (scenarios, simulation,
controllers) read these instead of reaching into the core's state."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

# The states a scenario names (tests/scenarios/README.md).
State = Literal[
    "admitted",  # quota reserved and no admission check pending
    "reserved",  # quota reserved, an admission check still pending
    "pending",  # in its ClusterQueue's active queue
    "inadmissible",  # parked until something that could make it fit happens
    "unqueued",  # in no queue: its LocalQueue or ClusterQueue is missing or stopped
    "preempted",  # evicted by preemption, quota not yet released
    "evicted",  # evicted for another reason, quota not yet released or not requeued
    "finished",
]

# Resource amounts in views are Kubernetes quantity strings ("500m", "4Gi").
FlavorUsage = dict[str, dict[str, str]]  # flavor -> resource -> quantity


@dataclass(frozen=True)
class WorkloadView:
    key: str  # namespace/name
    state: State
    # The reason of the condition that explains the state: QuotaReserved=False
    # while waiting, Preempted when preempted, Evicted when evicted.
    reason: str
    message: str
    flavors: dict[str, dict[str, str]] | None  # podSet -> resource -> flavor, if reserved
    count: dict[str, int] | None  # podSet -> admitted pod count, if reserved
    active: bool
    requeue_count: int | None  # status.requeueState.count (None: requeueState unset)
    has_requeue_at: bool
    requeue_state_set: bool
    # kuota's one-line reason, with numbers, for a workload that holds no quota.
    explanation: str = ""
    # podSet -> topology domain (its level values joined by ",") -> pods, if placed by TAS.
    topology: dict[str, dict[str, int]] | None = None
    # podSet -> its admission's delayedTopologyRequest (Pending/Ready), where set.
    delayed: dict[str, str] | None = None


@dataclass(frozen=True)
class ClusterQueueView:
    name: str
    usage: FlavorUsage  # status.flavorsReservation (quota-reserving workloads)
    admitted_usage: FlavorUsage  # status.flavorsUsage (admitted workloads)
    pending_workloads: int
    reserving_workloads: int
    admitted_workloads: int
    active: bool
    reason: str
    message: str = ""  # the Active condition's message, as Kueue words it


@dataclass(frozen=True)
class LocalQueueView:
    key: str  # namespace/name
    usage: FlavorUsage
    admitted_usage: FlavorUsage
    pending_workloads: int
    reserving_workloads: int
    admitted_workloads: int
    active: bool
    reason: str
    # status.fairSharing.admissionFairSharingStatus as Kueue's LocalQueue
    # controller last wrote it (admission fair sharing on): the decayed usage
    # (resource -> quantity) and when it was sampled. None: nothing written.
    consumed_resources: dict[str, str] | None = None
    last_update: datetime | None = None


@dataclass(frozen=True)
class Preemption:
    victim: str  # namespace/name
    reason: str  # InClusterQueue, InCohortReclamation, InCohortFairSharing, InCohortReclaimWhileBorrowing
    preemptor: str
    message: str


@dataclass(init=False)
class CycleResult:
    """What one scheduling cycle decided."""

    admitted: list[str]  # keys, in admission order
    preempted: list[Preemption]
    # Heads that were tried and left waiting, with the one-line reason.
    waiting: dict[str, str]

    # Written out (not dataclass-made): one per cycle, and the compiled build
    # runs a written one natively.
    def __init__(
        self,
        admitted: list[str] | None = None,
        preempted: list[Preemption] | None = None,
        waiting: dict[str, str] | None = None,
    ) -> None:
        self.admitted = [] if admitted is None else admitted
        self.preempted = [] if preempted is None else preempted
        self.waiting = {} if waiting is None else waiting

    @property
    def changed(self) -> bool:
        return bool(self.admitted or self.preempted)
