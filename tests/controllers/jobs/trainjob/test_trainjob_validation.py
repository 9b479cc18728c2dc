"""The TrainJob CRD's own rules (kubeflow/trainer@8c0f5059
manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml: its schema
markers and CEL, with their messages and field paths) through ``kuota
validate``, and its defaults (runtimeRef apiGroup and kind, suspend,
managedBy) on what ``kuota get`` returns."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from kuota.cli.main import main

HERE = Path(__file__).parent
EXAMPLES = HERE / "kueue_examples"


def _validate(tmp_path: Path, text: str) -> str:
    p = tmp_path / "tj.yaml"
    p.write_text(text)
    r = CliRunner().invoke(main, ["validate", str(p)])
    assert r.exit_code == 1, r.output
    assert "Traceback" not in r.output
    return " ".join(r.output.split())


def _job(name: str, spec: str) -> str:
    return f"""\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {{name: {name}, namespace: default}}
spec:
{spec}"""


def test_schema_markers_refuse_with_the_crds_messages(tmp_path: Path) -> None:
    out = _validate(
        tmp_path,
        _job(
            "ok-name",
            '  runtimeRef: {name: ""}\n'
            "  activeDeadlineSeconds: 0\n"
            '  runtimePatches: [{manager: ""}]\n'
            "  trainer: {numNodes: -1}\n",
        ),
    )
    for expected in (
        'spec.runtimeRef.name: Invalid value: "": spec.runtimeRef.name in body should be at '
        "least 1 chars long",
        "spec.activeDeadlineSeconds: Invalid value: 0: spec.activeDeadlineSeconds in body "
        "should be greater than or equal to 1",
        'spec.runtimePatches[0].manager: Invalid value: "": spec.runtimePatches[0].manager in '
        "body should be at least 1 chars long",
        "spec.trainer.numNodes: Invalid value: -1: spec.trainer.numNodes in body should be "
        "greater than or equal to 0",
    ):
        assert expected in out, (expected, out)


def test_cel_rules_refuse_with_the_crds_messages(tmp_path: Path) -> None:
    out = _validate(
        tmp_path,
        _job(
            "a.b",
            "  runtimeRef: {name: torch}\n"
            "  managedBy: someone/else\n"
            "  trainer: {numProcPerNode: 0}\n",
        ),
    )
    for expected in (
        "TrainJob/default/a.b",
        "spec.managedBy: Invalid value:",
        "ManagedBy must be trainer.kubeflow.org/trainjob-controller or "
        "kueue.x-k8s.io/multikueue if set",
        "spec.trainer.numProcPerNode: Invalid value:",
        "numProcPerNode must be greater than or equal to 1",
        '<root>: Invalid value: "object": metadata.name must match RFC 1035 DNS label format',
    ):
        assert expected in out, (expected, out)
    long = _validate(tmp_path, _job("x" * 64, "  runtimeRef: {name: torch}\n"))
    assert "metadata.name must be no more than 63 characters" in long, long


def test_kueues_trainjobs_are_defaulted_as_the_crd_says(tmp_path: Path) -> None:
    """Kueue's TrainJob sample with its runtimeRef cut to the name: the CRD
    fills apiGroup and kind (a ClusterTrainingRuntime), suspend and
    managedBy (the world's Configuration has no trainjob integration, so
    Kueue's webhook leaves it)."""
    world = tmp_path / "world.yaml"
    job = yaml.safe_load((EXAMPLES / "trainjob-cluster-runtime.yaml").read_text())
    job["spec"]["runtimeRef"] = {"name": "torch-distributed"}
    world.write_text(yaml.safe_dump(job))
    state = tmp_path / "state"
    r = CliRunner().invoke(
        main, ["run", str(world), "--state", str(state), "--no-live", "--until", "1s"]
    )
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["get", "trainjobs", "-A", "--state", str(state), "-o", "json"])
    (tj,) = json.loads(r.output)["items"]
    assert tj["spec"]["runtimeRef"] == {
        "name": "torch-distributed",
        "apiGroup": "trainer.kubeflow.org",
        "kind": "ClusterTrainingRuntime",
    }
    assert tj["spec"]["managedBy"] == "trainer.kubeflow.org/trainjob-controller"
    assert tj["spec"]["suspend"] is False
