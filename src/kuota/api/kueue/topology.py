"""Kueue's ``Topology`` kind (topology-aware scheduling): the levels of a
cluster's topology, each named by the node label that carries it, outermost
first. v1beta2 is stored; v1beta1 is served with its stricter rule (levels
immutable). Markers and CEL rules of ``apis/kueue/v1beta{1,2}/topology_types.go``
at Kueue ff69552e; the annotations a job's pod template carries to ask for
placement on topology domains."""

from __future__ import annotations

from typing import Annotated, Any, Final

import msgspec

from kuota.api.base import LIST_ATOMIC, Meta, Object, Rule, cel, pattern
from kuota.api.meta import ObjectMeta

GROUP: Final = "kueue.x-k8s.io"
V1BETA1: Final = f"{GROUP}/v1beta1"
V1BETA2: Final = f"{GROUP}/v1beta2"
HOSTNAME: Final = "kubernetes.io/hostname"

# The pod-set annotations (topology_types.go's constants).
REQUIRED: Final = "kueue.x-k8s.io/podset-required-topology"
PREFERRED: Final = "kueue.x-k8s.io/podset-preferred-topology"
UNCONSTRAINED: Final = "kueue.x-k8s.io/podset-unconstrained-topology"
SLICE_REQUIRED: Final = "kueue.x-k8s.io/podset-slice-required-topology"
SLICE_SIZE: Final = "kueue.x-k8s.io/podset-slice-size"
# TASMultiLayerTopology: up to three slice layers, outermost first, as JSON.
SLICE_CONSTRAINTS: Final = "kueue.x-k8s.io/podset-slice-required-topology-constraints"
GROUP_NAME: Final = "kueue.x-k8s.io/podset-group-name"
TOPOLOGY_GATE: Final = "kueue.x-k8s.io/topology"
WORKLOAD_ANNOTATION: Final = "kueue.x-k8s.io/workload"
# Kueue's TASLabel: a pod Kueue placed on a topology domain (its usage is the
# workload's, not counted again as a non-TAS pod).
TAS_LABEL: Final = "kueue.x-k8s.io/tas"

_NODE_LABEL_RE: Final = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
)


class TopologyLevel(Object, kw_only=True):
    node_label: Annotated[str, Meta(min_length=1, max_length=316), pattern(_NODE_LABEL_RE)]


def _unique(levels: list[TopologyLevel]) -> bool:
    labels = [lv.node_label for lv in levels]
    return len(set(labels)) == len(labels)


def _hostname_lowest(levels: list[TopologyLevel]) -> bool:
    return all(lv.node_label != HOSTNAME for lv in levels[:-1])


def _hostname_last(levels: list[TopologyLevel]) -> bool:
    return bool(levels) and levels[-1].node_label == HOSTNAME


_UNIQUE = Rule(
    "size(self.filter(i, size(self.filter(j, j == i)) > 1)) == 0",
    "must be unique",
    _unique,
)
_HOSTNAME = Rule(
    "size(self.filter(i, i.nodeLabel == 'kubernetes.io/hostname')) == 0 || "
    "self[size(self) - 1].nodeLabel == 'kubernetes.io/hostname'",
    "the kubernetes.io/hostname label can only be used at the lowest level of topology",
    _hostname_lowest,
)
_MUTABLE_V2 = Rule(
    "self == oldSelf || (self[size(self) - 1].nodeLabel == 'kubernetes.io/hostname' && "
    "oldSelf[size(oldSelf) - 1].nodeLabel == 'kubernetes.io/hostname')",
    "levels are mutable only when kubernetes.io/hostname is the lowest level both before "
    "and after the change",
    lambda _: True,
    transition=lambda new, old: new == old or (_hostname_last(new) and _hostname_last(old)),
)
_IMMUTABLE_V1 = Rule(
    "self == oldSelf",
    "field is immutable",
    lambda _: True,
    transition=lambda new, old: new == old,
)

Levels = Annotated[
    list[TopologyLevel],
    Meta(min_length=1, max_length=16),
    LIST_ATOMIC,
    cel(_MUTABLE_V2, _UNIQUE, _HOSTNAME),
]
LevelsV1 = Annotated[
    list[TopologyLevel],
    Meta(min_length=1, max_length=16),
    LIST_ATOMIC,
    cel(_IMMUTABLE_V1, _UNIQUE, _HOSTNAME),
]


class TopologySpec(Object, kw_only=True):
    levels: Levels


class TopologySpecV1(Object, kw_only=True):
    levels: LevelsV1


class Topology(Object, kw_only=True):
    api_version: str = V1BETA2
    kind: str = "Topology"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: TopologySpec

    def level_labels(self) -> list[str]:
        return [lv.node_label for lv in self.spec.levels]


class TopologyV1(Object, kw_only=True):
    api_version: str = V1BETA1
    kind: str = "Topology"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: TopologySpecV1


def topology_to_internal(o: TopologyV1) -> Topology:
    levels = [TopologyLevel(node_label=lv.node_label) for lv in o.spec.levels]
    return Topology(metadata=o.metadata, spec=TopologySpec(levels=levels))


def topology_from_internal(o: Topology) -> TopologyV1:
    levels = [TopologyLevel(node_label=lv.node_label) for lv in o.spec.levels]
    return TopologyV1(metadata=o.metadata, spec=TopologySpecV1(levels=levels))


def is_tas_pod(pod: Any) -> bool:
    """utiltas.IsTAS: the pod carries a topology annotation."""
    ann = pod.metadata.annotations or {}
    keys = (REQUIRED, PREFERRED, SLICE_REQUIRED, SLICE_CONSTRAINTS, UNCONSTRAINED)
    return any(k in ann for k in keys)


def validate_topology(*_: Any) -> list[Any]:
    """Kueue has no webhook for Topology: the CRD's schema and rules are all."""
    return []
