"""Kueue's mutating Workload webhook runs before its validator: with the
PartialAdmission gate off, minCount is dropped (so two podSets with minCount
are accepted); with it on, they are refused at spec.podSets."""

from __future__ import annotations

from typing import Any

from click.testing import CliRunner

from kuota.api.decode import decode_yaml
from kuota.api.features import FEATURE_GATE_DEFAULTS
from kuota.cli.main import main

WL = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: w, namespace: ns}
spec:
  queueName: lq
  podSets:
  - name: a
    count: 4
    minCount: 2
    template: {spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}
  - name: b
    count: 4
    minCount: 1
    template: {spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}
"""


def test_min_count_dropped_when_partial_admission_is_off() -> None:
    gates = {**FEATURE_GATE_DEFAULTS, "PartialAdmission": False}
    (doc,) = decode_yaml(WL, "w.yaml", gates=gates)
    assert doc.ok, doc.errors
    assert [ps.min_count for ps in doc.obj.spec.pod_sets] == [None, None]


def test_two_min_counts_refused_when_partial_admission_is_on() -> None:
    (doc,) = decode_yaml(WL, "w.yaml", gates={**FEATURE_GATE_DEFAULTS, "PartialAdmission": True})
    assert not doc.ok
    assert [(e.path, e.detail) for e in doc.errors] == [
        ("spec.podSets", "at most one podSet can use minCount")
    ]


def test_kuota_validate_reads_a_scenario_world_under_its_own_gates(tmp_path: Any) -> None:
    body = "\n".join("    " + line for line in WL.strip().splitlines())
    scenario = f"""name: two-min-counts
about: x
config:
  featureGates: {{PartialAdmission: {{gate}}}}
objects:
  - {body.strip()}
steps:
  - cycles: 1
"""
    for gate, code in (("false", 0), ("true", 1)):
        p = tmp_path / f"s-{gate}.yaml"
        p.write_text(scenario.replace("{gate}", gate))
        result = CliRunner().invoke(main, ["validate", str(p)])
        assert result.exit_code == code, result.output


def test_an_elastic_job_workload_may_not_use_min_count() -> None:
    one = WL.replace("    minCount: 1\n", "").replace(
        "metadata: {name: w, namespace: ns}",
        "metadata: {name: w, namespace: ns, annotations: {kueue.x-k8s.io/elastic-job: 'true'}}",
    )
    (doc,) = decode_yaml(one, "w.yaml", gates=FEATURE_GATE_DEFAULTS)
    assert [(e.path, e.detail) for e in doc.errors] == [
        ("spec.podSets", "partial admission and elastic job cannot be used together")
    ]
    off = {**FEATURE_GATE_DEFAULTS, "ElasticJobsViaWorkloadSlices": False}
    (doc,) = decode_yaml(one, "w.yaml", gates=off)
    assert doc.ok, doc.errors
