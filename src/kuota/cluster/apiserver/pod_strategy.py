"""The pod registry's create strategy, as one store admission hook: a pod
created with scheduling gates gets ``PodScheduled=False`` reason
``SchedulingGated`` (``applySchedulingGatedCondition`` in
``pkg/registry/core/pod/strategy.go``, kubernetes/kubernetes, 1.27+).

The API server applies it in ``PrepareForCreate``, after every mutating
admission webhook, so the gates a webhook adds (Kueue's
``kueue.x-k8s.io/admission``) count: register this hook after them. The
condition stays until kube-scheduler writes its own ``PodScheduled`` (True
when it binds the pod, ``Unschedulable`` when it fits nowhere) once the last
gate is gone; ``kubectl get pods`` reads it to print ``SchedulingGated``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Final

import msgspec

from kuota.api.core import PodStatus
from kuota.cluster.podutil import POD, get_pod_condition, set_pod_condition

__all__ = ["SCHEDULING_GATED", "SCHEDULING_GATED_MESSAGE", "SchedulingGatedCondition"]

SCHEDULING_GATED: Final = "SchedulingGated"  # v1.PodReasonSchedulingGated
SCHEDULING_GATED_MESSAGE: Final = "Scheduling is blocked due to non-empty scheduling gates"


class SchedulingGatedCondition:
    """On Pod creation: a gated pod without a ``PodScheduled`` condition gets
    ``PodScheduled=False``/``SchedulingGated``, stamped ``now()``."""

    kinds = frozenset({POD})
    operations = frozenset({"CREATE"})

    def __init__(self, now: Callable[[], datetime]) -> None:
        self.now = now

    def __call__(self, op: str, new: Any, old: Any | None) -> Any:
        if op != "CREATE" or new.kind != "Pod" or new.spec is None:
            return new
        if not new.spec.scheduling_gates or get_pod_condition(new, "PodScheduled") is not None:
            return new
        # A private status: the hook may be handed one shared with the caller.
        status = (
            msgspec.structs.replace(new.status, conditions=list(new.status.conditions or ()))
            if new.status is not None
            else PodStatus(phase="Pending")
        )
        set_pod_condition(
            status,
            "PodScheduled",
            "False",
            self.now(),
            SCHEDULING_GATED,
            SCHEDULING_GATED_MESSAGE,
        )
        return msgspec.structs.replace(new, status=status)
