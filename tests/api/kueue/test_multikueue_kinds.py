"""MultiKueueConfig and MultiKueueCluster as Kueue's CRDs define them
(``apis/kueue/v1beta1`` and ``v1beta2`` ``multikueue_types.go``): v1beta1
served and converted to the stored v1beta2 (``spec.kubeConfig`` moves under
``spec.clusterSource``), the CRD rules refused by ``kuota validate`` with the
API server's messages, and Kueue's own MultiKueue setup example accepted."""

from __future__ import annotations

from pathlib import Path

import msgspec
from click.testing import CliRunner

from kuota.api.decode import decode_object
from kuota.api.registry import by_group_kind
from kuota.cli.main import main

KUEUE_SETUP = Path(__file__).parents[3] / "examples" / "multikueue" / "manager" / "setup.yaml"

BAD = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueConfig
metadata: {name: dup}
spec:
  clusters: [w1, w1]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueCluster
metadata: {name: nosource}
spec:
  clusterSource: {}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueCluster
metadata: {name: badtype}
spec:
  clusterSource:
    kubeConfig: {location: "", locationType: File}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: MultiKueueConfig
metadata: {name: empty}
spec:
  clusters: []
"""


def test_v1beta1_cluster_is_stored_as_v1beta2_and_served_back() -> None:
    doc = decode_object(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta1",
            "kind": "MultiKueueCluster",
            "metadata": {"name": "worker1"},
            "spec": {"kubeConfig": {"location": "/etc/w1.kubeconfig", "locationType": "Path"}},
        }
    )
    assert not doc.errors
    mkc = doc.obj
    assert mkc.api_version == "kueue.x-k8s.io/v1beta2"
    kc = mkc.spec.cluster_source.kube_config
    assert (kc.location, kc.location_type) == ("/etc/w1.kubeconfig", "Path")
    spec = by_group_kind("kueue.x-k8s.io", "MultiKueueCluster")
    v1 = next(v for v in spec.versions if v.name == "v1beta1")
    wire = msgspec.to_builtins(v1.from_internal(mkc))
    assert wire["spec"] == {
        "kubeConfig": {"location": "/etc/w1.kubeconfig", "locationType": "Path"}
    }


def test_location_type_defaults_to_secret() -> None:
    doc = decode_object(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "MultiKueueCluster",
            "metadata": {"name": "worker1"},
            "spec": {"clusterSource": {"kubeConfig": {"location": "worker1-secret"}}},
        }
    )
    assert not doc.errors
    assert doc.obj.spec.cluster_source.kube_config.location_type == "Secret"


def test_crd_rules_refused_with_the_api_servers_messages(tmp_path: Path) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text(BAD)
    r = CliRunner().invoke(main, ["validate", str(f)])
    assert r.exit_code == 1, r.output
    out = r.output
    assert 'spec.clusters: Invalid value: "array": must be unique' in out
    assert (
        'spec.clusterSource: Invalid value: "object": exactly one of the fields in '
        "[kubeConfig clusterProfileRef] must be set"
    ) in out
    assert 'spec.clusterSource.kubeConfig.locationType: Unsupported value: "File"' in out
    assert "spec.clusterSource.kubeConfig.location in body should be at least 1 chars long" in out
    assert "spec.clusters in body should have at least 1 items" in out
    assert "4 invalid" in out


def test_kueue_setup_example_is_accepted() -> None:
    r = CliRunner().invoke(main, ["validate", str(KUEUE_SETUP)])
    assert r.exit_code == 0, r.output
    assert (
        "MultiKueueCluster/worker1" in r.output and "MultiKueueConfig/multikueue-test" in r.output
    )
