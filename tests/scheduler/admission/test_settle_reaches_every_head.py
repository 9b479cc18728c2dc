"""`settle` runs cycles until nothing more can happen at this instant: it
keeps taking heads while some were not yet tried since the last change, so a
workload that fits behind several that do not is admitted at once (it used to
rest after three quiet cycles and leave it waiting)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kuota.scheduler.admission.admission_core import AdmissionCore
from kuota.sim.scenario import load_scenario, run_scenario

HEAD = """
name: settle-reaches-every-head
objects:
  - {apiVersion: v1, kind: Namespace, metadata: {name: ns}}
  - {apiVersion: kueue.x-k8s.io/v1beta2, kind: ResourceFlavor, metadata: {name: default}}
  - apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata: {name: cq}
    spec:
      namespaceSelector: {}
      resourceGroups:
        - coveredResources: [cpu]
          flavors: [{name: default, resources: [{name: cpu, nominalQuota: "4"}]}]
  - {apiVersion: kueue.x-k8s.io/v1beta2, kind: LocalQueue, metadata: {name: q, namespace: ns}, spec: {clusterQueue: cq}}
"""

WL = """  - apiVersion: kueue.x-k8s.io/v1beta2
    kind: Workload
    metadata: {{name: {name}, namespace: ns, creationTimestamp: "2026-01-01T00:00:0{i}Z"}}
    spec:
      queueName: q
      podSets: [{{name: main, count: 1, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: "{cpu}"}}}}}}]}}}}}}]
"""


def test_a_fitting_workload_behind_five_that_do_not_is_admitted(tmp_path: Path) -> None:
    # Five too-big workloads of different shapes (none parks another), then one that fits.
    sizes = [("big-5", 5), ("big-6", 6), ("big-7", 7), ("big-8", 8), ("big-9", 9), ("fits", 2)]
    wls = "".join(WL.format(name=n, cpu=c, i=i) for i, (n, c) in enumerate(sizes))
    steps = """steps:
  - settle: true
    expect:
      workloads:
        ns/fits: {state: admitted}
        ns/big-9: {state: inadmissible}
"""
    f = tmp_path / "s.yaml"
    f.write_text(HEAD + wls + steps)

    def factory(config: Any, now: Any) -> AdmissionCore:
        return AdmissionCore(config, now)

    result = run_scenario(load_scenario(f), core_factory=factory)
    assert result.passed, result.failures
