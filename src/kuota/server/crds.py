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
