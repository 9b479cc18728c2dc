"""Business-group quota trees at the CLI: ``kuota run`` reports an object the
tree refused with the group, the key and the numbers; ``kuota validate``
names each bad field of a bad tree node; ``kuota crds`` prints the kind's
CRD; ``kuota get bizrq`` shows the tree key by key (budgets in hours, with
their projected run-out); ``kuota describe bizrq`` a node's objects,
children and recent refusals."""

from __future__ import annotations

from pathlib import Path

import yaml
from click.testing import CliRunner

from kuota.cli.main import main

WORLD = """\
apiVersion: kuota.dev/v1alpha1
kind: BizGroupResourceQuota
metadata: {name: company}
spec:
  hard: {limits.cpu: "10", limits.nvidia.com/gpu: "16", limits.nvidia.com/gpu.A100: "8"}
---
apiVersion: kuota.dev/v1alpha1
kind: BizGroupResourceQuota
metadata: {name: team}
spec:
  parentBizGroup: company
  hard: {limits.cpu: "6", limits.nvidia.com/gpu: "8", limits.nvidia.com/gpu.A100: "4"}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  labels: {biz.group.resource.quota: team, biz.group.resource.quota/gpu-type: A100}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: x, resources: {limits: {cpu: "1", nvidia.com/gpu: "2"}}}]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: big
  namespace: default
  labels: {biz.group.resource.quota: team, biz.group.resource.quota/gpu-type: A100}
spec:
  replicas: 3
  selector: {matchLabels: {app: big}}
  template:
    metadata: {labels: {app: big}}
    spec:
      containers: [{name: c, image: x, resources: {limits: {cpu: "1", nvidia.com/gpu: "1"}}}]
"""

BAD_NODE = """\
apiVersion: kuota.dev/v1alpha1
kind: BizGroupResourceQuota
metadata: {name: loop}
spec:
  parentBizGroup: loop
  enforcement: Sometimes
  resyncPeriod: soon
  hard: {limits.cpu: "-1", "cash/limits.nvidia.com/gpu": "100"}
"""


def test_run_reports_the_refused_object_with_group_key_and_numbers(tmp_path: Path) -> None:
    world = tmp_path / "world.yaml"
    world.write_text(WORLD)
    state = tmp_path / "state"
    res = CliRunner().invoke(main, ["run", "--state", str(state), str(world)])
    assert res.exit_code == 1, res.output
    assert "Deployment/default/big" in res.output
    assert "bizrq team: limits.nvidia.com/gpu.A100 needs 3, 0 of 4 left" in " ".join(
        res.output.split()
    )
    got = CliRunner().invoke(main, ["get", "bizrq", "--state", str(state)])
    assert got.exit_code == 0, got.output
    rows = [line.split() for line in got.output.splitlines()]
    assert rows[0] == ["NAME", "PARENT", "ENFORCEMENT", "KEY", "HARD", "USED", "LEFT", "RUN-OUT"]
    # the tree: each node's keys, hard / used / left; a child after its parent
    assert rows[1] == ["company", "Reject", "limits.cpu", "10", "6", "4"]  # 6 granted to team
    assert rows[4] == ["team", "company", "Reject", "limits.cpu", "6", "2", "4"]
    assert rows[6] == ["limits.nvidia.com/gpu.A100", "4", "4", "0"]
    out = CliRunner().invoke(main, ["get", "bizrq", "team", "-o", "yaml", "--state", str(state)])
    status = yaml.safe_load(out.output)["status"]
    assert status["used"]["limits.nvidia.com/gpu.A100"] == "4"
    assert status["used"]["limits.nvidia.com/gpu"] == "4"  # the model's use counts in its prefix


def test_validate_names_every_bad_field_of_a_tree_node(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(BAD_NODE)
    res = CliRunner().invoke(main, ["validate", str(bad)])
    assert res.exit_code == 1, res.output
    assert "Traceback" not in res.output
    for line in (
        'spec.parentBizGroup: Invalid value: "loop": a group cannot be its own parent',
        'spec.hard[limits.cpu]: Invalid value: "-1": must be greater than or equal to 0',
        'spec.enforcement: Unsupported value: "Sometimes"',
        'spec.resyncPeriod: Invalid value: "soon"',
    ):
        assert line in res.output, res.output


def test_crds_prints_the_cluster_scoped_kind_with_its_short_name() -> None:
    res = CliRunner().invoke(main, ["crds", "--kind", "BizGroupResourceQuota"])
    assert res.exit_code == 0, res.output
    crd = yaml.safe_load(res.output)
    assert crd["metadata"]["name"] == "bizgroupresourcequotas.kuota.dev"
    assert crd["spec"]["scope"] == "Cluster"
    assert crd["spec"]["names"]["shortNames"] == ["bizrq"]
    assert crd["spec"]["versions"][0]["subresources"] == {"status": {}}


BUDGET = """\
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
  hard: {limits.nvidia.com/gpu: "8", cash/limits.nvidia.com/gpu: "10"}
---
apiVersion: kuota.dev/v1alpha1
kind: BizGroupResourceQuota
metadata: {name: ml-team}
spec:
  parentBizGroup: ml
  hard: {limits.nvidia.com/gpu: "2", cash/limits.nvidia.com/gpu: "1"}
"""


def _job(name: str, at: str, gpus: int) -> str:
    return f"""\
---
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: default
  creationTimestamp: "{at}"
  labels: {{biz.group.resource.quota: ml}}
spec:
  parallelism: 1
  template:
    metadata: {{annotations: {{kuota.dev/duration: 4h}}}}
    spec:
      restartPolicy: Never
      containers: [{{name: c, image: x, resources: {{limits: {{nvidia.com/gpu: "{gpus}"}}}}}}]
"""


def test_get_shows_budgets_in_hours_with_their_run_out_and_describe_the_refusals(
    tmp_path: Path,
) -> None:
    world = tmp_path / "world.yaml"
    world.write_text(
        BUDGET
        + _job("a", "2026-01-01T00:00:00Z", 2)
        + _job("b", "2026-01-01T00:30:00Z", 2)
        + _job("big", "2026-01-01T00:40:00Z", 5)
    )
    state = tmp_path / "state"
    res = CliRunner().invoke(main, ["run", "--state", str(state), "--until", "1h", str(world)])
    assert res.exit_code == 1, res.output  # big: 5 GPUs, 2 of 8 left (a, b, 2 granted to ml-team)
    got = CliRunner().invoke(main, ["get", "bizrq", "--state", str(state)], env={"COLUMNS": "300"})
    rows = [line.split() for line in got.output.splitlines()]
    # at 1h: 2 GPUs x 1h + 2 GPUs x 30m = 3 of 10 own hours, + 1 granted to ml-team = 4;
    # 4 GPUs burning: the 6 hours left run out in 1h30m
    assert rows[1] == [
        "ml",
        "Reject",
        "cash/limits.nvidia.com/gpu",
        "10h",
        "4h",
        "6h",
        "2026-01-01",
        "02:30",
        "(in",
        "1h30m)",
        "at",
        "4/h",
    ], got.output
    assert rows[3][:7] == [
        "ml-team",
        "ml",
        "Reject",
        "cash/limits.nvidia.com/gpu",
        "1h",
        "0h",
        "1h",
    ]
    assert rows[3][7:] == ["not", "burning"]
    out = CliRunner().invoke(main, ["describe", "bizrq", "ml", "--state", str(state)])
    assert out.exit_code == 0, out.output
    text = " ".join(out.output.split())
    assert "Children: ml-team: cash/limits.nvidia.com/gpu=1, limits.nvidia.com/gpu=2" in text
    assert "Job/default/a: limits.nvidia.com/gpu=2" in text
    assert (
        'Recent Refusals: 2026-01-01 00:40:00 Refused Job "default/big" refused: '
        "bizrq ml: limits.nvidia.com/gpu needs 5, 2 of 8 left" in text
    ), text
