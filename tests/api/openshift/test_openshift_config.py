"""OpenShift's ``Kueue`` resource (``kueue.openshift.io/v1``) read as the API server
(schema, CEL rules) and the Kueue Operator (pkg/configmap/configmap.go) read it, into
kuota's KueueConfig."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kuota.api import openshift as osh
from kuota.api.decode import decode_json, decode_object, decode_yaml, to_wire
from kuota.api.meta import LabelSelector
from kuota.cli.main import main

FULL = """\
apiVersion: kueue.openshift.io/v1
kind: Kueue
metadata:
  name: cluster
spec:
  managementState: Managed
  logLevel: Debug
  config:
    integrations:
      frameworks: [BatchJob, Pod, Deployment, StatefulSet, LeaderWorkerSet, JobSet, MPIJob,
                   RayJob, RayCluster, RayService, PyTorchJob, TFJob, PaddleJob, XGBoostJob,
                   TrainJob, AppWrapper, SparkApplication]
      externalFrameworks:
      - {group: workload.example.com, resource: myjobs, version: v1}
      labelKeysToCopy:
      - key: team.example.com/name
      - key: project
    workloadManagement:
      labelPolicy: None
    gangScheduling:
      policy: ByWorkload
      byWorkload:
        admission: Sequential
        timeoutSeconds: 600
        recoveryTimeoutSeconds: 120
        requeuingStrategy:
          timeReference: Creation
          retryLimit: 5
          backoffBaseSeconds: 120
          backoffMaxSeconds: 7200
    preemption:
      preemptionPolicy: FairSharing
    admissionFairSharing:
      configuration: Custom
      custom:
        usageHalfLifeTimeSeconds: 3600
        usageSamplingIntervalSeconds: 60
        resourceWeights:
        - {name: nvidia.com/gpu, weight: "2.5"}
        - {name: cpu, weight: ".5"}
status:
  observedGeneration: 3
  readyReplicas: 1
  conditions:
  - {type: Available, status: "True", lastTransitionTime: "2025-01-01T00:00:00Z"}
"""

MINIMAL: dict[str, Any] = {
    "apiVersion": "kueue.openshift.io/v1",
    "kind": "Kueue",
    "metadata": {"name": "cluster"},
    "spec": {"config": {"integrations": {"frameworks": ["BatchJob"]}}},
}

MANAGED = LabelSelector(match_labels={"kueue.openshift.io/managed": "true"})


def full() -> dict[str, Any]:
    raw = yaml.safe_load(FULL)
    assert isinstance(raw, dict)
    return raw


def minimal(**config: Any) -> dict[str, Any]:
    raw = copy.deepcopy(MINIMAL)
    raw["spec"]["config"].update(config)
    return raw


def settings(raw: dict[str, Any], **kwargs: Any) -> osh.OpenShiftSettings:
    s, errs = osh.read_openshift_config(raw, **kwargs)
    assert errs == [], [str(x) for x in errs]
    assert s is not None
    return s


def errors(raw: dict[str, Any]) -> list[str]:
    doc = decode_object(raw)
    assert doc.obj is None or doc.ok
    return [str(x) for x in doc.errors]


# ----------------------------------------------------------------------------- decoding
def test_full_resource_decodes_and_round_trips() -> None:
    (doc,) = decode_yaml(FULL, source="kueue.yaml")
    assert doc.ok, [str(x) for x in doc.errors]
    assert doc.warnings == []
    assert doc.ref == "Kueue/cluster"
    cr = doc.obj
    assert isinstance(cr, osh.Kueue)
    assert osh.is_openshift_kueue(cr) and osh.is_openshift_kueue(full())
    assert not osh.is_openshift_kueue({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Kueue"})
    c = cr.spec.config
    assert cr.spec.management_state == "Managed" and cr.spec.log_level == "Debug"
    assert c.integrations.frameworks[:2] == ["BatchJob", "Pod"]
    assert c.integrations.external_frameworks == [
        osh.ExternalFramework(group="workload.example.com", resource="myjobs", version="v1")
    ]
    assert c.gang_scheduling is not None and c.gang_scheduling.by_workload is not None
    rs = c.gang_scheduling.by_workload.requeuing_strategy
    assert rs == osh.RequeuingStrategy(
        time_reference="Creation", retry_limit=5, backoff_base_seconds=120, backoff_max_seconds=7200
    )
    assert cr.status is not None and cr.status["readyReplicas"] == 1  # carried, unread
    assert to_wire(cr) == full()
    (jdoc,) = decode_json(json.dumps(full()).encode())
    assert jdoc.ok and jdoc.obj == cr


def test_minimal_resource_gets_the_crd_and_operator_defaults() -> None:
    doc = decode_object(MINIMAL)
    assert doc.ok, [str(x) for x in doc.errors]
    cr = doc.obj
    assert cr.spec.log_level == "Normal" and cr.spec.operator_log_level == "Normal"
    c = cr.spec.config
    assert (c.workload_management, c.gang_scheduling, c.preemption) == (None, None, None)
    assert c.admission_fair_sharing is None
    s = settings(MINIMAL)
    assert s.label_policy == "QueueName"
    assert s.gang_scheduling_policy == "ByWorkloadDefaults"
    assert s.preemption_policy == "Classical"
    assert s.managed_namespace_label == "kueue.openshift.io/managed"
    assert s.default_local_queue == "default"
    assert s.management_state == "Managed"
    cfg = s.config
    assert cfg.namespace == "openshift-kueue-operator"
    assert cfg.manage_jobs_without_queue_name is False
    assert cfg.managed_jobs_namespace_selector == MANAGED
    # No waitForPodsReady written: Kueue's v1beta2 defaults (on, 30m, not blocking).
    w = cfg.wait_for_pods_ready
    assert w is not None
    assert (w.timeout, w.block_admission, w.recovery_timeout) == (
        timedelta(minutes=30),
        False,
        timedelta(minutes=30),
    )
    assert (w.requeuing_strategy.timestamp, w.requeuing_strategy.backoff_limit_count) == (
        "Eviction",
        None,
    )
    assert w.requeuing_strategy.backoff_base_seconds == 60
    assert w.requeuing_strategy.backoff_max_seconds == 3600
    assert cfg.fair_sharing is None
    assert cfg.admission_fair_sharing is None
    assert cfg.integrations.frameworks == ("batch/job",)
    assert cfg.integrations.external_frameworks == ()
    assert cfg.integrations.label_keys_to_copy == ()
    # What the operator writes, field for field (configmap.go's fixed parts included).
    wire = osh.operator_configuration(decode_object(MINIMAL).obj)
    assert wire["manageJobsWithoutQueueName"] is False
    assert wire["internalCertManagement"] == {"enable": False}
    assert wire["clientConnection"] == {"qps": 50.0, "burst": 100}
    assert wire["leaderElection"]["leaseDuration"] == "2m17s"
    assert "waitForPodsReady" not in wire and "fairSharing" not in wire
    assert "featureGates" not in wire and "admissionFairSharing" not in wire


def test_empty_strings_mean_the_operators_defaults() -> None:
    s = settings(
        minimal(
            workloadManagement={"labelPolicy": ""},
            gangScheduling={"policy": ""},
            preemption={"preemptionPolicy": ""},
        )
    )
    assert (s.label_policy, s.gang_scheduling_policy, s.preemption_policy) == (
        "QueueName",
        "ByWorkloadDefaults",
        "Classical",
    )
    assert s.config == settings(MINIMAL).config


# ----------------------------------------------------------------------------- mapping rules
def test_full_resource_mapping() -> None:
    s = settings(full())
    cfg = s.config
    assert s.label_policy == "None"
    assert cfg.manage_jobs_without_queue_name is True
    assert cfg.managed_jobs_namespace_selector == MANAGED
    w = cfg.wait_for_pods_ready
    assert w is not None
    assert w.block_admission is True
    assert w.timeout == timedelta(seconds=600)
    assert w.recovery_timeout == timedelta(seconds=120)
    rs = w.requeuing_strategy
    assert (rs.timestamp, rs.backoff_limit_count) == ("Creation", 5)
    assert (rs.backoff_base_seconds, rs.backoff_max_seconds) == (120, 7200)
    assert cfg.fair_sharing is not None
    assert cfg.fair_sharing.preemption_strategies == (
        "LessThanOrEqualToFinalShare",
        "LessThanInitialShare",
    )
    afs = cfg.admission_fair_sharing
    assert afs is not None and cfg.admission_fair_sharing_enabled
    assert afs.usage_half_life_time == timedelta(hours=1)
    assert afs.usage_sampling_interval == timedelta(minutes=1)
    assert afs.resource_weights == {"nvidia.com/gpu": 2.5, "cpu": 0.5}
    assert cfg.integrations.frameworks == (
        "batch/job",
        "pod",
        "deployment",
        "statefulset",
        "leaderworkerset.x-k8s.io/leaderworkerset",
        "jobset.x-k8s.io/jobset",
        "kubeflow.org/mpijob",
        "ray.io/rayjob",
        "ray.io/raycluster",
        "ray.io/rayservice",
        "kubeflow.org/pytorchjob",
        "kubeflow.org/tfjob",
        "kubeflow.org/paddlejob",
        "kubeflow.org/xgboostjob",
        "trainer.kubeflow.org/trainjob",
        "workload.codeflare.dev/appwrapper",
        "sparkoperator.k8s.io/sparkapplication",
    )
    # resource.version.group, as buildExternalFrameworkList writes it
    assert cfg.integrations.external_frameworks == ("myjobs.v1.workload.example.com",)
    assert cfg.integrations.label_keys_to_copy == ("team.example.com/name", "project")
    # buildFeatureGates: SparkApplication and external frameworks switch gates on.
    assert cfg.gate("SparkApplicationIntegration") is True
    assert cfg.gate("ShortWorkloadNames") is True


def test_every_framework_name_the_operator_converts() -> None:
    assert set(osh.FRAMEWORKS) | {"JaxJob"} == set(osh.KueueIntegration.__args__)
    for name, kueue_name in osh.FRAMEWORKS.items():
        cfg = settings(minimal(integrations={"frameworks": [name]})).config
        assert cfg.integrations.frameworks == (kueue_name,)


@pytest.mark.parametrize(
    ("by_workload", "block", "timeout", "recovery"),
    [
        ({"admission": "Parallel"}, False, timedelta(minutes=30), timedelta(minutes=30)),
        ({"admission": ""}, False, timedelta(minutes=30), timedelta(minutes=30)),
        ({"admission": "Sequential", "timeoutSeconds": 90}, True, timedelta(seconds=90), None),
        (
            {"admission": "Parallel", "timeoutSeconds": 300, "recoveryTimeoutSeconds": 0},
            False,
            timedelta(seconds=300),
            timedelta(0),
        ),
    ],
)
def test_gang_scheduling_by_workload(
    by_workload: dict[str, Any], block: bool, timeout: timedelta, recovery: timedelta | None
) -> None:
    cfg = settings(
        minimal(gangScheduling={"policy": "ByWorkload", "byWorkload": by_workload})
    ).config
    w = cfg.wait_for_pods_ready
    assert w is not None
    assert w.block_admission is block
    assert w.timeout == timeout
    # recoveryTimeout defaults to the timeout (Kueue's v1beta2 default); 0 disables it.
    assert w.recovery_timeout == (timeout if recovery is None else recovery)
    assert w.requeuing_strategy.timestamp == "Eviction"
    assert w.requeuing_strategy.backoff_limit_count is None


def test_gang_scheduling_none_sets_a_year_long_timeout_without_blocking() -> None:
    s = settings(minimal(gangScheduling={"policy": "None"}))
    w = s.config.wait_for_pods_ready
    assert w is not None
    assert (w.timeout, w.block_admission) == (timedelta(days=365), False)
    assert s.gang_scheduling_policy == "None"


def test_gang_scheduling_by_workload_defaults_is_kueues_default() -> None:
    explicit = settings(minimal(gangScheduling={"policy": "ByWorkloadDefaults"})).config
    assert explicit.wait_for_pods_ready == settings(MINIMAL).config.wait_for_pods_ready


def test_labelpolicy_and_preemption() -> None:
    q = settings(minimal(workloadManagement={"labelPolicy": "QueueName"}))
    assert q.config.manage_jobs_without_queue_name is False and q.label_policy == "QueueName"
    classical = settings(minimal(preemption={"preemptionPolicy": "Classical"})).config
    assert classical.fair_sharing is None
    fs = settings(minimal(preemption={"preemptionPolicy": "FairSharing"})).config
    assert fs.fair_sharing is not None


def test_admission_fair_sharing_default_and_custom_without_weights() -> None:
    d = settings(minimal(admissionFairSharing={"configuration": "Default"})).config
    assert d.admission_fair_sharing is not None
    assert d.admission_fair_sharing.usage_half_life_time == timedelta(minutes=30)
    assert d.admission_fair_sharing.usage_sampling_interval == timedelta(minutes=5)
    assert d.admission_fair_sharing.resource_weights == {}
    c = settings(
        minimal(
            admissionFairSharing={
                "configuration": "Custom",
                "custom": {"usageHalfLifeTimeSeconds": 90},
            }
        )
    ).config
    assert c.admission_fair_sharing is not None
    assert c.admission_fair_sharing.usage_half_life_time == timedelta(seconds=90)
    assert c.admission_fair_sharing.usage_sampling_interval == timedelta(minutes=5)


def test_multikueue_external_frameworks_use_discovered_kinds() -> None:
    raw = minimal(
        multiKueue={
            "externalFrameworks": [
                {"group": "workload.example.com", "resource": "myjobs", "version": "v1"}
            ]
        }
    )
    found = settings(raw, gvr_to_kind={"workload.example.com/v1/myjobs": "MyJob"}).config
    assert found.source.multi_kueue is not None
    assert [f.name for f in found.source.multi_kueue.external_frameworks or ()] == [
        "MyJob.v1.workload.example.com"
    ]
    assert found.gate("ShortWorkloadNames") is True
    fallback = settings(raw).config  # no discovery: the resource name, as the operator does
    assert fallback.source.multi_kueue is not None
    assert [f.name for f in fallback.source.multi_kueue.external_frameworks or ()] == [
        "myjobs.v1.workload.example.com"
    ]


def test_dra_device_class_mappings() -> None:
    raw = minimal(
        resources={
            "deviceClassMappings": [
                {
                    "name": "nvidia.com/gpu",
                    "deviceClassNames": ["gpu.nvidia.com"],
                    "sources": [
                        {
                            "type": "Counter",
                            "counter": {
                                "name": "memory",
                                "driver": "gpu.nvidia.com",
                                "deviceSelector": {"type": "CEL", "cel": {"expression": "true"}},
                            },
                        }
                    ],
                }
            ]
        }
    )
    cfg = settings(raw, dra_partitionable_devices_enabled=True).config
    (m,) = cfg.resources.device_class_mappings
    assert (m.name, m.device_class_names) == ("nvidia.com/gpu", ("gpu.nvidia.com",))
    wire = osh.operator_configuration(
        decode_object(raw).obj, dra_partitionable_devices_enabled=True
    )
    assert wire["featureGates"] == {"KueueDRAIntegrationPartitionableDevices": True}


# ----------------------------------------------------------------------------- rejected
def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(raw: dict[str, Any]) -> None:
        *head, last = path.split(".")
        node = raw
        for part in head:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return mutate


CFG = "spec.config"
GS = "spec.config.gangScheduling"


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (
            _set(f"{CFG}.workloadManagement.labelPolicy", "Sometimes"),
            'spec.config.workloadManagement.labelPolicy: Unsupported value: "Sometimes": '
            'supported values: "", "None", "QueueName"',
        ),
        (
            _set(f"{GS}.policy", "Gang"),
            'spec.config.gangScheduling.policy: Unsupported value: "Gang"',
        ),
        (
            _set(f"{CFG}.integrations.frameworks.2", "Volcano"),
            'spec.config.integrations.frameworks[2]: Unsupported value: "Volcano"',
        ),
        (
            _set(f"{GS}.byWorkload.timeoutSeconds", 29),
            "spec.config.gangScheduling.byWorkload.timeoutSeconds: Invalid value: 29: "
            "spec.config.gangScheduling.byWorkload.timeoutSeconds in body should be greater "
            "than or equal to 30",
        ),
        (
            _set(f"{GS}.byWorkload.timeoutSeconds", 86401),
            "spec.config.gangScheduling.byWorkload.timeoutSeconds: Invalid value: 86401: "
            "spec.config.gangScheduling.byWorkload.timeoutSeconds in body should be less "
            "than or equal to 86400",
        ),
        (
            _set(f"{GS}.byWorkload.requeuingStrategy.retryLimit", 201),
            "spec.config.gangScheduling.byWorkload.requeuingStrategy.retryLimit: Invalid value: 201",
        ),
        (
            _set(f"{CFG}.integrations.frameworks", ["BatchJob", "Pod", "BatchJob"]),
            'spec.config.integrations.frameworks: Invalid value: "array": '
            "each item in frameworks must be unique",
        ),
        (
            _set(f"{CFG}.integrations.frameworks", ["BatchJob", "Pod", "BatchJob"]),
            'spec.config.integrations.frameworks[2]: Duplicate value: "BatchJob"',
        ),
        (
            _set(f"{CFG}.integrations.frameworks", []),
            "spec.config.integrations.frameworks: Invalid value: 0: "
            "spec.config.integrations.frameworks in body should have at least 1 items",
        ),
        (
            _set("metadata.name", "kueue"),
            "<root>: Invalid value: \"object\": Kueue is a singleton, .metadata.name must be 'cluster'",
        ),
        (
            _set(f"{GS}.policy", "ByWorkloadDefaults"),
            'spec.config.gangScheduling: Invalid value: "object": '
            "byWorkload is required when policy is byWorkload, and forbidden otherwise",
        ),
        (
            _set(f"{GS}.byWorkload.requeuingStrategy.backoffMaxSeconds", 60),
            'spec.config.gangScheduling.byWorkload.requeuingStrategy: Invalid value: "object": '
            "backoffBaseSeconds must be less than or equal to backoffMaxSeconds",
        ),
        (
            _set(f"{GS}.byWorkload.requeuingStrategy", {}),
            "spec.config.gangScheduling.byWorkload.requeuingStrategy: Invalid value: 0: "
            "spec.config.gangScheduling.byWorkload.requeuingStrategy in body should have at "
            "least 1 properties",
        ),
        (
            # The CEL rule reads both backoff fields without has(): unset is an error.
            _set(f"{GS}.byWorkload.requeuingStrategy", {"retryLimit": 3}),
            'spec.config.gangScheduling.byWorkload.requeuingStrategy: Invalid value: "object": '
            "no such key: backoffBaseSeconds evaluating rule: "
            "backoffBaseSeconds must be less than or equal to backoffMaxSeconds",
        ),
        (
            _set(f"{CFG}.admissionFairSharing.configuration", "Default"),
            'spec.config.admissionFairSharing: Invalid value: "object": '
            "custom is required when configuration is Custom, and forbidden otherwise",
        ),
        (
            _set(f"{CFG}.admissionFairSharing.custom.resourceWeights.0.weight", "-1"),
            'spec.config.admissionFairSharing.custom.resourceWeights[0].weight: Invalid value: "-1": '
            "must be a non-negative number",
        ),
        (
            _set(f"{CFG}.admissionFairSharing.custom.resourceWeights.0.weight", "1e400"),
            'spec.config.admissionFairSharing.custom.resourceWeights[0].weight: Invalid value: "1e400": '
            'strconv.ParseFloat: parsing "1e400": value out of range',
        ),
        (
            _set(f"{CFG}.integrations.labelKeysToCopy.0", {"key": "Team/Name"}),
            'spec.config.integrations.labelKeysToCopy[0].key: Invalid value: "Team/Name": failed rule',
        ),
        (
            _set(f"{CFG}.integrations.externalFrameworks.0.group", "Example.com"),
            'spec.config.integrations.externalFrameworks[0].group: Invalid value: "Example.com": '
            "failed rule",
        ),
        (
            _set("spec.managementState", "Sometimes"),
            'spec.managementState: Invalid value: "Sometimes"',
        ),
        (
            _set(f"{CFG}.resources", {}),
            "spec.config.resources: Invalid value: 0: "
            "spec.config.resources in body should have at least 1 properties",
        ),
    ],
)
def test_rejected_with_field_paths(mutate: Callable[[dict[str, Any]], None], expected: str) -> None:
    raw = full()
    mutate(raw)
    errs = errors(raw)
    assert any(x.startswith(expected) for x in errs), errs
    s, errs2 = osh.read_openshift_config(raw)
    assert s is None and [str(x) for x in errs2] == errs


def test_missing_required_fields() -> None:
    raw = minimal(workloadManagement={}, gangScheduling={"policy": "ByWorkload", "byWorkload": {}})
    del raw["spec"]["config"]["integrations"]["frameworks"]
    errs = errors(raw)
    assert "spec.config.integrations.frameworks: Required value" in errs
    assert "spec.config.workloadManagement.labelPolicy: Required value" in errs
    assert "spec.config.gangScheduling.byWorkload.admission: Required value" in errs
    assert errors({**MINIMAL, "spec": {}}) == ["spec.config: Required value"]


def test_jaxjob_is_in_the_enum_but_the_operator_cannot_convert_it() -> None:
    errs = errors(minimal(integrations={"frameworks": ["BatchJob", "Pod", "JaxJob"]}))
    assert len(errs) == 1
    assert errs[0].startswith(
        'spec.config.integrations.frameworks[2]: Unsupported value: "JaxJob": the operator has '
        "no Kueue framework name for JaxJob"
    )
    assert 'integrations.frameworks[2]: Unsupported value: ""' in errs[0]


def test_kueue_refusals_are_reported_at_the_resources_field() -> None:
    # Valid to the API server, refused by Kueue once the operator has written it.
    raw = minimal(
        multiKueue={"externalFrameworks": [{"group": "batch", "resource": "jobs", "version": "v1"}]}
    )
    cr = decode_object(raw).obj  # the schema and CEL rules pass
    cfg, errs = osh.to_kueue_config(cr, gvr_to_kind={"batch/v1/jobs": "Job"})
    assert cfg is None
    assert [(x.path, x.type) for x in errs] == [
        ("spec.config.multiKueue.externalFrameworks[0]", "Invalid value")
    ]
    assert (
        'multiKueue.externalFrameworks[0].name: Invalid value: "Job.v1.batch": '
        "conflicts with a built-in MultiKueue adapter" in errs[0].detail
    )
    # Without discovery the resource name is the Kind, which no adapter has.
    assert osh.to_kueue_config(cr)[1] == []

    driver = "d" * 64 + ".example.com"  # the CRD allows 253 characters, Kueue 63
    raw = minimal(
        resources={
            "deviceClassMappings": [
                {
                    "name": "example.com/dev",
                    "deviceClassNames": ["dev.example.com"],
                    "sources": [
                        {
                            "type": "Counter",
                            "counter": {
                                "name": "memory",
                                "driver": driver,
                                "deviceSelector": {"type": "CEL", "cel": {"expression": "true"}},
                            },
                        }
                    ],
                }
            ]
        }
    )
    errs2 = errors(raw)
    assert len(errs2) == 1
    assert errs2[0].startswith(
        "spec.config.resources.deviceClassMappings[0].sources[0].counter.driver: Invalid value: "
    )
    assert "must not exceed 63 characters" in errs2[0]


def test_unknown_fields_are_warnings() -> None:
    raw = full()
    raw["spec"]["config"]["integrations"]["podOptions"] = {}
    doc = decode_object(raw)
    assert doc.ok
    assert doc.warnings == ['unknown field "spec.config.integrations.podOptions"']


def test_read_openshift_config_refuses_other_kinds() -> None:
    s, errs = osh.read_openshift_config(
        {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration"}
    )
    assert s is None and errs[0].path == "kind"


# ----------------------------------------------------------------------------- kuota validate
def _validate(tmp_path: Path, text: str, *extra: str) -> tuple[int, str]:
    p = tmp_path / "kueue.yaml"
    p.write_text(text)
    r = CliRunner().invoke(main, ["validate", *extra, str(p)])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r.exit_code, r.output


def test_cli_validate_accepts_the_resource(tmp_path: Path) -> None:
    code, out = _validate(tmp_path, FULL)
    assert code == 0, out
    assert "Kueue/cluster" in out
    assert "1 valid, 0 invalid" in out


def test_cli_validate_reports_field_paths(tmp_path: Path) -> None:
    bad = (
        FULL.replace("timeoutSeconds: 600", "timeoutSeconds: 5")
        .replace("name: cluster", "name: kueue")
        .replace("labelPolicy: None", "labelPolicy: Always")
    )
    code, out = _validate(tmp_path, bad)
    assert code == 1, out
    assert "Kueue/kueue" in out
    assert "spec.config.gangScheduling.byWorkload.timeoutSeconds: Invalid value: 5" in out
    assert 'spec.config.workloadManagement.labelPolicy: Unsupported value: "Always"' in out
    code, out = _validate(
        tmp_path,
        FULL.replace("frameworks: [BatchJob, Pod,", "frameworks: [BatchJob, Pod, JaxJob,"),
        "--json",
    )
    assert code == 1
    (d,) = json.loads(out)["documents"]
    assert d["apiVersion"] == "kueue.openshift.io/v1" and d["object"] == "Kueue/cluster"
    assert [x["path"] for x in d["errors"]] == ["spec.config.integrations.frameworks[2]"]
