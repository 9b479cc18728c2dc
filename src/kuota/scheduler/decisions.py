"""What a scheduling cycle decides, as data: the cycle hands each decision
out as it makes it, and the admission core applies it (one place,
``admission.applier``) before the cycle goes on, so later entries of the
cycle see its effect, as in Kueue's scheduler. Plain classes with a
hand-written __init__: compiled, these are made in every cycle."""

from __future__ import annotations

from kuota.quota.workload import WorkloadInfo
from kuota.scheduler.cache import ClusterQueueState
from kuota.scheduler.flavorassigner.assignment import Assignment
from kuota.scheduler.preemption.targets import Target


class Decision:
    """A decision of the cycle (one of the kinds below)."""

    __slots__ = ()


class Admit(Decision):
    """Reserve quota for the workload in its ClusterQueue with the assignment;
    ``replaced``: the workload slice it replaces, finished once it is admitted."""

    __slots__ = ("assignment", "cq", "info", "replaced")

    def __init__(
        self,
        info: WorkloadInfo,
        cq: ClusterQueueState,
        assignment: Assignment,
        replaced: WorkloadInfo | None,
    ) -> None:
        self.info = info
        self.cq = cq
        self.assignment = assignment
        self.replaced = replaced


class Preempt(Decision):
    """Evict the targets to make room for the preemptor (who waits for them)."""

    __slots__ = ("cq", "preemptor", "targets")

    def __init__(
        self, preemptor: WorkloadInfo, cq: ClusterQueueState, targets: list[Target]
    ) -> None:
        self.preemptor = preemptor
        self.cq = cq
        self.targets = targets


class Migrate(Decision):
    """Kueue's issueMigration: evict a ConcurrentAdmission variant (``victim``,
    a key) on a less preferred flavor for its sibling ``to``."""

    __slots__ = ("to", "victim")

    def __init__(self, victim: str, to: WorkloadInfo) -> None:
        self.victim = victim
        self.to = to


class Requeue(Decision):
    """Put a head the cycle did not admit back in its queue (Kueue's
    requeueAndUpdate), with the reason that decides where it waits."""

    __slots__ = ("blocked_on_gates", "info", "message", "qr_reason", "reason", "skip_status")

    def __init__(
        self,
        info: WorkloadInfo,
        reason: str,
        qr_reason: str,
        message: str,
        skip_status: bool,
        blocked_on_gates: bool,
    ) -> None:
        self.info = info
        self.reason = reason
        self.qr_reason = qr_reason
        self.message = message
        self.skip_status = skip_status
        self.blocked_on_gates = blocked_on_gates
