"""The API server's CRD handling (apiextensions-apiserver's establishing and
naming controllers), as a store admission hook: a CustomResourceDefinition
created or updated makes the kind it defines served from then on
(``kuota.api.apiextensions.register_crd``: decoding, the store, the API
server's resources and ``kuota get``), and gets the status kube-apiserver
gives it (accepted names, stored versions, NamesAccepted and Established).
A CRD of a kind kuota declares in code is stored and established alike,
kuota's own definition serving the kind."""

from __future__ import annotations

from typing import Any

from kuota.api.apiextensions import CustomResourceDefinition, register_crd
from kuota.api.k8s.validation.objectmeta import as_builtins
from kuota.store import clone
from kuota.store.kinds import resource_for

__all__ = ["CRDRegistration"]

CRD = resource_for("apiextensions.k8s.io/v1", "CustomResourceDefinition")


class CRDRegistration:
    kinds = frozenset({CRD})
    operations = frozenset({"CREATE", "UPDATE"})

    def __call__(self, op: str, new: Any, old: Any | None) -> Any:
        if not isinstance(new, CustomResourceDefinition):
            return new
        register_crd(new)
        new = clone(new)
        spec = new.spec
        stored = list((new.status or {}).get("storedVersions") or [])
        for v in spec.versions:
            if v.storage and v.name not in stored:
                stored.append(v.name)
        now = new.metadata.creation_timestamp
        when = now.strftime("%Y-%m-%dT%H:%M:%SZ") if now is not None else None
        new.status = {
            "acceptedNames": as_builtins(spec.names),
            "storedVersions": stored,
            "conditions": [
                {
                    "type": "NamesAccepted",
                    "status": "True",
                    "reason": "NoConflicts",
                    "message": "no conflicts found",
                    "lastTransitionTime": when,
                },
                {
                    "type": "Established",
                    "status": "True",
                    "reason": "InitialNamesAccepted",
                    "message": "the initial names have been accepted",
                    "lastTransitionTime": when,
                },
            ],
        }
        return new
