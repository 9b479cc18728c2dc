"""Queue enforcement through ``kuota run``: the tree is an admission check on
Kueue Workloads. A job over its group's model quota is not refused: its
Workload reserves ClusterQueue quota and waits on the ``bizrq`` check with the
group, the key and the numbers; kuota's one-line explanation says so; it is
admitted when the running job gives its quota back. Kueue's quota still
decides underneath (a job over the ClusterQueue's quota waits for that)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from kuota.cli.main import main

WORLD = """\
apiVersion: v1
kind: Node
metadata: {name: gpu-0, labels: {kubernetes.io/hostname: gpu-0}}
status:
  capacity: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "32", pods: "110"}
  allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "32", pods: "110"}
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: kuota.dev/v1alpha1
kind: BizGroupResourceQuota
metadata: {name: company}
spec:
  hard: {limits.nvidia.com/gpu: "32", limits.nvidia.com/gpu.A100: "24"}
---
apiVersion: kuota.dev/v1alpha1
kind: BizGroupResourceQuota
metadata: {name: ml-research}
spec:
  parentBizGroup: company
  enforcement: Queue
  hard: {limits.nvidia.com/gpu: "24", limits.nvidia.com/gpu.A100: "16"}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: AdmissionCheck
metadata: {name: bizrq}
spec: {controllerName: kuota.dev/bizrq}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  admissionChecks: [bizrq]
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: default, resources: [{name: nvidia.com/gpu, nominalQuota: "32"}]}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: cq}
"""


def job(name: str, at: str, gpus: int, hours: int) -> str:
    return f"""\
---
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: default
  creationTimestamp: "{at}"
  labels:
    kueue.x-k8s.io/queue-name: lq
    biz.group.resource.quota: ml-research
    biz.group.resource.quota/gpu-type: A100
spec:
  parallelism: 1
  template:
    metadata: {{annotations: {{kuota.dev/duration: {hours}h}}}}
    spec:
      restartPolicy: Never
      containers:
      - {{name: c, image: x, resources: {{limits: {{nvidia.com/gpu: "{gpus}"}}}}}}
"""


def _get(state: Path, *args: str) -> Any:
    out = CliRunner().invoke(main, ["get", *args, "-o", "yaml", "--state", str(state)])
    assert out.exit_code == 0, out.output
    return yaml.safe_load(out.output)


def _job_line(state: Path, name: str) -> str:
    out = CliRunner().invoke(
        main, ["describe", "job", name, "-n", "default", "--state", str(state)]
    )
    assert out.exit_code == 0, out.output
    return " ".join(out.output.split())


def test_a_workload_over_its_group_waits_with_the_reason_and_is_admitted_later(
    tmp_path: Path,
) -> None:
    path = tmp_path / "world.yaml"
    path.write_text(
        WORLD
        + job("first", "2026-01-01T00:00:00Z", 13, 2)
        + job("second", "2026-01-01T00:10:00Z", 8, 1)
    )
    state = tmp_path / "state"
    res = CliRunner().invoke(main, ["run", "--state", str(state), "--until", "1h", str(path)])
    assert res.exit_code == 0, res.output  # held, not refused
    reason = "bizrq ml-research: limits.nvidia.com/gpu.A100 needs 8, 3 of 16 left"
    assert reason in _job_line(state, "second")
    assert "quota reserved by ClusterQueue cq, waiting for admission checks" in _job_line(
        state, "second"
    )
    assert _get(state, "job", "second", "-n", "default")["spec"]["suspend"] is True
    node = _get(state, "bizrq", "ml-research")["status"]
    assert node["used"]["limits.nvidia.com/gpu.A100"] == "13"  # only the admitted job

    res = CliRunner().invoke(main, ["run", "--state", str(state)])  # resumed to the end
    assert res.exit_code == 0, res.output
    second = _get(state, "job", "second", "-n", "default")
    assert second["spec"]["suspend"] is False  # admitted when the first gave its 13 back
    assert any(c["type"] == "Complete" for c in second["status"]["conditions"])
    wl = next(
        w
        for w in _get(state, "workloads", "-n", "default")["items"]
        if w["metadata"]["ownerReferences"][0]["name"] == "second"
    )
    check = wl["status"]["admissionChecks"][0]
    assert (check["state"], check["message"]) == ("Ready", "bizrq ml-research: charged")
    admitted = {c["type"]: c for c in wl["status"]["conditions"]}["Admitted"]
    assert admitted["lastTransitionTime"] == "2026-01-01T02:00:00Z"  # the first ended at 2h
    node = _get(state, "bizrq", "ml-research")["status"]
    assert node["used"]["limits.nvidia.com/gpu.A100"] == "0"  # both finished: nothing held
