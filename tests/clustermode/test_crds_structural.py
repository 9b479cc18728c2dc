"""The CustomResourceDefinitions kuota prints are ones kube-apiserver accepts:
their schemas are structural (an array has its ``items``), as ``kuota
validate`` checks them; and ``kuota serve`` refuses a CRD that is not, on
every write of one (a dry run of Kueue's own CRDs included), with
kube-apiserver's message and field path."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from tests.server.conftest import needs_kubectl, start_server

from kuota.cli.main import main

BARE = (
    "spec.versions[0].schema.openAPIV3Schema.properties[status].properties[flavors]"
    ".items.properties[resources].items: Required value: must be specified"
)


def _run(*args: str) -> str:
    r = CliRunner().invoke(main, list(args))
    assert r.exit_code == 0, r.output
    return r.output


@pytest.mark.parametrize("command", [("crds",), ("manifests",), ("manifests", "--openshift")])
def test_printed_crds_validate(tmp_path: Path, command: tuple[str, ...]) -> None:
    path = tmp_path / "out.yaml"
    path.write_text(_run(*command))
    r = CliRunner().invoke(main, ["validate", str(path)])
    assert r.exit_code == 0, r.output
    assert "Required value" not in r.output
    assert ", 0 invalid" in r.output, r.output


def _localqueue_crd_without_items() -> dict[str, Any]:
    crd = yaml.safe_load(_run("crds", "--kind", "LocalQueue"))
    bad = copy.deepcopy(crd)
    flavors = bad["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]
    del flavors["properties"]["flavors"]["items"]["properties"]["resources"]["items"]
    return bad


@needs_kubectl
def test_serve_refuses_a_crd_with_a_bare_array(tmp_path: Path) -> None:
    bad = _localqueue_crd_without_items()
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(bad))
    r = CliRunner().invoke(main, ["validate", str(path)])
    assert r.exit_code != 0 and BARE in r.output, r.output
    other = copy.deepcopy(bad)
    other["metadata"]["name"] = "localqueues.example.com"
    other["spec"]["group"] = "example.com"
    served = start_server(tmp_path / "state", "--without-kueue", home=tmp_path / "home")
    try:
        # Kueue's CRDs are built into serve, a dry run of a write to one
        # answered: it is checked as kube-apiserver checks a CRD.
        for verb in ("apply", "replace", "create"):
            r = served.kubectl(
                verb, "--dry-run=server", "--validate=false", "-f", "-", input=yaml.safe_dump(bad)
            )
            assert r.returncode != 0, r.stdout
            assert BARE in r.stderr and "is invalid" in r.stderr, r.stderr
        # Another group's CRD is stored (and checked) as any other object.
        r = served.kubectl(
            "apply", "--dry-run=server", "--validate=false", "-f", "-", input=yaml.safe_dump(other)
        )
        assert r.returncode != 0, r.stdout
        assert BARE in r.stderr, r.stderr
        # The CRD as kuota prints it is accepted the same ways.
        good = yaml.safe_dump(yaml.safe_load(_run("crds", "--kind", "LocalQueue")))
        out = served.ok("replace", "--dry-run=server", "--validate=false", "-f", "-", input=good)
        assert "(server dry run)" in out
    finally:
        served.stop()
