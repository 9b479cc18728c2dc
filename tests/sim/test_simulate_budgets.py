"""``kuota simulate`` with a business-group tree in the design: a LocalQueue
labelled ``biz.group.resource.quota`` puts its team's Jobs in that group; the
report gives each group's budget burn-down and when it ran out. By hand:
a1 (2 GPUs, 0-2h) and a2 (1 GPU, 1h-2h) burn 2t + (t - 1h) GPU-hours, so
team-a's 3 GPU-hours run out at 4/3 h (4800 s); a3, submitted at 6000 s, is
refused (Reject); a1 and a2 run to their end: 4 + 1 = 5 GPU-hours used."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kuota.cli.main import main

TRACE = """\
job_id,submit_s,duration_s,team,user,gpus,gpu_model,cpus,memory_mib,pods,status
a1,0,7200,team-a,,2,,1,1024,1,Succeeded
b1,0,3600,team-b,,1,,1,1024,1,Succeeded
a2,3600,3600,team-a,,1,,1,1024,1,Succeeded
a3,6000,3600,team-a,,1,,1,1024,1,Succeeded
"""

DESIGN = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: gpu}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: pool}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: gpu
      resources:
      - {name: cpu, nominalQuota: "64"}
      - {name: memory, nominalQuota: 256Gi}
      - {name: nvidia.com/gpu, nominalQuota: "8"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  namespace: team-a
  name: team-a
  labels: {biz.group.resource.quota: team-a}
spec: {clusterQueue: pool}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: team-b, name: team-b}
spec: {clusterQueue: pool}
---
apiVersion: kuota.dev/v1alpha1
kind: BizGroupResourceQuota
metadata: {name: team-a}
spec:
  hard: {limits.nvidia.com/gpu: "4", cash/limits.nvidia.com/gpu: "3"}
"""


def test_simulate_reports_each_groups_budget_burn_down(tmp_path: Path) -> None:
    trace = tmp_path / "trace.csv"
    trace.write_text(TRACE)
    design = tmp_path / "design.yaml"
    design.write_text(DESIGN)
    out = tmp_path / "r.json"
    r = CliRunner().invoke(
        main,
        [
            "simulate",
            "--trace",
            str(trace),
            "--world",
            str(design),
            "--json",
            str(out),
            "--no-progress",
        ],
    )
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    (budget,) = doc["budgets"]
    assert budget["group"] == "team-a" and budget["budget"] == "cash/limits.nvidia.com/gpu"
    assert (budget["granted_hours"], budget["used_hours"]) == (3, 5)
    assert budget["ran_out_s"] == 4800
    assert budget["refused_jobs"] == 1
    assert budget["burn"][0] == [0, 0] and budget["burn"][-1] == [7200, 5]
    assert doc["teams"]["team-a"]["gpu_hours"] == 5  # a3 never ran
    text = " ".join(r.output.split())
    assert "team-a │ cash/limits.nvidia.com/gpu │ 3h │ 5h │ 0h │ 1.33h │ 1" in text, r.output
