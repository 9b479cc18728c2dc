"""``kuota crds``: CustomResourceDefinitions that an API server accepts as
structural, both versions served, v1beta2 stored, and the same schema the
validator enforces."""

from __future__ import annotations

from typing import Any

import yaml
from click.testing import CliRunner

from kuota.api.kueue import types as kt
from kuota.cli.main import main


def _crds() -> list[dict[str, Any]]:
    result = CliRunner().invoke(main, ["crds"])
    assert result.exit_code == 0, result.output
    return list(yaml.safe_load_all(result.output))


def _structural_problems(s: dict[str, Any], path: str) -> list[str]:
    """The apiextensions rules for a structural schema, as the API server checks them."""
    out = []
    if "$ref" in s:
        out.append(f"{path}: $ref")
    typed = (
        "type" in s
        or s.get("x-kubernetes-int-or-string")
        or s.get("x-kubernetes-preserve-unknown-fields")
    )
    if not typed:
        out.append(f"{path}: no type")
    if "properties" in s and "additionalProperties" in s:
        out.append(f"{path}: properties and additionalProperties")
    if s.get("x-kubernetes-list-type") == "map":
        props = s.get("items", {}).get("properties", {})
        for k in s.get("x-kubernetes-list-map-keys", []):
            if k not in props:
                out.append(f"{path}: list-map key {k} is not a property of the items")
    for k, v in s.get("properties", {}).items():
        out += _structural_problems(v, f"{path}.{k}")
    if isinstance(s.get("items"), dict):
        out += _structural_problems(s["items"], f"{path}[]")
    if isinstance(s.get("additionalProperties"), dict):
        out += _structural_problems(s["additionalProperties"], f"{path}{{}}")
    if "anyOf" in s and not s.get("x-kubernetes-int-or-string"):
        out.append(f"{path}: anyOf outside int-or-string")
    return out


def test_every_kueue_kind_has_a_structural_crd() -> None:
    crds = _crds()
    # Kueue's kinds, the ProvisioningRequestConfig of its provisioning check
    # and MultiKueue's two kinds.
    assert {c["spec"]["names"]["kind"] for c in crds} == set(kt.KINDS) | {
        "ProvisioningRequestConfig",
        "MultiKueueCluster",
        "MultiKueueConfig",
    }
    for c in crds:
        assert c["apiVersion"] == "apiextensions.k8s.io/v1"
        spec = c["spec"]
        assert c["metadata"]["name"] == f"{spec['names']['plural']}.kueue.x-k8s.io"
        assert [v["name"] for v in spec["versions"]] == ["v1beta1", "v1beta2"]
        assert [v["storage"] for v in spec["versions"]] == [False, True]
        assert all(v["served"] for v in spec["versions"])
        for v in spec["versions"]:
            schema = v["schema"]["openAPIV3Schema"]
            assert schema["type"] == "object"
            assert _structural_problems(schema, f"{spec['names']['kind']}/{v['name']}") == []


def test_crd_carries_kueue_rules_and_version_differences() -> None:
    crds = {c["spec"]["names"]["kind"]: c for c in _crds()}
    v1, v2 = (
        v["schema"]["openAPIV3Schema"]["properties"]["spec"]
        for v in crds["ClusterQueue"]["spec"]["versions"]
    )
    assert "cohort" in v1["properties"] and "cohortName" in v2["properties"]
    assert "self.cohort)" in v1["x-kubernetes-validations"][0]["rule"]
    assert "self.cohortName)" in v2["x-kubernetes-validations"][0]["rule"]
    assert "Borrow" in v1["properties"]["flavorFungibility"]["properties"]["whenCanBorrow"]["enum"]
    assert (
        "Borrow" not in v2["properties"]["flavorFungibility"]["properties"]["whenCanBorrow"]["enum"]
    )
    rq = v2["properties"]["resourceGroups"]["items"]["properties"]["flavors"]["items"][
        "properties"
    ]["resources"]["items"]
    assert rq["properties"]["nominalQuota"]["x-kubernetes-int-or-string"] is True
    assert rq["required"] == ["name", "nominalQuota"]
    assert v2["properties"]["cohortName"]["pattern"].endswith(")*$")  # Go syntax, not Python's \Z
    assert v2["properties"]["queueingStrategy"]["default"] == "BestEffortFIFO"
    wl = crds["Workload"]["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert wl["properties"]["podSets"]["x-kubernetes-list-map-keys"] == ["name"]
    assert wl["properties"]["podSets"]["maxItems"] == 18
    assert crds["Workload"]["spec"]["scope"] == "Namespaced"
    assert crds["ClusterQueue"]["spec"]["scope"] == "Cluster"


def test_crd_selection_and_unknown_kind() -> None:
    r = CliRunner().invoke(main, ["crds", "--kind", "Cohort"])
    assert r.exit_code == 0 and len(list(yaml.safe_load_all(r.output))) == 1
    r = CliRunner().invoke(main, ["crds", "--kind", "Nope"])
    assert r.exit_code == 1 and "unknown kind" in r.output
