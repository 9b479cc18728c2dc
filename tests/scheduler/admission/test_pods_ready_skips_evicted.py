"""waitForPodsReady does not time out a workload that is already evicted
(preempted, still releasing its quota) or deactivated, as Kueue's
reconcileNotReadyTimeout skips them: no second eviction, no requeue count."""

from __future__ import annotations

from datetime import timedelta

from kuota.scheduler.admission.admission_core import AdmissionCore

from ..core_world import T0, add, make_core

WORLD = """
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
  resourceGroups:
    - coveredResources: [cpu]
      flavors: [{name: default, resources: [{name: cpu, nominalQuota: "4"}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: ns}
spec: {clusterQueue: cq}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: w, namespace: ns, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  queueName: q
  podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}}]
status:
  admission:
    clusterQueue: cq
    podSetAssignments: [{name: main, flavors: {cpu: default}, resourceUsage: {cpu: "1"}, count: 1}]
  conditions:
    - {type: QuotaReserved, status: "True", reason: QuotaReserved, message: "", lastTransitionTime: "2026-01-01T00:00:00Z"}
    - {type: Admitted, status: "True", reason: Admitted, message: "", lastTransitionTime: "2026-01-01T00:00:00Z"}
    - {type: Evicted, status: "True", reason: Preempted, message: "preempted", lastTransitionTime: "2026-01-01T00:01:00Z"}
"""


def core_with(world: str) -> AdmissionCore:
    core = make_core({"waitForPodsReady": {"timeout": "5m"}})
    add(core, world)
    return core


def test_an_evicted_workload_is_not_timed_out_again() -> None:
    core = core_with(WORLD)
    core.advance(T0 + timedelta(minutes=30))
    view = core.workload("ns/w")
    assert view is not None
    assert view.reason == "Preempted"  # still the preemption, not PodsReadyTimeout
    assert view.requeue_count is None


def test_an_admitted_workload_is_timed_out() -> None:
    # The same workload, not evicted: its PodsReady timeout evicts it.
    not_evicted = WORLD.replace('type: Evicted, status: "True"', 'type: Evicted, status: "False"')
    core = core_with(not_evicted)
    core.advance(T0 + timedelta(minutes=30))
    view = core.workload("ns/w")
    assert view is not None
    assert view.requeue_count == 1
