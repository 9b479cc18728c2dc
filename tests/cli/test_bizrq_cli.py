"""Business-group quota trees at the CLI: ``kuota run`` reports an object the
tree refused with the group, the key and the numbers; ``kuota validate``
names each bad field of a bad tree node; ``kuota crds`` prints the kind's
CRD; ``kuota get bizrq`` lists the tree with each node's parent."""

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
    assert rows[0][:3] == ["NAME", "PARENT", "ENFORCEMENT"]
    assert rows[2][:3] == ["team", "company", "Reject"]
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
