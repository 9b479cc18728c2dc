"""Kueue's own example manifests (kubernetes-sigs/kueue@ff69552e
site/static/examples and the YAML of its object-retention page), copied
verbatim next to the other copies: all accepted by ``kuota validate``, and
the runnable ones run as Kueue's docs say — the Ray sample with the
ConfigMap it mounts, a MultiKueue TAS worker's setup with the dev sample's
Jobs, DRA's ResourceClaimTemplate sample, and both object-retention
scenarios."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kuota.cli.main import main

TESTS = Path(__file__).parents[1]
RAY = TESTS / "controllers" / "jobs" / "ray" / "kueue_examples"
MK = TESTS / "controllers" / "multikueue" / "kueue_examples"
PROV = TESTS / "controllers" / "provisioning" / "kueue_examples"
DRA = TESTS / "embedded" / "kueue_examples" / "dra"
RETENTION = TESTS / "controllers" / "kueue_examples" / "object-retention"
COPIES = [
    RAY / "ray-job-code-sample.yaml",
    RAY / "ray-job-autoscaling-code-sample.yaml",
    MK / "multikueue-setup.yaml",
    MK / "tas" / "manager-setup.yaml",
    MK / "tas" / "worker-setup.yaml",
    MK / "dev" / "sample-tas-job.yaml",
    PROV / "sample-admission-check.yaml",
    *sorted(DRA.glob("*.yaml")),
    RETENTION / "scenario-a.yaml",
    RETENTION / "scenario-b.yaml",
]


@pytest.mark.parametrize("path", COPIES, ids=lambda p: p.name)
def test_copy_is_verbatim_and_valid(path: Path) -> None:
    assert path.read_text().startswith("# Copied from kubernetes-sigs/kueue@ff69552e ")
    r = CliRunner().invoke(main, ["validate", str(path)])
    assert r.exit_code == 0, r.output
    assert "invalid" not in r.output.replace("0 invalid", ""), r.output


def test_retention_config_fragments_validate_as_a_configuration(tmp_path: Path) -> None:
    """The page's two Configuration fragments, under a Configuration's header."""
    for name in ("config-fragment.yaml", "example-config-fragment.yaml"):
        body = yaml.safe_load((RETENTION / name).read_text())
        doc = {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration", **body}
        p = tmp_path / name
        p.write_text(yaml.safe_dump(doc))
        r = CliRunner().invoke(main, ["validate", str(p)])
        assert r.exit_code == 0, r.output


def _run(tmp_path: Path, *docs: str, until: str, code: int = 0) -> Path:
    world = tmp_path / "world.yaml"
    world.write_text("\n---\n".join(docs))
    state = tmp_path / "state"
    r = CliRunner().invoke(
        main, ["run", str(world), "--state", str(state), "--no-live", "--until", until]
    )
    assert r.exit_code == code and "Traceback" not in r.output, r.output
    return state


def _get(state: Path, kind: str) -> list[dict[str, Any]]:
    r = CliRunner().invoke(main, ["get", kind, "-A", "--state", str(state), "-o", "json"])
    assert r.exit_code == 0, r.output
    items: list[dict[str, Any]] = json.loads(r.output)["items"]
    return items


def _cond(obj: dict[str, Any], ctype: str) -> dict[str, Any] | None:
    return next(
        (c for c in obj.get("status", {}).get("conditions", []) if c["type"] == ctype), None
    )


def _node(name: str, cpu: str, labels: str = "") -> str:
    return f"""\
apiVersion: v1
kind: Node
metadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}{labels}}}}}
status:
  allocatable: {{cpu: "{cpu}", memory: 64Gi, pods: "110"}}
  conditions: [{{type: Ready, status: "True"}}]"""


def test_ray_sample_runs_with_the_configmap_it_mounts(tmp_path: Path) -> None:
    """ray-job-sample.yaml mounts ConfigMap ray-job-code-sample (its
    entrypoint's code): with it, the RayJob is admitted whole and succeeds."""
    config = """\
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
integrations:
  frameworks: [ray.io/rayjob, ray.io/raycluster]"""
    setup = TESTS / "controllers/jobs/jobset/kueue_examples/single-clusterqueue-setup.yaml"
    # The entrypoint's run time, for the simulated submitter (kuota.dev/duration).
    job = yaml.safe_load((RAY / "ray-job-sample.yaml").read_text())
    job["metadata"]["annotations"] = {"kuota.dev/duration": "10m"}
    state = _run(
        tmp_path,
        config,
        setup.read_text(),
        _node("node-1", "32"),
        (RAY / "ray-job-code-sample.yaml").read_text(),
        yaml.safe_dump(job),
        until="2h",
    )
    (cm,) = (c for c in _get(state, "configmaps") if c["metadata"]["name"] == "ray-job-code-sample")
    assert "sample_code.py" in cm["data"]
    (job,) = _get(state, "rayjobs")
    assert job["status"]["jobDeploymentStatus"] == "Complete", job["status"]
    assert job["status"]["jobStatus"] == "SUCCEEDED"
    (wl,) = _get(state, "workloads")
    assert _cond(wl, "Finished") is not None


def test_multikueue_tas_worker_runs_the_dev_sample_jobs(tmp_path: Path) -> None:
    """multikueue/tas/worker-setup.yaml is a worker's side: a hostname
    Topology and a TAS flavor. The dev sample's Jobs run there, the first
    required on one host, the second (no annotation) placed by TAS because
    its only flavor is a TAS one; each gets a topology assignment."""
    nodes = [_node(f"w{i}", "2", ", cloud.provider.com/node-group: tas-node") for i in (1, 2)]
    state = _run(
        tmp_path,
        (MK / "tas" / "worker-setup.yaml").read_text(),
        *nodes,
        (MK / "dev" / "sample-tas-job.yaml").read_text(),
        until="1m",
    )
    wls = {w["metadata"]["ownerReferences"][0]["name"]: w for w in _get(state, "workloads")}
    assert set(wls) == {"tas-sample-job", "implicit-tas-job"}
    for wl in wls.values():
        (psa,) = wl["status"]["admission"]["podSetAssignments"]
        assert psa["topologyAssignment"]["levels"] == ["kubernetes.io/hostname"]
    required = wls["tas-sample-job"]["status"]["admission"]["podSetAssignments"][0]
    # Two 1-cpu pods on one 2-cpu host.
    (slice_,) = required["topologyAssignment"]["slices"]
    assert (slice_["domainCount"], slice_["podCounts"]) == (1, {"universal": 2})


RF = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: objectretention-rf}"""


def _retention_config() -> str:
    body = yaml.safe_load((RETENTION / "example-config-fragment.yaml").read_text())
    doc = {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration", **body}
    return yaml.safe_dump(doc)


def test_object_retention_scenario_a_deletes_the_finished_workload(tmp_path: Path) -> None:
    """Scenario A: the Job finishes; about a minute later its Workload is
    deleted and the Job stays Complete. (The page's queues name the flavor
    objectretention-rf, which it leaves to the reader: given here.)"""
    job = (
        (RETENTION / "scenario-a.yaml")
        .read_text()
        .replace(
            "    spec:\n      restartPolicy",
            "    metadata: {annotations: {kuota.dev/duration: 30s}}\n    spec:\n      restartPolicy",
        )
    )
    state = _run(tmp_path, _retention_config(), RF, _node("node-1", "4"), job, until="10m")
    assert _get(state, "workloads") == []
    (j,) = _get(state, "jobs")
    assert _cond(j, "Complete")["status"] == "True"  # type: ignore[index]


def test_object_retention_scenario_b_deletes_the_deactivated_job(tmp_path: Path) -> None:
    """Scenario B: 100 cpu admitted by quota, more than the node has; the pod
    never becomes ready, waitForPodsReady (2m, no requeue) evicts and
    deactivates the Workload, and a minute later the Job and Workload are
    gone."""
    state = _run(
        tmp_path,
        _retention_config(),
        RF,
        _node("node-1", "4"),
        (RETENTION / "scenario-b.yaml").read_text(),
        until="10m",
    )
    assert _get(state, "workloads") == []
    assert _get(state, "jobs") == []


def test_dra_resource_claim_template_sample_charges_one_device(tmp_path: Path) -> None:
    """dra/sample-dra-queues.yaml and sample-dra-rct-job.yaml with the
    docs' deviceClassMappings (gpu.example.com -> example.com/gpu): the Job's
    Workload is admitted with one example.com/gpu charged."""
    config = """\
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
resources:
  deviceClassMappings:
  - name: example.com/gpu           # Logical resource name for quota
    deviceClassNames:
    - gpu.example.com               # DeviceClass name(s)"""
    device_class = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}"""
    state = _run(
        tmp_path,
        config,
        device_class,
        (DRA / "sample-dra-queues.yaml").read_text(),
        (DRA / "sample-dra-rct-job.yaml").read_text(),
        until="1m",
    )
    (wl,) = _get(state, "workloads")
    (psa,) = wl["status"]["admission"]["podSetAssignments"]
    assert psa["resourceUsage"]["example.com/gpu"] == "1"
