"""`kuota crds` output as kubectl and an API server take it: kubectl (when the
machine has it) reads every CRD and plans its creation against a localhost
API server, and every CRD holds only fields of apiextensions.k8s.io/v1 with the
right types (what kubectl's strict validation checks)."""

from __future__ import annotations

import copy
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from fake_apiserver import fake_apiserver, schema_errors
from kuota.cli.main import main


def _crds_text() -> str:
    r = CliRunner().invoke(main, ["crds"])
    assert r.exit_code == 0, r.output
    return r.output


def _crds() -> list[dict[str, Any]]:
    return list(yaml.safe_load_all(_crds_text()))


def test_every_crd_holds_only_apiextensions_fields() -> None:
    crds = _crds()
    # Kueue's seven kinds, ProvisioningRequestConfig, Topology and MultiKueue's two
    assert len(crds) == 11
    for c in crds:
        assert schema_errors(c) == [], c["metadata"]["name"]


def test_the_schema_check_catches_a_misspelled_or_mistyped_field() -> None:
    c = _crds()[0]
    bad = copy.deepcopy(c)
    schema = bad["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["x-kubernetes-list-typo"] = "map"
    bad["spec"]["versions"][0]["served"] = "yes"
    errs = schema_errors(bad)
    assert ".spec.versions[0].schema.openAPIV3Schema.x-kubernetes-list-typo: unknown field" in errs
    assert ".spec.versions[0].served: expected boolean, got str" in errs


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kubectl_apply_dry_run_client_accepts_the_crds(tmp_path: Path) -> None:
    f = tmp_path / "crds.yaml"
    f.write_text(_crds_text())
    with fake_apiserver() as url:
        r = subprocess.run(
            [
                "kubectl",
                "--server",
                url,
                "apply",
                "--dry-run=client",
                "--validate=false",
                "-f",
                str(f),
            ],
            capture_output=True,
            text=True,
            timeout=60,
            env={"PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(tmp_path)},
        )
    assert r.returncode == 0, r.stderr
    created = [line for line in r.stdout.splitlines() if line.endswith("created (dry run)")]
    names = {c["metadata"]["name"] for c in _crds()}
    assert {line.split()[0].split("/", 1)[1] for line in created} == names
