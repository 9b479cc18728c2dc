"""The built-in kinds (kuota.api.k8s) decode real manifests strictly, write them
back unchanged in meaning, and validate as the API server does
(kuota.api.k8s.validation): each rule has an accepted and a rejected example
with the exact error path Kubernetes reports."""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml

from kuota.api import base, registry
from kuota.api import k8s as core
from kuota.api.decode import decode_object
from kuota.api.errors import DUPLICATE, FORBIDDEN, INVALID, NOT_SUPPORTED, REQUIRED, TOO_LONG
from kuota.api.k8s import apps, configobjects, resourcequota
from kuota.api.k8s import validation as cv
from kuota.api.kuotadev.bizrq import BizGroupResourceQuota, validate_bizrq
from kuota.api.kuotadev.nodegroup import NodeGroup, validate_node_group
from kuota.api.kuotadev.nodeoperation import NodeOperation, validate_node_operation
from kuota.api.lws import v1 as lws
from kuota.api.meta import LabelSelector

FIXTURES = Path(__file__).parents[2] / "fixtures" / "core"

Doc = dict[str, Any]
Mutation = Callable[[Doc], None]


def load(name: str) -> Doc:
    return yaml.load((FIXTURES / name).read_text(), Loader=yaml.CSafeLoader)


# The built-in kinds, kuota's own and those of operators an OpenShift cluster ships (LWS).
# (Services are tested with the LWS integration; Events are never read from files.)
_GROUPS = ("", "apps", "batch", "scheduling.k8s.io", "node.k8s.io", "kuota.dev", lws.GROUP)
KINDS = {
    (s.api_version(v), s.kind): v.wire
    for s in registry.KINDS
    for v in s.versions
    if s.group in _GROUPS and s.kind not in ("Service", "Event")
}
VALIDATORS = {
    **cv.VALIDATORS,
    **apps.VALIDATORS,
    apps.DaemonSet: apps.validate_daemon_set,
    NodeOperation: validate_node_operation,
    NodeGroup: validate_node_group,
    BizGroupResourceQuota: validate_bizrq,
    lws.LeaderWorkerSet: lws.validate_leader_worker_set,
    configobjects.Secret: configobjects.validate_secret,
    resourcequota.ResourceQuota: resourcequota.validate_resource_quota,
    configobjects.ConfigMap: lambda _: [],  # (no rules of their own)
    configobjects.ServiceAccount: lambda _: [],
}


def decode(doc: Doc) -> Any:
    typ = KINDS[(doc["apiVersion"], doc["kind"])]
    return msgspec.convert(doc, typ, dec_hook=base.dec_hook)


def encode(obj: Any) -> Doc:
    return msgspec.to_builtins(obj, enc_hook=base.enc_hook)


# Maps whose values are quantities: compared by value, not by spelling.
QUANTITY_MAPS = {
    "limits",
    "requests",
    "capacity",
    "allocatable",
    "overhead",
    "podFixed",
    "max",
    "min",
    "default",
    "defaultRequest",
    "maxLimitRequestRatio",
}


# Values the API server fills in when absent (the struct defaults): written or
# not, they mean the same.
API_DEFAULTS = {
    ("protocol", "TCP"),
    ("parallelism", 1),
    ("backoffLimit", 6),
    ("completionMode", "NonIndexed"),
    ("preemptionPolicy", "PreemptLowerPriority"),
}


def normalize(value: Any, parent: str = "") -> Any:
    """Meaning-preserving normal form: quantities as Quantity, times as UTC
    datetimes, API defaults, empty maps/lists and nulls dropped (all mean "unset")."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if parent in QUANTITY_MAPS and not isinstance(v, dict):
                out[k] = base.Quantity.from_value(v)
                continue
            n = normalize(v, k)
            if n in (None, {}, []) or (isinstance(n, str | int) and (k, n) in API_DEFAULTS):
                continue
            out[k] = n
        return out
    if isinstance(value, list):
        return [normalize(v, "[]") for v in value]
    if isinstance(value, datetime):
        return value.astimezone(UTC)
    if isinstance(value, str) and parent.endswith(("Time", "Timestamp", "time")):
        try:
            return datetime.fromisoformat(value).astimezone(UTC)
        except ValueError:
            return value
    return value


FIXTURE_FILES = sorted(p.name for p in FIXTURES.glob("*.yaml"))


def test_fixtures_cover_every_kind() -> None:
    kinds = {(d["apiVersion"], d["kind"]) for d in map(load, FIXTURE_FILES)}
    assert kinds == set(KINDS)


@pytest.mark.parametrize("name", FIXTURE_FILES)
def test_round_trip_keeps_meaning(name: str) -> None:
    doc = load(name)
    obj = decode(doc)
    assert type(obj).__name__ == doc["kind"]
    again = encode(obj)
    assert normalize(again) == normalize(doc)
    # And the written form reads back to the same object.
    assert decode(again) == obj


@pytest.mark.parametrize("name", FIXTURE_FILES)
def test_fixture_is_valid(name: str) -> None:
    obj = decode(load(name))
    assert VALIDATORS[type(obj)](obj) == []


def test_typed_fields_of_the_training_job() -> None:
    job = decode(load("job_gpu_training.yaml"))
    spec = job.spec.template.spec
    trainer = spec.containers[0]
    gpu = base.Quantity.parse("8")
    assert trainer.resources.requests["nvidia.com/gpu"] == gpu
    assert trainer.ports[0].protocol == "TCP"  # API default
    sidecar = spec.init_containers[1]
    assert sidecar.restart_policy == "Always"
    assert spec.tolerations[0].operator == "Exists"
    assert spec.tolerations[1].toleration_seconds == 300
    terms = spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution
    assert terms.node_selector_terms[0].match_expressions[1].operator == "Gt"
    assert spec.topology_spread_constraints[1].min_domains == 1
    assert job.spec.completion_mode == "Indexed"
    assert job.spec.backoff_limit == 6  # API default, not written in the manifest
    assert "backoffLimit" not in encode(job)["spec"]


def test_api_defaults() -> None:
    job = core.Job(
        api_version="batch/v1",
        kind="Job",
        spec=core.JobSpec(
            template=core.PodTemplateSpec(
                spec=core.PodSpec(containers=[core.Container(name="c", image="i")])
            )
        ),
    )
    assert (job.spec.parallelism, job.spec.backoff_limit) == (1, 6)
    assert job.spec.completion_mode == "NonIndexed"
    pc = decode({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "value": 10})
    assert pc.preemption_policy == "PreemptLowerPriority"
    # A toleration keeps what was written: "" and absent both mean Equal.
    tol = msgspec.convert({"key": "k", "value": "v"}, core.Toleration)
    assert tol.operator is None
    assert msgspec.convert({"key": "k", "operator": ""}, core.Toleration).operator == ""


def test_special_json_names() -> None:
    pod = decode(load("pod.yaml"))
    assert pod.status.pod_ip == "10.244.17.33"
    assert pod.status.host_ip == "10.0.17.21"
    node = decode(load("node_gpu.yaml"))
    assert node.spec.pod_cidrs == ["10.244.17.0/24"]
    assert node.spec.provider_id.startswith("aws://")
    spec = msgspec.convert(
        {"containers": [], "hostPID": True, "hostIPC": True, "setHostnameAsFQDN": True},
        core.PodSpec,
    )
    assert (spec.host_pid, spec.host_ipc, spec.set_hostname_as_fqdn) == (True, True, True)
    assert set(encode(spec)) == {"containers", "hostPID", "hostIPC", "setHostnameAsFQDN"}


def test_misspelled_field_is_refused() -> None:
    doc = load("job_gpu_training.yaml")
    doc["spec"]["template"]["spec"]["containers"][0]["imagePullPolicyy"] = "Always"
    with pytest.raises(msgspec.ValidationError, match="imagePullPolicyy"):
        decode(doc)


def test_unknown_enum_value_is_refused() -> None:
    doc = load("job_gpu_training.yaml")
    doc["spec"]["template"]["spec"]["topologySpreadConstraints"][0]["whenUnsatisfiable"] = "Maybe"
    with pytest.raises(msgspec.ValidationError, match="whenUnsatisfiable"):
        decode(doc)


# ------------------------------------------------------------------ rule cases
# A minimal valid Job and Pod; each case mutates one of them once to stay valid
# (the accepted example) and once to break exactly one rule (the rejected one).
JOB: Doc = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "train", "namespace": "team-a", "labels": {"app": "train"}},
    "spec": {
        "template": {
            "metadata": {"labels": {"app": "train"}},
            "spec": {
                "restartPolicy": "Never",
                "containers": [
                    {
                        "name": "main",
                        "image": "train:1",
                        "resources": {
                            "requests": {"cpu": "1", "memory": "1Gi"},
                            "limits": {"cpu": "2", "memory": "1Gi"},
                        },
                    }
                ],
            },
        }
    },
}
POD: Doc = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "team-a"},
    "spec": {"containers": [{"name": "main", "image": "busybox:1"}]},
}
PS = "spec.template.spec"  # where a Job's pod spec errors are reported
C0 = f"{PS}.containers[0]"


def ps(doc: Doc) -> Doc:
    return doc["spec"]["template"]["spec"]


def c0(doc: Doc) -> Doc:
    return ps(doc)["containers"][0]


def res(doc: Doc) -> Doc:
    return c0(doc)["resources"]


def setter(*path: str | int, value: Any) -> Mutation:
    def apply(doc: Doc) -> None:
        node: Any = doc
        for p in path[:-1]:
            node = node[p]
        node[path[-1]] = copy.deepcopy(value)

    return apply


def in_spec(field: str, value: Any) -> Mutation:
    return setter("spec", "template", "spec", field, value=value)


def in_c0(field: str, value: Any) -> Mutation:
    return setter("spec", "template", "spec", "containers", 0, field, value=value)


def in_job(field: str, value: Any) -> Mutation:
    return setter("spec", field, value=value)


def both(*muts: Mutation) -> Mutation:
    def apply(doc: Doc) -> None:
        for m in muts:
            m(doc)

    return apply


def tol(**kw: Any) -> Mutation:
    return in_spec("tolerations", [kw])


def node_term(*exprs: Doc) -> Mutation:
    return in_spec(
        "affinity",
        {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": list(exprs)}]
                }
            }
        },
    )


def spread(*cs: Doc) -> Mutation:
    return in_spec("topologySpreadConstraints", list(cs))


def requests(**rl: Any) -> Mutation:
    return in_c0("resources", {"requests": rl})


def resources(requests: Doc | None = None, limits: Doc | None = None) -> Mutation:
    r: Doc = {}
    if requests is not None:
        r["requests"] = requests
    if limits is not None:
        r["limits"] = limits
    return in_c0("resources", r)


NA = f"{PS}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
EXPR0 = f"{NA}.nodeSelectorTerms[0].matchExpressions[0]"
SIDECAR = {"name": "proxy", "image": "envoy:1", "restartPolicy": "Always"}
ANTI = f"{PS}.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"


def anti(term: Doc) -> Mutation:
    return in_spec(
        "affinity", {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    )


# (id, base, accepted mutation, rejected mutation, expected (type, path) of the rejection)
Case = tuple[str, Doc, Mutation, Mutation, list[tuple[str, str]]]
CASES: list[Case] = [
    # ---- metadata
    (
        "name-required",
        JOB,
        setter("metadata", "generateName", value="train-"),
        setter("metadata", "name", value=""),
        [(REQUIRED, "metadata.name")],
    ),
    (
        "name-dns-subdomain",
        JOB,
        setter("metadata", "name", value="train.v2"),
        setter("metadata", "name", value="Train_Job"),
        [(INVALID, "metadata.name")],
    ),
    (
        "generate-name",
        JOB,
        both(setter("metadata", "name", value=""), setter("metadata", "generateName", value="t-")),
        both(
            setter("metadata", "name", value=""), setter("metadata", "generateName", value="Train-")
        ),
        [(INVALID, "metadata.generateName")],
    ),
    (
        "namespace-dns-label",
        JOB,
        setter("metadata", "namespace", value=""),  # filled in from the request
        setter("metadata", "namespace", value="team.a"),
        [(INVALID, "metadata.namespace")],
    ),
    (
        "labels",
        JOB,
        setter("metadata", "labels", value={"example.com/tier": "gold"}),
        setter("metadata", "labels", value={"tier": "gold tier"}),
        [(INVALID, "metadata.labels")],
    ),
    (
        "annotation-keys",
        JOB,
        setter("metadata", "annotations", value={"Example.com/Note": "any value at all"}),
        setter("metadata", "annotations", value={"bad key": "v"}),
        [(INVALID, "metadata.annotations")],
    ),
    (
        "annotation-size",
        JOB,
        setter("metadata", "annotations", value={"a": "x" * 1000}),
        setter("metadata", "annotations", value={"a": "x" * (256 * 1024)}),
        [(TOO_LONG, "metadata.annotations")],
    ),
    (
        "finalizers",
        JOB,
        setter("metadata", "finalizers", value=["example.com/cleanup", "orphan"]),
        setter("metadata", "finalizers", value=["example.com/cleanup", "cleanup"]),
        [(INVALID, "metadata.finalizers[1]")],
    ),
    (
        "generation",
        JOB,
        setter("metadata", "generation", value=3),
        setter("metadata", "generation", value=-1),
        [(INVALID, "metadata.generation")],
    ),
    (
        "owner-one-controller",
        JOB,
        setter(
            "metadata",
            "ownerReferences",
            value=[{"apiVersion": "v1", "kind": "A", "name": "a", "uid": "1", "controller": True}],
        ),
        setter(
            "metadata",
            "ownerReferences",
            value=[
                {"apiVersion": "v1", "kind": "A", "name": "a", "uid": "1", "controller": True},
                {"apiVersion": "v1", "kind": "B", "name": "b", "uid": "2", "controller": True},
            ],
        ),
        [(INVALID, "metadata.ownerReferences")],
    ),
    (
        "owner-fields",
        JOB,
        setter(
            "metadata",
            "ownerReferences",
            value=[{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "A", "name": "a", "uid": "1"}],
        ),
        setter(
            "metadata",
            "ownerReferences",
            value=[{"apiVersion": "a/b/c", "kind": "A", "name": "", "uid": "1"}],
        ),
        [
            (INVALID, "metadata.ownerReferences[0].apiVersion"),
            (REQUIRED, "metadata.ownerReferences[0].name"),
        ],
    ),
    # ---- containers
    (
        "containers-required",
        JOB,
        in_spec("containers", [{"name": "a", "image": "i"}]),
        in_spec("containers", []),
        [(REQUIRED, f"{PS}.containers")],
    ),
    (
        "container-names-unique",
        JOB,
        in_spec("containers", [{"name": "a", "image": "i"}, {"name": "b", "image": "i"}]),
        in_spec("containers", [{"name": "a", "image": "i"}, {"name": "a", "image": "i"}]),
        [(DUPLICATE, f"{PS}.containers[1].name")],
    ),
    (
        "container-name-dns-label",
        JOB,
        in_c0("name", "trainer-0"),
        in_c0("name", "Trainer"),
        [(INVALID, f"{C0}.name")],
    ),
    (
        "container-image-required",
        JOB,
        in_c0("image", "x"),
        in_c0("image", ""),
        [(REQUIRED, f"{C0}.image")],
    ),
    (
        "container-restart-policy",
        JOB,
        in_spec("initContainers", [SIDECAR]),
        in_c0("restartPolicy", "Always"),
        [(FORBIDDEN, f"{C0}.restartPolicy")],
    ),
    (
        "init-restart-policy-always-only",
        JOB,
        in_spec("initContainers", [SIDECAR]),
        in_spec("initContainers", [{**SIDECAR, "restartPolicy": "OnFailure"}]),
        [(NOT_SUPPORTED, f"{PS}.initContainers[0].restartPolicy")],
    ),
    (
        "probes-only-on-sidecars",
        JOB,
        in_spec("initContainers", [{**SIDECAR, "startupProbe": {"exec": {"command": ["true"]}}}]),
        in_spec(
            "initContainers",
            [{"name": "init", "image": "i", "startupProbe": {"exec": {"command": ["true"]}}}],
        ),
        [(FORBIDDEN, f"{PS}.initContainers[0].startupProbe")],
    ),
    (
        "init-names-unique",
        JOB,
        in_spec("initContainers", [{"name": "init", "image": "i"}]),
        in_spec("initContainers", [{"name": "main", "image": "i"}]),
        [(DUPLICATE, f"{PS}.initContainers[0].name")],
    ),
    (
        "image-pull-policy",
        JOB,
        in_c0("imagePullPolicy", "Always"),
        in_c0("imagePullPolicy", "Sometimes"),
        [(NOT_SUPPORTED, f"{C0}.imagePullPolicy")],
    ),
    (
        "container-port",
        JOB,
        in_c0("ports", [{"containerPort": 8080, "name": "http"}]),
        in_c0("ports", [{"containerPort": 70000, "name": "http"}]),
        [(INVALID, f"{C0}.ports[0].containerPort")],
    ),
    (
        "port-name",
        JOB,
        in_c0("ports", [{"containerPort": 1, "name": "grpc-2"}]),
        in_c0("ports", [{"containerPort": 1, "name": "-grpc"}]),
        [(INVALID, f"{C0}.ports[0].name")],
    ),
    (
        "host-port-conflict",
        JOB,
        in_c0(
            "ports", [{"containerPort": 1, "hostPort": 80}, {"containerPort": 2, "hostPort": 81}]
        ),
        in_c0(
            "ports", [{"containerPort": 1, "hostPort": 80}, {"containerPort": 2, "hostPort": 80}]
        ),
        [(DUPLICATE, f"{C0}.ports[1].hostPort")],
    ),
    (
        "host-network-ports",
        JOB,
        both(in_spec("hostNetwork", True), in_c0("ports", [{"containerPort": 9000}])),
        both(
            in_spec("hostNetwork", True),
            in_c0("ports", [{"containerPort": 9000, "hostPort": 9001}]),
        ),
        [(INVALID, f"{C0}.ports[0].hostPort")],
    ),
    # ---- resources
    (
        "quantity-non-negative",
        JOB,
        requests(cpu="0"),
        requests(cpu="-1"),
        [(INVALID, f"{C0}.resources.requests[cpu]")],
    ),
    (
        "request-le-limit",
        JOB,
        resources(requests={"cpu": "2"}, limits={"cpu": "2"}),
        resources(requests={"cpu": "3"}, limits={"cpu": "2"}),
        [(INVALID, f"{C0}.resources.requests")],
    ),
    (
        "extended-request-eq-limit",
        JOB,
        resources(requests={"nvidia.com/gpu": "8"}, limits={"nvidia.com/gpu": "8"}),
        resources(requests={"nvidia.com/gpu": "4"}, limits={"nvidia.com/gpu": "8"}),
        [(INVALID, f"{C0}.resources.requests")],
    ),
    (
        "extended-limit-required",
        JOB,
        resources(limits={"nvidia.com/gpu": "1"}),  # requests default to limits
        resources(requests={"nvidia.com/gpu": "1"}),
        [(REQUIRED, f"{C0}.resources.limits")],
    ),
    (
        "extended-integer",
        JOB,
        resources(limits={"example.com/fpga": "2"}),
        resources(limits={"example.com/fpga": "500m"}),
        [(INVALID, f"{C0}.resources.limits[example.com/fpga]")],
    ),
    (
        "resource-name",
        JOB,
        resources(limits={"ephemeral-storage": "1Gi", "hugepages-2Mi": "2Mi", "memory": "1Gi"}),
        resources(limits={"gpu": "1"}),
        [
            (INVALID, f"{C0}.resources.limits[gpu]"),
            (INVALID, f"{C0}.resources.limits[gpu]"),
        ],
    ),
    (
        "container-resource-name",
        JOB,
        resources(requests={"cpu": "1"}),
        resources(requests={"pods": "1"}),
        [(INVALID, f"{C0}.resources.requests[pods]")],
    ),
    (
        "hugepages-need-cpu-or-memory",
        JOB,
        resources(limits={"hugepages-2Mi": "2Mi", "cpu": "1"}),
        resources(limits={"hugepages-2Mi": "2Mi"}),
        [(FORBIDDEN, f"{C0}.resources")],
    ),
    (
        "pod-level-resources",
        JOB,
        in_spec("resources", {"requests": {"cpu": "4", "memory": "8Gi"}}),
        in_spec("resources", {"limits": {"nvidia.com/gpu": "1"}}),
        [(NOT_SUPPORTED, f"{PS}.resources.limits[nvidia.com/gpu]")],
    ),
    (
        "overhead",
        JOB,
        in_spec("overhead", {"cpu": "250m"}),
        in_spec("overhead", {"cpu": "-250m"}),
        [(INVALID, f"{PS}.overhead.limits[cpu]")],
    ),
    # ---- tolerations
    (
        "toleration-empty-key-needs-exists",
        JOB,
        tol(operator="Exists"),
        tol(operator="Equal"),
        [(INVALID, f"{PS}.tolerations[0].operator")],
    ),
    (
        "toleration-exists-no-value",
        JOB,
        tol(key="k", operator="Exists"),
        tol(key="k", operator="Exists", value="v"),
        [(INVALID, f"{PS}.tolerations[0].operator")],
    ),
    (
        "toleration-equal-value",
        JOB,
        tol(key="k", value="a.b-c_d"),  # no operator: Equal
        tol(key="k", operator="", value="a b"),
        [(INVALID, f"{PS}.tolerations[0].operator")],
    ),
    (
        "toleration-seconds-need-noexecute",
        JOB,
        tol(key="k", operator="Exists", effect="NoExecute", tolerationSeconds=60),
        tol(key="k", operator="Exists", effect="NoSchedule", tolerationSeconds=60),
        [(INVALID, f"{PS}.tolerations[0].effect")],
    ),
    (
        "toleration-operator",
        JOB,
        tol(key="k", operator="Equal", value="1"),
        tol(key="k", operator="Gt", value="1"),  # alpha gate, off by default
        [(NOT_SUPPORTED, f"{PS}.tolerations[0].operator")],
    ),
    (
        "toleration-key",
        JOB,
        tol(key="example.com/k", operator="Exists"),
        tol(key="a/b/c", operator="Exists"),
        [(INVALID, f"{PS}.tolerations[0].key")],
    ),
    # ---- node selector & affinity
    (
        "node-selector-labels",
        JOB,
        in_spec("nodeSelector", {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}),
        in_spec("nodeSelector", {"nvidia.com/gpu.product": "NVIDIA H100"}),
        [(INVALID, f"{PS}.nodeSelector")],
    ),
    (
        "node-affinity-in-needs-values",
        JOB,
        node_term({"key": "zone", "operator": "In", "values": ["a"]}),
        node_term({"key": "zone", "operator": "NotIn"}),
        [(REQUIRED, f"{EXPR0}.values")],
    ),
    (
        "node-affinity-exists-no-values",
        JOB,
        node_term({"key": "zone", "operator": "DoesNotExist"}),
        node_term({"key": "zone", "operator": "Exists", "values": ["a"]}),
        [(FORBIDDEN, f"{EXPR0}.values")],
    ),
    (
        "node-affinity-gt-single-value",
        JOB,
        node_term({"key": "gpu-count", "operator": "Gt", "values": ["4"]}),
        node_term({"key": "gpu-count", "operator": "Lt", "values": ["4", "8"]}),
        [(REQUIRED, f"{EXPR0}.values")],
    ),
    (
        "node-affinity-label-values",
        JOB,
        node_term({"key": "zone", "operator": "In", "values": ["us-east-1a"]}),
        node_term({"key": "zone", "operator": "In", "values": ["us east"]}),
        [(INVALID, f"{EXPR0}.values[0]")],
    ),
    (
        "node-affinity-key",
        JOB,
        node_term({"key": "topology.kubernetes.io/zone", "operator": "Exists"}),
        node_term({"key": "bad key", "operator": "Exists"}),
        [(INVALID, f"{EXPR0}.key")],
    ),
    (
        "node-selector-terms-required",
        JOB,
        node_term(),  # one empty term
        in_spec(
            "affinity",
            {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}
                }
            },
        ),
        [(REQUIRED, f"{NA}.nodeSelectorTerms")],
    ),
    (
        "node-affinity-match-fields",
        JOB,
        in_spec(
            "affinity",
            {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchFields": [
                                    {"key": "metadata.name", "operator": "In", "values": ["n1"]}
                                ]
                            }
                        ]
                    }
                }
            },
        ),
        in_spec(
            "affinity",
            {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchFields": [
                                    {"key": "metadata.uid", "operator": "In", "values": ["n1"]}
                                ]
                            }
                        ]
                    }
                }
            },
        ),
        [(INVALID, f"{NA}.nodeSelectorTerms[0].matchFields[0].key")],
    ),
    (
        "preferred-weight",
        JOB,
        in_spec(
            "affinity",
            {
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 100, "preference": {}}
                    ]
                }
            },
        ),
        in_spec(
            "affinity",
            {
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 0, "preference": {}}
                    ]
                }
            },
        ),
        [
            (
                INVALID,
                f"{PS}.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
            )
        ],
    ),
    (
        "pod-affinity-topology-key",
        JOB,
        anti({"topologyKey": "kubernetes.io/hostname"}),
        anti({"topologyKey": ""}),
        [(REQUIRED, f"{ANTI}.topologyKey"), (INVALID, f"{ANTI}.topologyKey")],
    ),
    (
        "pod-affinity-label-selector",
        JOB,
        anti(
            {
                "topologyKey": "zone",
                "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
            }
        ),
        anti(
            {
                "topologyKey": "zone",
                "labelSelector": {"matchExpressions": [{"key": "app", "operator": "In"}]},
            }
        ),
        [(REQUIRED, f"{ANTI}.labelSelector.matchExpressions[0].values")],
    ),
    (
        "pod-affinity-namespaces",
        JOB,
        anti({"topologyKey": "zone", "namespaces": ["team-a"]}),
        anti({"topologyKey": "zone", "namespaces": ["Team_A"]}),
        [(INVALID, f"{ANTI}.namespace")],
    ),
    (
        "pod-affinity-match-label-keys",
        JOB,
        anti({"topologyKey": "zone", "labelSelector": {}, "matchLabelKeys": ["app"]}),
        anti({"topologyKey": "zone", "matchLabelKeys": ["app"]}),
        [(FORBIDDEN, f"{ANTI}.matchLabelKeys")],
    ),
    (
        "pod-affinity-weight",
        JOB,
        in_spec(
            "affinity",
            {
                "podAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 1, "podAffinityTerm": {"topologyKey": "zone"}}
                    ]
                }
            },
        ),
        in_spec(
            "affinity",
            {
                "podAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 101, "podAffinityTerm": {"topologyKey": "zone"}}
                    ]
                }
            },
        ),
        [
            (
                INVALID,
                f"{PS}.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
            )
        ],
    ),
    # ---- topology spread
    (
        "spread-max-skew",
        JOB,
        spread({"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}),
        spread({"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}),
        [(INVALID, f"{PS}.topologySpreadConstraints[0].maxSkew")],
    ),
    (
        "spread-topology-key",
        JOB,
        spread({"maxSkew": 1, "topologyKey": "rack", "whenUnsatisfiable": "ScheduleAnyway"}),
        spread({"maxSkew": 1, "topologyKey": "", "whenUnsatisfiable": "ScheduleAnyway"}),
        [(REQUIRED, f"{PS}.topologySpreadConstraints[0].topologyKey")],
    ),
    (
        "spread-unique",
        JOB,
        spread(
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"},
        ),
        spread(
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
            {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
        ),
        [(DUPLICATE, f"{PS}.topologySpreadConstraints[0].{{topologyKey, whenUnsatisfiable}}")],
    ),
    (
        "spread-min-domains",
        JOB,
        spread(
            {
                "maxSkew": 1,
                "topologyKey": "zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "minDomains": 3,
            }
        ),
        spread(
            {
                "maxSkew": 1,
                "topologyKey": "zone",
                "whenUnsatisfiable": "ScheduleAnyway",
                "minDomains": 3,
            }
        ),
        [(INVALID, f"{PS}.topologySpreadConstraints[0].minDomains")],
    ),
    (
        "spread-match-label-keys",
        JOB,
        spread(
            {
                "maxSkew": 1,
                "topologyKey": "zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "train"}},
                "matchLabelKeys": ["pod-template-hash"],
            }
        ),
        spread(
            {
                "maxSkew": 1,
                "topologyKey": "zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "train"}},
                "matchLabelKeys": ["app"],
            }
        ),
        [(INVALID, f"{PS}.topologySpreadConstraints[0].matchLabelKeys[0]")],
    ),
    # ---- other scheduling fields
    (
        "priority-class-name",
        JOB,
        in_spec("priorityClassName", "research-high"),
        in_spec("priorityClassName", "Research_High"),
        [(INVALID, f"{PS}.priorityClassName")],
    ),
    (
        "runtime-class-name",
        JOB,
        in_spec("runtimeClassName", "nvidia"),
        in_spec("runtimeClassName", "NVIDIA"),
        [(INVALID, f"{PS}.runtimeClassName")],
    ),
    (
        "scheduling-gates",
        JOB,
        in_spec("schedulingGates", [{"name": "example.com/quota"}, {"name": "b"}]),
        in_spec("schedulingGates", [{"name": "example.com/quota"}, {"name": "example.com/quota"}]),
        [(DUPLICATE, f"{PS}.schedulingGates[1]")],
    ),
    (
        "node-name",
        JOB,
        in_spec("nodeName", "gpu-017.example.internal"),
        in_spec("nodeName", "gpu_017"),
        [(INVALID, f"{PS}.nodeName")],
    ),
    (
        "pod-active-deadline",
        JOB,
        in_spec("activeDeadlineSeconds", 1),
        in_spec("activeDeadlineSeconds", 0),
        [(INVALID, f"{PS}.activeDeadlineSeconds")],
    ),
    (
        "template-labels",
        JOB,
        setter("spec", "template", "metadata", "labels", value={"app": "train", "v": "1"}),
        setter("spec", "template", "metadata", "labels", value={"app": "train!"}),
        [(INVALID, "spec.template.labels")],
    ),
    # ---- Job
    (
        "job-parallelism",
        JOB,
        in_job("parallelism", 0),
        in_job("parallelism", -1),
        [(INVALID, "spec.parallelism")],
    ),
    (
        "job-completions",
        JOB,
        in_job("completions", 0),
        in_job("completions", -2),
        [(INVALID, "spec.completions")],
    ),
    (
        "job-backoff-limit",
        JOB,
        in_job("backoffLimit", 0),
        in_job("backoffLimit", -1),
        [(INVALID, "spec.backoffLimit")],
    ),
    (
        "job-active-deadline",
        JOB,
        in_job("activeDeadlineSeconds", 0),
        in_job("activeDeadlineSeconds", -5),
        [(INVALID, "spec.activeDeadlineSeconds")],
    ),
    (
        "job-restart-policy-required",
        JOB,
        in_spec("restartPolicy", "OnFailure"),
        in_spec("restartPolicy", "Always"),
        [(REQUIRED, f"{PS}.restartPolicy")],
    ),
    (
        "job-restart-policy-absent",
        JOB,
        in_spec("restartPolicy", "Never"),
        lambda d: ps(d).pop("restartPolicy"),
        [(REQUIRED, f"{PS}.restartPolicy")],
    ),
    (
        "job-indexed-needs-completions",
        JOB,
        both(in_job("completionMode", "Indexed"), in_job("completions", 3)),
        in_job("completionMode", "Indexed"),
        [(REQUIRED, "spec.completions")],
    ),
    (
        "job-backoff-per-index-needs-indexed",
        JOB,
        both(
            in_job("completionMode", "Indexed"),
            in_job("completions", 3),
            in_job("backoffLimitPerIndex", 1),
        ),
        in_job("backoffLimitPerIndex", 1),
        [(INVALID, "spec.backoffLimitPerIndex")],
    ),
    (
        "job-max-failed-indexes",
        JOB,
        both(
            in_job("completionMode", "Indexed"),
            in_job("completions", 3),
            in_job("backoffLimitPerIndex", 1),
            in_job("maxFailedIndexes", 3),
        ),
        both(
            in_job("completionMode", "Indexed"),
            in_job("completions", 3),
            in_job("backoffLimitPerIndex", 1),
            in_job("maxFailedIndexes", 4),
        ),
        [(INVALID, "spec.maxFailedIndexes")],
    ),
    (
        "job-max-failed-indexes-needs-per-index",
        JOB,
        both(
            in_job("completionMode", "Indexed"),
            in_job("completions", 3),
            in_job("backoffLimitPerIndex", 0),
            in_job("maxFailedIndexes", 1),
        ),
        both(
            in_job("completionMode", "Indexed"),
            in_job("completions", 3),
            in_job("maxFailedIndexes", 1),
        ),
        [(REQUIRED, "spec.backoffLimitPerIndex")],
    ),
    (
        "job-success-policy-needs-indexed",
        JOB,
        both(
            in_job("completionMode", "Indexed"),
            in_job("completions", 3),
            in_job("successPolicy", {"rules": [{"succeededCount": 1}]}),
        ),
        in_job("successPolicy", {"rules": [{"succeededCount": 1}]}),
        [(INVALID, "spec.successPolicy")],
    ),
    (
        "job-pod-failure-policy-restart-never",
        JOB,
        in_job("podFailurePolicy", {"rules": []}),
        both(in_job("podFailurePolicy", {"rules": []}), in_spec("restartPolicy", "OnFailure")),
        [(INVALID, f"{PS}.restartPolicy")],
    ),
    (
        "job-pod-replacement-policy",
        JOB,
        in_job("podReplacementPolicy", "TerminatingOrFailed"),
        both(
            in_job("podFailurePolicy", {"rules": []}),
            in_job("podReplacementPolicy", "TerminatingOrFailed"),
        ),
        [(NOT_SUPPORTED, "spec.podReplacementPolicy")],
    ),
    (
        "job-managed-by",
        JOB,
        in_job("managedBy", "kueue.x-k8s.io/multikueue"),
        in_job("managedBy", "multikueue"),
        [(INVALID, "spec.managedBy")],
    ),
    (
        "job-selector-matches-template",
        JOB,
        both(in_job("manualSelector", True), in_job("selector", {"matchLabels": {"app": "train"}})),
        both(in_job("manualSelector", True), in_job("selector", {"matchLabels": {"app": "serve"}})),
        [(INVALID, "spec.template.metadata.labels")],
    ),
    (
        "job-indexed-pod-hostname",
        JOB,
        both(
            setter("metadata", "name", value="a" * 61),
            in_job("completionMode", "Indexed"),
            in_job("completions", 10),
        ),
        both(
            setter("metadata", "name", value="a" * 62),
            in_job("completionMode", "Indexed"),
            in_job("completions", 10),
        ),
        [(INVALID, "metadata.name")],
    ),
    # ---- Pod
    (
        "pod-image-whitespace",
        POD,
        setter("spec", "containers", 0, "image", value="busybox:1"),
        setter("spec", "containers", 0, "image", value="busybox:1 "),
        [(INVALID, "spec.containers[0].image")],
    ),
    (
        "pod-host-network-port-defaulted",
        POD,
        both(
            setter("spec", "hostNetwork", value=True),
            setter("spec", "containers", 0, "ports", value=[{"containerPort": 80, "hostPort": 80}]),
        ),
        both(
            setter("spec", "hostNetwork", value=True),
            setter("spec", "containers", 0, "ports", value=[{"containerPort": 80}]),
        ),
        [(INVALID, "spec.containers[0].ports[0].hostPort")],
    ),
    (
        "pod-dns-policy",
        POD,
        setter("spec", "dnsPolicy", value="ClusterFirstWithHostNet"),
        setter("spec", "dnsPolicy", value="Sometimes"),
        [(NOT_SUPPORTED, "spec.dnsPolicy")],
    ),
]


def _apply(base_doc: Doc, mutation: Mutation) -> Any:
    doc = copy.deepcopy(base_doc)
    mutation(doc)
    return decode(doc)


def _errors(obj: Any) -> list[tuple[str, str]]:
    return sorted((e.type, e.path) for e in VALIDATORS[type(obj)](obj))


@pytest.mark.parametrize(
    ("base_doc", "ok", "bad", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_rule(base_doc: Doc, ok: Mutation, bad: Mutation, expected: list[tuple[str, str]]) -> None:
    assert _errors(_apply(base_doc, ok)) == []
    assert _errors(_apply(base_doc, bad)) == sorted(expected)


def test_case_ids_are_unique() -> None:
    ids = [c[0] for c in CASES]
    assert len(ids) == len(set(ids))


# ---------------------------------------------------- messages, as kubectl prints
def _messages(obj: Any) -> list[str]:
    return [str(e) for e in VALIDATORS[type(obj)](obj)]


def test_request_above_limit_message() -> None:
    job = _apply(JOB, resources(requests={"cpu": "3"}, limits={"cpu": "2"}))
    assert _messages(job) == [
        'spec.template.spec.containers[0].resources.requests: Invalid value: "3": '
        "must be less than or equal to cpu limit of 2"
    ]


def test_gpu_messages() -> None:
    job = _apply(JOB, resources(requests={"nvidia.com/gpu": "4"}, limits={"nvidia.com/gpu": "8"}))
    assert _messages(job) == [
        'spec.template.spec.containers[0].resources.requests: Invalid value: "4": '
        "must be equal to nvidia.com/gpu limit of 8"
    ]
    job = _apply(JOB, resources(limits={"nvidia.com/gpu": "0.5"}))
    (msg,) = _messages(job)
    assert msg.startswith(
        "spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "
    )
    assert msg.endswith(": must be an integer")


def test_toleration_and_restart_policy_messages() -> None:
    job = _apply(
        JOB, both(tol(key="k", operator="Gt", value="1"), in_spec("restartPolicy", "Always"))
    )
    assert _messages(job) == [
        'spec.template.spec.tolerations[0].operator: Unsupported value: "Gt": '
        'supported values: "Equal", "Exists"',
        'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
    ]


def test_all_errors_are_collected() -> None:
    def break_everything(doc: Doc) -> None:
        doc["metadata"]["name"] = "Bad_Name"
        doc["spec"]["parallelism"] = -1
        spec = ps(doc)
        spec["restartPolicy"] = "Always"
        spec["containers"].append({"name": "main", "image": ""})
        spec["tolerations"] = [{"operator": "Equal"}]
        spec["topologySpreadConstraints"] = [
            {"maxSkew": 0, "topologyKey": "z", "whenUnsatisfiable": "DoNotSchedule"}
        ]
        spec["containers"][0]["resources"]["requests"]["cpu"] = "5"

    errs = _errors(_apply(JOB, break_everything))
    assert errs == sorted(
        [
            (INVALID, "metadata.name"),
            (INVALID, "spec.parallelism"),
            (REQUIRED, f"{PS}.restartPolicy"),
            (REQUIRED, f"{PS}.containers[1].image"),
            (DUPLICATE, f"{PS}.containers[1].name"),
            (INVALID, f"{PS}.tolerations[0].operator"),
            (INVALID, f"{PS}.topologySpreadConstraints[0].maxSkew"),
            (INVALID, f"{C0}.resources.requests"),
        ]
    )


# ------------------------------------------------------------------ other kinds
def _fixture_with(name: str, mutation: Mutation) -> Any:
    return _apply(load(name), mutation)


KIND_CASES: list[tuple[str, str, Mutation, list[tuple[str, str]]]] = [
    (
        "node-taint-duplicate",
        "node_gpu.yaml",
        setter(
            "spec",
            "taints",
            value=[
                {"key": "nvidia.com/gpu", "effect": "NoSchedule"},
                {"key": "nvidia.com/gpu", "value": "x", "effect": "NoSchedule"},
            ],
        ),
        [(DUPLICATE, "metadata.taints[1]")],
    ),
    (
        "node-taint-value",
        "node_gpu.yaml",
        setter("spec", "taints", value=[{"key": "k", "value": "a b", "effect": "NoExecute"}]),
        [(INVALID, "metadata.taints[0].value")],
    ),
    (
        "node-capacity-integer",
        "node_gpu.yaml",
        setter("status", "capacity", "nvidia.com/gpu", value="7.5"),
        [(INVALID, "status.capacity.nvidia.com/gpu")],
    ),
    (
        "node-allocatable-negative",
        "node_gpu.yaml",
        setter("status", "allocatable", "cpu", value="-1"),
        [(INVALID, "status.allocatable.cpu")],
    ),
    (
        "node-not-namespaced",
        "node_gpu.yaml",
        setter("metadata", "namespace", value="default"),
        [(FORBIDDEN, "metadata.namespace")],
    ),
    (
        "namespace-name",
        "namespace.yaml",
        setter("metadata", "name", value="team.nlp"),
        [(INVALID, "metadata.name")],
    ),
    (
        "namespace-finalizers",
        "namespace.yaml",
        setter("spec", "finalizers", value=["kubernetes", "cleanup"]),
        [(INVALID, "spec.finalizers")],
    ),
    (
        "priority-class-value",
        "priorityclass.yaml",
        setter("value", value=1_000_000_001),
        [(FORBIDDEN, "value")],
    ),
    (
        "priority-class-system-name",
        "priorityclass.yaml",
        setter("metadata", "name", value="system-research"),
        [(FORBIDDEN, "metadata.name")],
    ),
    (
        "limit-range-min-max",
        "limitrange.yaml",
        setter("spec", "limits", 0, "min", "cpu", value="100"),
        [
            (INVALID, "spec.limits[0].min[cpu]"),
            (INVALID, "spec.limits[0].defaultRequest[cpu]"),
            (INVALID, "spec.limits[0].default[cpu]"),
            (INVALID, "spec.limits[0].maxLimitRequestRatio[cpu]"),
        ],
    ),
    (
        "limit-range-default-request",
        "limitrange.yaml",
        setter("spec", "limits", 0, "defaultRequest", "memory", value="4Gi"),
        [(INVALID, "spec.limits[0].defaultRequest[memory]")],
    ),
    (
        "limit-range-gpu-default",
        "limitrange.yaml",
        setter("spec", "limits", 0, "defaultRequest", "nvidia.com/gpu", value="0"),
        [(INVALID, "spec.limits[0].defaultRequest[nvidia.com/gpu]")],
    ),
    (
        "limit-range-ratio",
        "limitrange.yaml",
        setter("spec", "limits", 0, "maxLimitRequestRatio", "cpu", value="500m"),
        [(INVALID, "spec.limits[0].maxLimitRequestRatio[cpu]")],
    ),
    (
        "limit-range-pod-default",
        "limitrange.yaml",
        setter("spec", "limits", 1, "default", value={"cpu": "1"}),
        [(FORBIDDEN, "spec.limits[1].default")],
    ),
    (
        "limit-range-type",
        "limitrange.yaml",
        setter("spec", "limits", 1, "type", value="Container"),
        [(DUPLICATE, "spec.limits[1].type")],
    ),
    (
        "limit-range-pvc-storage",
        "limitrange.yaml",
        setter("spec", "limits", 2, value={"type": "PersistentVolumeClaim"}),
        [(REQUIRED, "spec.limits[2].limits")],
    ),
    (
        "runtime-class-handler",
        "runtimeclass.yaml",
        setter("handler", value="nvidia.cdi"),
        [(INVALID, "handler")],
    ),
    (
        "runtime-class-overhead",
        "runtimeclass.yaml",
        setter("overhead", "podFixed", "memory", value="-1Mi"),
        [(INVALID, "overhead.limits[memory]")],
    ),
    (
        "runtime-class-tolerations-unique",
        "runtimeclass.yaml",
        setter(
            "scheduling",
            "tolerations",
            value=[{"key": "k", "operator": "Exists"}, {"key": "k", "operator": "Exists"}],
        ),
        [(DUPLICATE, "scheduling.tolerations[1]")],
    ),
    (
        "runtime-class-node-selector",
        "runtimeclass.yaml",
        setter("scheduling", "nodeSelector", value={"gpu": "yes please"}),
        [(INVALID, "scheduling.nodeSelector")],
    ),
]


@pytest.mark.parametrize(
    ("fixture", "mutation", "expected"), [c[1:] for c in KIND_CASES], ids=[c[0] for c in KIND_CASES]
)
def test_kind_rule(fixture: str, mutation: Mutation, expected: list[tuple[str, str]]) -> None:
    # The unmodified fixture is the accepted example (test_fixture_is_valid).
    assert _errors(_fixture_with(fixture, mutation)) == sorted(expected)


def test_system_priority_class_is_accepted() -> None:
    pc = decode(
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "system-cluster-critical"},
            "value": 2_000_000_000,
        }
    )
    assert cv.validate_priority_class(pc) == []
    pc = msgspec.structs.replace(pc, value=1)
    assert [str(e) for e in cv.validate_priority_class(pc)] == [
        "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved "
        "for system use only. error: value of system-cluster-critical PriorityClass must be "
        "2000000000"
    ]


def test_node_taints_are_reported_under_metadata() -> None:
    # Kubernetes' own (odd) path for a Node's taints, kept so messages match kubectl.
    node = _fixture_with("node_gpu.yaml", setter("spec", "taints", 0, "effect", value="NoExecute"))
    assert cv.validate_node(node) == []
    errs = cv.validate_taints(
        [core.Taint(key="k", effect="NoSchedule"), core.Taint(key="k", effect="NoSchedule")],
        "spec.taints",
    )
    assert [str(e) for e in errs] == [
        'spec.taints[1]: Duplicate value: "object": taints must be unique by key and effect pair'
    ]


def test_label_selector_helper() -> None:
    sel = msgspec.convert(
        {
            "matchLabels": {"app": "train"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["a", "b"]},
                {"key": "canary", "operator": "DoesNotExist"},
            ],
        },
        LabelSelector,
    )
    assert cv.selector_matches(sel, {"app": "train", "tier": "b"})
    assert not cv.selector_matches(sel, {"app": "train", "tier": "c"})
    assert not cv.selector_matches(sel, {"app": "train", "tier": "a", "canary": "1"})


def _job_requesting(resource: str, value: str) -> dict[str, object]:
    container = {"name": "c", "image": "i", "resources": {"requests": {resource: value}}}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "n"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [container]}}},
    }


@pytest.mark.parametrize(
    ("value", "whole"),
    [("1e999", True), ("1.0004", False), ("1.0000000001", False), ("2k", True), ("1500m", False)],
)
def test_integer_resource_check_is_exact_at_any_magnitude(value: str, whole: bool) -> None:
    # Extended resources must be whole: Kubernetes rounds up to milli units
    # (MilliValue) and checks % 1000, so 1.0004 is refused and 1e999 is not.
    doc = decode_object(_job_requesting("example.com/foo", value), source="t", index=0)
    not_integer = [e for e in doc.errors if "must be an integer" in e.detail]
    assert bool(not_integer) is not whole


def test_v1alpha1_cohort_is_read() -> None:
    doc = decode_object(
        {
            "apiVersion": "kueue.x-k8s.io/v1alpha1",
            "kind": "Cohort",
            "metadata": {"name": "child"},
            "spec": {"parent": "root"},
        },
        source="t",
        index=0,
    )
    assert doc.ok, doc.errors
    assert doc.obj.spec.parent_name == "root"
