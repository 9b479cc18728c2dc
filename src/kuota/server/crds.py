"""The CustomResourceDefinitions of Kueue's kinds, listed and readable under
``apiextensions.k8s.io/v1`` as on a cluster with Kueue installed (the same
documents ``kuota crds`` writes)."""

from __future__ import annotations

import functools
import uuid
from typing import Any

from kuota.api.crd import all_crds


@functools.cache
def crd_objects() -> list[dict[str, Any]]:
    out = []
    for doc in all_crds():
        meta = doc["metadata"]
        name = meta["name"]
        meta.update(
            {
                "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"kuota/crd/{name}")),
                "resourceVersion": "1",
                "generation": 1,
                "creationTimestamp": "2026-01-01T00:00:00Z",
            }
        )
        stored = [v["name"] for v in doc["spec"]["versions"] if v.get("storage")]
        doc["status"] = {
            "acceptedNames": doc["spec"]["names"],
            "storedVersions": stored,
            "conditions": [
                {"type": "Established", "status": "True", "reason": "InitialNamesAccepted"},
                {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts"},
            ],
        }
        out.append(doc)
    return out


@functools.cache
def builtin_crd_names() -> frozenset[str]:
    return frozenset(c["metadata"]["name"] for c in crd_objects())


def crd_write(
    method: str, name: str, query: dict[str, str], content_type: str, body: bytes
) -> tuple[dict[str, Any], int]:
    """A write of a CustomResourceDefinition: kuota's are built in (the
    registry's kinds), so only a dry run (``kubectl apply --dry-run=server``
    of a deployment's manifests) is answered, with what the write would
    make; anything else is refused as before."""
    from kuota.server import discovery, patching
    from kuota.server import status as st

    if query.get("dryRun") != "All":
        raise st.method_not_allowed()
    if method == "POST":
        doc = patching.parse_patch("", body)
        name = ((doc or {}).get("metadata") or {}).get("name", "") if isinstance(doc, dict) else ""
    live = next((c for c in crd_objects() if c["metadata"]["name"] == name), None)
    if method == "POST":
        if live is not None:
            raise st.already_exists(discovery.CRD_GROUP, "customresourcedefinitions", name)
        return doc, 201
    if live is None:
        raise st.not_found(discovery.CRD_GROUP, "customresourcedefinitions", name)
    if method == "PUT":
        new = patching.parse_patch("", body)
    elif method == "PATCH":
        new = patching.apply(
            content_type,
            live,
            patching.parse_patch(content_type, body),
            gvk=(discovery.CRD_GROUP, "v1", "CustomResourceDefinition"),
            builtin=True,
            manager=query.get("fieldManager", ""),
            force=query.get("force") == "true",
            now=live["metadata"]["creationTimestamp"],
        )
    else:
        raise st.method_not_allowed()
    if not isinstance(new, dict):
        raise st.bad_request("the body of the request must be a CustomResourceDefinition")
    new["metadata"] = {**live["metadata"], **(new.get("metadata") or {})}
    new["status"] = live["status"]
    _refuse_invalid(new, name)
    return new, 200


def _refuse_invalid(doc: Any, name: str) -> None:
    """422 for what kube-apiserver's CRD validation refuses (a structural
    schema: an array without ``items``, ...), as a stored CRD's write is
    checked; a dry run of Kueue's CRDs once went unchecked, so invalid
    generated CRDs passed ``kubectl apply --dry-run=server``."""
    from kuota.api.decode import decode_object
    from kuota.server import discovery
    from kuota.server import status as st

    errs = decode_object(doc).errors
    if errs:
        raise st.invalid(discovery.CRD_GROUP, "CustomResourceDefinition", name, errs)
