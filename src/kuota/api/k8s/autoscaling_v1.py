"""autoscaling/v1 HorizontalPodAutoscaler (``k8s.io/api/autoscaling/v1``), the
version ``kubectl autoscale`` writes, served over the stored autoscaling/v2
object as kube-apiserver converts them (``pkg/apis/autoscaling/v1/conversion.go``):
``targetCPUUtilizationPercentage`` is v2's cpu Utilization metric; what v1 has
no field for (other metrics, behavior, conditions, other current metrics)
travels in the ``autoscaling.alpha.kubernetes.io/*`` annotations, so a v1
read-modify-write keeps it. (Those annotations hold v2's JSON form here;
kube-apiserver writes the older v2beta1 form.)

Also v2's defaulting (``pkg/apis/autoscaling/v2/defaults.go``): minReplicas 1,
a cpu Utilization 80% metric when none is given, and a given behavior's
missing rules filled in."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Final

import msgspec

from kuota.api.base import Object
from kuota.api.errors import FieldError, child, invalid, required
from kuota.api.k8s import autoscaling as v2
from kuota.api.meta import ObjectMeta

__all__ = [
    "HorizontalPodAutoscalerV1",
    "default_hpa",
    "hpa_from_v2",
    "hpa_to_v2",
    "validate_hpa",
]

METRICS_ANNOTATION: Final = "autoscaling.alpha.kubernetes.io/metrics"
BEHAVIOR_ANNOTATION: Final = "autoscaling.alpha.kubernetes.io/behavior"
CONDITIONS_ANNOTATION: Final = "autoscaling.alpha.kubernetes.io/conditions"
CURRENT_METRICS_ANNOTATION: Final = "autoscaling.alpha.kubernetes.io/current-metrics"
_ANNOTATIONS: Final = (
    METRICS_ANNOTATION,
    BEHAVIOR_ANNOTATION,
    CONDITIONS_ANNOTATION,
    CURRENT_METRICS_ANNOTATION,
)
DEFAULT_CPU_UTILIZATION: Final = 80


class V1CrossVersionObjectReference(Object):
    kind: str
    name: str
    api_version: str | None = None


class V1HorizontalPodAutoscalerSpec(Object):
    scale_target_ref: V1CrossVersionObjectReference
    max_replicas: int
    min_replicas: int | None = None
    target_cpu_utilization_percentage: int | None = msgspec.field(
        default=None, name="targetCPUUtilizationPercentage"
    )


class V1HorizontalPodAutoscalerStatus(Object):
    observed_generation: int | None = None
    last_scale_time: datetime | None = None
    current_replicas: int = 0
    desired_replicas: int = 0
    current_cpu_utilization_percentage: int | None = msgspec.field(
        default=None, name="currentCPUUtilizationPercentage"
    )


class HorizontalPodAutoscalerV1(Object):
    api_version: str
    kind: str
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: V1HorizontalPodAutoscalerSpec = msgspec.field(
        default_factory=lambda: V1HorizontalPodAutoscalerSpec(
            scale_target_ref=V1CrossVersionObjectReference(kind="", name=""), max_replicas=0
        )
    )
    status: V1HorizontalPodAutoscalerStatus | None = None


def _is_cpu_utilization(m: v2.MetricSpec) -> bool:
    r = m.resource
    return (
        m.type == "Resource"
        and r is not None
        and r.name == "cpu"
        and r.target.type == "Utilization"
        and r.target.average_utilization is not None
    )


def _cpu_metric(percent: int) -> v2.MetricSpec:
    return v2.MetricSpec(
        type="Resource",
        resource=v2.ResourceMetricSource(
            name="cpu", target=v2.MetricTarget(type="Utilization", average_utilization=percent)
        ),
    )


def _decode_list(text: str | None, typ: Any) -> list[Any]:
    if not text:
        return []
    try:
        return list(msgspec.json.decode(text, type=list[typ]))
    except (msgspec.DecodeError, msgspec.ValidationError):
        return []


def hpa_to_v2(o: HorizontalPodAutoscalerV1) -> v2.HorizontalPodAutoscaler:
    ann = dict(o.metadata.annotations or {})
    others = _decode_list(ann.pop(METRICS_ANNOTATION, None), v2.MetricSpec)
    behavior: v2.HorizontalPodAutoscalerBehavior | None = None
    text = ann.pop(BEHAVIOR_ANNOTATION, None)
    if text:
        try:
            behavior = msgspec.json.decode(text, type=v2.HorizontalPodAutoscalerBehavior)
        except (msgspec.DecodeError, msgspec.ValidationError):
            behavior = None
    conditions = _decode_list(
        ann.pop(CONDITIONS_ANNOTATION, None), v2.HorizontalPodAutoscalerCondition
    )
    current = _decode_list(ann.pop(CURRENT_METRICS_ANNOTATION, None), v2.MetricStatus)
    s = o.spec
    metrics = list(others)
    if s.target_cpu_utilization_percentage is not None:
        metrics.insert(0, _cpu_metric(s.target_cpu_utilization_percentage))
    ref = s.scale_target_ref
    status = None
    if o.status is not None:
        st = o.status
        if st.current_cpu_utilization_percentage is not None:
            current.insert(
                0,
                v2.MetricStatus(
                    type="Resource",
                    resource=v2.ResourceMetricStatus(
                        name="cpu",
                        current=v2.MetricValueStatus(
                            average_utilization=st.current_cpu_utilization_percentage
                        ),
                    ),
                ),
            )
        status = v2.HorizontalPodAutoscalerStatus(
            observed_generation=st.observed_generation,
            last_scale_time=st.last_scale_time,
            current_replicas=st.current_replicas,
            desired_replicas=st.desired_replicas,
            current_metrics=current or None,
            conditions=conditions or None,
        )
    meta = msgspec.structs.replace(o.metadata, annotations=ann or None)
    return v2.HorizontalPodAutoscaler(
        api_version="autoscaling/v2",
        kind="HorizontalPodAutoscaler",
        metadata=meta,
        spec=v2.HorizontalPodAutoscalerSpec(
            scale_target_ref=v2.CrossVersionObjectReference(
                kind=ref.kind, name=ref.name, api_version=ref.api_version
            ),
            max_replicas=s.max_replicas,
            min_replicas=s.min_replicas,
            metrics=metrics or None,
            behavior=behavior,
        ),
        status=status,
    )


def _json(value: Any) -> str:
    return json.dumps(msgspec.to_builtins(value), separators=(",", ":"))


def hpa_from_v2(o: v2.HorizontalPodAutoscaler) -> HorizontalPodAutoscalerV1:
    ann = dict(o.metadata.annotations or {})
    for k in _ANNOTATIONS:
        ann.pop(k, None)
    s = o.spec
    target: int | None = None
    others: list[v2.MetricSpec] = []
    for m in s.metrics or ():
        if target is None and _is_cpu_utilization(m):
            assert m.resource is not None
            target = m.resource.target.average_utilization
        else:
            others.append(m)
    if others:
        ann[METRICS_ANNOTATION] = _json(others)
    if s.behavior is not None:
        ann[BEHAVIOR_ANNOTATION] = _json(s.behavior)
    status = None
    if o.status is not None:
        st = o.status
        current: int | None = None
        rest: list[v2.MetricStatus] = []
        for ms in st.current_metrics or ():
            r = ms.resource
            if (
                current is None
                and ms.type == "Resource"
                and r is not None
                and r.name == "cpu"
                and r.current.average_utilization is not None
            ):
                current = r.current.average_utilization
            else:
                rest.append(ms)
        if rest:
            ann[CURRENT_METRICS_ANNOTATION] = _json(rest)
        if st.conditions:
            ann[CONDITIONS_ANNOTATION] = _json(st.conditions)
        status = V1HorizontalPodAutoscalerStatus(
            observed_generation=st.observed_generation,
            last_scale_time=st.last_scale_time,
            current_replicas=st.current_replicas or 0,
            desired_replicas=st.desired_replicas,
            current_cpu_utilization_percentage=current,
        )
    ref = s.scale_target_ref
    return HorizontalPodAutoscalerV1(
        api_version="autoscaling/v1",
        kind="HorizontalPodAutoscaler",
        metadata=msgspec.structs.replace(o.metadata, annotations=ann or None),
        spec=V1HorizontalPodAutoscalerSpec(
            scale_target_ref=V1CrossVersionObjectReference(
                kind=ref.kind, name=ref.name, api_version=ref.api_version
            ),
            max_replicas=s.max_replicas,
            min_replicas=s.min_replicas,
            target_cpu_utilization_percentage=target,
        ),
        status=status,
    )


# ------------------------------------------------------------------ defaults
def _scale_up_defaults() -> v2.HPAScalingRules:
    return v2.HPAScalingRules(
        stabilization_window_seconds=0,
        select_policy="Max",
        policies=[
            v2.HPAScalingPolicy(type="Pods", value=4, period_seconds=15),
            v2.HPAScalingPolicy(type="Percent", value=100, period_seconds=15),
        ],
    )


def _scale_down_defaults() -> v2.HPAScalingRules:
    return v2.HPAScalingRules(
        select_policy="Max",
        policies=[v2.HPAScalingPolicy(type="Percent", value=100, period_seconds=15)],
    )


def _fill(rules: v2.HPAScalingRules | None, base: v2.HPAScalingRules) -> v2.HPAScalingRules:
    """``GenerateHPAScaleUpRules``/``...ScaleDownRules``: the given fields, the
    defaults' for the rest."""
    if rules is None:
        return base
    return v2.HPAScalingRules(
        stabilization_window_seconds=(
            rules.stabilization_window_seconds
            if rules.stabilization_window_seconds is not None
            else base.stabilization_window_seconds
        ),
        select_policy=rules.select_policy or base.select_policy,
        policies=rules.policies if rules.policies is not None else base.policies,
    )


def default_hpa(hpa: v2.HorizontalPodAutoscaler, gates: Any = None) -> None:
    """``SetDefaults_HorizontalPodAutoscaler`` (v2), in place (the object is the
    decoder's own)."""
    s = hpa.spec
    if s.min_replicas is None:
        s.min_replicas = 1
    if not s.metrics:
        s.metrics = [_cpu_metric(DEFAULT_CPU_UTILIZATION)]
    if s.behavior is not None:
        s.behavior = v2.HorizontalPodAutoscalerBehavior(
            scale_up=_fill(s.behavior.scale_up, _scale_up_defaults()),
            scale_down=_fill(s.behavior.scale_down, _scale_down_defaults()),
        )


# ------------------------------------------------------------------ validation
def validate_hpa(hpa: v2.HorizontalPodAutoscaler) -> list[FieldError]:
    """The parts of ``ValidateHorizontalPodAutoscaler`` a user meets first:
    the target reference, minReplicas >= 1 (no HPAScaleToZero gate),
    maxReplicas >= minReplicas (the metadata is checked on decoding)."""
    s, path = hpa.spec, "spec"
    errs: list[FieldError] = []
    ref, rp = s.scale_target_ref, child(path, "scaleTargetRef")
    if not ref.kind:
        errs.append(required(child(rp, "kind"), ""))
    if not ref.name:
        errs.append(required(child(rp, "name"), ""))
    if s.min_replicas is not None and s.min_replicas < 1:
        errs.append(
            invalid(
                child(path, "minReplicas"), s.min_replicas, "must be greater than or equal to 1"
            )
        )
    if s.max_replicas < 1:
        errs.append(invalid(child(path, "maxReplicas"), s.max_replicas, "must be greater than 0"))
    if s.min_replicas is not None and s.max_replicas < s.min_replicas:
        errs.append(
            invalid(
                child(path, "maxReplicas"),
                s.max_replicas,
                "must be greater than or equal to `minReplicas`",
            )
        )
    return errs
