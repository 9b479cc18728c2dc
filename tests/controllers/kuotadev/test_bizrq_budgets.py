"""GPU-hour budgets in virtual time, through ``kuota run``: a group with 10
GPU-hours runs 4-GPU jobs; the budget is spent while the second job runs
(at 1h45m: 4 GPUs x 1h45m + 4 GPUs x 45m = 10 GPU-hours); the job that would
start after that is refused (Reject) or held in its queue (Queue); the running
job is never stopped and finishes; ``used`` is the hand-computed 16 GPU-hours
(two jobs x 4 GPUs x 2 h), the ``BudgetExhausted`` condition and Event say so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from kuota.cli.main import main

NODE = """\
apiVersion: v1
kind: Node
metadata: {name: gpu-0, labels: {kubernetes.io/hostname: gpu-0}}
status:
  capacity: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8", pods: "110"}
  allocatable: {cpu: "64", memory: 512Gi, nvidia.com/gpu: "8", pods: "110"}
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: kuota.dev/v1alpha1
kind: BizGroupResourceQuota
metadata: {name: ml}
spec:
  enforcement: ENFORCEMENT
  hard: {limits.nvidia.com/gpu: "8", cash/limits.nvidia.com/gpu: "10"}
"""

QUEUES = """\
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
    flavors: [{name: default, resources: [{name: nvidia.com/gpu, nominalQuota: "16"}]}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: cq}
"""


def job(name: str, at: str, hours: int, queue: bool) -> str:
    qlabel = ", kueue.x-k8s.io/queue-name: lq" if queue else ""
    return f"""\
---
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: default
  creationTimestamp: "{at}"
  labels: {{biz.group.resource.quota: ml{qlabel}}}
spec:
  parallelism: 1
  template:
    metadata: {{annotations: {{kuota.dev/duration: {hours}h}}}}
    spec:
      restartPolicy: Never
      containers:
      - {{name: c, image: x, resources: {{limits: {{nvidia.com/gpu: "4"}}}}}}
"""


def world(enforcement: str) -> str:
    queue = enforcement == "Queue"
    return (
        NODE.replace("ENFORCEMENT", enforcement)
        + (QUEUES if queue else "")
        + job("a", "2026-01-01T00:00:00Z", 2, queue)
        + job("b", "2026-01-01T01:00:00Z", 2, queue)
        + job("c", "2026-01-01T02:30:00Z", 2, queue)
    )


def _run(tmp_path: Path, enforcement: str) -> tuple[Any, Path]:
    path = tmp_path / "world.yaml"
    path.write_text(world(enforcement))
    state = tmp_path / "state"
    # to 2h first: the Event of the budget spent at 1h45m (Events live an hour)
    res = CliRunner().invoke(main, ["run", "--state", str(state), "--until", "2h", str(path)])
    assert res.exit_code == 0, res.output
    events = _get(state, "events", "-A")["items"]
    assert any(
        e["reason"] == "BudgetExhausted"
        and e["involvedObject"]["name"] == "ml"
        and "budget cash/limits.nvidia.com/gpu is spent (10 of 10 used)" in e["message"]
        for e in events
    ), events
    res = CliRunner().invoke(main, ["run", "--state", str(state)])  # resumed to the end
    return res, state


def _get(state: Path, *args: str) -> Any:
    out = CliRunner().invoke(main, ["get", *args, "-o", "yaml", "--state", str(state)])
    assert out.exit_code == 0, out.output
    return yaml.safe_load(out.output)


def _spent(state: Path) -> dict[str, Any]:
    node = _get(state, "bizrq", "ml")
    st = node["status"]
    # 4 GPUs x 2 h, twice: the second job ran past the moment the budget was spent
    assert st["used"]["cash/limits.nvidia.com/gpu"] == "16"
    assert st["selfUsed"]["cash/limits.nvidia.com/gpu"] == "16"
    cond = {c["type"]: c for c in st["conditions"]}["BudgetExhausted"]
    assert cond["status"] == "True"
    assert cond["lastTransitionTime"] == "2026-01-01T01:45:00Z"  # 4x1h45m + 4x45m = 10
    assert "cash/limits.nvidia.com/gpu is spent (16 of 10 used)" in cond["message"]
    return st


def _succeeded(state: Path, name: str) -> bool:
    j = _get(state, "job", name, "-n", "default")
    return any(
        c["type"] == "Complete" and c["status"] == "True"
        for c in (j.get("status") or {}).get("conditions") or ()
    )


def test_reject_refuses_the_job_after_the_budget_is_spent(tmp_path: Path) -> None:
    res, state = _run(tmp_path, "Reject")
    assert res.exit_code == 1, res.output
    text = " ".join(res.output.split())
    assert "Job/default/c" in text
    # as of the last refresh, when job a ended at 2h: 8 + 4 GPU-hours
    assert "bizrq ml: budget cash/limits.nvidia.com/gpu is spent (12 of 10 used)" in text
    _spent(state)
    assert _succeeded(state, "a") and _succeeded(state, "b")  # never stopped


def test_the_budget_gauge_reports_used_over_hard(tmp_path: Path) -> None:
    from kuota.metrics import KueueMetrics
    from kuota.store import open_readonly

    _, state = _run(tmp_path, "Reject")
    with open_readonly(str(state)) as store:
        body = KueueMetrics(store).render().decode()
    line = next(x for x in body.splitlines() if x.startswith("kuota_bizrq_budget_used_ratio{"))
    assert 'bizrq="ml"' in line and 'resource="cash/limits.nvidia.com/gpu"' in line
    assert float(line.rsplit(" ", 1)[1]) == 1.6  # 16 of 10 GPU-hours


def test_queue_holds_the_job_after_the_budget_is_spent(tmp_path: Path) -> None:
    res, state = _run(tmp_path, "Queue")
    assert res.exit_code == 0, res.output  # nothing refused: held instead
    _spent(state)
    assert _succeeded(state, "a") and _succeeded(state, "b")
    wls = _get(state, "workloads", "-n", "default")["items"]
    held = next(w for w in wls if w["metadata"]["ownerReferences"][0]["name"] == "c")
    check = held["status"]["admissionChecks"][0]
    assert check["name"] == "bizrq" and check["state"] == "Pending"
    # re-checked when the group last changed (job b ended at 3h: 8 + 8)
    assert (
        "bizrq ml: budget cash/limits.nvidia.com/gpu is spent (16 of 10 used)" in check["message"]
    )
    job_c = _get(state, "job", "c", "-n", "default")
    assert job_c["spec"]["suspend"] is True  # never started
    described = CliRunner().invoke(
        main, ["describe", "job", "c", "-n", "default", "--state", str(state)]
    )
    line = " ".join(described.output.split())
    assert (
        'waiting for admission checks; AdmissionCheck in Pending state: "bizrq" (bizrq ml: budget'
        in line
    )
