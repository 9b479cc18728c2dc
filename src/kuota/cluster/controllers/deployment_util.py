"""What the Deployment controller computes without writing, after
Kubernetes' ``pkg/controller/deployment/util`` and the status parts of
``sync.go`` and ``progress.go``: maxSurge and maxUnavailable, a ReplicaSet's
size, revision and age, the Deployment's conditions, how far a new set may
grow, each set's share of a scaling event, and the status the sets add up to.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import msgspec

from kuota.api.conditions import find
from kuota.api.k8s import PodTemplateSpec
from kuota.api.k8s.apps import (
    DEPLOYMENT_REVISION,
    POD_TEMPLATE_HASH,
    Deployment,
    DeploymentCondition,
    DeploymentStatus,
    ReplicaSet,
)
from kuota.cluster.controllers.appsutil import scaled_value
from kuota.store.resources import DEPLOYMENT

__all__ = [
    "AVAILABLE",
    "DEPLOYMENT",
    "DESIRED_REPLICAS",
    "FOUND_NEW_RS",
    "MAX_REPLICAS",
    "MIN_AVAILABLE",
    "MIN_UNAVAILABLE",
    "NEW_RS_AVAILABLE",
    "NEW_RS_CREATED",
    "PAUSED",
    "PROGRESSING",
    "RESUMED",
    "RS_UPDATED",
    "TIMED_OUT",
    "annotation_int",
    "calculate_status",
    "deployment_complete",
    "get_condition",
    "is_rolling",
    "is_scaling_event",
    "larger_newer_first",
    "larger_older_first",
    "max_surge",
    "max_unavailable",
    "new_condition",
    "new_rs_replicas",
    "proportion",
    "rs_available",
    "rs_creation_key",
    "rs_replicas",
    "rs_revision",
    "same_template",
    "set_condition",
    "timed_out",
]

DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"

AVAILABLE = "Available"
PROGRESSING = "Progressing"
MIN_AVAILABLE = "MinimumReplicasAvailable"
MIN_UNAVAILABLE = "MinimumReplicasUnavailable"
NEW_RS_CREATED = "NewReplicaSetCreated"
FOUND_NEW_RS = "FoundNewReplicaSet"
RS_UPDATED = "ReplicaSetUpdated"
NEW_RS_AVAILABLE = "NewReplicaSetAvailable"
TIMED_OUT = "ProgressDeadlineExceeded"
PAUSED = "DeploymentPaused"
RESUMED = "DeploymentResumed"


# ------------------------------------------------------------ surge and unavailability
def _fenceposts(d: Deployment) -> tuple[int, int]:
    """``ResolveFenceposts``: (surge, unavailable); both 0 would deadlock, so
    unavailable is then 1."""
    assert d.spec is not None
    ru = d.spec.strategy.rolling_update
    if ru is None:
        return 0, 1
    surge = scaled_value(ru.max_surge, d.spec.replicas, True)
    unavailable = scaled_value(ru.max_unavailable, d.spec.replicas, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def is_rolling(d: Deployment) -> bool:
    assert d.spec is not None
    return d.spec.strategy.type == "RollingUpdate"


def max_unavailable(d: Deployment) -> int:
    """``MaxUnavailable``: how many of ``replicas`` may be unavailable."""
    assert d.spec is not None
    if not is_rolling(d) or d.spec.replicas == 0:
        return 0
    return min(_fenceposts(d)[1], d.spec.replicas)


def max_surge(d: Deployment) -> int:
    """``MaxSurge``: how many pods above ``replicas`` may exist."""
    return _fenceposts(d)[0] if is_rolling(d) else 0


# ------------------------------------------------------------ replica set helpers
def rs_replicas(rs: ReplicaSet) -> int:
    return rs.spec.replicas if rs.spec is not None else 0


def rs_available(rs: ReplicaSet) -> int:
    return (rs.status.available_replicas or 0) if rs.status is not None else 0


def annotation_int(obj: Any, key: str) -> int | None:
    raw = (obj.metadata.annotations or {}).get(key)
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None


def rs_revision(rs: ReplicaSet) -> int:
    return annotation_int(rs, DEPLOYMENT_REVISION) or 0


def rs_creation_key(rs: ReplicaSet) -> tuple[float, str]:
    """``ReplicaSetsByCreationTimestamp``: oldest first, then by name."""
    ts = rs.metadata.creation_timestamp
    return (ts.timestamp() if ts is not None else 0.0, rs.metadata.name)


def larger_newer_first(rs: ReplicaSet) -> tuple[int, float, str]:
    """``ReplicaSetsBySizeNewer``."""
    ts, name = rs_creation_key(rs)
    return (-rs_replicas(rs), -ts, name)


def larger_older_first(rs: ReplicaSet) -> tuple[int, float, str]:
    """``ReplicaSetsBySizeOlder``."""
    ts, name = rs_creation_key(rs)
    return (-rs_replicas(rs), ts, name)


def _without_hash(t: PodTemplateSpec) -> PodTemplateSpec:
    labels = t.metadata.labels
    if not labels or POD_TEMPLATE_HASH not in labels:
        return t
    rest = {k: v for k, v in labels.items() if k != POD_TEMPLATE_HASH}
    meta = msgspec.structs.replace(t.metadata, labels=rest or None)
    return msgspec.structs.replace(t, metadata=meta)


def same_template(a: PodTemplateSpec, b: PodTemplateSpec) -> bool:
    """``EqualIgnoreHash``: equal but for the pod-template-hash label."""
    return _without_hash(a) == _without_hash(b)


def deployment_complete(d: Deployment, st: DeploymentStatus | None) -> bool:
    """``DeploymentComplete``: every replica updated and available."""
    assert d.spec is not None
    if st is None:
        return False
    n = d.spec.replicas
    return (
        (st.updated_replicas or 0) == n
        and (st.replicas or 0) == n
        and (st.available_replicas or 0) == n
        and (st.observed_generation or 0) >= d.metadata.generation
    )


def get_condition(st: DeploymentStatus | None, ctype: str) -> DeploymentCondition | None:
    return find(st.conditions if st is not None else None, ctype)


def set_condition(st: DeploymentStatus, cond: DeploymentCondition) -> None:
    """``SetDeploymentCondition``: unchanged when status and reason are; the
    transition time kept when only the reason moves; the condition goes last."""
    old = get_condition(st, cond.type)
    if old is not None and old.status == cond.status and old.reason == cond.reason:
        return
    if old is not None and old.status == cond.status:
        cond = msgspec.structs.replace(cond, last_transition_time=old.last_transition_time)
    st.conditions = [c for c in st.conditions or () if c.type != cond.type] + [cond]


def new_condition(
    ctype: str, status: str, reason: str, msg: str, now: datetime
) -> DeploymentCondition:
    return DeploymentCondition(
        type=ctype,
        status=status,  # type: ignore[arg-type]
        last_update_time=now,
        last_transition_time=now,
        reason=reason,
        message=msg,
    )


# ------------------------------------------------------------ sizes and status
def new_rs_replicas(d: Deployment, sets: Sequence[ReplicaSet], new: ReplicaSet) -> int:
    """``NewRSNewReplicas``: how far the new set may grow now."""
    assert d.spec is not None
    if not is_rolling(d):
        return d.spec.replicas
    current = sum(rs_replicas(rs) for rs in sets if rs is not new) + rs_replicas(new)
    most = d.spec.replicas + max_surge(d)
    if current >= most:
        return rs_replicas(new)
    return rs_replicas(new) + min(most - current, d.spec.replicas - rs_replicas(new))


def is_scaling_event(d: Deployment, sets: list[ReplicaSet]) -> bool:
    """``isScalingEvent``: an active set was sized for another ``replicas``."""
    assert d.spec is not None
    for rs in sets:
        if rs_replicas(rs) > 0:
            desired = annotation_int(rs, DESIRED_REPLICAS)
            if desired is not None and desired != d.spec.replicas:
                return True
    return False


def proportion(d: Deployment, rs: ReplicaSet, to_add: int, added: int) -> int:
    """``getProportion``: the set's share of the change, within what is left."""
    assert d.spec is not None
    if rs_replicas(rs) == 0 or to_add == 0 or to_add == added:
        return 0
    if d.spec.replicas == 0:
        fraction = -rs_replicas(rs)
    else:
        sized_for = annotation_int(rs, MAX_REPLICAS)
        if sized_for is None:
            sized_for = (d.status.replicas or 0) if d.status is not None else 0
        if sized_for <= 0:
            return 0
        exact = rs_replicas(rs) * (d.spec.replicas + max_surge(d)) / sized_for
        fraction = math.floor(exact + 0.5) - rs_replicas(rs)  # Go's math.Round
    left = to_add - added
    return min(fraction, left) if to_add > 0 else max(fraction, left)


def calculate_status(
    d: Deployment, sets: Sequence[ReplicaSet], new: ReplicaSet | None, now: datetime
) -> DeploymentStatus:
    """``calculateStatus``: the sets' counts summed, and Available."""
    assert d.spec is not None
    old = d.status
    available = sum(rs_available(rs) for rs in sets)
    total = sum(rs_replicas(rs) for rs in sets)

    def actual(rs: ReplicaSet) -> int:
        return rs.status.replicas if rs.status is not None else 0

    st = DeploymentStatus(
        observed_generation=d.metadata.generation,
        replicas=sum(actual(rs) for rs in sets),
        updated_replicas=actual(new) if new is not None else 0,
        ready_replicas=sum((rs.status.ready_replicas or 0) if rs.status else 0 for rs in sets),
        available_replicas=available,
        unavailable_replicas=max(total - available, 0),
        conditions=list(old.conditions) if old is not None and old.conditions else None,
        collision_count=old.collision_count if old is not None else None,
    )
    if available >= d.spec.replicas - max_unavailable(d):
        cond = new_condition(
            AVAILABLE, "True", MIN_AVAILABLE, "Deployment has minimum availability.", now
        )
    else:
        cond = new_condition(
            AVAILABLE,
            "False",
            MIN_UNAVAILABLE,
            "Deployment does not have minimum availability.",
            now,
        )
    set_condition(st, cond)
    return st


def timed_out(d: Deployment, cur: DeploymentCondition | None, now: datetime) -> bool:
    """``DeploymentTimedOut``: no progress for progressDeadlineSeconds."""
    assert d.spec is not None
    if cur is None or cur.reason == NEW_RS_AVAILABLE:
        return False
    if cur.reason == TIMED_OUT:
        return True
    since = cur.last_update_time
    return since is not None and since + timedelta(seconds=d.spec.progress_deadline_seconds) < now
