"""What admission writes into a job's pod templates and takes back out
(Kueue's ``pkg/podset``: ``Merge`` and ``RestorePodSpec``), for every job
kind's adapter."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kuota.api.k8s import PodTemplateSpec
from kuota.controllers.jobframework import PodSetInfo
from kuota.store import clone

__all__ = ["merge_into", "restored_template"]


def merge_into(template: PodTemplateSpec, info: PodSetInfo) -> None:
    """``podset.Merge``: the admission's labels, annotations, node selector
    and tolerations added to a pod template (in place)."""
    template.metadata.labels = {**(template.metadata.labels or {}), **info.labels} or None
    if info.annotations:
        template.metadata.annotations = {
            **(template.metadata.annotations or {}),
            **info.annotations,
        }
    spec = template.spec
    if spec is None:
        return
    if info.node_selector:
        spec.node_selector = {**(spec.node_selector or {}), **info.node_selector}
    tols = list(spec.tolerations or ())
    tols += [t for t in info.tolerations if t not in tols]
    spec.tolerations = tols or None


def restored_template(
    current: PodTemplateSpec, original: Any, keep_labels: Iterable[str] = ()
) -> PodTemplateSpec:
    """``podset.RestorePodSpec``: labels, annotations, nodeSelector,
    tolerations and scheduling gates back to the Workload's copy of the
    template; ``keep_labels`` are the kind's controller's own labels, left
    out of the podSet, which stay."""
    t = clone(current)
    t.metadata.labels = clone(original.metadata.labels)
    for k in keep_labels:
        v = (current.metadata.labels or {}).get(k)
        if v is not None:
            t.metadata.labels = {**(t.metadata.labels or {}), k: v}
    t.metadata.annotations = clone(original.metadata.annotations)
    if t.spec is not None and original.spec is not None:
        t.spec.node_selector = clone(original.spec.node_selector)
        t.spec.tolerations = clone(original.spec.tolerations)
        t.spec.scheduling_gates = clone(original.spec.scheduling_gates)
    return t
