"""The OpenAPI v3 documents kubectl reads: one per served group-version, the
kinds found by their group-version-kind, the PATCH operation kubectl's
query_param_verifier_v3 looks for, and the markers strategic merge and
server-side apply need."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kuota.api import registry
from kuota.server.openapi import v3_document, v3_index


def _doc(gv: str) -> dict[str, Any]:
    body = v3_document(gv)
    assert body is not None, gv
    out: dict[str, Any] = json.loads(body)
    return out


def _served() -> set[str]:
    return {
        (f"apis/{s.group}/{v.name}" if s.group else f"api/{v.name}")
        for s in registry.KINDS
        for v in s.versions
        if v.served
    }


def test_index_lists_every_served_group_version_with_its_url() -> None:
    paths = v3_index()["paths"]
    assert set(paths) == _served()
    for gv, entry in paths.items():
        url = entry["serverRelativeURL"]
        assert url.startswith(f"/openapi/v3/{gv}?hash=")
        assert len(url.split("hash=")[1]) >= 32
    assert v3_document("apis/nope.example.com/v1") is None


def _by_gvk(doc: dict[str, Any], group: str, version: str, kind: str) -> dict[str, Any]:
    hits = [
        s
        for s in doc["components"]["schemas"].values()
        if {"group": group, "version": version, "kind": kind}
        in s.get("x-kubernetes-group-version-kind", [])
    ]
    assert len(hits) == 1, (group, version, kind)
    return hits[0]


@pytest.mark.parametrize("gv", sorted(_served()))
def test_every_kind_has_a_schema_and_a_validating_patch_operation(gv: str) -> None:
    doc = _doc(gv)
    assert doc["openapi"].startswith("3.")
    group, version = ("", gv.split("/")[1]) if gv.startswith("api/") else gv.split("/")[1:3]
    kinds = [
        s
        for s in registry.KINDS
        if s.group == group and any(v.name == version and v.served for v in s.versions)
    ]
    assert kinds
    for spec in kinds:
        schema = _by_gvk(doc, group, version, spec.kind)
        assert {"apiVersion", "kind", "metadata"} <= set(schema["properties"])
        _by_gvk(doc, group, version, spec.list_kind)
        patches = [
            op
            for item in doc["paths"].values()
            for verb, op in item.items()
            if verb == "patch"
            and op["x-kubernetes-group-version-kind"]
            == {"group": group, "version": version, "kind": spec.kind}
        ]
        assert patches, spec.kind
        for op in patches:
            assert op["x-kubernetes-action"] == "patch"
            assert "fieldValidation" in [p["name"] for p in op["parameters"]]
            types = set(op["requestBody"]["content"])
            strategic = "application/strategic-merge-patch+json" in types
            # Strategic merge is for built-in kinds only, as kube-apiserver serves CRDs
            # (Spark Operator's CRD group is under k8s.io, yet a CRD's).
            builtin = group == "" or group.endswith(".k8s.io") or "." not in group
            assert strategic == (builtin and group != "sparkoperator.k8s.io")
            assert "application/apply-patch+yaml" in types


def test_every_ref_resolves_inside_its_document() -> None:
    for gv in _served():
        doc = _doc(gv)
        text = json.dumps(doc)
        for ref in {r.split('"')[0] for r in text.split('"$ref": "')[1:]}:
            name = ref.removeprefix("#/components/schemas/")
            assert name in doc["components"]["schemas"], (gv, ref)


def test_meta_components_and_object_meta_markers() -> None:
    schemas = _doc("apis/batch/v1")["components"]["schemas"]
    meta = "io.k8s.apimachinery.pkg.apis.meta.v1."
    for name in ("ObjectMeta", "ListMeta", "Status", "WatchEvent", "DeleteOptions", "Patch"):
        assert meta + name in schemas
    om = schemas[meta + "ObjectMeta"]["properties"]
    assert om["ownerReferences"]["x-kubernetes-patch-merge-key"] == "uid"
    assert om["ownerReferences"]["x-kubernetes-list-map-keys"] == ["uid"]
    assert om["finalizers"]["x-kubernetes-list-type"] == "set"
    assert om["finalizers"]["x-kubernetes-patch-strategy"] == "merge"


def test_pod_template_lists_carry_strategic_merge_and_apply_markers() -> None:
    job = _by_gvk(_doc("apis/batch/v1"), "batch", "v1", "Job")
    pod = job["properties"]["spec"]["properties"]["template"]["properties"]["spec"]["properties"]
    assert pod["containers"]["x-kubernetes-patch-merge-key"] == "name"
    assert pod["containers"]["x-kubernetes-patch-strategy"] == "merge"
    assert pod["containers"]["x-kubernetes-list-map-keys"] == ["name"]
    assert pod["volumes"]["x-kubernetes-patch-strategy"] == "merge,retainKeys"
    assert pod["tolerations"]["x-kubernetes-list-type"] == "atomic"
    ports = pod["containers"]["items"]["properties"]["ports"]
    assert ports["x-kubernetes-list-map-keys"] == ["containerPort", "protocol"]
    assert ports["x-kubernetes-patch-merge-key"] == "containerPort"
    status = job["properties"]["status"]["properties"]["conditions"]
    # Job conditions: merged by type in strategic merge, atomic for apply (k8s.io/api batch/v1).
    assert status["x-kubernetes-patch-merge-key"] == "type"
    assert status["x-kubernetes-list-type"] == "atomic"


def test_kueue_kinds_keep_their_crd_list_markers_and_both_versions() -> None:
    for version in ("v1beta1", "v1beta2"):
        cq = _by_gvk(
            _doc(f"apis/kueue.x-k8s.io/{version}"), "kueue.x-k8s.io", version, "ClusterQueue"
        )
        groups = cq["properties"]["spec"]["properties"]["resourceGroups"]
        assert groups["type"] == "array"
        assert "x-kubernetes-list-type" in groups["items"]["properties"]["flavors"]
