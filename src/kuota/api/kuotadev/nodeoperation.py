"""kuota's own ``kuota.dev/v1alpha1`` NodeOperation: an ``oc adm`` node operation
as a step of a world (its struct and the rules kuota checks it with on create)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal

import msgspec

from kuota.api import names
from kuota.api.base import Object
from kuota.api.errors import child, forbidden, index, invalid, not_supported, required
from kuota.api.k8s.corev1 import StrList
from kuota.api.k8s.validation.objectmeta import (
    Errors,
    name_errors,
    nonnegative,
    validate_object_meta,
)
from kuota.api.kuotadev.nodeargs import NodeArgError, parse_label_specs, parse_taint_specs
from kuota.api.meta import ObjectMeta

__all__ = [
    "NODE_OPERATIONS",
    "NodeOperation",
    "NodeOperationSpec",
    "NodeOperationStatus",
    "validate_node_operation",
]

GROUP = "kuota.dev"
API_VERSION = f"{GROUP}/v1alpha1"
KIND = "NodeOperation"


class NodeOperationSpec(Object):
    """kuota's own: one ``oc adm`` node operation, performed by the embedded
    cluster when the object is created (a world gives it a future
    ``creationTimestamp`` to schedule it in virtual time)."""

    node_name: str
    # Cordon, Uncordon, Drain, Taint, Label; NotReady and Ready stand for the
    # node's kubelet stopping and resuming its heartbeats. Checked in code.
    operation: str
    taints: StrList | None = None  # Taint: oc adm taint arguments (key=value:Effect, key:Effect-)
    labels: StrList | None = None  # Label: oc label arguments (key=value, key-)
    overwrite: bool | None = None  # Taint, Label: --overwrite
    # Drain: oc adm drain's flags.
    ignore_daemon_sets: bool | None = None
    force: bool | None = None
    delete_empty_dir_data: bool | None = None
    grace_period_seconds: int | None = None  # -1 or absent: each pod's own
    timeout_seconds: int | None = None  # absent or 0: wait for ever


class NodeOperationStatus(Object):
    phase: Literal["Running", "Succeeded", "Failed"] | None = None
    message: str | None = None
    start_time: datetime | None = None
    completion_time: datetime | None = None
    evicted_pods: StrList | None = None  # namespace/name, in eviction order


class NodeOperation(Object):
    api_version: str
    kind: str
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: NodeOperationSpec | None = None
    status: NodeOperationStatus | None = None


NODE_OPERATIONS = ("Cordon", "Uncordon", "Drain", "Taint", "Label", "NotReady", "Ready")


def _validate_node_args(
    specs: list[str] | None, op: str, wanted: str, path: str, parse: Callable[[Any], Any]
) -> Errors:
    if op != wanted:
        return [forbidden(path, f"may only be set when operation is {wanted}")] if specs else []
    if not specs:
        return [required(path, f"at least one {wanted.lower()} argument")]
    errs: Errors = []
    for i, arg in enumerate(specs):
        try:
            parse([arg])
        except NodeArgError as err:
            errs.append(invalid(index(path, i), arg, str(err)))
    if not errs:
        try:
            parse(specs)
        except NodeArgError as err:
            errs.append(invalid(path, list(specs), str(err)))
    return errs


def validate_node_operation(op: NodeOperation) -> Errors:
    errs = validate_object_meta(op.metadata, False, names.is_dns1123_subdomain)
    spec = op.spec
    if spec is None:
        return [*errs, required("spec", "")]
    if not spec.node_name:
        errs.append(required("spec.nodeName", ""))
    else:
        errs += name_errors(names.is_dns1123_subdomain, spec.node_name, "spec.nodeName")
    if spec.operation not in NODE_OPERATIONS:
        errs.append(not_supported("spec.operation", spec.operation, NODE_OPERATIONS))
    errs += _validate_node_args(
        spec.taints, spec.operation, "Taint", "spec.taints", parse_taint_specs
    )
    errs += _validate_node_args(
        spec.labels, spec.operation, "Label", "spec.labels", parse_label_specs
    )
    if spec.grace_period_seconds is not None and spec.grace_period_seconds < -1:
        errs.append(
            invalid(
                "spec.gracePeriodSeconds",
                spec.grace_period_seconds,
                "must be -1 (each pod's own) or greater than or equal to 0",
            )
        )
    if spec.timeout_seconds is not None:
        errs += nonnegative(spec.timeout_seconds, "spec.timeoutSeconds")
    if spec.operation != "Drain":
        for field_name, value in (
            ("ignoreDaemonSets", spec.ignore_daemon_sets),
            ("force", spec.force),
            ("deleteEmptyDirData", spec.delete_empty_dir_data),
            ("gracePeriodSeconds", spec.grace_period_seconds),
            ("timeoutSeconds", spec.timeout_seconds),
        ):
            if value is not None:
                errs.append(
                    forbidden(child("spec", field_name), "may only be set when operation is Drain")
                )
    return errs
