"""kuota's own ``kuota.dev/v1alpha1`` NodeGroup: a group of identical nodes the
embedded cluster-autoscaler may add and remove (cluster-autoscaler's "node
group": a cloud instance group or node pool). It is what makes Kueue's
ProvisioningRequest admission check act in a world: scale-ups take
``provisioningDelay``, a share of them fail, idle nodes go after
``scaleDownUnneededTime``."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Final

import msgspec
from msgspec import Meta

from kuota.api import names
from kuota.api.base import Object
from kuota.api.errors import FieldError, invalid, required
from kuota.api.k8s.corev1 import NodeSpec, NodeStatus, StrList
from kuota.api.k8s.validation.objectmeta import validate_labels, validate_object_meta
from kuota.api.kueue.config.durations import parse_duration_ns
from kuota.api.meta import ObjectMeta

__all__ = [
    "GROUP",
    "KIND",
    "NODE_GROUP_LABEL",
    "NodeGroup",
    "NodeGroupSpec",
    "NodeGroupStatus",
    "PendingScaleUp",
    "duration_of",
    "validate_node_group",
]

GROUP: Final = "kuota.dev"
API_VERSION: Final = f"{GROUP}/v1alpha1"
KIND: Final = "NodeGroup"
# On every node of a group (as GKE's cloud.google.com/gke-nodepool).
NODE_GROUP_LABEL: Final = "kuota.dev/node-group"

Int32 = Annotated[int, Meta(ge=0, le=2**31 - 1)]


class NodeTemplate(Object):
    """The nodes the group adds: labels, taints and resources as a Node has them."""

    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: NodeSpec | None = None
    status: NodeStatus | None = None


class NodeGroupSpec(Object):
    max_size: Int32
    template: NodeTemplate
    min_size: Int32 = 0
    # Go durations: from the scale-up request to the node's registration, and
    # how long a node stays empty before it is removed (cluster-autoscaler's
    # --scale-down-unneeded-time, 10m by default).
    provisioning_delay: str = "2m"
    scale_down_unneeded_time: str = "10m"
    # The share of scale-ups whose nodes never come (a stock-out), chosen by
    # the request's name so a run decides the same each time.
    failure_percent: Annotated[int, Meta(ge=0, le=100)] = 0


class PendingScaleUp(Object):
    """Nodes requested and not registered yet."""

    nodes: StrList
    ready_at: datetime
    request: str = ""  # namespace/name of the ProvisioningRequest it is for
    failed: bool = False  # a stock-out: the nodes never register


class NodeGroupStatus(Object):
    nodes: Int32 = 0  # registered nodes
    pending_scale_ups: list[PendingScaleUp] | None = None


class NodeGroup(Object):
    api_version: str
    kind: str
    spec: NodeGroupSpec
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    status: NodeGroupStatus | None = None


def duration_of(text: str) -> float:
    """Seconds of a Go duration the validation has accepted."""
    return parse_duration_ns(text) / 1e9


def validate_node_group(ng: NodeGroup) -> list[FieldError]:
    errs = validate_object_meta(ng.metadata, False, names.is_dns1123_subdomain)
    spec = ng.spec
    if spec.min_size > spec.max_size:
        errs.append(
            invalid("spec.minSize", spec.min_size, f"must be at most maxSize ({spec.max_size})")
        )
    for field, text in (
        ("provisioningDelay", spec.provisioning_delay),
        ("scaleDownUnneededTime", spec.scale_down_unneeded_time),
    ):
        try:
            if parse_duration_ns(text) < 0:
                errs.append(invalid(f"spec.{field}", text, "must not be negative"))
        except ValueError as err:
            errs.append(invalid(f"spec.{field}", text, str(err)))
    st = spec.template.status
    if st is None or not st.capacity:
        errs.append(required("spec.template.status.capacity", "the resources of each node"))
    errs += validate_labels(spec.template.metadata.labels, "spec.template.metadata.labels")
    return errs
