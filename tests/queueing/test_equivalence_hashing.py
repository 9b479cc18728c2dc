"""Kueue's SchedulingEquivalenceHashing (beta, on by default): in a
BestEffortFIFO ClusterQueue, once a workload is parked for not fitting, the
pending workloads of the same scheduling shape are parked with it without
being evaluated, until the next wake; other shapes are still tried. With the
gate off, each is evaluated and gets its own reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from kuota.api.meta import LabelSelector
from kuota.api.quantity import Quantity
from kuota.quota.workload import WorkloadInfo
from kuota.scheduler.admission.admission_core import AdmissionCore
from kuota.sim.scenario import load_scenario, run_scenario

WORLD = """
name: equivalent-shapes
config: {{featureGates: {{SchedulingEquivalenceHashing: {gate}}}}}
objects:
  - {{apiVersion: v1, kind: Namespace, metadata: {{name: ns}}}}
  - {{apiVersion: kueue.x-k8s.io/v1beta2, kind: ResourceFlavor, metadata: {{name: default}}}}
  - apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata: {{name: cq}}
    spec:
      namespaceSelector: {{}}
      resourceGroups:
        - coveredResources: [cpu]
          flavors: [{{name: default, resources: [{{name: cpu, nominalQuota: "4"}}]}}]
  - {{apiVersion: kueue.x-k8s.io/v1beta2, kind: LocalQueue, metadata: {{name: q, namespace: ns}}, spec: {{clusterQueue: cq}}}}
{workloads}
steps:
  - settle: true
    expect:
      workloads:
        ns/w1: {{state: admitted}}
        ns/w2: {{state: inadmissible, reason: WaitingForQuota}}
        ns/w3: {{state: inadmissible}}
        ns/w4: {{state: admitted}}
"""

WL = """  - apiVersion: kueue.x-k8s.io/v1beta2
    kind: Workload
    metadata: {{name: {name}, namespace: ns}}
    spec:
      queueName: q
      podSets: [{{name: main, count: 1, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: "{cpu}"}}}}}}]}}}}}}]
"""


def run(tmp_path: Path, gate: bool) -> AdmissionCore:
    # w1 takes 3 of 4 cpu; w2 and w3 (2 cpu, the same shape) cannot fit; w4 (1 cpu) can.
    wls = "".join(WL.format(name=n, cpu=c) for n, c in (("w1", 3), ("w2", 2), ("w3", 2), ("w4", 1)))
    f = tmp_path / "s.yaml"
    f.write_text(WORLD.format(gate=str(gate).lower(), workloads=wls))
    captured: dict[str, Any] = {}

    def factory(config: Any, now: Any) -> AdmissionCore:
        captured["core"] = AdmissionCore(config, now)
        return captured["core"]

    result = run_scenario(load_scenario(f), core_factory=factory)
    assert result.passed, result.failures
    return captured["core"]


def test_equivalent_workload_is_parked_unevaluated_and_others_still_tried(tmp_path: Path) -> None:
    core = run(tmp_path, gate=True)
    # w3 was never evaluated: no reason of its own, as in Kueue's tests.
    assert core.workload("ns/w3").reason == ""


def test_gate_off_evaluates_each(tmp_path: Path) -> None:
    core = run(tmp_path, gate=False)
    assert core.workload("ns/w3").reason == "WaitingForQuota"


def test_a_workload_filed_again_keeps_its_hash_only_while_its_shape_holds(
    tmp_path: Path,
) -> None:
    """Every status write files a workload again as a new info; the hash is
    carried over only from an info of the same spec object, podSets and
    priority, and is then the one computed afresh."""
    core = run(tmp_path, gate=True)
    prev = core.infos["ns/w3"]
    h = prev.scheduling_hash
    same = WorkloadInfo(prev.obj, prev.podsets, prev.priority, None, prev.key)
    same.keep_scheduling_hash(prev)
    assert same.scheduling_hash is h
    fresh = WorkloadInfo(prev.obj, prev.podsets, prev.priority + 1, None, prev.key)
    fresh.keep_scheduling_hash(prev)  # another priority: another class
    assert fresh.scheduling_hash != h
    spec = msgspec.structs.replace(prev.obj.spec)
    other = WorkloadInfo(
        msgspec.structs.replace(prev.obj, spec=spec), prev.podsets, prev.priority, None, prev.key
    )
    other.keep_scheduling_hash(prev)  # an equal spec, not the same object: computed again
    assert other.scheduling_hash == h and other.scheduling_hash is not h


def test_each_new_template_gets_its_own_requests_and_checks(tmp_path: Path) -> None:
    """A template's encoding is kept with the workload's spec, for its
    requests and then its resource check: one workload after another, each
    with a new template (its predecessor gone, so its memory may hold the
    next), gets the requests and the resource check of its own template."""
    core = run(tmp_path, gate=True)
    base = core.workloads["ns/w4"]
    for i in range(1, 40):
        ps = base.spec.pod_sets[0]
        container = ps.template.spec.containers[0]
        # Every third asks for more than its limit.
        requests = {"cpu": Quantity(f"{i}m")}
        limits = {"cpu": Quantity(f"{i - 1}m")} if i % 3 == 0 else None
        template = msgspec.structs.replace(
            ps.template,
            spec=msgspec.structs.replace(
                ps.template.spec,
                containers=[
                    msgspec.structs.replace(
                        container,
                        resources=msgspec.structs.replace(
                            container.resources, requests=requests, limits=limits
                        ),
                    )
                ],
            ),
        )
        spec = msgspec.structs.replace(
            base.spec, pod_sets=[msgspec.structs.replace(ps, template=template)]
        )
        meta = msgspec.structs.replace(base.metadata, name=f"n{i}", uid=f"uid-{i}")
        core.add(msgspec.structs.replace(base, metadata=meta, spec=spec, status=None))
        info = core.infos[f"ns/n{i}"]
        assert info.podsets[0].requests["cpu"] == i
        invalid = core.resources_invalid(info)
        assert (invalid is not None) == (i % 3 == 0), (i, invalid)
        core.delete("Workload", "ns", f"n{i}")
        del template, spec, info


def test_namespace_selector_follows_namespace_labels_and_the_selector(tmp_path: Path) -> None:
    """Whether a ClusterQueue takes a namespace is kept per pair of objects:
    new namespace labels or a new selector are seen at once."""

    core = run(tmp_path, gate=True)
    assert core.namespace_matches("cq", "ns")  # namespaceSelector: {} takes all
    cq = core.cq_objs["cq"]
    team_a = LabelSelector(match_labels={"team": "a"})
    core.apply(
        msgspec.structs.replace(
            cq, spec=msgspec.structs.replace(cq.spec, namespace_selector=team_a)
        )
    )
    assert not core.namespace_matches("cq", "ns")
    ns = core.namespaces["ns"]
    core.apply(
        msgspec.structs.replace(
            ns, metadata=msgspec.structs.replace(ns.metadata, labels={"team": "a"})
        )
    )
    assert core.namespace_matches("cq", "ns")
    core.apply(
        msgspec.structs.replace(
            ns, metadata=msgspec.structs.replace(ns.metadata, labels={"team": "b"})
        )
    )
    assert not core.namespace_matches("cq", "ns")


def test_workloads_of_one_shape_share_a_hash_worked_out_once(tmp_path: Path) -> None:
    """The hash of a workload whose requests the core computed from its spec
    is kept by its inputs (priority, and per podSet its name, template,
    effective count and requests, minCount): workloads of one shape get the
    same bytes, and every hash is the one computed afresh, whichever input
    differs."""
    core = run(tmp_path, gate=True)
    base = core.workloads["ns/w4"]
    ps0 = base.spec.pod_sets[0]
    seen: dict[tuple[Any, ...], bytes] = {}
    n = 0
    for cpu in ("1", "2"):
        for selector in (None, {"zone": "a"}):
            for name, count, min_count in (("main", 1, None), ("main", 2, None), ("w", 2, 1)):
                for priority in (0, 7):
                    for _copy in range(2):
                        n += 1
                        c = ps0.template.spec.containers[0]
                        res = msgspec.structs.replace(c.resources, requests={"cpu": Quantity(cpu)})
                        pod = msgspec.structs.replace(
                            ps0.template.spec,
                            containers=[msgspec.structs.replace(c, resources=res)],
                            node_selector=selector,
                        )
                        ps = msgspec.structs.replace(
                            ps0,
                            name=name,
                            count=count,
                            min_count=min_count,
                            template=msgspec.structs.replace(ps0.template, spec=pod),
                        )
                        spec = msgspec.structs.replace(base.spec, pod_sets=[ps], priority=priority)
                        meta = msgspec.structs.replace(base.metadata, name=f"s{n}", uid=f"s{n}")
                        core.add(
                            msgspec.structs.replace(base, metadata=meta, spec=spec, status=None)
                        )
                        info = core.infos[f"ns/s{n}"]
                        h = info.scheduling_hash
                        assert h == info._compute_scheduling_hash()
                        shape = (cpu, str(selector), name, count, min_count, info.priority)
                        if shape in seen:
                            assert h is seen[shape]  # kept, not worked out again
                        seen[shape] = h
    assert len(set(seen.values())) == len(seen) == 24
