"""Namespace, Node, PriorityClass, LimitRange and RuntimeClass
(``pkg/apis/core``, ``scheduling`` and ``node`` validation)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kuota.api import names
from kuota.api.base import Quantity
from kuota.api.errors import (
    child,
    duplicate,
    forbidden,
    index,
    invalid,
    key,
    not_supported,
    required,
)
from kuota.api.k8s.corev1 import LimitRange, Namespace, Node, PriorityClass, RuntimeClass
from kuota.api.k8s.nodeconfig import kubelet_config
from kuota.api.k8s.validation.affinity import validate_taints, validate_tolerations
from kuota.api.k8s.validation.objectmeta import (
    Errors,
    as_builtins,
    name_errors,
    validate_kube_finalizer_name,
    validate_labels,
    validate_object_meta,
)
from kuota.api.k8s.validation.podspec import PREEMPTION_POLICIES
from kuota.api.k8s.validation.resource_requirements import (
    is_overcommit_allowed,
    to_decimal,
    validate_container_resource_name,
    validate_overhead,
    validate_resource_name,
    validate_resource_quantity_value,
)


def validate_namespace(ns: Namespace) -> Errors:
    errs = validate_object_meta(ns.metadata, False, names.is_dns1123_label)
    finalizers = (ns.spec.finalizers if ns.spec else None) or []
    for f in finalizers:
        # Kubernetes names the list, not the item.
        p = "spec.finalizers"
        errs += [invalid(p, f, msg) for msg in names.is_qualified_name(f)]
        errs += validate_kube_finalizer_name(f, p)
    return errs


def validate_node(node: Node) -> Errors:
    errs = validate_object_meta(node.metadata, False, names.is_dns1123_subdomain)
    if node.spec is not None:
        # Kubernetes reports a Node's taints under "metadata.taints" (sic).
        errs += validate_taints(node.spec.taints, "metadata.taints")
    if node.status is not None:
        for field_name, resources in (
            ("capacity", node.status.capacity),
            ("allocatable", node.status.allocatable),
        ):
            for name, q in (resources or {}).items():
                # Child, not Key: "status.capacity.nvidia.com/gpu".
                errs += validate_resource_quantity_value(name, q, f"status.{field_name}.{name}")
    # kuota's kubelet-configuration annotations (kuota.api.k8s.nodeconfig).
    ann = node.metadata.annotations or {}
    for k, msg in kubelet_config(ann)[1].items():
        errs.append(invalid(key("metadata.annotations", k), ann[k], msg))
    return errs


HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
_SYSTEM_PRIORITY_CLASSES = {  # name -> (value, globalDefault)
    "system-node-critical": (2_000_001_000, False),
    "system-cluster-critical": (2_000_000_000, False),
}


def validate_priority_class(pc: PriorityClass) -> Errors:
    errs = validate_object_meta(pc.metadata, False, names.is_dns1123_subdomain)
    name = pc.metadata.name
    if name.startswith("system-"):
        known = _SYSTEM_PRIORITY_CLASSES.get(name)
        reason = ""
        if known is None:
            reason = f"{name} is not a known system priority class"
        elif known[0] != pc.value:
            reason = f"value of {name} PriorityClass must be {known[0]}"
        elif known[1] != bool(pc.global_default):
            reason = f"globalDefault of {name} PriorityClass must be {str(known[1]).lower()}"
        if reason:
            errs.append(
                forbidden(
                    "metadata.name",
                    "priority class names with 'system-' prefix are reserved for system use only. "
                    f"error: {reason}",
                )
            )
    elif pc.value > HIGHEST_USER_DEFINABLE_PRIORITY:
        errs.append(
            forbidden(
                "value",
                f"maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}",
            )
        )
    if pc.preemption_policy not in PREEMPTION_POLICIES:
        errs.append(not_supported("preemptionPolicy", pc.preemption_policy, PREEMPTION_POLICIES))
    return errs


_LIMIT_TYPES = frozenset({"Pod", "Container", "PersistentVolumeClaim"})


def _validate_limit_range_resource_name(limit_type: str, name: str, path: str) -> Errors:
    if limit_type in ("Pod", "Container"):
        return validate_container_resource_name(name, path)
    return validate_resource_name(name, path)


def validate_limit_range(lr: LimitRange) -> Errors:
    errs = validate_object_meta(lr.metadata, True, names.is_dns1123_subdomain)
    path = "spec.limits"
    seen_types: set[str] = set()
    for i, item in enumerate(lr.spec.limits if lr.spec else []):
        p = index(path, i)
        type_path = child(p, "type")
        type_errs = [invalid(type_path, item.type, m) for m in names.is_qualified_name(item.type)]
        if not type_errs and "/" not in item.type and item.type not in _LIMIT_TYPES:
            type_errs.append(
                invalid(type_path, item.type, "must be a standard limit type or fully qualified")
            )
        errs += type_errs
        if item.type in seen_types:
            errs.append(duplicate(type_path, item.type))
        seen_types.add(item.type)

        lists: dict[str, Mapping[str, Quantity]] = {"max": item.max or {}, "min": item.min or {}}
        if item.type == "Pod":
            if item.default:
                errs.append(
                    forbidden(child(p, "default"), "may not be specified when `type` is 'Pod'")
                )
            if item.default_request:
                errs.append(
                    forbidden(
                        child(p, "defaultRequest"), "may not be specified when `type` is 'Pod'"
                    )
                )
            lists["default"], lists["defaultRequest"] = {}, {}
        else:
            lists["default"] = item.default or {}
            lists["defaultRequest"] = item.default_request or {}
        lists["maxLimitRequestRatio"] = item.max_limit_request_ratio or {}
        for field_name in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio"):
            for name in lists[field_name]:
                errs += _validate_limit_range_resource_name(
                    item.type, name, key(child(p, field_name), name)
                )
        if (
            item.type == "PersistentVolumeClaim"
            and "storage" not in lists["min"]
            and ("storage" not in lists["max"])
        ):
            errs.append(
                required(
                    child(p, "limits"),
                    "either minimum or maximum storage value is required, but neither was provided",
                )
            )
        errs += _validate_limit_range_values(lists, p)
    return errs


def _validate_limit_range_values(lists: Mapping[str, Mapping[str, Quantity]], p: str) -> Errors:
    errs: Errors = []
    keys: dict[str, None] = {}
    for field_name in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio"):
        keys.update(dict.fromkeys(lists[field_name]))
    one = Quantity.parse("1")
    for k in keys:
        mn, mx = lists["min"].get(k), lists["max"].get(k)
        dflt, dreq = lists["default"].get(k), lists["defaultRequest"].get(k)
        ratio = lists["maxLimitRequestRatio"].get(k)
        if mn is not None and mx is not None and mn > mx:
            errs.append(
                invalid(
                    key(child(p, "min"), k),
                    str(mn),
                    f"min value {mn} is greater than max value {mx}",
                )
            )
        dreq_path = key(child(p, "defaultRequest"), k)
        if dreq is not None and mn is not None and mn > dreq:
            errs.append(
                invalid(
                    dreq_path,
                    str(dreq),
                    f"min value {mn} is greater than default request value {dreq}",
                )
            )
        if dreq is not None and mx is not None and dreq > mx:
            errs.append(
                invalid(
                    dreq_path,
                    str(dreq),
                    f"default request value {dreq} is greater than max value {mx}",
                )
            )
        if dreq is not None and dflt is not None and dreq > dflt:
            errs.append(
                invalid(
                    dreq_path,
                    str(dreq),
                    f"default request value {dreq} is greater than default limit value {dflt}",
                )
            )
        dflt_path = key(child(p, "default"), k)
        if dflt is not None and mn is not None and mn > dflt:
            errs.append(
                invalid(dflt_path, str(mn), f"min value {mn} is greater than default value {dflt}")
            )
        if dflt is not None and mx is not None and dflt > mx:
            errs.append(
                invalid(dflt_path, str(mx), f"default value {dflt} is greater than max value {mx}")
            )
        ratio_path = key(child(p, "maxLimitRequestRatio"), k)
        if ratio is not None and ratio < one:
            errs.append(invalid(ratio_path, str(ratio), f"ratio {ratio} is less than 1"))
        if ratio is not None and mn is not None and mx is not None:
            r, lo, hi = to_decimal(ratio), to_decimal(mn), to_decimal(mx)
            if r is not None and lo and hi is not None and r > hi / lo:
                limit = float(hi / lo)
                errs.append(
                    invalid(
                        ratio_path, str(ratio), f"ratio {ratio} is greater than max/min = {limit:f}"
                    )
                )
        if not is_overcommit_allowed(k) and dflt is not None and dreq is not None and dflt != dreq:
            errs.append(
                invalid(
                    dreq_path,
                    str(dreq),
                    f"default value {dflt} must equal to defaultRequest value {dreq} in {k}",
                )
            )
    return errs


def validate_runtime_class(rc: RuntimeClass) -> Errors:
    errs = validate_object_meta(rc.metadata, False, names.is_dns1123_subdomain)
    errs += name_errors(names.is_dns1123_label, rc.handler, "handler")
    if rc.overhead is not None:
        errs += validate_overhead(rc.overhead.pod_fixed or {}, "overhead")
    if rc.scheduling is not None:
        errs += validate_labels(rc.scheduling.node_selector, "scheduling.nodeSelector")
        tol_path = "scheduling.tolerations"
        tols = rc.scheduling.tolerations or []
        errs += validate_tolerations(tols, tol_path)
        seen: set[tuple[Any, ...]] = set()
        for i, t in enumerate(tols):
            ident = (t.key or "", t.operator or "", t.value or "", t.effect or "")
            if ident in seen:
                errs.append(duplicate(index(tol_path, i), as_builtins(t)))
            seen.add(ident)
    return errs
