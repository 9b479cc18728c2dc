"""What the apps/v1 controllers (ReplicaSet, Deployment, StatefulSet) share:
pods made from a template with a controller reference, pod availability
(``podutil.IsPodAvailable``), the pods-by-owner index and the template hashes
that name ReplicaSets and StatefulSet revisions."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any

import msgspec

from kuota.api.base import enc_hook
from kuota.api.k8s import Pod, PodCondition, PodStatus, PodTemplateSpec
from kuota.api.meta import ObjectMeta
from kuota.cluster.podutil import (
    get_pod_condition,
    is_deleting,
    is_pod_ready,
    is_terminal,
    owner_reference,
)
from kuota.store import clone

__all__ = [
    "APPS_V1",
    "available_at",
    "canonical_json",
    "controller_index",
    "earliest",
    "fnv32",
    "fnv32a",
    "is_active",
    "is_available",
    "pod_from_template",
    "ready_available_at",
    "safe_encode",
    "scaled_value",
    "template_hash",
]

APPS_V1 = "apps/v1"

# rand.SafeEncodeString's alphabet: no vowels (no words), no 0/1/3 (no look-alikes).
_SAFE = "bcdfghjklmnpqrstvwxz2456789"
_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193


def fnv32(data: bytes) -> int:
    """FNV-1 (Go's ``fnv.New32``)."""
    h = _FNV_OFFSET
    for b in data:
        h = ((h * _FNV_PRIME) & 0xFFFFFFFF) ^ b
    return h


def fnv32a(data: bytes) -> int:
    """FNV-1a (Go's ``fnv.New32a``)."""
    h = _FNV_OFFSET
    for b in data:
        h = ((h ^ b) * _FNV_PRIME) & 0xFFFFFFFF
    return h


def safe_encode(text: str) -> str:
    """``rand.SafeEncodeString``: each byte mapped into the safe alphabet."""
    return "".join(_SAFE[ord(c) % len(_SAFE)] for c in text)


def canonical_json(obj: Any) -> bytes:
    """The object's wire form with sorted keys: equal objects, equal bytes
    (labels and annotations keep no insertion order into a hash)."""
    return msgspec.json.encode(msgspec.to_builtins(obj, enc_hook=enc_hook), order="sorted")


def template_hash(template: PodTemplateSpec, collision_count: int | None = None) -> str:
    """``controller.ComputeHash``: a Deployment's pod-template-hash (FNV-1a of
    the template, and of the collision count when there is one)."""
    data = canonical_json(template)
    if collision_count:
        data += str(collision_count).encode()
    return safe_encode(str(fnv32a(data)))


def scaled_value(value: int | str, total: int, round_up: bool) -> int:
    """``intstr.GetScaledValueFromIntOrPercent``: an int as it is, a percent
    of ``total`` rounded up or down (values are validated)."""
    if isinstance(value, int):
        return value
    exact = int(value.rstrip("%") or 0) * total / 100
    return math.ceil(exact) if round_up else math.floor(exact)


def controller_index(kind: str, api_version: str = APPS_V1) -> Callable[[Any], list[str]]:
    """An informer index: the uid of the object's controller of ``kind``."""

    def index(obj: Any) -> list[str]:
        for ref in obj.metadata.owner_references or ():
            if ref.controller and ref.kind == kind and ref.api_version == api_version:
                return [ref.uid]
        return []

    return index


def is_active(pod: Pod) -> bool:
    """``controller.IsPodActive``: not ended and not being deleted."""
    return not is_terminal(pod) and not is_deleting(pod)


def available_at(pod: Pod, min_ready_seconds: int) -> datetime | None:
    """When a Ready pod counts as available: ``minReadySeconds`` after its
    Ready condition turned True. None when it is not Ready or need not wait."""
    return ready_available_at(get_pod_condition(pod, "Ready"), min_ready_seconds)


def ready_available_at(ready: PodCondition | None, min_ready_seconds: int) -> datetime | None:
    """:func:`available_at` from the pod's Ready condition, already read."""
    if ready is None or ready.status != "True" or min_ready_seconds <= 0:
        return None
    since = ready.last_transition_time
    return since + timedelta(seconds=min_ready_seconds) if since is not None else None


def is_available(pod: Pod, min_ready_seconds: int, now: datetime) -> bool:
    """``podutil.IsPodAvailable``: Ready for at least ``minReadySeconds``."""
    if not is_pod_ready(pod):
        return False
    at = available_at(pod, min_ready_seconds)
    return at is None or at <= now


def pod_from_template(
    template: PodTemplateSpec,
    owner: Any,
    *,
    name: str = "",
    generate_name: str = "",
    labels: dict[str, str] | None = None,
) -> Pod:
    """``controller.GetPodFromTemplate``: the template's labels (plus
    ``labels``), annotations, finalizers and spec, controlled by ``owner``."""
    tmeta = template.metadata
    spec = clone(template.spec)
    assert spec is not None, "a validated template has a pod spec"
    return Pod(
        api_version="v1",
        kind="Pod",
        metadata=ObjectMeta(
            name=name,
            generate_name=generate_name,
            namespace=owner.metadata.namespace,
            labels={**(tmeta.labels or {}), **(labels or {})},
            annotations=dict(tmeta.annotations) if tmeta.annotations else None,
            finalizers=list(tmeta.finalizers) if tmeta.finalizers else None,
            owner_references=[owner_reference(owner)],
        ),
        spec=spec,
        status=PodStatus(phase="Pending"),
    )


def earliest(times: Iterable[datetime | None]) -> datetime | None:
    """The earliest of the times given (None: none was)."""
    return min((t for t in times if t is not None), default=None)
