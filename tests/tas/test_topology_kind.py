"""The Topology kind (Kueue's topology_types.go): both versions decoded and
validated as its CRD does, served by `kuota crds`, and its transition rules
(v1beta1: levels immutable; v1beta2: mutable only with the hostname lowest)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from kuota.api.decode import decode_yaml
from kuota.api.features import FEATURE_GATE_DEFAULTS
from kuota.api.kueue.updates import validate_update
from kuota.cli.main import main

TOPO = """
apiVersion: kueue.x-k8s.io/{v}
kind: Topology
metadata: {{name: default}}
spec:
  levels:
{levels}
"""


def topo(v: str, *labels: str) -> str:
    return TOPO.format(v=v, levels="\n".join(f"  - nodeLabel: {lb}" for lb in labels))


def one(text: str) -> Any:
    (doc,) = decode_yaml(text)
    assert doc.ok, [str(x) for x in doc.errors]
    return doc.obj


def test_kueue_example_topology_is_valid_in_both_versions(tmp_path: Path) -> None:
    for v in ("v1beta1", "v1beta2"):
        p = tmp_path / f"{v}.yaml"
        p.write_text(topo(v, "cloud.provider.com/topology-block", "kubernetes.io/hostname"))
        r = CliRunner().invoke(main, ["validate", str(p)])
        assert r.exit_code == 0, r.output
        assert "Topology/default" in r.output


def test_bad_levels_are_refused_with_the_crd_messages(tmp_path: Path) -> None:
    p = tmp_path / "bad.yaml"
    p.write_text(topo("v1beta2", "kubernetes.io/hostname", "rack", "rack"))
    r = CliRunner().invoke(main, ["validate", str(p)])
    assert r.exit_code == 1, r.output
    assert 'spec.levels: Invalid value: "array": must be unique' in r.output
    assert "the kubernetes.io/hostname label can only be used at the lowest level" in r.output
    p.write_text(TOPO.format(v="v1beta2", levels="").replace("levels:", "levels: []"))
    r = CliRunner().invoke(main, ["validate", str(p)])
    assert r.exit_code == 1 and "spec.levels" in r.output, r.output
    p.write_text(topo("v1beta1", "'bad label!'"))
    r = CliRunner().invoke(main, ["validate", str(p)])
    assert r.exit_code == 1 and "spec.levels[0].nodeLabel" in r.output, r.output


def test_levels_update_rules_per_version() -> None:
    gates = dict(FEATURE_GATE_DEFAULTS)
    old = one(topo("v1beta2", "block", "kubernetes.io/hostname"))
    new = one(topo("v1beta2", "block", "rack", "kubernetes.io/hostname"))
    assert validate_update(new, old, gates) == []
    errs = validate_update(new, old, gates, "kueue.x-k8s.io/v1beta1")
    assert [f"{e.path}: {e.detail}" for e in errs] == ["spec.levels: field is immutable"]
    old = one(topo("v1beta2", "block", "rack"))
    new = one(topo("v1beta2", "block"))
    errs = validate_update(new, old, gates)
    assert len(errs) == 1 and "levels are mutable only when" in errs[0].detail


def test_crds_serve_topology() -> None:
    r = CliRunner().invoke(main, ["crds"])
    assert r.exit_code == 0
    (crd,) = [c for c in yaml.safe_load_all(r.output) if c["spec"]["names"]["kind"] == "Topology"]
    assert crd["spec"]["scope"] == "Cluster"
    assert crd["spec"]["names"]["shortNames"] == ["topo"]
    assert [v["name"] for v in crd["spec"]["versions"]] == ["v1beta1", "v1beta2"]
