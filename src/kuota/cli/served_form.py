"""An object as ``kubectl get -o yaml|json`` shows it on a cluster: in the
version it was read in, with its defaulted fields (``podSets[].name: main``,
``count: 1``, ``queueingStrategy: BestEffortFIFO``), as ``kuota serve``
returns it. The structs omit defaults when encoded (manifests and the journal
stay small); a stored object on a cluster carries them."""

from __future__ import annotations

from typing import Any

from kuota.api.decode import REGISTRY
from kuota.server.wireform import full_builtins


def served_form(obj: Any) -> dict[str, Any]:
    info = REGISTRY.get((obj.api_version, obj.kind))
    body: dict[str, Any] = full_builtins(obj if info is None else info.from_internal(obj))
    body.pop("apiVersion", None)
    body.pop("kind", None)
    if info is None:
        # Kinds the control plane writes but never reads from files (Events).
        return {"apiVersion": obj.api_version, "kind": obj.kind, **body}
    return {"apiVersion": info.api_version, "kind": info.kind, **body}
