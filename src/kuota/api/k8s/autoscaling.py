"""autoscaling/v2 HorizontalPodAutoscaler (``k8s.io/api/autoscaling/v2``):
every JSON field. kuota runs no autoscaler: the kind is stored so that a
business-group quota tree can charge what an HPA may scale its target to
(its ``maxReplicas``), as the production design it follows does."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec

from kuota.api.base import LIST_ATOMIC, Object, Quantity, list_map
from kuota.api.meta import ConditionStatus, LabelSelector, ObjectMeta

__all__ = ["GROUP", "CrossVersionObjectReference", "HorizontalPodAutoscaler"]

GROUP = "autoscaling"

Int32 = Annotated[int, msgspec.Meta(ge=-(2**31), le=2**31 - 1)]


class CrossVersionObjectReference(Object):
    kind: str
    name: str
    api_version: str | None = None


class HPAScalingPolicy(Object):
    type: str
    value: Int32
    period_seconds: Int32


class HPAScalingRules(Object):
    stabilization_window_seconds: Int32 | None = None
    select_policy: str | None = None
    policies: Annotated[list[HPAScalingPolicy], LIST_ATOMIC] | None = None


class HorizontalPodAutoscalerBehavior(Object):
    scale_up: HPAScalingRules | None = None
    scale_down: HPAScalingRules | None = None


class MetricIdentifier(Object):
    name: str
    selector: LabelSelector | None = None


class MetricTarget(Object):
    type: str
    value: Quantity | None = None
    average_value: Quantity | None = None
    average_utilization: Int32 | None = None


class ObjectMetricSource(Object):
    described_object: CrossVersionObjectReference
    target: MetricTarget
    metric: MetricIdentifier


class PodsMetricSource(Object):
    metric: MetricIdentifier
    target: MetricTarget


class ResourceMetricSource(Object):
    name: str
    target: MetricTarget


class ContainerResourceMetricSource(Object):
    name: str
    target: MetricTarget
    container: str


class ExternalMetricSource(Object):
    metric: MetricIdentifier
    target: MetricTarget


class MetricSpec(Object):
    type: str
    object: ObjectMetricSource | None = None
    pods: PodsMetricSource | None = None
    resource: ResourceMetricSource | None = None
    container_resource: ContainerResourceMetricSource | None = None
    external: ExternalMetricSource | None = None


class HorizontalPodAutoscalerSpec(Object):
    scale_target_ref: CrossVersionObjectReference
    max_replicas: Int32
    min_replicas: Int32 | None = None
    metrics: Annotated[list[MetricSpec], LIST_ATOMIC] | None = None
    behavior: HorizontalPodAutoscalerBehavior | None = None


class MetricValueStatus(Object):
    value: Quantity | None = None
    average_value: Quantity | None = None
    average_utilization: Int32 | None = None


class ObjectMetricStatus(Object):
    metric: MetricIdentifier
    current: MetricValueStatus
    described_object: CrossVersionObjectReference


class PodsMetricStatus(Object):
    metric: MetricIdentifier
    current: MetricValueStatus


class ResourceMetricStatus(Object):
    name: str
    current: MetricValueStatus


class ContainerResourceMetricStatus(Object):
    name: str
    current: MetricValueStatus
    container: str


class ExternalMetricStatus(Object):
    metric: MetricIdentifier
    current: MetricValueStatus


class MetricStatus(Object):
    type: str
    object: ObjectMetricStatus | None = None
    pods: PodsMetricStatus | None = None
    resource: ResourceMetricStatus | None = None
    container_resource: ContainerResourceMetricStatus | None = None
    external: ExternalMetricStatus | None = None


class HorizontalPodAutoscalerCondition(Object):
    type: str
    status: ConditionStatus
    last_transition_time: datetime | None = None
    reason: str | None = None
    message: str | None = None


class HorizontalPodAutoscalerStatus(Object):
    desired_replicas: Int32 = 0
    observed_generation: int | None = None
    last_scale_time: datetime | None = None
    current_replicas: Int32 | None = None
    current_metrics: Annotated[list[MetricStatus], LIST_ATOMIC] | None = None
    conditions: Annotated[list[HorizontalPodAutoscalerCondition], list_map("type")] | None = None


class HorizontalPodAutoscaler(Object):
    api_version: str
    kind: str
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: HorizontalPodAutoscalerSpec = msgspec.field(
        default_factory=lambda: HorizontalPodAutoscalerSpec(
            scale_target_ref=CrossVersionObjectReference(kind="", name=""), max_replicas=0
        )
    )
    status: HorizontalPodAutoscalerStatus | None = None
