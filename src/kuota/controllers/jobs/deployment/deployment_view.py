"""What ``kuota describe deployment`` reads of a Deployment: its replicas as
``oc describe`` counts them, and its pods (through its ReplicaSets)."""

from __future__ import annotations

from typing import Any, Final

from kuota.controllers.integration import SetView, controlled_by
from kuota.controllers.jobs.deployment.deployment_webhook import DEPLOYMENT
from kuota.store.protocol import ObjectStore
from kuota.store.resources import REPLICA_SET

__all__ = ["VIEW"]


def _replicas(d: Any) -> str:
    st = d.status
    total, updated, available, unavailable = (
        (
            st.replicas or 0,
            st.updated_replicas or 0,
            st.available_replicas or 0,
            st.unavailable_replicas or 0,
        )
        if st is not None
        else (0, 0, 0, 0)
    )
    return (
        f"{d.spec.replicas} desired | {updated} updated | {total} total | "
        f"{available} available | {unavailable} unavailable"
    )


def _pods(store: ObjectStore, d: Any, pods: list[Any]) -> list[Any]:
    rs = store.list(REPLICA_SET, d.metadata.namespace).items
    mine = {r.metadata.uid for r in controlled_by(rs, {d.metadata.uid})}
    return controlled_by(pods, mine)


VIEW: Final = SetView("deployment", DEPLOYMENT, "deployments.apps", _replicas, _pods, lambda d: [])
