"""Validation of the built-in kinds, as the API server validates them on create.

Rules, field paths and messages follow ``pkg/apis/core/validation``,
``pkg/apis/batch/validation``, ``pkg/apis/scheduling/validation``,
``pkg/apis/node/validation`` (kubernetes/kubernetes) and apimachinery's
``api/validation`` and ``apis/meta/v1/validation``, with the default feature
gates. Every function collects all errors. Kubernetes' own path quirks are kept on
purpose, so errors read exactly as ``kubectl`` prints them (e.g. a Node's taints
are reported under ``metadata.taints``, an overhead under ``overhead.limits[cpu]``,
a label error at ``metadata.labels`` without the key, a request above its limit at
``resources.requests`` without the key).

The API server validates *after* defaulting; these functions see manifests as
written, so a value that defaulting fills in is never reported missing:
``terminationGracePeriodSeconds``, ``dnsPolicy``, ``restartPolicy`` (absent means
Always), ``imagePullPolicy``, ``terminationMessagePolicy``, a port's
``protocol``, the Job selector (generated) and, for namespaced kinds, the
namespace (taken from the request, as ``kubectl apply`` does). A name may be
absent when ``generateName`` is given (the server generates it).

Covered: object metadata (name / generateName, namespace, generation, labels,
annotations, owner references, finalizers); everything in a PodSpec that affects
scheduling or quota: containers and init containers (names, images, sidecar
restartPolicy, probes/lifecycle only on sidecars, ports and host-port
conflicts), resource requirements (names, non-negative, integers for extended
resources, request ≤ limit, request = limit for non-overcommittable resources,
hugepages need cpu/memory), pod-level resources (names), overhead, nodeSelector,
node and pod (anti-)affinity, tolerations, topology spread constraints,
scheduling gates, priorityClassName, preemptionPolicy, runtimeClassName,
nodeName, activeDeadlineSeconds, hostNetwork ports; Job spec (counts, limits,
completion mode and the Indexed rules, restartPolicy, successPolicy mode,
podReplacementPolicy, managedBy, selector against template labels); Node taints
and capacity; Namespace finalizers; PriorityClass values and system names;
LimitRange items; RuntimeClass handler, overhead and scheduling.

Deliberately not covered (kuota carries these fields without interpreting them):
volumes and volume mounts/devices, env/envFrom, probe and lifecycle handler
contents, security contexts, DNS config, host aliases, readiness gates, OS,
image pull secrets, DRA resource claims and ``resources.claims``, a pod affinity
term's matchLabelKeys repeated in its labelSelector (Kubernetes only catches it
after merging the keys into the selector), pod-level vs container aggregate
resource consistency, hugepage size divisibility, pod annotations with special meaning (mirror pod, seccomp, AppArmor, deletion cost),
Job podFailurePolicy / successPolicy rule contents, the generated-selector
(controller-uid) checks, managedBy path characters, Node podCIDRs and config
source, all status validation and all update-only (immutability) rules. Node
affinity ``Gt``/``Lt`` values must be single, as Kubernetes checks; that the
value parses as an integer is not checked at admission by Kubernetes either (a
non-integer simply never matches).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal
from typing import Any

import msgspec

from kuota.api import names
from kuota.api.base import Quantity
from kuota.api.core import (
    Affinity,
    Container,
    ContainerPort,
    CronJob,
    DaemonSet,
    Job,
    JobSpec,
    LimitRange,
    Namespace,
    Node,
    NodeOperation,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PodAffinityTerm,
    PodSpec,
    PodTemplateSpec,
    PriorityClass,
    ResourceRequirements,
    RuntimeClass,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
from kuota.api.cron import CronError, parse_schedule
from kuota.api.errors import (
    DUPLICATE,
    FieldError,
    child,
    duplicate,
    forbidden,
    index,
    invalid,
    key,
    not_supported,
    required,
    too_long,
)
from kuota.api.meta import LabelSelector, ObjectMeta, selector_matches
from kuota.api.nodeargs import NodeArgError, parse_label_specs, parse_taint_specs
from kuota.api.nodeconfig import kubelet_config

__all__ = [
    "NAMESPACED",
    "VALIDATORS",
    "NameFn",
    "selector_matches",
    "validate_affinity",
    "validate_annotations",
    "validate_cron_job",
    "validate_daemon_set",
    "validate_job",
    "validate_label_name",
    "validate_label_selector",
    "validate_labels",
    "validate_limit_range",
    "validate_namespace",
    "validate_node",
    "validate_node_operation",
    "validate_node_selector",
    "validate_node_selector_requirement",
    "validate_object_meta",
    "validate_pod",
    "validate_pod_spec",
    "validate_pod_template_spec",
    "validate_priority_class",
    "validate_resource_quantity_value",
    "validate_resource_requirements",
    "validate_runtime_class",
    "validate_taints",
    "validate_tolerations",
    "validate_topology_spread_constraints",
]

Errors = list[FieldError]

IS_NEGATIVE = "must be greater than or equal to 0"
NOT_POSITIVE = "must be greater than zero"
NOT_INTEGER = "must be an integer"
MAX_INT32 = 2**31 - 1
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * (1 << 10)


# ----------------------------------------------------------------- name functions
NameFn = Callable[[str], list[str]]
"""A name check of ``kuota.api.names`` (``is_dns1123_subdomain``, ...): the reasons
a name is invalid."""

# The namespaced kinds among CORE_KINDS (the rest are cluster-scoped).
NAMESPACED = frozenset({"Pod", "LimitRange", "Job", "CronJob", "DaemonSet"})


def _mask_trailing_dash(name: str) -> str:
    # A generateName may end in "-": the generated suffix follows it. Go drops
    # the last two characters and appends "a" (so "x-" checks as "a").
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def _name_errors(fn: NameFn, value: str, path: str) -> Errors:
    return [invalid(path, value, msg) for msg in fn(value)]


def _nonnegative(value: int, path: str) -> Errors:
    return [invalid(path, value, IS_NEGATIVE)] if value < 0 else []


def _inclusive_range(lo: int, hi: int) -> str:
    return f"must be between {lo} and {hi}, inclusive"


def _builtins(obj: Any) -> Any:
    # The value shown in an error: what the user wrote, without Quantity objects.
    return msgspec.to_builtins(obj, enc_hook=str)


# ---------------------------------------------------------------- labels & meta
def validate_label_name(name: str, path: str) -> Errors:
    return [invalid(path, name, msg) for msg in names.is_qualified_name(name)]


def validate_labels(labels: Mapping[str, str] | None, path: str) -> Errors:
    """Errors name the map, not the key (as apimachinery reports them)."""
    errs: Errors = []
    for k, v in (labels or {}).items():
        if names.qualified_name_ok(k) and names.label_value_ok(v):
            continue
        errs += validate_label_name(k, path)
        errs += [invalid(path, v, msg) for msg in names.is_label_value(v)]
    return errs


def validate_annotations(annotations: Mapping[str, str] | None, path: str) -> Errors:
    errs: Errors = []
    total = 0
    for k, v in (annotations or {}).items():
        if not names.qualified_name_ok(k.lower()):
            errs += [invalid(path, k, msg) for msg in names.is_qualified_name(k.lower())]
        total += len(k) + len(v)
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT))
    return errs


_STANDARD_FINALIZERS = frozenset({"kubernetes", "orphan", "foregroundDeletion"})


def _validate_kube_finalizer_name(value: str, path: str) -> Errors:
    if "/" not in value and value not in _STANDARD_FINALIZERS:
        return [
            invalid(
                path, value, "name is neither a standard finalizer name nor is it fully qualified"
            )
        ]
    return []


def _validate_finalizers(finalizers: list[str] | None, path: str) -> Errors:
    errs: Errors = []
    finalizers = finalizers or []
    for i, f in enumerate(finalizers):
        # apimachinery names the list, core adds an indexed check of its own.
        errs += [invalid(path, f, msg) for msg in names.is_qualified_name(f)]
        errs += _validate_kube_finalizer_name(f, index(path, i))
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        errs.append(
            invalid(path, finalizers, "finalizer orphan and foregroundDeletion cannot be both set")
        )
    return errs


def _validate_owner_references(meta: ObjectMeta, path: str) -> Errors:
    errs: Errors = []
    first_controller = ""
    for i, ref in enumerate(meta.owner_references or []):
        p = index(path, i)
        parts = ref.api_version.split("/")
        if not ref.api_version:
            errs.append(required(child(p, "apiVersion"), "must not be empty"))
        elif len(parts) > 2 or not parts[-1] or (len(parts) == 2 and not parts[0]):
            errs.append(
                invalid(
                    child(p, "apiVersion"),
                    ref.api_version,
                    "must be <group>/<version> or <version>",
                )
            )
        for field_name in ("kind", "name", "uid"):
            if not getattr(ref, field_name):
                errs.append(required(child(p, field_name), "must not be empty"))
        if ref.api_version == "v1" and ref.kind == "Event":
            errs.append(
                invalid(p, _builtins(ref), "/v1, Kind=Event is disallowed from being an owner")
            )
        if ref.controller:
            current = f"{ref.kind}/{ref.name}"
            if first_controller:
                errs.append(
                    invalid(
                        path,
                        _builtins(meta.owner_references),
                        "Only one reference can have Controller set to true. Found "
                        f'"true" in references for {first_controller} and {current}',
                    )
                )
            else:
                first_controller = current
    return errs


def validate_object_meta(
    meta: ObjectMeta, namespaced: bool, name_fn: NameFn, path: str = "metadata"
) -> Errors:
    """``ValidateObjectMeta`` on create. A missing name is fine with a
    generateName, a missing namespace of a namespaced object is filled from the
    request (see the module docstring)."""
    # Every decoded object comes here: a part that is absent or valid costs a
    # test, and paths are built only for errors.
    errs: Errors = []
    if meta.generate_name:
        errs += [
            invalid(child(path, "generateName"), meta.generate_name, msg)
            for msg in name_fn(_mask_trailing_dash(meta.generate_name))
        ]
    if meta.name:
        msgs = name_fn(meta.name)
        if msgs:
            errs += [invalid(child(path, "name"), meta.name, msg) for msg in msgs]
    elif not meta.generate_name:
        errs.append(required(child(path, "name"), "name or generateName is required"))
    if namespaced:
        if meta.namespace and not names.dns1123_label_ok(meta.namespace):
            errs += _name_errors(names.is_dns1123_label, meta.namespace, child(path, "namespace"))
    elif meta.namespace:
        errs.append(forbidden(child(path, "namespace"), "not allowed on this type"))
    if meta.generation < 0:
        errs += _nonnegative(meta.generation, child(path, "generation"))
    if meta.labels:
        errs += validate_labels(meta.labels, child(path, "labels"))
    if meta.annotations:
        errs += validate_annotations(meta.annotations, child(path, "annotations"))
    if meta.owner_references:
        errs += _validate_owner_references(meta, child(path, "ownerReferences"))
    if meta.finalizers:
        errs += _validate_finalizers(meta.finalizers, child(path, "finalizers"))
    return errs


# ---------------------------------------------------------------- label selectors
def validate_label_selector(
    sel: LabelSelector | None, path: str, *, allow_invalid_label_value: bool = False
) -> Errors:
    if sel is None:
        return []
    errs = validate_labels(sel.match_labels, child(path, "matchLabels"))
    for i, req in enumerate(sel.match_expressions or []):
        p = index(child(path, "matchExpressions"), i)
        values = req.values or []
        if req.operator in ("In", "NotIn"):
            if not values:
                errs.append(
                    required(
                        child(p, "values"), "must be specified when `operator` is 'In' or 'NotIn'"
                    )
                )
        elif req.operator in ("Exists", "DoesNotExist"):
            if values:
                errs.append(
                    forbidden(
                        child(p, "values"),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    )
                )
        else:
            errs.append(
                invalid(child(p, "operator"), req.operator, "not a valid selector operator")
            )
        errs += validate_label_name(req.key, child(p, "key"))
        if not allow_invalid_label_value:
            for j, v in enumerate(values):
                vp = index(child(p, "values"), j)
                errs += [invalid(vp, v, msg) for msg in names.is_label_value(v)]
    return errs


# ------------------------------------------------------------ node selector terms
def validate_node_selector_requirement(
    req: NodeSelectorRequirement, path: str, *, allow_invalid_label_value: bool = False
) -> Errors:
    errs: Errors = []
    values = req.values or []
    if req.operator in ("In", "NotIn"):
        if not values:
            errs.append(
                required(
                    child(path, "values"), "must be specified when `operator` is 'In' or 'NotIn'"
                )
            )
    elif req.operator in ("Exists", "DoesNotExist"):
        if values:
            errs.append(
                forbidden(
                    child(path, "values"),
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                )
            )
    elif req.operator in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(
                required(
                    child(path, "values"),
                    "must be specified single value when `operator` is 'Lt' or 'Gt'",
                )
            )
    else:
        errs.append(invalid(child(path, "operator"), req.operator, "not a valid selector operator"))
    errs += validate_label_name(req.key, child(path, "key"))
    if not allow_invalid_label_value:
        for i, v in enumerate(values):
            vp = index(child(path, "values"), i)
            errs += [invalid(vp, v, msg) for msg in names.is_label_value(v)]
    return errs


def _validate_node_field_selector_requirement(req: NodeSelectorRequirement, path: str) -> Errors:
    errs: Errors = []
    values = req.values or []
    if req.operator in ("In", "NotIn"):
        if len(values) != 1:
            errs.append(
                required(
                    child(path, "values"),
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                )
            )
    else:
        errs.append(invalid(child(path, "operator"), req.operator, "not a valid selector operator"))
    # metadata.name is the only field a node field selector may use.
    if req.key != "metadata.name":
        errs.append(invalid(child(path, "key"), req.key, "not a valid field selector key"))
    else:
        for i, v in enumerate(values):
            errs += _name_errors(names.is_dns1123_subdomain, v, index(child(path, "values"), i))
    return errs


def _validate_node_selector_term(
    term: NodeSelectorTerm, path: str, allow_invalid_label_value: bool
) -> Errors:
    errs: Errors = []
    for j, req in enumerate(term.match_expressions or []):
        errs += validate_node_selector_requirement(
            req,
            index(child(path, "matchExpressions"), j),
            allow_invalid_label_value=allow_invalid_label_value,
        )
    for j, req in enumerate(term.match_fields or []):
        errs += _validate_node_field_selector_requirement(req, index(child(path, "matchFields"), j))
    return errs


def validate_node_selector(sel: NodeSelector, path: str) -> Errors:
    terms_path = child(path, "nodeSelectorTerms")
    if not sel.node_selector_terms:
        return [required(terms_path, "must have at least one node selector term")]
    errs: Errors = []
    for i, term in enumerate(sel.node_selector_terms):
        errs += _validate_node_selector_term(term, index(terms_path, i), False)
    return errs


# ------------------------------------------------------------------------ affinity
def _validate_weight(weight: int, path: str) -> Errors:
    if weight <= 0 or weight > 100:
        return [invalid(path, weight, "must be in the range 1-100")]
    return []


def _validate_label_keys(path: str, label_keys: list[str], sel: LabelSelector | None) -> Errors:
    if not label_keys:
        return []
    if sel is None:
        return [forbidden(path, "must not be specified when labelSelector is not set")]
    errs: Errors = []
    for i, k in enumerate(label_keys):
        errs += validate_label_name(k, index(path, i))
    return errs


def _validate_pod_affinity_term(term: PodAffinityTerm, path: str) -> Errors:
    errs = validate_label_selector(term.label_selector, child(path, "labelSelector"))
    errs += validate_label_selector(term.namespace_selector, child(path, "namespaceSelector"))
    for ns in term.namespaces or []:
        # Kubernetes names the field "namespace" here (sic).
        errs += _name_errors(names.is_dns1123_label, ns, child(path, "namespace"))
    match_keys = term.match_label_keys or []
    mismatch_keys = term.mismatch_label_keys or []
    errs += _validate_label_keys(child(path, "matchLabelKeys"), match_keys, term.label_selector)
    errs += _validate_label_keys(
        child(path, "mismatchLabelKeys"), mismatch_keys, term.label_selector
    )
    for i, k in enumerate(match_keys):
        if k in mismatch_keys:
            errs.append(
                invalid(
                    index(child(path, "matchLabelKeys"), i),
                    k,
                    "exists in both matchLabelKeys and mismatchLabelKeys",
                )
            )
    if not term.topology_key:
        errs.append(required(child(path, "topologyKey"), "can not be empty"))
    errs += validate_label_name(term.topology_key, child(path, "topologyKey"))
    return errs


def _validate_pod_affinity_terms(
    required_terms: list[PodAffinityTerm] | None,
    preferred_terms: list[WeightedPodAffinityTerm] | None,
    path: str,
) -> Errors:
    errs: Errors = []
    req_path = child(path, "requiredDuringSchedulingIgnoredDuringExecution")
    for i, term in enumerate(required_terms or []):
        errs += _validate_pod_affinity_term(term, index(req_path, i))
    pref_path = child(path, "preferredDuringSchedulingIgnoredDuringExecution")
    for j, wterm in enumerate(preferred_terms or []):
        errs += _validate_weight(wterm.weight, child(index(pref_path, j), "weight"))
        errs += _validate_pod_affinity_term(
            wterm.pod_affinity_term, child(index(pref_path, j), "podAffinityTerm")
        )
    return errs


def validate_affinity(affinity: Affinity | None, path: str) -> Errors:
    if affinity is None:
        return []
    errs: Errors = []
    na = affinity.node_affinity
    if na is not None:
        na_path = child(path, "nodeAffinity")
        if na.required_during_scheduling_ignored_during_execution is not None:
            errs += validate_node_selector(
                na.required_during_scheduling_ignored_during_execution,
                child(na_path, "requiredDuringSchedulingIgnoredDuringExecution"),
            )
        pref_path = child(na_path, "preferredDuringSchedulingIgnoredDuringExecution")
        for i, term in enumerate(na.preferred_during_scheduling_ignored_during_execution or []):
            errs += _validate_weight(term.weight, child(index(pref_path, i), "weight"))
            # Preferred terms may carry invalid label values: they can still
            # succeed on a cluster with a single node.
            errs += _validate_node_selector_term(
                term.preference, child(index(pref_path, i), "preference"), True
            )
    if affinity.pod_affinity is not None:
        pa = affinity.pod_affinity
        errs += _validate_pod_affinity_terms(
            pa.required_during_scheduling_ignored_during_execution,
            pa.preferred_during_scheduling_ignored_during_execution,
            child(path, "podAffinity"),
        )
    if affinity.pod_anti_affinity is not None:
        paa = affinity.pod_anti_affinity
        errs += _validate_pod_affinity_terms(
            paa.required_during_scheduling_ignored_during_execution,
            paa.preferred_during_scheduling_ignored_during_execution,
            child(path, "podAntiAffinity"),
        )
    return errs


# --------------------------------------------------------- taints & tolerations
_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _validate_taint_effect(effect: str | None, allow_empty: bool, path: str) -> Errors:
    if not effect:
        return [] if allow_empty else [required(path, "")]
    if effect not in _TAINT_EFFECTS:
        return [not_supported(path, effect, _TAINT_EFFECTS)]
    return []


def validate_tolerations(tols: list[Toleration] | None, path: str) -> Errors:
    errs: Errors = []
    for i, t in enumerate(tols or []):
        p = index(path, i)
        tol_key = t.key or ""
        operator = t.operator or ""
        value = t.value or ""
        if tol_key:
            errs += validate_label_name(tol_key, child(p, "key"))
        if not tol_key and operator != "Exists":
            errs.append(
                invalid(
                    child(p, "operator"),
                    operator,
                    'operator must be Exists when `key` is empty, which means "match all values and all keys"',
                )
            )
        if t.toleration_seconds is not None and t.effect != "NoExecute":
            errs.append(
                invalid(
                    child(p, "effect"),
                    t.effect or "",
                    "effect must be 'NoExecute' when `tolerationSeconds` is set",
                )
            )
        # Kubernetes reports value problems at the operator's path.
        if operator in ("Equal", ""):
            reasons = names.is_label_value(value)
            if reasons:
                errs.append(invalid(child(p, "operator"), value, ";".join(reasons)))
        elif operator == "Exists":
            if value:
                errs.append(
                    invalid(
                        child(p, "operator"),
                        value,
                        "value must be empty when `operator` is 'Exists'",
                    )
                )
        else:  # Lt / Gt: alpha gate TaintTolerationComparisonOperators, off by default
            errs.append(not_supported(child(p, "operator"), operator, ["Equal", "Exists"]))
        errs += _validate_taint_effect(t.effect, True, child(p, "effect"))
    return errs


def validate_taints(taints: list[Taint] | None, path: str) -> Errors:
    errs: Errors = []
    seen: set[tuple[str, str]] = set()
    for i, t in enumerate(taints or []):
        p = index(path, i)
        errs += validate_label_name(t.key, child(p, "key"))
        reasons = names.is_label_value(t.value or "")
        if reasons:
            errs.append(invalid(child(p, "value"), t.value or "", ";".join(reasons)))
        errs += _validate_taint_effect(t.effect, False, child(p, "effect"))
        if (t.key, t.effect) in seen:
            errs.append(
                FieldError(
                    p, DUPLICATE, "taints must be unique by key and effect pair", _builtins(t)
                )
            )
            continue
        seen.add((t.key, t.effect))
    return errs


# ------------------------------------------------------------------ resources
_STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
_STANDARD_RESOURCES = frozenset(
    {
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "storage",
        "requests.storage",
        "services.nodeports",
        "services.loadbalancers",
    }
)
_INTEGER_RESOURCES = frozenset(
    {
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    }
)
_POD_LEVEL_RESOURCES = ("cpu", "hugepages-", "memory")  # as Kubernetes lists them
_HUGEPAGES = "hugepages-"


def _is_hugepages(name: str) -> bool:
    return name.startswith(_HUGEPAGES)


def _is_standard_resource(name: str) -> bool:
    return (
        name in _STANDARD_RESOURCES or _is_hugepages(name) or name.startswith("requests.hugepages-")
    )


def _is_native(name: str) -> bool:
    """In the ``kubernetes.io/`` namespace (unprefixed names implicitly are)."""
    return "/" not in name or "kubernetes.io/" in name


def _is_extended(name: str) -> bool:
    if _is_native(name) or name.startswith("requests."):
        return False
    return not names.is_qualified_name("requests." + name)


def _is_overcommit_allowed(name: str) -> bool:
    # Extended resources (GPUs, ...) and hugepages may not be overcommitted:
    # their request must equal their limit.
    return _is_native(name) and not _is_hugepages(name)


def _is_integer_resource(name: str) -> bool:
    return name in _INTEGER_RESOURCES or _is_extended(name)


def _validate_resource_name(name: str, path: str) -> Errors:
    errs = [invalid(path, name, msg) for msg in names.is_qualified_name(name)]
    if errs:
        return errs
    if "/" not in name and not _is_standard_resource(name):
        return [invalid(path, name, "must be a standard resource type or fully qualified")]
    return []


def _validate_container_resource_name(name: str, path: str) -> Errors:
    errs = _validate_resource_name(name, path)
    if "/" not in name:
        if not (name in _STANDARD_CONTAINER_RESOURCES or _is_hugepages(name)):
            errs.append(invalid(path, name, "must be a standard resource for containers"))
    elif not _is_native(name) and not _is_extended(name):
        errs.append(invalid(path, name, "doesn't follow extended resource name standard"))
    return errs


def _validate_pod_resource_name(name: str, path: str) -> Errors:
    errs = _validate_resource_name(name, path)
    if errs:
        return errs
    if name not in ("cpu", "memory") and not _is_hugepages(name):
        return [not_supported(path, name, _POD_LEVEL_RESOURCES)]
    return []


def _decimal(q: Quantity) -> Decimal:
    """The exact value of a quantity (its nano-units are exact; its text may be
    the user's own, non-canonical spelling)."""
    return Decimal(q.nanos).scaleb(-9)


def validate_resource_quantity_value(name: str, q: Quantity, path: str) -> Errors:
    errs: Errors = []
    if q.sign() < 0:
        errs.append(invalid(path, str(q), IS_NEGATIVE))
    # Kubernetes checks MilliValue() % 1000: the value rounded up to milli
    # units must be whole. Integer arithmetic: exact at any magnitude.
    if _is_integer_resource(name) and -(-q.nanos // 1_000_000) % 1000 != 0:
        errs.append(invalid(path, str(q), NOT_INTEGER))
    return errs


def validate_resource_requirements(
    req: ResourceRequirements | None,
    path: str,
    name_fn: Callable[[str, str], Errors] = _validate_container_resource_name,
) -> Errors:
    """Container resource requirements (``name_fn`` checks the resource names)."""
    if req is None:
        return []
    errs: Errors = []
    lim_path, req_path = child(path, "limits"), child(path, "requests")
    limits = req.limits or {}
    qos_compute = hugepages = False
    for name, q in limits.items():
        p = key(lim_path, name)
        errs += name_fn(name, p)
        errs += validate_resource_quantity_value(name, q, p)
        hugepages |= _is_hugepages(name)
        qos_compute |= name in ("cpu", "memory")
    for name, q in (req.requests or {}).items():
        p = key(req_path, name)
        errs += name_fn(name, p)
        errs += validate_resource_quantity_value(name, q, p)
        limit = limits.get(name)
        if limit is not None:
            if q != limit and not _is_overcommit_allowed(name):
                errs.append(invalid(req_path, str(q), f"must be equal to {name} limit of {limit}"))
            elif q > limit:
                errs.append(
                    invalid(
                        req_path, str(q), f"must be less than or equal to {name} limit of {limit}"
                    )
                )
        elif not _is_overcommit_allowed(name):
            errs.append(required(lim_path, "Limit must be set for non overcommitable resources"))
        hugepages |= _is_hugepages(name)
        qos_compute |= name in ("cpu", "memory")
    if hugepages and not qos_compute:
        errs.append(forbidden(path, "HugePages require cpu or memory"))
    return errs


def _validate_overhead(overhead: Mapping[str, Quantity] | None, path: str) -> Errors:
    # Kubernetes reuses the container check on {limits: overhead}, hence the
    # "limits" in the reported paths.
    if overhead is None:
        return []
    return validate_resource_requirements(ResourceRequirements(limits=dict(overhead)), path)


# ------------------------------------------------------------------ containers
def _is_valid_port_name(port: str) -> list[str]:
    errs: list[str] = []
    if len(port) > 15:
        errs.append("must be no more than 15 characters")
    if not re.fullmatch(r"[-a-z0-9]+", port):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search(r"[a-z]", port):
        errs.append("must contain at least one letter (a-z)")
    if "--" in port:
        errs.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def _is_valid_port_num(port: int) -> list[str]:
    return [] if 1 <= port <= 65535 else [_inclusive_range(1, 65535)]


def _validate_container_ports(ports: list[ContainerPort] | None, path: str) -> Errors:
    errs: Errors = []
    seen: set[str] = set()
    for i, port in enumerate(ports or []):
        p = index(path, i)
        if port.name:
            reasons = _is_valid_port_name(port.name)
            if reasons:
                errs += [invalid(child(p, "name"), port.name, r) for r in reasons]
            elif port.name in seen:
                errs.append(duplicate(child(p, "name"), port.name))
            else:
                seen.add(port.name)
        if port.container_port == 0:
            errs.append(required(child(p, "containerPort"), ""))
        else:
            errs += [
                invalid(child(p, "containerPort"), port.container_port, r)
                for r in _is_valid_port_num(port.container_port)
            ]
        if port.host_port:
            errs += [
                invalid(child(p, "hostPort"), port.host_port, r)
                for r in _is_valid_port_num(port.host_port)
            ]
    return errs


def _check_host_port_conflicts(containers: Iterable[Container], path: str) -> Errors:
    errs: Errors = []
    seen: set[str] = set()
    for ci, ctr in enumerate(containers):
        for pi, port in enumerate(ctr.ports or []):
            if not port.host_port:
                continue
            ident = f"{port.protocol}/{port.host_ip or ''}/{port.host_port}"
            if ident in seen:
                hp = child(index(child(index(path, ci), "ports"), pi), "hostPort")
                errs.append(duplicate(hp, ident))
            else:
                seen.add(ident)
    return errs


_PULL_POLICIES = ("Always", "IfNotPresent", "Never")
_TERMINATION_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")


def _validate_container_common(ctr: Container, path: str) -> Errors:
    errs: Errors = []
    if not ctr.name:
        errs.append(required(child(path, "name"), ""))
    else:
        errs += [
            invalid(child(path, "name"), ctr.name, m) for m in names.is_dns1123_label(ctr.name)
        ]
    if not ctr.image:
        errs.append(required(child(path, "image"), ""))
    tmp = ctr.termination_message_policy
    if tmp and tmp not in _TERMINATION_MESSAGE_POLICIES:
        errs.append(
            not_supported(
                child(path, "terminationMessagePolicy"), tmp, _TERMINATION_MESSAGE_POLICIES
            )
        )
    errs += _validate_container_ports(ctr.ports, child(path, "ports"))
    if ctr.image_pull_policy and ctr.image_pull_policy not in _PULL_POLICIES:
        errs.append(
            not_supported(child(path, "imagePullPolicy"), ctr.image_pull_policy, _PULL_POLICIES)
        )
    errs += validate_resource_requirements(ctr.resources, child(path, "resources"))
    return errs


def _validate_containers(containers: list[Container], path: str) -> Errors:
    if not containers:
        return [required(path, "")]
    errs: Errors = []
    seen: set[str] = set()
    for i, ctr in enumerate(containers):
        p = index(path, i)
        errs += _validate_container_common(ctr, p)
        if ctr.name in seen:
            errs.append(duplicate(child(p, "name"), ctr.name))
        else:
            seen.add(ctr.name)
        if ctr.restart_policy is not None:
            errs.append(
                forbidden(child(p, "restartPolicy"), "may not be set for non-init containers")
            )
    errs += _check_host_port_conflicts(containers, path)
    return errs


def _validate_init_containers(
    init_containers: list[Container] | None, containers: list[Container], path: str
) -> Errors:
    errs: Errors = []
    seen = {c.name for c in containers}
    for i, ctr in enumerate(init_containers or []):
        p = index(path, i)
        errs += _validate_container_common(ctr, p)
        sidecar = ctr.restart_policy == "Always"
        if ctr.restart_policy is not None and not sidecar:
            errs.append(not_supported(child(p, "restartPolicy"), ctr.restart_policy, ["Always"]))
        if ctr.name in seen:
            errs.append(duplicate(child(p, "name"), ctr.name))
        elif ctr.name:
            seen.add(ctr.name)
        # Init containers run one by one, so only a container's own ports can
        # conflict; Kubernetes reports them at index 0 of the list (sic).
        errs += _check_host_port_conflicts([ctr], path)
        if not sidecar:
            for field_name, value in (
                ("lifecycle", ctr.lifecycle),
                ("livenessProbe", ctr.liveness_probe),
                ("readinessProbe", ctr.readiness_probe),
                ("startupProbe", ctr.startup_probe),
            ):
                if value is not None:
                    errs.append(
                        forbidden(
                            child(p, field_name),
                            "may not be set for init containers without restartPolicy=Always",
                        )
                    )
    return errs


# -------------------------------------------------------------- topology spread
def validate_topology_spread_constraints(
    constraints: list[TopologySpreadConstraint] | None, path: str
) -> Errors:
    errs: Errors = []
    constraints = constraints or []
    for i, c in enumerate(constraints):
        p = index(path, i)
        if c.max_skew <= 0:
            errs.append(invalid(child(p, "maxSkew"), c.max_skew, NOT_POSITIVE))
        if not c.topology_key:
            errs.append(required(child(p, "topologyKey"), "can not be empty"))
        if c.when_unsatisfiable not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.append(
                not_supported(
                    child(p, "whenUnsatisfiable"),
                    c.when_unsatisfiable,
                    ["DoNotSchedule", "ScheduleAnyway"],
                )
            )
        # {topologyKey, whenUnsatisfiable} identifies a constraint.
        for later in constraints[i + 1 :]:
            if (later.topology_key, later.when_unsatisfiable) == (
                c.topology_key,
                c.when_unsatisfiable,
            ):
                errs.append(
                    duplicate(
                        child(p, "{topologyKey, whenUnsatisfiable}"),
                        f"{{{c.topology_key}, {c.when_unsatisfiable}}}",
                    )
                )
                break
        if c.min_domains is not None:
            md_path = child(p, "minDomains")
            if c.min_domains <= 0:
                errs.append(invalid(md_path, c.min_domains, NOT_POSITIVE))
            if c.when_unsatisfiable != "DoNotSchedule":
                errs.append(
                    invalid(
                        md_path,
                        c.min_domains,
                        "can only use minDomains if whenUnsatisfiable=DoNotSchedule, "
                        f"not {c.when_unsatisfiable}",
                    )
                )
        for field_name, policy in (
            ("nodeAffinityPolicy", c.node_affinity_policy),
            ("nodeTaintsPolicy", c.node_taints_policy),
        ):
            if policy is not None and policy not in ("Honor", "Ignore"):
                errs.append(not_supported(child(p, field_name), policy, ["Honor", "Ignore"]))
        mlk_path = child(p, "matchLabelKeys")
        if c.match_label_keys:
            selector_keys: set[str] = set()
            if c.label_selector is None:
                errs.append(
                    forbidden(mlk_path, "must not be specified when labelSelector is not set")
                )
            else:
                selector_keys |= set(c.label_selector.match_labels or {})
                selector_keys |= {e.key for e in c.label_selector.match_expressions or []}
            for j, k in enumerate(c.match_label_keys):
                errs += validate_label_name(k, index(mlk_path, j))
                if k in selector_keys:
                    errs.append(
                        invalid(
                            index(mlk_path, j), k, "exists in both matchLabelKeys and labelSelector"
                        )
                    )
        errs += validate_label_selector(c.label_selector, child(p, "labelSelector"))
    return errs


# ------------------------------------------------------------------------ PodSpec
_PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")
_RESTART_POLICIES = ("Always", "OnFailure", "Never")
_DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")


def _validate_scheduling_gates(spec: PodSpec, path: str) -> Errors:
    errs: Errors = []
    seen: set[str] = set()
    for i, gate in enumerate(spec.scheduling_gates or []):
        p = index(path, i)
        errs += [invalid(p, gate.name, msg) for msg in names.is_qualified_name(gate.name)]
        if gate.name in seen:
            errs.append(duplicate(p, gate.name))
        seen.add(gate.name)
    return errs


def _validate_host_network_ports(spec: PodSpec, path: str, is_pod: bool) -> Errors:
    # With hostNetwork a pod's host port is its container port. A template may
    # leave it 0: it is defaulted when the pod is created.
    if not spec.host_network:
        return []
    errs: Errors = []
    for i, ctr in enumerate(spec.containers):
        for j, port in enumerate(ctr.ports or []):
            hp = port.host_port or 0
            if (is_pod or hp != 0) and hp != port.container_port:
                p = child(index(child(index(child(path, "containers"), i), "ports"), j), "hostPort")
                errs.append(invalid(p, hp, "must match `containerPort` when `hostNetwork` is true"))
    return errs


def validate_pod_spec(spec: PodSpec | None, path: str, *, is_pod: bool = False) -> Errors:
    """``ValidatePodSpec`` (the parts listed in the module docstring). ``is_pod`` is
    True for a Pod's own spec, False for a template."""
    spec = spec if spec is not None else PodSpec(containers=[])
    errs: Errors = []
    errs += _validate_containers(spec.containers, child(path, "containers"))
    errs += _validate_init_containers(
        spec.init_containers, spec.containers, child(path, "initContainers")
    )
    if spec.resources is not None:
        res_path = child(path, "resources")
        if spec.resources.claims is not None:
            errs.append(
                forbidden(
                    child(res_path, "claims"), "claims cannot be set for Resources at pod-level"
                )
            )
        errs += validate_resource_requirements(
            spec.resources, res_path, _validate_pod_resource_name
        )
    errs += _validate_host_network_ports(spec, path, is_pod)
    if spec.restart_policy is not None and spec.restart_policy not in _RESTART_POLICIES:
        errs.append(
            not_supported(child(path, "restartPolicy"), spec.restart_policy, _RESTART_POLICIES)
        )
    if spec.dns_policy and spec.dns_policy not in _DNS_POLICIES:
        errs.append(not_supported(child(path, "dnsPolicy"), spec.dns_policy, _DNS_POLICIES))
    errs += validate_labels(spec.node_selector, child(path, "nodeSelector"))
    errs += validate_affinity(spec.affinity, child(path, "affinity"))
    errs += _validate_scheduling_gates(spec, child(path, "schedulingGates"))
    errs += validate_topology_spread_constraints(
        spec.topology_spread_constraints, child(path, "topologySpreadConstraints")
    )
    if spec.service_account_name:
        errs += _name_errors(
            names.is_dns1123_subdomain, spec.service_account_name, child(path, "serviceAccountName")
        )
    if spec.node_name:
        errs += _name_errors(names.is_dns1123_subdomain, spec.node_name, child(path, "nodeName"))
    if spec.active_deadline_seconds is not None:
        ads = spec.active_deadline_seconds
        if not 1 <= ads <= MAX_INT32:
            errs.append(
                invalid(child(path, "activeDeadlineSeconds"), ads, _inclusive_range(1, MAX_INT32))
            )
    if spec.hostname:
        errs += [
            invalid(child(path, "hostname"), spec.hostname, m)
            for m in names.is_dns1123_label(spec.hostname)
        ]
    if spec.subdomain:
        errs += [
            invalid(child(path, "subdomain"), spec.subdomain, m)
            for m in names.is_dns1123_label(spec.subdomain)
        ]
    errs += validate_tolerations(spec.tolerations, child(path, "tolerations"))
    if spec.priority_class_name:
        errs += _name_errors(
            names.is_dns1123_subdomain, spec.priority_class_name, child(path, "priorityClassName")
        )
    if spec.runtime_class_name is not None:
        errs += _name_errors(
            names.is_dns1123_subdomain, spec.runtime_class_name, child(path, "runtimeClassName")
        )
    if spec.preemption_policy is not None and spec.preemption_policy not in _PREEMPTION_POLICIES:
        errs.append(
            not_supported(
                child(path, "preemptionPolicy"), spec.preemption_policy, _PREEMPTION_POLICIES
            )
        )
    errs += _validate_overhead(spec.overhead, child(path, "overhead"))
    return errs


def validate_pod_template_spec(tmpl: PodTemplateSpec, path: str) -> Errors:
    # Kubernetes checks a template's labels at "<path>.labels" (no "metadata").
    errs = validate_labels(tmpl.metadata.labels, child(path, "labels"))
    errs += validate_annotations(tmpl.metadata.annotations, child(path, "annotations"))
    errs += validate_pod_spec(tmpl.spec, child(path, "spec"))
    if tmpl.spec is not None and tmpl.spec.ephemeral_containers:
        errs.append(
            forbidden(
                child(child(path, "spec"), "ephemeralContainers"),
                "ephemeral containers not allowed in pod template",
            )
        )
    return errs


# ---------------------------------------------------------------------- kinds
def validate_pod(pod: Pod) -> Errors:
    errs = validate_object_meta(pod.metadata, True, names.is_dns1123_subdomain)
    errs += validate_pod_spec(pod.spec, "spec", is_pod=True)
    if pod.spec is not None:
        for field_name, ctrs in (
            ("containers", pod.spec.containers),
            ("initContainers", pod.spec.init_containers or []),
        ):
            for i, ctr in enumerate(ctrs):
                if ctr.image and ctr.image != ctr.image.strip():
                    errs.append(
                        invalid(
                            child(index(child("spec", field_name), i), "image"),
                            ctr.image,
                            "must not have leading or trailing whitespace",
                        )
                    )
    return errs


def validate_namespace(ns: Namespace) -> Errors:
    errs = validate_object_meta(ns.metadata, False, names.is_dns1123_label)
    finalizers = (ns.spec.finalizers if ns.spec else None) or []
    for f in finalizers:
        # Kubernetes names the list, not the item.
        p = "spec.finalizers"
        errs += [invalid(p, f, msg) for msg in names.is_qualified_name(f)]
        errs += _validate_kube_finalizer_name(f, p)
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
    # kuota's kubelet-configuration annotations (kuota.api.nodeconfig).
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
    if pc.preemption_policy not in _PREEMPTION_POLICIES:
        errs.append(not_supported("preemptionPolicy", pc.preemption_policy, _PREEMPTION_POLICIES))
    return errs


_LIMIT_TYPES = frozenset({"Pod", "Container", "PersistentVolumeClaim"})


def _validate_limit_range_resource_name(limit_type: str, name: str, path: str) -> Errors:
    if limit_type in ("Pod", "Container"):
        return _validate_container_resource_name(name, path)
    return _validate_resource_name(name, path)


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
            r, lo, hi = _decimal(ratio), _decimal(mn), _decimal(mx)
            if r is not None and lo and hi is not None and r > hi / lo:
                limit = float(hi / lo)
                errs.append(
                    invalid(
                        ratio_path, str(ratio), f"ratio {ratio} is greater than max/min = {limit:f}"
                    )
                )
        if not _is_overcommit_allowed(k) and dflt is not None and dreq is not None and dflt != dreq:
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
    errs += _name_errors(names.is_dns1123_label, rc.handler, "handler")
    if rc.overhead is not None:
        errs += _validate_overhead(rc.overhead.pod_fixed or {}, "overhead")
    if rc.scheduling is not None:
        errs += validate_labels(rc.scheduling.node_selector, "scheduling.nodeSelector")
        tol_path = "scheduling.tolerations"
        tols = rc.scheduling.tolerations or []
        errs += validate_tolerations(tols, tol_path)
        seen: set[tuple[Any, ...]] = set()
        for i, t in enumerate(tols):
            ident = (t.key or "", t.operator or "", t.value or "", t.effect or "")
            if ident in seen:
                errs.append(duplicate(index(tol_path, i), _builtins(t)))
            seen.add(ident)
    return errs


MAX_PARALLELISM_INDEXED = 100_000
MAX_FAILED_INDEXES_INDEXED = 100_000
COMPLETIONS_SOFT_LIMIT = 100_000
PARALLELISM_LIMIT_HIGH_COMPLETIONS = 10_000
MAX_FAILED_INDEXES_HIGH_COMPLETIONS = 10_000
MAX_MANAGED_BY_LENGTH = 63


def _validate_managed_by(value: str, path: str) -> Errors:
    if not value:
        return [required(path, "")]
    host, sep, rest = value.partition("/")
    if not sep or not host or not rest:
        return [invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    errs = [invalid(path, host, m) for m in names.is_dns1123_subdomain(host)]
    if len(value) > MAX_MANAGED_BY_LENGTH:
        errs.append(too_long(path, MAX_MANAGED_BY_LENGTH))
    return errs


def _validate_indexed(spec: JobSpec, path: str) -> Errors:
    errs: Errors = []
    if spec.completions is None:
        errs.append(required(child(path, "completions"), "when completion mode is Indexed"))
    if spec.parallelism > MAX_PARALLELISM_INDEXED:
        errs.append(
            invalid(
                child(path, "parallelism"),
                spec.parallelism,
                f"must be less than or equal to {MAX_PARALLELISM_INDEXED} when completion mode is Indexed",
            )
        )
    mfi_path = child(path, "maxFailedIndexes")
    mfi = spec.max_failed_indexes
    if spec.completions is not None and mfi is not None and mfi > spec.completions:
        errs.append(invalid(mfi_path, mfi, "must be less than or equal to completions"))
    if mfi is not None and mfi > MAX_FAILED_INDEXES_INDEXED:
        errs.append(
            invalid(mfi_path, mfi, f"must be less than or equal to {MAX_FAILED_INDEXES_INDEXED}")
        )
    high = (
        f"when completions are above {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
    )
    if (
        spec.completions is not None
        and spec.completions > COMPLETIONS_SOFT_LIMIT
        and spec.backoff_limit_per_index is not None
    ):
        if mfi is None:
            errs.append(
                required(
                    mfi_path,
                    f"must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}",
                )
            )
        if spec.parallelism > PARALLELISM_LIMIT_HIGH_COMPLETIONS:
            errs.append(
                invalid(
                    child(path, "parallelism"),
                    spec.parallelism,
                    f"must be less than or equal to {PARALLELISM_LIMIT_HIGH_COMPLETIONS} {high}",
                )
            )
        if mfi is not None and mfi > MAX_FAILED_INDEXES_HIGH_COMPLETIONS:
            errs.append(
                invalid(
                    mfi_path,
                    mfi,
                    f"must be less than or equal to {MAX_FAILED_INDEXES_HIGH_COMPLETIONS} {high}",
                )
            )
    return errs


def _validate_job_spec(spec: JobSpec, path: str) -> Errors:
    errs: Errors = []
    for field_name, value in (
        ("parallelism", spec.parallelism),
        ("completions", spec.completions),
        ("activeDeadlineSeconds", spec.active_deadline_seconds),
        ("backoffLimit", spec.backoff_limit),
        ("ttlSecondsAfterFinished", spec.ttl_seconds_after_finished),
        ("backoffLimitPerIndex", spec.backoff_limit_per_index),
        ("maxFailedIndexes", spec.max_failed_indexes),
    ):
        if value is not None:
            errs += _nonnegative(value, child(path, field_name))
    if spec.max_failed_indexes is not None and spec.backoff_limit_per_index is None:
        errs.append(
            required(child(path, "backoffLimitPerIndex"), "when maxFailedIndexes is specified")
        )
    if spec.managed_by is not None:
        errs += _validate_managed_by(spec.managed_by, child(path, "managedBy"))
    if spec.completion_mode not in ("NonIndexed", "Indexed"):
        errs.append(
            not_supported(
                child(path, "completionMode"), spec.completion_mode, ["NonIndexed", "Indexed"]
            )
        )
    if spec.completion_mode == "Indexed":
        errs += _validate_indexed(spec, path)
    else:
        for field_name, value in (
            ("backoffLimitPerIndex", spec.backoff_limit_per_index),
            ("maxFailedIndexes", spec.max_failed_indexes),
        ):
            if value is not None:
                errs.append(
                    invalid(child(path, field_name), value, "requires indexed completion mode")
                )
    if spec.success_policy is not None and spec.completion_mode != "Indexed":
        errs.append(
            invalid(
                child(path, "successPolicy"),
                spec.success_policy,
                "requires indexed completion mode",
            )
        )
    prp = spec.pod_replacement_policy
    if prp is not None:
        allowed = (
            ["Failed"] if spec.pod_failure_policy is not None else ["Failed", "TerminatingOrFailed"]
        )
        if prp not in allowed:
            errs.append(not_supported(child(path, "podReplacementPolicy"), prp, allowed))

    template_path = child(path, "template")
    errs += validate_pod_template_spec(spec.template, template_path)
    rp_path = child(child(template_path, "spec"), "restartPolicy")
    rp = spec.template.spec.restart_policy if spec.template.spec else None
    if rp in (None, "Always"):
        errs.append(required(rp_path, 'valid values: "OnFailure", "Never"'))
    elif rp not in ("OnFailure", "Never"):
        errs.append(not_supported(rp_path, rp, ["OnFailure", "Never"]))
    elif spec.pod_failure_policy is not None and rp != "Never":
        errs.append(
            invalid(rp_path, rp, 'only "Never" is supported when podFailurePolicy is specified')
        )

    # The selector is generated when absent; one the user gave must select the pods.
    if spec.selector is not None:
        errs += validate_label_selector(spec.selector, child(path, "selector"))
        labels = spec.template.metadata.labels
        if not selector_matches(spec.selector, labels):
            errs.append(
                invalid(
                    child(template_path, "metadata.labels"),
                    dict(labels or {}),
                    "`selector` does not match template `labels`",
                )
            )
    return errs


def validate_job(job: Job) -> Errors:
    errs = validate_object_meta(job.metadata, True, names.is_dns1123_subdomain)
    spec = job.spec if job.spec is not None else JobSpec(template=PodTemplateSpec())
    errs += _validate_job_spec(spec, "spec")
    if spec.completion_mode == "Indexed" and spec.completions is not None and spec.completions > 0:
        # Indexed pods are named <job>-<index>, which must be a DNS label.
        hostname = f"{job.metadata.name}-{spec.completions - 1}"
        if names.is_dns1123_label(hostname):
            errs.append(
                invalid(
                    "metadata.name",
                    job.metadata.name,
                    f"will not able to create pod with invalid DNS label: {hostname}",
                )
            )
    return errs


# ---------------------------------------------------------------------- CronJob
CRONJOB_NAME_MAX = 52  # the Job's name appends "-" and up to 10 digits of minutes
_CONCURRENCY_POLICIES = ("Allow", "Forbid", "Replace")
_TIME_ZONE_PART = re.compile(r"^[A-Za-z\.\-_0-9+]{1,14}$")


def _validate_time_zone(tz: str | None, path: str) -> Errors:
    """``validateTimeZone`` without loading the zone (the controller reports an
    unknown zone with an UnknownTimeZone event, as Kubernetes does at sync)."""
    if tz is None:
        return []
    if not tz:
        return [invalid(path, tz, "timeZone must be nil or non-empty string")]
    for part in tz.split("/"):
        if part in (".", "..") or part.startswith("-") or not _TIME_ZONE_PART.match(part):
            msg = f"unknown time zone {tz}: invalid time zone name part {part!r}"
            return [invalid(path, tz, msg)]
    if tz.lower() == "local":
        return [
            invalid(
                path,
                tz,
                "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
            )
        ]
    return []


def validate_cron_job(cj: CronJob) -> Errors:
    errs = validate_object_meta(cj.metadata, True, names.is_dns1123_subdomain)
    if len(cj.metadata.name) > CRONJOB_NAME_MAX:
        errs.append(
            invalid(
                "metadata.name",
                cj.metadata.name,
                f"must be no more than {CRONJOB_NAME_MAX} characters",
            )
        )
    spec = cj.spec
    if spec is None:
        return [*errs, required("spec", "")]
    if not spec.schedule:
        errs.append(required("spec.schedule", ""))
    else:
        try:
            parse_schedule(spec.schedule)
        except CronError as err:
            errs.append(invalid("spec.schedule", spec.schedule, str(err)))
        if "TZ" in spec.schedule:
            errs.append(
                invalid(
                    "spec.schedule",
                    spec.schedule,
                    "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
                )
            )
    errs += _validate_time_zone(spec.time_zone, "spec.timeZone")
    if spec.starting_deadline_seconds is not None:
        errs += _nonnegative(spec.starting_deadline_seconds, "spec.startingDeadlineSeconds")
    if spec.concurrency_policy not in _CONCURRENCY_POLICIES:
        errs.append(
            not_supported("spec.concurrencyPolicy", spec.concurrency_policy, _CONCURRENCY_POLICIES)
        )
    errs += _nonnegative(spec.successful_jobs_history_limit, "spec.successfulJobsHistoryLimit")
    errs += _nonnegative(spec.failed_jobs_history_limit, "spec.failedJobsHistoryLimit")
    tmpl = spec.job_template
    errs += validate_labels(tmpl.metadata.labels, "spec.jobTemplate.metadata.labels")
    errs += validate_annotations(tmpl.metadata.annotations, "spec.jobTemplate.metadata.annotations")
    if tmpl.spec is None:
        errs.append(required("spec.jobTemplate.spec", ""))
    else:
        errs += _validate_job_spec(tmpl.spec, "spec.jobTemplate.spec")
    return errs


# -------------------------------------------------------------------- DaemonSet
def validate_daemon_set(ds: DaemonSet) -> Errors:
    """``ValidateDaemonSet`` on create (apps/validation); updateStrategy is
    carried, not checked."""
    errs = validate_object_meta(ds.metadata, True, names.is_dns1123_subdomain)
    spec = ds.spec
    if spec is None:
        return [*errs, required("spec", "")]
    sel = spec.selector
    errs += validate_label_selector(sel, "spec.selector")
    if not (sel.match_labels or sel.match_expressions):
        errs.append(
            invalid("spec.selector", _builtins(sel), "empty selector is invalid for daemonset")
        )
    elif not selector_matches(sel, spec.template.metadata.labels):
        errs.append(
            invalid(
                "spec.template.metadata.labels",
                dict(spec.template.metadata.labels or {}),
                "`selector` does not match template `labels`",
            )
        )
    errs += validate_pod_template_spec(spec.template, "spec.template")
    pod = spec.template.spec
    rp = pod.restart_policy if pod is not None else None
    if rp not in (None, "Always"):
        errs.append(not_supported("spec.template.spec.restartPolicy", rp, ["Always"]))
    if pod is not None and pod.active_deadline_seconds is not None:
        errs.append(
            invalid(
                "spec.template.spec.activeDeadlineSeconds",
                pod.active_deadline_seconds,
                "activeDeadlineSeconds in DaemonSet is not Supported",
            )
        )
    for field_name, value in (
        ("minReadySeconds", spec.min_ready_seconds),
        ("revisionHistoryLimit", spec.revision_history_limit),
    ):
        if value is not None:
            errs += _nonnegative(value, child("spec", field_name))
    return errs


# ---------------------------------------------------------------- NodeOperation
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
        errs += _name_errors(names.is_dns1123_subdomain, spec.node_name, "spec.nodeName")
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
        errs += _nonnegative(spec.timeout_seconds, "spec.timeoutSeconds")
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


VALIDATORS: dict[type, Callable[[Any], Errors]] = {
    Pod: validate_pod,
    Namespace: validate_namespace,
    Node: validate_node,
    PriorityClass: validate_priority_class,
    LimitRange: validate_limit_range,
    RuntimeClass: validate_runtime_class,
    Job: validate_job,
    CronJob: validate_cron_job,
    DaemonSet: validate_daemon_set,
    NodeOperation: validate_node_operation,
}
