"""What ``kuota describe statefulset`` reads of a StatefulSet: its replicas,
its pods, and the one Workload a set Kueue manages has."""

from __future__ import annotations

from typing import Any, Final

from kuota.controllers.integration import SetView, controlled_by
from kuota.controllers.jobs.pod import podmeta as pm
from kuota.controllers.jobs.statefulset.statefulset_webhook import (
    FRAMEWORK,
    STATEFULSET,
    workload_name,
)
from kuota.store.protocol import ObjectStore

__all__ = ["VIEW"]


def _replicas(s: Any) -> str:
    st = s.status
    total, ready = (st.replicas, st.ready_replicas or 0) if st is not None else (0, 0)
    return f"{s.spec.replicas} desired | {total} total | {ready} ready"


def _pods(store: ObjectStore, s: Any, pods: list[Any]) -> list[Any]:
    return controlled_by(pods, {s.metadata.uid})


def _expected(s: Any) -> list[tuple[str, str]]:
    # Kueue's webhook marks the pod template of a set it manages.
    if pm.annotation(s.spec.template, pm.SUSPENDING_PARENT) != FRAMEWORK:
        return []  # not Kueue's, or an LWS's (its pods name their group's Workload)
    return [("", workload_name(s))]


VIEW: Final = SetView("statefulset", STATEFULSET, "statefulsets.apps", _replicas, _pods, _expected)
