"""What Kueue's pod integration reads and writes on a Pod (``pkg/controller/jobs/pod``
constants and ``pkg/util/pod``): the keys, the group a pod belongs to, its
role hash, its scheduling gate, and whether it is done."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Final

import msgspec

from kuota.api import k8s as kc
from kuota.api.quantity import Quantity
from kuota.controllers.jobframework import (
    LABEL_VALUE_MAX,
    PREBUILT_WORKLOAD,
    go_atoi,
)
from kuota.controllers.jobframework import prebuilt_name as prebuilt_name  # (the pod kinds' too)

SCHEDULING_GATE: Final = "kueue.x-k8s.io/admission"
TOPOLOGY_GATE: Final = "kueue.x-k8s.io/topology"
MANAGED: Final = "kueue.x-k8s.io/managed"  # label (value "true") and finalizer
MANAGED_VALUE: Final = "true"
GROUP_NAME: Final = "kueue.x-k8s.io/pod-group-name"  # label, or annotation
TOTAL_COUNT: Final = "kueue.x-k8s.io/pod-group-total-count"
FAST_ADMISSION: Final = "kueue.x-k8s.io/pod-group-fast-admission"
SERVING: Final = "kueue.x-k8s.io/pod-group-serving"
RETRIABLE_IN_GROUP: Final = "kueue.x-k8s.io/retriable-in-group"
ROLE_HASH: Final = "kueue.x-k8s.io/role-hash"
SUSPENDING_PARENT: Final = "kueue.x-k8s.io/pod-suspending-parent"
IS_GROUP_WORKLOAD: Final = "kueue.x-k8s.io/is-group-workload"
TERMINATION_TARGET: Final = "TerminationTarget"  # pod condition set before Kueue deletes it
MAX_ROLES: Final = 18  # jobframework.MaxPodSets


# ------------------------------------------------------------------ identity
def group_name(pod: Any, annotations: bool = True) -> str:
    """GetPodGroupName: the annotation first (with WorkloadIdentifierAnnotations),
    then the label."""
    m = pod.metadata
    if annotations:
        name = (m.annotations or {}).get(GROUP_NAME)
        if name:
            return name
    return (m.labels or {}).get(GROUP_NAME, "")


def group_name_path(pod: Any, annotations: bool = True) -> str:
    """Where the group name was read from, for error messages."""
    if annotations and (pod.metadata.annotations or {}).get(GROUP_NAME):
        return f"metadata.annotations[{GROUP_NAME}]"
    return f"metadata.labels[{GROUP_NAME}]"


def prebuilt_path(obj: Any, annotations: bool = True) -> str:
    ann = (obj.metadata.annotations or {}).get(PREBUILT_WORKLOAD, "")
    if ann and (annotations or len(ann) > LABEL_VALUE_MAX):
        return f"metadata.annotations[{PREBUILT_WORKLOAD}]"
    return f"metadata.labels[{PREBUILT_WORKLOAD}]"


def total_count(pod: Any, annotations: bool = True) -> int:
    """The group's total-count annotation (Pod.groupTotalCount); ValueError
    with Kueue's message when missing or not an integer ≥ 1."""
    if not group_name(pod, annotations):
        raise ValueError(f"pod doesn't have a '{GROUP_NAME}' label")
    raw = (pod.metadata.annotations or {}).get(TOTAL_COUNT)
    if raw is None:
        raise ValueError(f"failed to extract '{TOTAL_COUNT}' annotation")
    v = go_atoi(raw)
    if v < 1:
        raise ValueError(
            f"incorrect annotation value '{TOTAL_COUNT}={raw}': "
            "group total count should be greater than zero"
        )
    return v


def annotation(pod: Any, key: str) -> str:
    return (pod.metadata.annotations or {}).get(key, "")


def is_serving(pod: Any) -> bool:
    return annotation(pod, SERVING) == "true"


def is_fast_admission(pod: Any) -> bool:
    return annotation(pod, FAST_ADMISSION) == "true"


def is_unretriable(pod: Any) -> bool:
    return annotation(pod, RETRIABLE_IN_GROUP) == "false"


# ------------------------------------------------------------------ state
def phase(pod: Any) -> str:
    return (pod.status.phase if pod.status is not None else None) or "Pending"


def is_terminated(pod: Any) -> bool:
    return phase(pod) in ("Succeeded", "Failed")


def is_gated(pod: Any) -> bool:
    spec = pod.spec
    return spec is not None and any(g.name == SCHEDULING_GATE for g in spec.scheduling_gates or ())


def is_suspended(pod: Any) -> bool:
    """podSuspended: a pod that does not run because it ended or waits for admission."""
    return is_terminated(pod) or is_gated(pod)


def is_ready(pod: Any) -> bool:
    for c in (pod.status.conditions if pod.status is not None else None) or ():
        if c.type == "Ready":
            return c.status == "True"
    return False


def runnable_or_succeeded(pod: Any) -> bool:
    """isPodRunnableOrSucceeded: not Failed, and not deleted before it got a node."""
    if pod.metadata.deletion_timestamp is not None and not (pod.spec and pod.spec.node_name):
        return False
    return phase(pod) != "Failed"


def has_finalizer(pod: Any) -> bool:
    return MANAGED in (pod.metadata.finalizers or ())


def gate(spec: kc.PodSpec, name: str = SCHEDULING_GATE) -> None:
    """Add a gate, the admission gate by default (a spec of the caller's own)."""
    gates = list(spec.scheduling_gates or ())
    if not any(g.name == name for g in gates):
        gates.append(kc.PodSchedulingGate(name=name))
    spec.scheduling_gates = gates


def ungate(spec: kc.PodSpec, *names: str) -> None:
    gates = [g for g in spec.scheduling_gates or () if g.name not in names]
    spec.scheduling_gates = gates or None


# ------------------------------------------------------------------ role hash
def role_hash(pod: Any) -> str:
    """getRoleHash: the role-hash annotation, else the hash of the spec's shape."""
    given = (pod.metadata.annotations or {}).get(ROLE_HASH)
    if given is not None:
        return given
    return spec_role_hash(pod.spec)


def spec_role_hash(spec: kc.PodSpec | None) -> str:
    """utilpod.GenerateRoleHash: the first 8 hex digits of the sha256 of the
    JSON of the spec's shape, as Go's encoding/json writes it (map keys
    sorted, struct fields in Go's order, empty optional fields left out):
    the same pod gives Kueue's hash."""
    shape = {"spec": spec_shape(spec)}
    text = json.dumps(shape, separators=(",", ":"), ensure_ascii=False)
    # encoding/json escapes these for HTML safety.
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(ch, esc)
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def spec_shape(spec: kc.PodSpec | None) -> dict[str, Any]:
    """utilpod.SpecShape: what decides a pod's admission (requests, ports,
    placement constraints, priority), keyed as Go keys its map."""
    s = spec if spec is not None else kc.PodSpec(containers=[])
    shape: dict[str, Any] = {
        "affinity": _go(s.affinity),
        "containers": _containers_shape(s.containers),
        "initContainers": _containers_shape(s.init_containers),
        "nodeSelector": _go(s.node_selector),
        "overhead": _go(s.overhead),
        "priority": s.priority,
        "resourceClaims": _go(s.resource_claims),
        "runtimeClassName": s.runtime_class_name,
        "tolerations": _go(s.tolerations),
        "topologySpreadConstraints": _go(s.topology_spread_constraints),
    }
    # Pod-level resources count only when set (stable hashes for pods without).
    if s.resources is not None:
        shape["resources"] = _go(s.resources.requests)
    return dict(sorted(shape.items()))


def _containers_shape(containers: list[kc.Container] | None) -> list[dict[str, Any]] | None:
    if not containers:
        return None
    return [
        {
            "ports": _go(c.ports),
            "resources": {"requests": _go(c.resources.requests if c.resources else None)},
        }
        for c in containers
    ]


# Go's field order where kuota's structs declare theirs differently.
_GO_ORDER: Final[dict[type, tuple[str, ...]]] = {
    kc.ContainerPort: ("name", "host_port", "container_port", "protocol", "host_ip"),
    kc.PodAffinityTerm: (
        "label_selector",
        "namespaces",
        "topology_key",
        "namespace_selector",
        "match_label_keys",
        "mismatch_label_keys",
    ),
}


def _go(value: Any) -> Any:
    """A value as encoding/json writes it: maps with sorted keys, structs in
    their declared order without their empty optional fields."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Quantity):
        return str(value)
    if isinstance(value, dict):
        return {k: _go(value[k]) for k in sorted(value)}
    if isinstance(value, list | tuple):
        return [_go(v) for v in value]
    if isinstance(value, msgspec.Struct):
        fields = {f.name: f for f in msgspec.structs.fields(value)}
        out: dict[str, Any] = {}
        for name in _GO_ORDER.get(type(value), tuple(fields)):
            f = fields[name]
            v = getattr(value, name)
            required = f.required
            if not required and (v is None or v == "" or v == [] or v == {}):
                continue
            out[f.encode_name] = _go(v)
        return out
    return value
