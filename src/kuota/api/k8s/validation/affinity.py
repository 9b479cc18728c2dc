"""Where a pod may run: node selector terms, node and pod (anti-)affinity,
taints and tolerations, topology spread constraints (``pkg/apis/core/validation``)."""

from __future__ import annotations

from kuota.api import names
from kuota.api.errors import (
    DUPLICATE,
    FieldError,
    child,
    duplicate,
    forbidden,
    index,
    invalid,
    not_supported,
    required,
)
from kuota.api.k8s.corev1 import (
    Affinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PodAffinityTerm,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
from kuota.api.k8s.validation.objectmeta import (
    NOT_POSITIVE,
    Errors,
    as_builtins,
    name_errors,
    selector_requirement_errors,
    validate_label_name,
    validate_label_selector,
)
from kuota.api.meta import LabelSelector


# ------------------------------------------------------------ node selector terms
def validate_node_selector_requirement(
    req: NodeSelectorRequirement, path: str, *, allow_invalid_label_value: bool = False
) -> Errors:
    return selector_requirement_errors(
        req.key,
        req.operator,
        req.values or [],
        path,
        numeric=True,
        allow_invalid_label_value=allow_invalid_label_value,
    )


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
            errs += name_errors(names.is_dns1123_subdomain, v, index(child(path, "values"), i))
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
        errs += name_errors(names.is_dns1123_label, ns, child(path, "namespace"))
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
                    p, DUPLICATE, "taints must be unique by key and effect pair", as_builtins(t)
                )
            )
            continue
        seen.add((t.key, t.effect))
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
