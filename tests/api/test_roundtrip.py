"""Every Kueue kind read from real manifests in both versions and written back
in the version it came in, unchanged in meaning."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from kuota.api.base import Quantity
from kuota.api.decode import decode_yaml, to_wire

HERE = Path(__file__).parents[1]  # tests/
SOURCES = sorted((HERE / "validation").glob("*.yaml")) + sorted(
    (HERE / "fixtures" / "manifests").glob("*.yaml")
)


def _norm(v: Any) -> Any:
    """Compare quantities by value and drop what defaulting may add."""
    if isinstance(v, dict):
        return {k: _norm(x) for k, x in v.items() if x not in (None, {}, [])}
    if isinstance(v, list):
        return [_norm(x) for x in v]
    if isinstance(v, str | int) and not isinstance(v, bool):
        try:
            return ("q", Quantity.from_value(v).nanos)
        except ValueError:
            return v
    return v


def _subset(
    small: Any, big: Any, omitted: list[tuple[Any, ...]], path: tuple[Any, ...] = ()
) -> None:
    """Everything the user wrote is still there with the same value, or was
    left out (collected in ``omitted``, checked by the caller to be a default)."""
    if isinstance(small, dict):
        assert isinstance(big, dict), path
        for k, v in small.items():
            if k not in big:
                omitted.append((*path, k))
                continue
            _subset(v, big[k], omitted, (*path, k))
    elif isinstance(small, list):
        assert isinstance(big, list) and len(small) == len(big), path
        for i, (a, b) in enumerate(zip(small, big, strict=True)):
            _subset(a, b, omitted, (*path, i))
    else:
        assert small == big, f"{path}: {small!r} != {big!r}"


def _without(raw: dict[str, Any], path: tuple[Any, ...]) -> dict[str, Any]:
    out = copy.deepcopy(raw)
    node: Any = out
    for step in path[:-1]:
        node = node[step]
    del node[path[-1]]
    return out


def _valid_docs() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for p in SOURCES:
        text = p.read_text()
        if "# expect: invalid" in text:
            continue
        for i, raw in enumerate(yaml.safe_load_all(text)):
            if raw:
                out.append((f"{p.name}#{i}", raw))
    return out


DOCS = _valid_docs()

# v1beta1 spellings that Kueue's conversion rewrites to an equivalent value.
EQUIVALENT = {"Borrow": "MayStopSearch", "Preempt": "MayStopSearch"}


def _canon(v: Any) -> Any:
    if isinstance(v, dict):
        if isinstance(v.get("admissionChecks"), list) and all(
            isinstance(x, str) for x in v["admissionChecks"]
        ):
            # v1beta1's legacy list comes back as the strategy, as Kueue's own
            # v1beta2 -> v1beta1 conversion writes it.
            v = {k: x for k, x in v.items() if k != "admissionChecks"} | {
                "admissionChecksStrategy": {
                    "admissionChecks": [{"name": n} for n in v["admissionChecks"]]
                }
            }
        return {k: _canon(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_canon(x) for x in v]
    return EQUIVALENT.get(v, v) if isinstance(v, str) else v


@pytest.mark.parametrize(("name", "raw"), DOCS, ids=[n for n, _ in DOCS])
def test_written_back_in_its_version_unchanged_in_meaning(name: str, raw: dict[str, Any]) -> None:
    (doc,) = decode_yaml(yaml.safe_dump(raw))
    assert doc.ok, [str(e) for e in doc.errors]
    out = to_wire(doc.obj)
    assert out["apiVersion"] == raw["apiVersion"]
    omitted: list[tuple[Any, ...]] = []
    _subset(_norm(_canon(raw)), _norm(out), omitted)
    # What the output leaves out must be what the defaults give anyway.
    for path in omitted:
        (alone,) = decode_yaml(yaml.safe_dump(_without(raw, path)))
        assert alone.ok and alone.obj == doc.obj, f"{path} was dropped but is not a default"
    # And reading what was written gives the same object.
    (again,) = decode_yaml(yaml.safe_dump(out))
    assert again.ok and again.obj == doc.obj


def test_fixtures_cover_every_kind_in_both_versions() -> None:
    seen = {
        (raw["apiVersion"].rsplit("/", 1)[-1], raw["kind"])
        for _, raw in DOCS
        if raw["apiVersion"].startswith("kueue")
    }
    for kind in (
        "ResourceFlavor",
        "ClusterQueue",
        "LocalQueue",
        "Workload",
        "WorkloadPriorityClass",
        "Cohort",
        "AdmissionCheck",
    ):
        for version in ("v1beta1", "v1beta2"):
            assert (version, kind) in seen, (version, kind)


def test_v1beta1_converts_to_the_internal_model() -> None:
    text = (HERE / "fixtures" / "manifests" / "v1beta1-world.yaml").read_text()
    docs = {d.kind: d.obj for d in decode_yaml(text) if d.ok}
    cq = docs["ClusterQueue"]
    assert cq.spec.cohort_name == "research"
    assert cq.spec.flavor_fungibility.when_can_borrow == "MayStopSearch"
    assert [r.name for r in cq.spec.admission_checks_strategy.admission_checks] == ["prov"]
    wl = docs["Workload"]
    assert wl.spec.priority_class_ref is not None
    assert (wl.spec.priority_class_ref.group, wl.spec.priority_class_ref.kind) == (
        "kueue.x-k8s.io",
        "WorkloadPriorityClass",
    )
    assert wl.status.accumulated_past_execution_time_seconds == 42
    assert docs["AdmissionCheck"].spec.controller_name == "kueue.x-k8s.io/provisioning-request"


def test_defaults_applied_as_the_crds_say() -> None:
    (cq,) = decode_yaml(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: x}\n"
    )
    s = cq.obj.spec
    assert s.queueing_strategy == "BestEffortFIFO"
    assert s.namespace_selector is None  # nil selects no namespace
    assert (s.flavor_fungibility.when_can_borrow, s.flavor_fungibility.when_can_preempt) == (
        "MayStopSearch",
        "TryNextFlavor",
    )
    assert (s.preemption.reclaim_within_cohort, s.preemption.within_cluster_queue) == (
        "Never",
        "Never",
    )
    assert s.preemption.borrow_within_cohort.policy == "Never"
    assert s.stop_policy == "None"
    (wl,) = decode_yaml(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w, namespace: n}\n"
        "spec: {podSets: [{template: {spec: {containers: [{name: c}]}}}]}\n"
    )
    assert wl.ok, wl.errors
    assert wl.obj.spec.active is True
    assert wl.obj.spec.pod_sets[0].name == "main" and wl.obj.spec.pod_sets[0].count == 1
    (ac,) = decode_yaml(
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: AdmissionCheck\nmetadata: {name: a}\n"
        "spec: {controllerName: x}\n"
    )
    assert ac.ok
