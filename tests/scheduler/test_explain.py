"""kuota's one-line explanation for a waiting workload carries the numbers."""

from __future__ import annotations

from pathlib import Path

from kuota.sim.scenario import load_scenario, run_scenario

HERE = Path(__file__).parent.parent


def test_waiting_workload_is_explained_with_numbers() -> None:
    captured = {}

    def factory(config, now):  # type: ignore[no-untyped-def]
        from kuota.scheduler.admission.admission_core import AdmissionCore

        core = AdmissionCore(config, now)
        captured["core"] = core
        return core

    result = run_scenario(
        load_scenario(HERE / "scenarios" / "kuota" / "waiting-explained-with-numbers.yaml"),
        core_factory=factory,
    )
    assert result.passed, result.failures
    view = captured["core"].workload("ns/big")
    assert view.explanation == (
        "insufficient unused quota for nvidia.com/gpu in flavor a100: 6 requested, "
        "5 available (nominal 4, borrowing limit 2, the rest of cohort research has 1 "
        "unused)"
    )


def test_workload_without_a_queue_name_says_how_to_give_it_one() -> None:
    from .core_world import add, make_core

    core = make_core()
    add(
        core,
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: team}\n---\n"
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w, namespace: team}\n"
        "spec: {podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c}]}}}]}\n",
    )
    view = core.workload("team/w")
    assert view is not None
    assert view.explanation.startswith("names no LocalQueue (spec.queueName is empty")
    assert "LocalQueue named default in namespace team" in view.explanation


def test_a_workload_of_several_pod_sets_names_them_and_counts_the_earlier_ones() -> None:
    # A leader of 8 GPUs and workers of 8 x 3 in a queue of 20: the leader
    # fits, and takes 8 of the 20, so the workers' 24 can never fit.
    from .core_world import add, make_core

    core = make_core()
    add(
        core,
        """\
apiVersion: v1
kind: Namespace
metadata: {name: team}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h100}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: h100, resources: [{name: nvidia.com/gpu, nominalQuota: "20"}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: main, namespace: team}
spec: {clusterQueue: cq}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: group, namespace: team}
spec:
  queueName: main
  podSets:
  - name: leader
    count: 1
    template: {spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: "8"}}}]}}
  - name: worker
    count: 3
    template: {spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: "8"}}}]}}
""",
    )
    core.cycle()
    view = core.workload("team/group")
    assert view is not None
    assert view.explanation == (
        "pod set worker: nvidia.com/gpu in flavor h100: 24 requested besides the 8 of "
        "the pod sets before, more than this ClusterQueue can ever get (12; nominal 20, "
        "no cohort to borrow from)"
    )
