"""The TAS pod-set annotations as every job webhook of Kueue checks them
(jobframework/tas_validation.go through each integration's
validateTopologyRequest: its field paths, the slice bound per pod set, the
pod-set groups, the multi-layer slice constraints), through ``kuota
validate`` on Kueue's own sample manifests with annotations added, and
through the control plane, which refuses the job and carries the constraints
into the Workload. Cases cite Kueue's tests at ff69552e."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from embedded.world import config, obj
from kuota.cli.main import main
from kuota.store import Invalid
from kuota.store.resources import WORKLOAD
from tas.world import BLOCK, HOST, RACK, job, node, plane

REQ = "kueue.x-k8s.io/podset-required-topology"
PREF = "kueue.x-k8s.io/podset-preferred-topology"
UNC = "kueue.x-k8s.io/podset-unconstrained-topology"
SLICE = "kueue.x-k8s.io/podset-slice-required-topology"
SIZE = "kueue.x-k8s.io/podset-slice-size"
GROUP = "kueue.x-k8s.io/podset-group-name"
LAYERS = "kueue.x-k8s.io/podset-slice-required-topology-constraints"

TESTS = Path(__file__).parents[1]
KUBEFLOW = TESTS / "controllers/jobs/kubeflow/kueue_examples"
RAY = TESTS / "controllers/jobs/ray/kueue_examples"
TAS_EXAMPLES = TESTS / "data/tas/kueue-examples"


def _load(path: Path) -> dict[str, Any]:
    doc = yaml.safe_load(path.read_text())
    assert isinstance(doc, dict)
    return doc


def _annotate(template: dict[str, Any], annotations: dict[str, str]) -> None:
    template.setdefault("metadata", {}).setdefault("annotations", {}).update(annotations)


def _validate(tmp_path: Path, doc: dict[str, Any]) -> tuple[int, list[str]]:
    f = tmp_path / "manifest.yaml"
    f.write_text(yaml.safe_dump(doc))
    result = CliRunner().invoke(main, ["validate", str(f)])
    lines = [
        ln.strip()
        for ln in result.output.splitlines()
        if ln.startswith("      ") and not ln.strip().startswith("warning:")
    ]
    return result.exit_code, lines


def _jobset(*rjobs: tuple[str, int, int, dict[str, str]]) -> dict[str, Any]:
    """A JobSet of replicated jobs (name, replicas, parallelism, annotations)."""
    doc = _load(TAS_EXAMPLES / "sample-jobset-tas-required.yaml")
    proto = doc["spec"]["replicatedJobs"][0]
    doc["spec"]["replicatedJobs"] = []
    for name, replicas, parallelism, ann in rjobs:
        r = copy.deepcopy(proto)
        r["name"], r["replicas"] = name, replicas
        r["template"]["spec"]["parallelism"] = r["template"]["spec"]["completions"] = parallelism
        r["template"]["spec"]["template"]["metadata"] = {"annotations": ann}
        doc["spec"]["replicatedJobs"].append(r)
    return doc


RJ = "spec.replicatedJobs[{}].template.spec.template.metadata.annotations"


def test_jobset_more_than_one_annotation(tmp_path: Path) -> None:
    # jobset_webhook_test.go TestValidateCreate "invalid TAS request ..."
    doc = _jobset(
        ("launcher", 1, 1, {REQ: "cloud.com/block"}), ("worker", 1, 1, {PREF: "b", REQ: "b"})
    )
    code, lines = _validate(tmp_path, doc)
    assert code == 1
    assert lines == [
        f"{RJ.format(1)}: Invalid value: must not contain more than one topology annotation: "
        f'["{REQ}", "{PREF}", "{UNC}"]'
    ]


def test_jobset_slice_larger_than_the_pod_set(tmp_path: Path) -> None:
    # jobset_webhook_test.go "invalid slice topology request - slice size larger than number of podsets"
    ann = {REQ: "cloud.com/block", SLICE: "cloud.com/block", SIZE: "20"}
    code, lines = _validate(tmp_path, _jobset(("job1", 2, 1, ann)))
    assert code == 1
    assert lines == [
        f'{RJ.format(0)}[{SIZE}]: Invalid value: "20": must not be greater than pod set count 2'
    ]


def test_jobset_groups_of_other_than_two(tmp_path: Path) -> None:
    # jobset_webhook_test.go "invalid PodSet grouping request - groups of size other than 2"
    def ann(group: str) -> dict[str, str]:
        return {REQ: "cloud.com/block", GROUP: group}

    doc = _jobset(
        ("job1", 1, 1, ann("1podset")),
        ("job2", 1, 1, ann("3podsets")),
        ("job3", 2, 1, ann("3podsets")),
        ("job4", 2, 2, ann("3podsets")),
    )
    code, lines = _validate(tmp_path, doc)
    assert code == 1
    one = "can only define groups of exactly 2 pod sets, got: 1 pod set(s)"
    three = "can only define groups of exactly 2 pod sets, got: 3 pod set(s)"
    assert lines == [
        f'{RJ.format(0)}[{GROUP}]: Invalid value: "1podset": {one}',
        f'{RJ.format(1)}[{GROUP}]: Invalid value: "3podsets": {three}',
        f'{RJ.format(2)}[{GROUP}]: Invalid value: "3podsets": {three}',
        f'{RJ.format(3)}[{GROUP}]: Invalid value: "3podsets": {three}',
    ]


def test_jobset_group_without_a_leader_and_levels_that_differ(tmp_path: Path) -> None:
    # jobset_webhook_test.go "invalid PodSet grouping request - no leader in group",
    # "... - different topology levels"
    doc = _jobset(
        ("job1", 2, 1, {REQ: "cloud.com/block", GROUP: "g"}),
        ("job2", 2, 1, {PREF: "cloud.com/rack", GROUP: "g"}),
    )
    code, lines = _validate(tmp_path, doc)
    assert code == 1
    size = (
        "can only define groups where at least one pod set has only 1 replica, "
        "got: 2 replica(s) and 2 replica(s) in the group"
    )
    inconsistent = f"must specify '{REQ}' or '{PREF}' topology consistent with '{{}}' in group 'g'"
    assert lines == [
        f'{RJ.format(0)}[{GROUP}]: Invalid value: "g": {size}',
        f'{RJ.format(1)}[{GROUP}]: Invalid value: "g": {size}',
        f"{RJ.format(0)}: Invalid value: {inconsistent.format(RJ.format(1))}",
        f"{RJ.format(1)}: Invalid value: {inconsistent.format(RJ.format(0))}",
    ]


def test_jobset_valid_group_is_accepted(tmp_path: Path) -> None:
    # jobset_webhook_test.go "valid PodSet grouping request"
    doc = _jobset(
        ("launcher", 1, 1, {REQ: "cloud.com/block", GROUP: "groupname"}),
        ("worker", 4, 1, {REQ: "cloud.com/block", GROUP: "groupname"}),
    )
    assert _validate(tmp_path, doc) == (0, [])


def test_kubeflow_replica_paths(tmp_path: Path) -> None:
    """kubeflowjob_controller.go ValidateOnCreate: each replica type's template
    at spec.<kind>ReplicaSpecs[<Type>]; no group rules."""
    doc = _load(KUBEFLOW / "sample-pytorchjob.yaml")
    worker = doc["spec"]["pytorchReplicaSpecs"]["Worker"]
    _annotate(worker["template"], {REQ: "cloud.com/block", SLICE: "cloud.com/rack", SIZE: "9"})
    _annotate(doc["spec"]["pytorchReplicaSpecs"]["Master"]["template"], {UNC: "yes"})
    code, lines = _validate(tmp_path, doc)
    assert code == 1
    n = worker.get("replicas", 1)
    assert lines == [
        "spec.pytorchReplicaSpecs[Master].template.metadata.annotations"
        f'[{UNC}]: Invalid value: "yes": must be a boolean value',
        "spec.pytorchReplicaSpecs[Worker].template.metadata.annotations"
        f'[{SIZE}]: Invalid value: "9": must not be greater than pod set count {n}',
    ]


def test_mpijob_checks_groups(tmp_path: Path) -> None:
    """mpijob_webhook.go validateTopologyRequest: launcher and worker, and
    the pod-set groups (a group of the launcher alone)."""
    doc = _load(KUBEFLOW / "sample-mpijob.yaml")
    _annotate(doc["spec"]["mpiReplicaSpecs"]["Launcher"]["template"], {REQ: "b", GROUP: "g"})
    code, lines = _validate(tmp_path, doc)
    assert code == 1
    assert lines == [
        "spec.mpiReplicaSpecs[Launcher].template.metadata.annotations"
        f'[{GROUP}]: Invalid value: "g": can only define groups of exactly 2 pod sets, '
        "got: 1 pod set(s)"
    ]
    _annotate(doc["spec"]["mpiReplicaSpecs"]["Worker"]["template"], {REQ: "b", GROUP: "g"})
    assert _validate(tmp_path, doc) == (0, [])


def test_leaderworkerset_leader_and_workers(tmp_path: Path) -> None:
    """leaderworkerset_webhook.go validateTopologyRequest: the workers' slice
    bound is size - 1 with a leader template."""
    doc = _load(TAS_EXAMPLES / "sample-leaderworkerset-tas.yaml")
    lwt = doc["spec"]["leaderWorkerTemplate"]
    size = lwt["size"]
    assert _validate(tmp_path, doc) == (0, [])  # leader and workers grouped, as the sample is
    lwt["workerTemplate"]["metadata"]["annotations"] = {SLICE: RACK, SIZE: str(size)}
    code, lines = _validate(tmp_path, doc)
    assert code == 1
    path = "spec.leaderWorkerTemplate.workerTemplate.metadata.annotations"
    group = "spec.leaderWorkerTemplate.leaderTemplate.metadata.annotations"
    assert lines == [
        f'{path}[{SIZE}]: Invalid value: "{size}": must not be greater than pod set count '
        f"{size - 1}",
        f'{group}[{GROUP}]: Invalid value: "lws-group": can only define groups of exactly 2 '
        "pod sets, got: 1 pod set(s)",
    ]


def test_raycluster_and_rayjob_worker_groups(tmp_path: Path) -> None:
    """raycluster_webhook.go and common.go ValidateTopologyRequest: the head
    and each worker group (RayJob's under spec.rayClusterSpec)."""
    rc = _load(RAY / "ray-cluster-sample.yaml")
    _annotate(rc["spec"]["workerGroupSpecs"][0]["template"], {SIZE: "1"})
    code, lines = _validate(tmp_path, rc)
    assert code == 1
    assert lines == [
        "spec.workerGroupSpecs[0].template.metadata.annotations"
        f"[{SIZE}]: Forbidden: may not be set when '{SLICE}' is not specified"
    ]
    rj = _load(RAY / "ray-job-sample.yaml")
    _annotate(rj["spec"]["rayClusterSpec"]["headGroupSpec"]["template"], {GROUP: "12"})
    code, lines = _validate(tmp_path, rj)
    assert code == 1
    head = "spec.rayClusterSpec.headGroupSpec.template.metadata.annotations"
    assert lines == [
        f'{head}[{GROUP}]: Invalid value: "12": must not be a number',
        f"{head}[{GROUP}]: Forbidden: may not be set when neither '{PREF}' nor '{REQ}' "
        "is specified",
    ]


def test_pod_annotations(tmp_path: Path) -> None:
    """pod_webhook.go validateTopologyRequest: the pod's own metadata."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "annotations": {REQ: "a", UNC: "true"}},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }
    code, lines = _validate(tmp_path, pod)
    assert code == 1
    assert lines == [
        "metadata.annotations: Invalid value: must not contain more than one topology "
        f'annotation: ["{REQ}", "{PREF}", "{UNC}"]'
    ]


def _job_doc(annotations: dict[str, str], count: int = 32) -> dict[str, Any]:
    doc = _load(TAS_EXAMPLES / "sample-job-required.yaml")
    spec = doc["spec"]
    spec["parallelism"] = spec["completions"] = count
    spec["template"]["metadata"] = {"annotations": annotations}
    return doc


# tas_validation_test.go TestValidateSliceRequiredTopologyConstraintsAnnotation:
# the annotations (with a required block) and how many errors Kueue reports.
R16, H4 = (
    '{"topology":"cloud.com/rack","size":16}',
    '{"topology":"kubernetes.io/hostname","size":4}',
)
CONSTRAINT_CASES = [
    ("one layer", {LAYERS: f"[{R16}]"}, 0),
    ("two layers", {LAYERS: f"[{R16},{H4}]"}, 0),
    (
        "three layers",
        {
            LAYERS: f'[{R16},{{"topology":"cloud.com/sub-rack","size":4}},{{"topology":"{HOST}","size":2}}]'
        },
        0,
    ),
    ("invalid json", {LAYERS: "invalid-json"}, 1),
    ("empty array", {LAYERS: "[]"}, 1),
    (
        "four layers",
        {
            LAYERS: '[{"topology":"a","size":64},{"topology":"b","size":16},'
            '{"topology":"c","size":4},{"topology":"d","size":1}]'
        },
        1,
    ),
    ("size zero", {LAYERS: '[{"topology":"cloud.com/rack","size":0}]'}, 1),
    ("not divisible", {LAYERS: f'[{R16},{{"topology":"{HOST}","size":5}}]'}, 1),
    ("with slice annotations", {SLICE: "cloud.com/rack", SIZE: "16", LAYERS: f"[{R16}]"}, 2),
    ("with group name", {GROUP: "g", LAYERS: f"[{R16}]"}, 1),
    ("duplicate topology", {LAYERS: f'[{R16},{{"topology":"cloud.com/rack","size":4}}]'}, 1),
    (
        "duplicate non-adjacent topology",
        {LAYERS: f'[{R16},{H4},{{"topology":"cloud.com/rack","size":2}}]'},
        1,
    ),
]


@pytest.mark.parametrize(
    ("annotations", "errors"),
    [c[1:] for c in CONSTRAINT_CASES],
    ids=[c[0] for c in CONSTRAINT_CASES],
)
def test_slice_constraints_rules(tmp_path: Path, annotations: dict[str, str], errors: int) -> None:
    code, lines = _validate(tmp_path, _job_doc({REQ: "cloud.com/block", **annotations}))
    assert (code, len(lines)) == (1 if errors else 0, errors), lines


def test_slice_constraints_messages(tmp_path: Path) -> None:
    """Kueue's texts: Go's JSON error, the layer count, duplicates, divisibility,
    and the outermost layer no larger than the pod set."""
    p = f"spec.template.metadata.annotations[{LAYERS}]"
    bad = '[{"topology": "cloud.com/rack", "size": 8},]'
    _, lines = _validate(tmp_path, _job_doc({REQ: "b", LAYERS: bad}))
    assert lines == [
        f"{p}: Invalid value: {json.dumps(bad)}: must be a valid JSON array: "
        "invalid character ']' looking for beginning of value"
    ]
    _, lines = _validate(tmp_path, _job_doc({REQ: "b", LAYERS: '[{"topology": "r", "size": "8"}]'}))
    assert lines[0].endswith(
        "must be a valid JSON array: json: cannot unmarshal string into Go struct field "
        "PodsetSliceRequiredTopologyConstraint.size of type int32"
    )
    _, lines = _validate(tmp_path, _job_doc({REQ: "b", LAYERS: "[]"}))
    assert lines == [
        f'{p}: Invalid value: "[]": topology constraints must contain between 1 and 3 entries'
    ]
    dup = f'[{R16},{{"topology":"cloud.com/rack","size":3}}]'
    _, lines = _validate(tmp_path, _job_doc({REQ: "b", LAYERS: dup}))
    assert lines == [
        f'{p}[1].topology: Duplicate value: "cloud.com/rack (also at index 0)"',
        f"{p}[1].size: Invalid value: 3: must evenly divide the parent layer size 16",
    ]
    _, lines = _validate(tmp_path, _job_doc({REQ: "b", LAYERS: f"[{R16}]"}, count=8))
    assert lines == [f"{p}: Invalid value: 16: must not be greater than pod set count 8"]


def test_control_plane_refuses_and_carries_the_constraints() -> None:
    """The JobSet webhook refuses a bad group in the embedded control plane;
    a Job's constraints annotation becomes its podSet's
    topologyRequest.podsetSliceRequiredTopologyConstraints (jobframework/tas.go)."""
    frameworks = ["batch/job", "jobset.x-k8s.io/jobset"]
    cfg = config(integrations={"frameworks": frameworks})
    cp = plane([node("n1", "b1", "r1")], cfg=cfg, cluster=False)
    bad = _jobset(("job1", 2, 1, {REQ: BLOCK, GROUP: "g"}))
    bad["metadata"]["namespace"] = "default"
    with pytest.raises(Invalid) as err:
        cp.create([obj(bad)])
    assert f'[{GROUP}]: Invalid value: "g": can only define groups of exactly 2' in str(err.value)
    layers = f'[{{"topology":"{RACK}","size":4}},{{"topology":"{HOST}","size":2}}]'
    cp.create([job("layered", 8, {REQ: BLOCK, LAYERS: layers})])
    cp.settle()
    (wl,) = cp.store.list(WORKLOAD, "default").items
    tr = wl.spec.pod_sets[0].topology_request
    assert tr is not None and tr.required == BLOCK
    got = [(c.topology, c.size) for c in tr.podset_slice_required_topology_constraints or ()]
    assert got == [(RACK, 4), (HOST, 2)]


def test_feature_gates_of_the_configuration() -> None:
    """The webhooks read the Configuration's gates: without
    TASMultiLayerTopology the constraints annotation is refused
    (validateSliceRequiredTopologyConstraintsAnnotation)."""
    p = f"spec.template.metadata.annotations[{LAYERS}]"
    layers = f'[{{"topology":"{RACK}","size":2}}]'
    off = config(featureGates={"TASMultiLayerTopology": False})
    cp = plane([node("n1", "b1", "r1")], cfg=off, cluster=False)
    with pytest.raises(Invalid) as err:
        cp.create([job("layered", 2, {REQ: BLOCK, LAYERS: layers})])
    detail = "the TASMultiLayerTopology feature gate must be enabled to use this annotation"
    assert f"{p}: Forbidden: {detail}" in str(err.value)
