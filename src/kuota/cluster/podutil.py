"""Small pod and condition helpers shared by the embedded cluster's controllers
(the Python counterparts of Kubernetes' ``pkg/api/v1/pod`` helpers)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kuota.api.conditions import find
from kuota.api.k8s import Pod, PodCondition, PodStatus
from kuota.api.meta import OwnerReference, owner_reference
from kuota.store.resources import JOB, NODE, POD

__all__ = [
    "JOB",
    "NODE",
    "POD",
    "TERMINAL_PHASES",
    "controller_ref",
    "get_pod_condition",
    "is_deleting",
    "is_pod_ready",
    "is_terminal",
    "owner_reference",
    "pod_phase",
    "set_pod_condition",
]


TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})


def pod_phase(pod: Pod) -> str:
    """The pod's phase; a pod the API server has not given one yet is Pending."""
    st = pod.status
    return (st.phase if st is not None else None) or "Pending"


def is_terminal(pod: Pod) -> bool:
    return pod_phase(pod) in TERMINAL_PHASES


def is_deleting(obj: Any) -> bool:
    return obj.metadata.deletion_timestamp is not None


def get_pod_condition(pod: Pod, ctype: str) -> PodCondition | None:
    st = pod.status
    return find(st.conditions if st is not None else None, ctype)


def is_pod_ready(pod: Pod) -> bool:
    c = get_pod_condition(pod, "Ready")
    return c is not None and c.status == "True"


def set_pod_condition(
    status: PodStatus,
    ctype: str,
    cstatus: str,
    now: datetime,
    reason: str | None = None,
    message: str | None = None,
) -> bool:
    """``podutil.UpdatePodCondition`` on a private status: the transition time
    moves only when the status flips. Returns whether anything changed."""
    conds = status.conditions if status.conditions is not None else []
    for i, c in enumerate(conds):
        if c.type != ctype:
            continue
        if c.status == cstatus and c.reason == reason and c.message == message:
            return False
        moved = now if c.status != cstatus else c.last_transition_time
        conds[i] = PodCondition(
            type=ctype,
            status=cstatus,  # type: ignore[arg-type]
            last_transition_time=moved,
            reason=reason,
            message=message,
        )
        return True
    conds.append(
        PodCondition(
            type=ctype,
            status=cstatus,  # type: ignore[arg-type]
            last_transition_time=now,
            reason=reason,
            message=message,
        )
    )
    status.conditions = conds
    return True


def controller_ref(obj: Any) -> OwnerReference | None:
    """``metav1.GetControllerOf``: the owner reference marked controller."""
    for ref in obj.metadata.owner_references or ():
        if ref.controller:
            return ref
    return None


def controller_key(obj: Any, kind: str, api_version: str) -> str | None:
    """The work-queue key (``namespace/name``) of ``obj``'s controller when it
    is a ``kind`` of ``api_version``: the object a controller of that kind
    reconciles when ``obj`` changes."""
    ref = controller_ref(obj)
    if ref is None or ref.kind != kind or ref.api_version != api_version:
        return None
    return f"{obj.metadata.namespace}/{ref.name}"
