"""The workload controller's QuotaReserved=False reasons for a workload that
holds no quota (Kueue's syncQuotaReservedFalseCondition with
UnadmittedWorkloadsObservability, on by default since 0.19): what blocks its
queue, its deactivation, PendingEvaluation once a stale reason's cause is
gone, and the legacy Inadmissible with the gate off."""

from __future__ import annotations

from kuota.quota.workload import find_condition
from kuota.scheduler.admission.admission_core import AdmissionCore

from ..core_world import add, make_core

QUEUES = """
apiVersion: v1
kind: Namespace
metadata: {name: ns}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
    - coveredResources: [cpu]
      flavors: [{name: default, resources: [{name: cpu, nominalQuota: "1"}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: ns}
spec: {clusterQueue: cq}
"""


def workload(name: str, priority: int = 0, queue: str = "q", active: bool = True) -> str:
    return f"""
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {{name: {name}, namespace: ns}}
spec:
  queueName: {queue}
  priority: {priority}
  active: {str(active).lower()}
  podSets: [{{name: main, count: 1, template: {{spec: {{containers:
    [{{name: c, resources: {{requests: {{cpu: "1"}}}}}}]}}}}}}]
"""


def cond(core: AdmissionCore, key: str, ctype: str) -> tuple[str, str, str] | None:
    """(status, reason, message) of the workload's condition, or None."""
    c = find_condition(core.workloads[key], ctype)
    return None if c is None else (c.status, c.reason, c.message)


def reserved_cond(core: AdmissionCore, key: str) -> tuple[str, str, str] | None:
    return cond(core, key, "QuotaReserved")


def test_a_missing_local_queue_is_named_and_the_reason_goes_once_it_exists() -> None:
    core = make_core()
    add(core, workload("w", queue="later"))
    assert reserved_cond(core, "ns/w") == (
        "False",
        "Misconfigured",
        "LocalQueue later doesn't exist",
    )
    assert cond(core, "ns/w", "Admitted") == (
        "False",
        "NoReservation",
        "The workload has no reservation",
    )
    add(core, QUEUES.replace("name: q,", "name: later,"))
    assert reserved_cond(core, "ns/w") == (
        "False",
        "PendingEvaluation",
        "Workload is pending evaluation in the scheduling queue",
    )
    assert core.cycle().admitted == ["ns/w"]


def test_a_valid_new_workload_gets_no_condition_until_the_scheduler_looks() -> None:
    core = make_core()
    add(core, QUEUES + "---" + workload("w"))
    assert reserved_cond(core, "ns/w") is None
    assert cond(core, "ns/w", "Admitted") is None


def test_a_scheduler_reason_is_kept_when_the_workload_is_seen_again() -> None:
    core = make_core()
    add(core, QUEUES + "---" + workload("big") + "---" + workload("w"))
    core.cycle()  # big is admitted, w does not fit
    core.cycle()
    before = reserved_cond(core, "ns/w")
    assert before is not None and before[1] == "WaitingForQuota"
    add(core, QUEUES)  # every queue object again: each of its workloads is filed again
    assert reserved_cond(core, "ns/w") == before


def test_a_completed_eviction_leaves_pending_evaluation() -> None:
    core = make_core()
    add(core, QUEUES + "---" + workload("low", priority=0))
    assert core.cycle().admitted == ["ns/low"]
    add(core, workload("high", priority=10))
    assert [p.victim for p in core.cycle().preempted] == ["ns/low"]
    core.complete_evictions()
    c = reserved_cond(core, "ns/low")
    assert c is not None and c[:2] == ("False", "PendingEvaluation")


def test_a_deleted_cluster_queue_is_named() -> None:
    core = make_core()
    add(core, QUEUES.replace('nominalQuota: "1"', 'nominalQuota: "0"') + "---" + workload("w"))
    core.cycle()
    assert core.delete("ClusterQueue", "", "cq")
    assert reserved_cond(core, "ns/w") == (
        "False",
        "Misconfigured",
        "ClusterQueue cq doesn't exist",
    )


def test_a_stale_inactive_reason_stays_until_the_scheduler_looks() -> None:
    # Kueue's workload controller looks again when a queue is created, deleted
    # or stopped, not when a ClusterQueue turns active because its flavor came.
    core = make_core()
    no_flavor = QUEUES.replace(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: default}",
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}",
    )
    add(core, no_flavor + "---" + workload("w"))
    assert reserved_cond(core, "ns/w") == ("False", "Suspended", "ClusterQueue cq is inactive")
    add(core, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: default}")
    c = reserved_cond(core, "ns/w")
    assert c is not None and c[1] == "Suspended"
    assert core.cycle().admitted == ["ns/w"]


def test_a_deactivated_workload_says_so() -> None:
    core = make_core()
    add(core, QUEUES + "---" + workload("w", active=False))
    assert reserved_cond(core, "ns/w") == ("False", "Deactivated", "The workload is deactivated")


def test_without_observability_a_blocked_queue_reads_inadmissible() -> None:
    core = make_core({"featureGates": {"UnadmittedWorkloadsObservability": False}})
    add(core, workload("w", queue="none"))
    assert reserved_cond(core, "ns/w") == ("False", "Inadmissible", "LocalQueue none doesn't exist")
    assert cond(core, "ns/w", "Admitted") is None


def test_a_workload_parked_for_its_shape_says_an_equivalent_one_failed() -> None:
    core = make_core(
        {
            "featureGates": {
                "UnadmittedWorkloadsObservability": True,
                "UnadmittedWorkloadsExplicitStatus": True,
            }
        }
    )
    add(core, QUEUES + "---" + workload("a"))
    assert core.cycle().admitted == ["ns/a"]
    add(core, workload("b"))
    core.cycle()  # b does not fit: its shape is parked with WaitingForQuota
    assert core.workload("ns/b").state == "inadmissible"  # type: ignore[union-attr]
    add(core, workload("c"))
    assert reserved_cond(core, "ns/c") == (
        "False",
        "WaitingForQuota",
        "Bypassed scheduling evaluation because an equivalent workload recently failed",
    )
    core.finish("ns/a")  # quota released: the parked shapes are woken and judged afresh
    add(core, workload("d"))
    c = reserved_cond(core, "ns/d")
    assert c is not None and c[1] == "PendingEvaluation"


CHECKED = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: check}
spec: {controllerName: ctrl}
status:
  conditions:
  - {type: Active, status: 'True', reason: ByTest, message: by test,
     lastTransitionTime: '2025-12-31T23:00:00Z'}
---
""" + QUEUES.replace(
    "  preemption: {withinClusterQueue: LowerPriority}\n",
    "  admissionChecksStrategy: {admissionChecks: [{name: check}]}\n",
)


def test_a_reservation_waiting_for_its_checks_says_why_it_is_not_admitted() -> None:
    core = make_core()
    add(core, CHECKED + "---" + workload("w"))
    assert core.cycle().admitted == ["ns/w"]  # quota reserved
    assert core.workload("ns/w").state == "reserved"  # type: ignore[union-attr]
    assert cond(core, "ns/w", "Admitted") == (
        "False",
        "UnsatisfiedAdmissionChecks",
        "The workload has not all checks ready",
    )
