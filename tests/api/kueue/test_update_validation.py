"""What the API server (the CRDs' transition rules) and Kueue's webhooks refuse
on update: each rule with an update it refuses, naming the field path, and one
it lets through. Then the same rules at the surfaces users meet them: the
embedded store refusing a write, and `kuota validate` on a scenario whose
steps update an object."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import pytest
from click.testing import CliRunner

from kuota.api.crd import crd
from kuota.api.decode import decode_yaml
from kuota.api.features import FEATURE_GATE_DEFAULTS
from kuota.api.kueue import types as kt
from kuota.api.kueue.config import load_config
from kuota.api.kueue.updates import validate_update
from kuota.api.meta import Condition
from kuota.cli.main import main
from kuota.embedded.controlplane import ControlPlane
from kuota.store import Invalid
from kuota.store.resources import LOCAL_QUEUE

GATES = dict(FEATURE_GATE_DEFAULTS)
T = datetime(2026, 1, 1, tzinfo=UTC)

WL = """
apiVersion: kueue.x-k8s.io/{v}
kind: Workload
metadata: {{name: w, namespace: ns}}
spec:
  queueName: q
  podSets: [{{name: main, count: 2, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: "1"}}}}}}]}}}}}}]
"""


def one(text: str) -> Any:
    (doc,) = decode_yaml(text)
    assert doc.ok, [str(x) for x in doc.errors]
    return doc.obj


def workload(v: str = "v1beta2", **spec: Any) -> kt.Workload:
    wl = one(WL.format(v=v))
    return msgspec.structs.replace(wl, spec=msgspec.structs.replace(wl.spec, **spec))


def reserved(wl: kt.Workload, *, admitted: bool = False, **status: Any) -> kt.Workload:
    conds = [
        Condition(
            type="QuotaReserved", status="True", reason="QuotaReserved", last_transition_time=T
        )
    ]
    if admitted:
        conds.append(
            Condition(type="Admitted", status="True", reason="Admitted", last_transition_time=T)
        )
    adm = kt.Admission(
        cluster_queue="cq",
        pod_set_assignments=[kt.PodSetAssignment(name="main", flavors={"cpu": "default"}, count=2)],
    )
    st = kt.WorkloadStatus(conditions=conds, admission=adm, **status)
    return msgspec.structs.replace(wl, status=st)


def errors(
    new: Any, old: Any, gates: dict[str, bool] | None = None, version: str = kt.V1BETA2
) -> list[str]:
    return [f"{x.path}: {x.detail}" for x in validate_update(new, old, gates or GATES, version)]


# ---------------------------------------------------------------- transition rules
def test_local_queue_cluster_queue_is_immutable() -> None:
    old = one(
        "{apiVersion: kueue.x-k8s.io/v1beta2, kind: LocalQueue, metadata: {name: q, namespace: ns}, spec: {clusterQueue: a}}"
    )
    moved = msgspec.structs.replace(old, spec=msgspec.structs.replace(old.spec, cluster_queue="b"))
    stopped = msgspec.structs.replace(
        old, spec=msgspec.structs.replace(old.spec, stop_policy="Hold")
    )
    assert errors(moved, old) == ["spec.clusterQueue: field is immutable"]
    assert errors(stopped, old) == []


def test_admission_check_controller_name_is_immutable() -> None:
    old = one(
        "{apiVersion: kueue.x-k8s.io/v1beta1, kind: AdmissionCheck, metadata: {name: ac}, spec: {controllerName: a.io/x}}"
    )
    new = msgspec.structs.replace(
        old, spec=msgspec.structs.replace(old.spec, controller_name="b.io/y")
    )
    assert errors(new, old, version=kt.V1BETA1) == ["spec.controllerName: field is immutable"]
    assert errors(old, old) == []


def test_resource_flavor_topology_name_may_be_set_not_changed_or_removed() -> None:
    bare = one(
        "{apiVersion: kueue.x-k8s.io/v1beta2, kind: ResourceFlavor, metadata: {name: f}, spec: {nodeLabels: {a: b}}}"
    )
    with_topo = msgspec.structs.replace(
        bare, spec=msgspec.structs.replace(bare.spec, topology_name="t1")
    )
    other = msgspec.structs.replace(
        bare, spec=msgspec.structs.replace(bare.spec, topology_name="t2")
    )
    msg = "spec: topologyName is immutable when topologyName is set"
    assert errors(with_topo, bare) == []
    assert errors(other, with_topo) == [msg]
    assert errors(bare, with_topo) == [msg]


def test_queue_name_is_immutable_while_quota_stays_reserved() -> None:
    old = reserved(workload())
    moved = reserved(workload(queue_name="q2"))
    assert errors(moved, old) == [": queueName is immutable while workload quota reserved"]
    # Not reserved before, or released by this very update: it may move.
    assert errors(workload(queue_name="q2"), workload()) == []
    assert errors(workload(queue_name="q2"), old) == []


def test_priority_class_ref_while_quota_reserved() -> None:
    wpc = kt.PriorityClassRef(group=kt.WPC_GROUP, kind="WorkloadPriorityClass", name="high")
    pc = kt.PriorityClassRef(group=kt.PC_GROUP, kind="PriorityClass", name="high")
    old = reserved(workload(priority_class_ref=wpc, priority=10))
    # A WorkloadPriorityClass may be renamed (Kueue re-reads its value) ...
    renamed = reserved(
        workload(priority_class_ref=msgspec.structs.replace(wpc, name="low"), priority=1)
    )
    assert errors(renamed, old) == []
    # ... but the reference cannot come or go, nor change group and kind.
    assert errors(reserved(workload()), old) == [
        ": priorityClassRef is immutable while workload quota reserved"
    ]
    assert errors(reserved(workload(priority_class_ref=pc, priority=10)), old) == [
        ": priorityClassRef.group is immutable while workload quota reserved",
        ": priorityClassRef.kind is immutable while workload quota reserved",
    ]
    # A pod PriorityClass's name is fixed too.
    pc_old = reserved(workload(priority_class_ref=pc, priority=10))
    pc_new = reserved(
        workload(priority_class_ref=msgspec.structs.replace(pc, name="low"), priority=10)
    )
    assert errors(pc_new, pc_old) == [
        ": priorityClassRef.name is immutable for scheduling.k8s.io/priorityclass while workload quota reserved"
    ]


def test_v1beta1_priority_class_source_and_name_rules() -> None:
    pc = kt.PriorityClassRef(group=kt.PC_GROUP, kind="PriorityClass", name="high")
    wpc = kt.PriorityClassRef(group=kt.WPC_GROUP, kind="WorkloadPriorityClass", name="high")
    old = reserved(workload("v1beta1", priority_class_ref=pc, priority=10))
    to_wpc = reserved(workload("v1beta1", priority_class_ref=wpc, priority=10))
    renamed = reserved(
        workload("v1beta1", priority_class_ref=msgspec.structs.replace(pc, name="x"), priority=10)
    )
    assert errors(to_wpc, old, version=kt.V1BETA1) == [
        ": priorityClassSource is immutable while workload quota reserved"
    ]
    assert errors(renamed, old, version=kt.V1BETA1) == [
        ": priorityClassName is immutable while workload quota reserved and "
        "priorityClassSource is not equal to kueue.x-k8s.io/workloadpriorityclass"
    ]


def test_maximum_execution_time_is_immutable_while_admitted() -> None:
    old = reserved(workload(maximum_execution_time_seconds=60), admitted=True)
    new = reserved(workload(maximum_execution_time_seconds=120), admitted=True)
    assert errors(new, old) == [
        ": maximumExecutionTimeSeconds is immutable while workload quota reserved"
    ]
    # Reserved but not yet admitted: it may still change.
    assert (
        errors(
            reserved(workload(maximum_execution_time_seconds=120)),
            reserved(workload(maximum_execution_time_seconds=60)),
        )
        == []
    )


def test_status_cluster_name_is_immutable_once_set() -> None:
    old = msgspec.structs.replace(workload(), status=kt.WorkloadStatus(cluster_name="east"))
    new = msgspec.structs.replace(workload(), status=kt.WorkloadStatus(cluster_name="west"))
    assert errors(new, old) == ["status: clusterName is immutable once set"]


def test_a_schema_error_stops_the_webhooks() -> None:
    """As the API server: the CRD's rules refuse first, Kueue's webhook is not called."""
    old = reserved(workload())
    new = reserved(workload(queue_name="q2", pod_sets=[]))
    assert errors(new, old) == [": queueName is immutable while workload quota reserved"]


# ---------------------------------------------------------------- Kueue's webhooks
def test_pod_sets_are_immutable_while_quota_is_reserved() -> None:
    old = reserved(workload())
    ps = old.spec.pod_sets[0]
    grown = reserved(workload(pod_sets=[msgspec.structs.replace(ps, count=3)]))
    assert errors(grown, old) == ["spec.podSets[0]: field is immutable"]
    extra = reserved(workload(pod_sets=[ps, msgspec.structs.replace(ps, name="two")]))
    assert "spec.podSets: field is immutable" in errors(extra, old)
    # Pending: the job may still resize it.
    assert errors(workload(pod_sets=[msgspec.structs.replace(ps, count=3)]), workload()) == []


def test_admission_can_be_set_or_cleared_but_not_changed() -> None:
    old = reserved(workload())
    changed = reserved(workload())
    changed.status.admission.cluster_queue = "other"
    assert errors(changed, old) == ["status.admission: field is immutable"]
    assert errors(old, workload()) == []  # set
    assert errors(workload(), old) == []  # cleared with the reservation


def test_reclaimable_pods_may_not_shrink_while_reserved() -> None:
    old = reserved(workload(), reclaimable_pods=[kt.ReclaimablePod(name="main", count=1)])
    shrunk = reserved(workload(), reclaimable_pods=[kt.ReclaimablePod(name="main", count=0)])
    gone = reserved(workload(), reclaimable_pods=[])
    grown = reserved(workload(), reclaimable_pods=[kt.ReclaimablePod(name="main", count=2)])
    assert errors(shrunk, old) == ["status.reclaimablePods[main].count: cannot be less than 1"]
    assert errors(gone, old) == ["status.reclaimablePods[main]: cannot be removed"]
    assert errors(grown, old) == []


def test_admission_gates_can_only_be_removed() -> None:
    def gated(value: str | None) -> kt.Workload:
        wl = workload()
        ann = {"kueue.x-k8s.io/admission-gated-by": value} if value is not None else None
        return msgspec.structs.replace(
            wl, metadata=msgspec.structs.replace(wl.metadata, annotations=ann)
        )

    path = "metadata.annotations[kueue.x-k8s.io/admission-gated-by]"
    assert errors(gated("a.io/x"), gated(None)) == [
        f"{path}: cannot add admission gate after creation"
    ]
    assert errors(gated("a.io/x,b.io/y"), gated("a.io/x")) == [
        f"{path}: can only remove gates, not add new ones"
    ]
    assert errors(gated("a.io/x"), gated("a.io/x,b.io/y")) == []
    assert errors(gated(None), gated("a.io/x")) == []


def test_ready_admission_check_pod_set_updates_are_immutable() -> None:
    def check(state: str, selector: dict[str, str]) -> kt.WorkloadStatus:
        upd = kt.PodSetUpdate(name="main", node_selector=selector)
        return kt.WorkloadStatus(
            admission_checks=[
                kt.AdmissionCheckState(
                    name="prov", state=state, last_transition_time=T, pod_set_updates=[upd]
                )
            ]
        )

    def with_status(st: kt.WorkloadStatus) -> kt.Workload:
        return msgspec.structs.replace(workload(), status=st)

    ready_a, ready_b = (
        with_status(check("Ready", {"z": "a"})),
        with_status(check("Ready", {"z": "b"})),
    )
    assert errors(ready_b, ready_a) == [
        "status.admissionChecks[0].podSetUpdates: field is immutable"
    ]
    assert errors(ready_b, with_status(check("Pending", {"z": "a"}))) == []


def test_cluster_name_must_be_one_of_the_nominated() -> None:
    old = msgspec.structs.replace(
        workload(), status=kt.WorkloadStatus(nominated_cluster_names=["east"])
    )
    west = msgspec.structs.replace(workload(), status=kt.WorkloadStatus(cluster_name="west"))
    east = msgspec.structs.replace(workload(), status=kt.WorkloadStatus(cluster_name="east"))
    assert errors(west, old) == [
        "status.clusterName: when setting clusterName it must be one of the nominatedClusterNames"
    ]
    assert errors(east, old) == []


CQ = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: cq}}
spec:
  resourceGroups:
    - coveredResources: [cpu]
      flavors: [{{name: {flavor}, resources: [{{name: cpu, nominalQuota: "4"}}]}}]
"""


def test_cluster_queue_legacy_on_flavors_tolerated_only_while_unchanged() -> None:
    cq = one(CQ.format(flavor="a"))
    strategy = kt.AdmissionChecksStrategy(
        admission_checks=[kt.AdmissionCheckStrategyRule(name="prov", on_flavors=["gone"])]
    )
    stored = msgspec.structs.replace(
        cq, spec=msgspec.structs.replace(cq.spec, admission_checks_strategy=strategy)
    )
    # An unrelated edit of a queue stored with a stale onFlavors goes through ...
    edited = msgspec.structs.replace(
        stored, spec=msgspec.structs.replace(stored.spec, queueing_strategy="StrictFIFO")
    )
    assert errors(edited, stored) == []
    # ... unless the gate says to refuse it, or the flavors changed.
    refused = errors(edited, stored, {**GATES, "RejectUpdatesToCQWithInvalidOnFlavors": True})
    assert refused == [
        'spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]: supported values: "a"'
    ]
    other = one(CQ.format(flavor="b"))
    moved = msgspec.structs.replace(
        other, spec=msgspec.structs.replace(other.spec, admission_checks_strategy=strategy)
    )
    assert errors(moved, stored) == [
        'spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]: supported values: "b"'
    ]


def test_cluster_queue_concurrent_admission_policy_is_immutable() -> None:
    cq = one(CQ.format(flavor="a"))
    pol = kt.ConcurrentAdmissionPolicy(
        migration=kt.ConcurrentAdmissionMigration(mode="TryPreferredFlavors")
    )
    new = msgspec.structs.replace(
        cq, spec=msgspec.structs.replace(cq.spec, concurrent_admission_policy=pol)
    )
    assert errors(new, cq) == ["spec.concurrentAdmissionPolicy: field is immutable"]


# ---------------------------------------------------------------- the CRDs carry them
def test_crds_carry_kueue_transition_rules() -> None:
    wl = crd("Workload")["spec"]["versions"]
    messages = {
        v["name"]: [
            r["message"] for r in v["schema"]["openAPIV3Schema"]["x-kubernetes-validations"]
        ]
        for v in wl
    }
    assert "queueName is immutable while workload quota reserved" in messages["v1beta2"]
    assert "priorityClassRef.kind is immutable while workload quota reserved" in messages["v1beta2"]
    assert "priorityClassSource is immutable while workload quota reserved" in messages["v1beta1"]
    status = wl[1]["schema"]["openAPIV3Schema"]["properties"]["status"]
    first = status["x-kubernetes-validations"][0]
    assert first["message"] == "clusterName is immutable once set"
    lq = crd("LocalQueue")["spec"]["versions"][1]["schema"]["openAPIV3Schema"]
    assert (
        lq["properties"]["spec"]["properties"]["clusterQueue"]["x-kubernetes-validations"][0][
            "rule"
        ]
        == "self == oldSelf"
    )


# ---------------------------------------------------------------- at the surfaces
def test_embedded_store_refuses_an_immutable_change_and_keeps_the_object() -> None:
    cfg, errs = load_config(
        {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration"}
    )
    assert cfg is not None, errs
    cp = ControlPlane(cfg, T, cluster=False)
    lq = one(
        "{apiVersion: kueue.x-k8s.io/v1beta2, kind: LocalQueue, metadata: {name: q, namespace: ns}, spec: {clusterQueue: a}}"
    )
    ns = one("{apiVersion: v1, kind: Namespace, metadata: {name: ns}}")
    cp.create([ns, lq])
    moved = msgspec.structs.replace(lq, spec=msgspec.structs.replace(lq.spec, cluster_queue="b"))
    with pytest.raises(Invalid) as err:
        cp.create([moved])
    assert err.value.errors[0].path == "spec.clusterQueue"
    assert cp.store.get(LOCAL_QUEUE, "ns", "q").spec.cluster_queue == "a"


SCENARIO = """
name: updates
objects:
  - {apiVersion: kueue.x-k8s.io/v1beta2, kind: LocalQueue, metadata: {name: q, namespace: ns}, spec: {clusterQueue: a}}
steps:
  - apply:
      - {apiVersion: kueue.x-k8s.io/v1beta2, kind: LocalQueue, metadata: {name: q, namespace: ns}, spec: {clusterQueue: b}}
  - delete: [LocalQueue/ns/q]
  - apply:
      - {apiVersion: kueue.x-k8s.io/v1beta2, kind: LocalQueue, metadata: {name: q, namespace: ns}, spec: {clusterQueue: c}}
"""


def test_kuota_validate_checks_scenario_updates_against_the_earlier_object(tmp_path: Path) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(SCENARIO)
    r = CliRunner().invoke(main, ["validate", "--json", str(f)])
    assert r.exit_code == 1, r.output
    import json

    docs = json.loads(r.output)["documents"]
    bad = [d for d in docs if not d["valid"]]
    # The update is refused; re-creating it after the delete is a new object.
    assert [(d["at"], [x["path"] for x in d["errors"]]) for d in bad] == [
        ("steps[0].apply[0]", ["steps[0].apply[0].spec.clusterQueue"])
    ]


def test_quota_reserved_without_admission_refused_unless_already_so() -> None:
    """Kueue's webhook test pair: an update may not reserve quota with no
    admission recorded, but a workload already stuck like that may still be
    updated, so it can converge and be removed."""
    stuck = reserved(workload())
    stuck.status.admission = None
    assert errors(stuck, workload()) == [
        "status.admission: must be set while the QuotaReserved condition is true"
    ]
    assert errors(stuck, stuck) == []
