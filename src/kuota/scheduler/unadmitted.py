"""The words of Kueue's workload controller for a workload that holds no
quota (syncQuotaReservedFalseCondition): the reasons it keeps, the messages
it writes itself, and which stamps are its own (it records no Event for
them; the scheduler records one for each attempt that fails)."""

from __future__ import annotations

from typing import Final

# The QuotaReserved=False reasons Kueue's scheduler writes, which its workload
# controller keeps until the scheduler looks again (schedulerSetReasons).
SCHEDULER_REASONS: Final = frozenset(
    {
        "WaitingForQuota",
        "NoMatchingFlavor",
        "ExceedsMaxQuota",
        "TopologyPlacementFailed",
        "WaitingForPreemptedWorkloads",
        "WaitingForPodsReady",
        "PendingEvaluation",
    }
)
# Reasons after which the controller asks whether an equivalent workload just
# failed (shouldCheckEquivalenceHash): not a block it must keep showing.
RECHECKED_REASONS: Final = frozenset(
    {"", "Deactivated", "PendingEvaluation", "Suspended", "Pending"}
)
PENDING_EVALUATION: Final = "Workload is pending evaluation in the scheduling queue"
BYPASSED: Final = "Bypassed scheduling evaluation because an equivalent workload recently failed"
DEACTIVATED: Final = "The workload is deactivated"


def lq_missing(name: str) -> str:
    return f"LocalQueue {name} doesn't exist"


def lq_inactive(name: str) -> str:
    return f"LocalQueue {name} is inactive"


def cq_missing(name: str) -> str:
    return f"ClusterQueue {name} doesn't exist"


def cq_inactive(name: str) -> str:
    return f"ClusterQueue {name} is inactive"


def gated(by: str) -> str:
    return f"Admission is gated by: {by}"


def controller_only(reason: str, message: str) -> bool:
    """A QuotaReserved=False the workload controller writes and the scheduler
    never does, so no Event goes with it. (A ClusterQueue inactive, or a
    misconfiguration, both write: the first to write it records the Event.)"""
    if message in (PENDING_EVALUATION, BYPASSED) or (reason, message) == (
        "Deactivated",
        DEACTIVATED,
    ):
        return True
    if reason == "Misconfigured" and message.endswith(" doesn't exist"):
        return message.startswith(("LocalQueue ", "ClusterQueue "))
    if reason == "Suspended" and message.startswith("LocalQueue "):
        return message.endswith(" is inactive")
    return reason == "AdmissionGated" and message.startswith("Admission is gated by: ")
