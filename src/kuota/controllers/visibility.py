"""Kueue's visibility API (``visibility.kueue.x-k8s.io`` v1beta1 and v1beta2):
the pending workloads of a ClusterQueue or LocalQueue in the order the
queue would try them (Kueue's ``PendingWorkloadsInfo``: the active heap in
queue order, then the inadmissible ones), with positions in the
ClusterQueue and the LocalQueue, priority and local queue name, each item
with kuota's one-line reason (``scheduler.explain``) as ``reason``.

A query of the Kueue controller's queues, served over HTTP by ``kuota serve``
(server/visibility.py) and by ``kuota controller``'s visibility server
(clustermode/visibility_server.py); refusals are VisibilityError, which each
server answers as a Status."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

GROUP = "visibility.kueue.x-k8s.io"
_DEFAULT_LIMIT = 1000
_NOT_FOUND = "the server could not find the requested resource"


class VisibilityError(Exception):
    """A request refused: its HTTP code, Status reason, message and details."""

    def __init__(
        self, code: int, reason: str, message: str, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details


def _not_found(resource: str, name: str) -> VisibilityError:
    return VisibilityError(
        404,
        "NotFound",
        f'{resource}.{GROUP} "{name}" not found',
        {"name": name, "group": GROUP, "kind": resource},
    )


def _ordered(queue: Any) -> list[Any]:
    """A ClusterQueue queue's pending WorkloadInfos in order: being scheduled,
    then active in queue order, then inadmissible (parked) in queue order."""
    ev = queue.eviction_timestamp
    active: list[tuple[Any, Any]] = []
    parked: list[tuple[Any, Any]] = []
    for key, (seq, info, group) in list(queue._queued.items()):
        entry = (*info.order_key(ev), seq, key)
        (parked if group.parked else active).append((entry, info))
    for key, info in queue.inadmissible.items():
        if key not in queue._queued:
            parked.append(((*info.order_key(ev), 0, key), info))
    active.sort(key=lambda x: x[0])
    parked.sort(key=lambda x: x[0])
    inflight = [i for k, i in queue.inflight.items() if k not in queue._queued]
    return inflight + [i for _, i in active] + [i for _, i in parked]


def _lq_name(info: Any) -> str:
    return str(info.obj.spec.queue_name or "")


def _item(core: Any, info: Any, pos_cq: int, pos_lq: int) -> dict[str, Any]:
    m = info.obj.metadata
    meta: dict[str, Any] = {"name": m.name, "namespace": m.namespace}
    if m.creation_timestamp is not None:
        meta["creationTimestamp"] = m.creation_timestamp.strftime("%Y-%m-%dT%H:%M:%SZ")
    if m.owner_references:
        meta["ownerReferences"] = [
            {"apiVersion": r.api_version, "kind": r.kind, "name": r.name, "uid": r.uid}
            for r in m.owner_references
        ]
    return {
        "metadata": meta,
        "priority": info.priority,
        "localQueueName": _lq_name(info),
        "positionInClusterQueue": pos_cq,
        "positionInLocalQueue": pos_lq,
        "reason": core.explain(info.key),
    }


def _int(query: Mapping[str, str], key: str, default: int) -> int:
    raw = query.get(key, "")
    if raw == "":
        return default
    try:
        v = int(raw)
    except ValueError:
        raise VisibilityError(
            400, "BadRequest", f"{key}: invalid value {raw!r}: must be an integer"
        ) from None
    if v < 0:
        raise VisibilityError(
            400, "BadRequest", f"{key}: invalid value {v}: must be greater than or equal to 0"
        )
    return v


def pending_workloads(
    core: Any,
    version: str,
    resource: str,
    namespace: str,
    name: str,
    sub: str,
    query: Mapping[str, str],
) -> dict[str, Any]:
    """The PendingWorkloadsSummary for ``clusterqueues/<name>/pendingworkloads``
    or ``namespaces/<ns>/localqueues/<name>/pendingworkloads`` from the Kueue
    controller's ``core`` (None: Kueue runs elsewhere, 503)."""
    if sub != "pendingworkloads" or not name or resource not in ("clusterqueues", "localqueues"):
        raise VisibilityError(404, "NotFound", _NOT_FOUND)
    if version not in ("v1beta1", "v1beta2"):
        raise VisibilityError(404, "NotFound", _NOT_FOUND)
    limit = _int(query, "limit", _DEFAULT_LIMIT)
    offset = _int(query, "offset", 0)
    if core is None:  # (kuota serve --without-kueue: Kueue runs in another process)
        raise VisibilityError(503, "ServiceUnavailable", "the visibility API is served by Kueue")
    state = core.state
    if resource == "clusterqueues":
        if name not in state.cq_objs:
            raise _not_found("clusterqueues", name)
        cq_name, lq_filter = name, None
    else:
        lq = state.lq_objs.get(f"{namespace}/{name}")
        if lq is None:
            raise _not_found("localqueues", name)
        cq_name, lq_filter = lq.spec.cluster_queue or "", (namespace, name)
    queue = state.queues.cqs.get(cq_name)
    ordered = _ordered(queue) if queue is not None else []
    per_lq: dict[tuple[str, str], int] = {}
    items: list[tuple[int, int, Any]] = []
    for pos_cq, info in enumerate(ordered):
        lqk = (info.namespace, _lq_name(info))
        pos_lq = per_lq.get(lqk, 0)
        per_lq[lqk] = pos_lq + 1
        if lq_filter is not None and lqk != lq_filter:
            continue
        items.append((pos_cq, pos_lq, info))
    page = items[offset : offset + limit]
    return {
        "kind": "PendingWorkloadsSummary",
        "apiVersion": f"{GROUP}/{version}",
        "metadata": {"creationTimestamp": None},
        "items": [_item(core, info, pc, pl) for pc, pl, info in page],
    }
