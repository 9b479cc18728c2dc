"""What a preemption search walks. A ClusterQueue at or over its nominal quota,
without borrowWithinCohort, can only reclaim while borrowing, where no other
queue's workload is a valid candidate: its search collects nothing (it used to
collect and sort every holder of the cohort, at every try of every waiting
borrower: minutes of CPU in the dlrm trace's per-app design). A queue that
reclaims searches once per nomination: the cycle's question after the flavor
assigner's simulation is answered by that simulation. Same decisions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kuota.scheduler.admission.admission_core import AdmissionCore
from kuota.scheduler.preemption.preemptor import Preemptor
from kuota.sim.scenario import load_scenario, run_scenario

HEAD = """
name: preemption-scan
objects:
  - {apiVersion: v1, kind: Namespace, metadata: {name: default}}
  - {apiVersion: kueue.x-k8s.io/v1beta1, kind: ResourceFlavor, metadata: {name: default}}
"""

CQ = """  - apiVersion: kueue.x-k8s.io/v1beta1
    kind: ClusterQueue
    metadata: {{name: {name}}}
    spec:
      cohort: cohort
      namespaceSelector: {{}}
      resourceGroups:
        - coveredResources: [cpu]
          flavors: [{{name: default, resources: [{{name: cpu, nominalQuota: "2"}}]}}]
      preemption: {{withinClusterQueue: Never, reclaimWithinCohort: Any}}
  - apiVersion: kueue.x-k8s.io/v1beta1
    kind: LocalQueue
    metadata: {{name: {name}, namespace: default}}
    spec: {{clusterQueue: {name}}}
"""

PENDING = """  - apiVersion: kueue.x-k8s.io/v1beta1
    kind: Workload
    metadata: {{name: {name}, namespace: default, creationTimestamp: "{created}"}}
    spec:
      queueName: {cq}
      podSets:
        - name: main
          count: 1
          template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: "1"}}}}}}]}}}}
"""

# A holder: created earlier, with its quota reserved at 23:5<minute>.
HELD = (
    PENDING.replace("{created}", "2025-12-31T23:50:00Z")
    + """    status:
      admission:
        clusterQueue: {cq}
        podSetAssignments:
          - {{name: main, flavors: {{cpu: default}}, resourceUsage: {{cpu: "1"}}, count: 1}}
      conditions:
        - type: QuotaReserved
          status: "True"
          reason: QuotaReserved
          lastTransitionTime: "2025-12-31T23:5{minute}:00Z"
"""
)

LATE = "2025-12-31T23:59:00Z"

STEPS = """steps:
  - cycles: 1
    expect:
      preempted: [default/a-4]
      workloads:
        default/a-more: {state: inadmissible}
        default/b-in: {state: pending}
"""


def _scenario(tmp_path: Path) -> Path:
    # The cohort's 6 CPUs are all held: a holds 4 (2 borrowed), c its own 2.
    # a-more (a is over its nominal quota) finds nothing to preempt; b-in
    # (b is under its nominal quota) reclaims a's most recently reserved.
    text = HEAD + "".join(CQ.format(name=n) for n in ("a", "b", "c"))
    text += "".join(HELD.format(name=f"a-{i}", cq="a", minute=i) for i in range(1, 5))
    text += "".join(HELD.format(name=f"c-{i}", cq="c", minute=i) for i in range(1, 3))
    text += PENDING.format(name="a-more", cq="a", created=LATE) + PENDING.format(
        name="b-in", cq="b", created=LATE
    )
    f = tmp_path / "s.yaml"
    f.write_text(text + STEPS)
    return f


@pytest.mark.interpreted
def test_a_borrower_collects_nothing_and_a_reclaim_searches_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = {"collect": 0, "classical": 0}
    collect, classical = Preemptor._collect, Preemptor._classical

    def counted_collect(self: Preemptor, *args: Any) -> None:
        calls["collect"] += 1
        collect(self, *args)

    def counted_classical(self: Preemptor, *args: Any) -> Any:
        calls["classical"] += 1
        return classical(self, *args)

    monkeypatch.setattr(Preemptor, "_collect", counted_collect)
    monkeypatch.setattr(Preemptor, "_classical", counted_classical)

    def factory(config: Any, now: Any) -> AdmissionCore:
        return AdmissionCore(config, now)

    result = run_scenario(load_scenario(_scenario(tmp_path)), core_factory=factory)
    assert result.passed, result.failures
    # a-more: one search (its simulation; the cycle reuses it), nothing collected.
    # b-in: one search that collects a's holders.
    assert calls == {"collect": 1, "classical": 2}
