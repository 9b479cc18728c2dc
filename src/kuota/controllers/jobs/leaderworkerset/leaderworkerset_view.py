"""What ``kuota describe leaderworkerset`` reads of a LeaderWorkerSet: its
groups, its pods, and the Workload of each group of a set Kueue manages."""

from __future__ import annotations

from typing import Any, Final

from kuota.api.lws import v1 as lw
from kuota.controllers.integration import SetView
from kuota.controllers.jobs.leaderworkerset.leaderworkerset_reconciler import group_workload_name
from kuota.controllers.jobs.leaderworkerset.leaderworkerset_webhook import FRAMEWORK, LWS
from kuota.controllers.jobs.pod import podmeta as pm
from kuota.store.protocol import ObjectStore

__all__ = ["VIEW"]

_W: Final = 20  # describe's label width


def _replicas(o: Any) -> str:
    st = o.status
    ready, updated = (st.ready_replicas, st.updated_replicas) if st is not None else (0, 0)
    return f"{o.spec.replicas} desired | {ready} ready | {updated} updated (groups)"


def _pods(store: ObjectStore, o: Any, pods: list[Any]) -> list[Any]:
    return [p for p in pods if (p.metadata.labels or {}).get(lw.SET_NAME_LABEL) == o.metadata.name]


def _expected(o: Any) -> list[tuple[str, str]]:
    # Kueue's webhook marks the worker template of a set it manages.
    template = o.spec.leader_worker_template.worker_template
    if pm.annotation(template, pm.SUSPENDING_PARENT) != FRAMEWORK:
        return []
    m = o.metadata
    return [
        (f"group {i}", group_workload_name(m.name, m.uid, str(i))) for i in range(o.spec.replicas)
    ]


def _extra(o: Any) -> list[str]:
    return [f"{'Group Size:':<{_W}}{o.spec.leader_worker_template.size}"]


VIEW: Final = SetView(
    "leaderworkerset", LWS, f"leaderworkersets.{lw.GROUP}", _replicas, _pods, _expected, _extra
)
