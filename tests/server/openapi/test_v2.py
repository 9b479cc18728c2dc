"""OpenAPI v2 (swagger 2.0): every served kind under definitions with its
group-version-kind, refs resolving, PATCH operations with their body types."""

from __future__ import annotations

import json

from kuota.api import registry
from kuota.server.openapi import v2_document


def test_v2_has_every_served_kind_and_its_patch_operation() -> None:
    doc = json.loads(v2_document())
    assert doc["swagger"] == "2.0"
    gvks = [
        g for d in doc["definitions"].values() for g in d.get("x-kubernetes-group-version-kind", [])
    ]
    patch_gvks = [
        op["x-kubernetes-group-version-kind"]
        for item in doc["paths"].values()
        for verb, op in item.items()
        if verb == "patch"
    ]
    for spec in registry.KINDS:
        for v in spec.versions:
            if v.served:
                gvk = {"group": spec.group, "version": v.name, "kind": spec.kind}
                assert gvk in gvks and gvk in patch_gvks, gvk
    text = v2_document().decode()
    assert "#/components/" not in text
    for ref in {r.split('"')[0] for r in text.split('"$ref":"')[1:]}:
        assert ref.removeprefix("#/definitions/") in doc["definitions"], ref
    job_patch = doc["paths"]["/apis/batch/v1/namespaces/{namespace}/jobs/{name}"]["patch"]
    assert "application/strategic-merge-patch+json" in job_patch["consumes"]
    assert job_patch["parameters"][0]["in"] == "body"
    assert {"fieldValidation", "fieldManager", "force", "dryRun"} <= {
        p["name"] for p in job_patch["parameters"]
    }
