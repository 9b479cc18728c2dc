"""Kueue's validating webhooks (``pkg/webhooks/*.go``) as pure functions.

They run on the internal (v1beta2-shaped) object after the schema and CEL
rules of the object's own version passed, exactly where Kueue's webhooks sit,
so their paths are v1beta2 paths. Each returns every error it finds.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from kuota.api import errors as e
from kuota.api.base import Quantity
from kuota.api.errors import FieldError, child, index, key
from kuota.api.k8s.corev1 import ResourceList, ResourceRequirements, Taint, Toleration
from kuota.api.k8s.validation import (
    validate_annotations,
    validate_label_selector,
    validate_labels,
)
from kuota.api.kueue import types as t
from kuota.api.kueue import workload_types
from kuota.api.names import is_label_value, is_qualified_name

Gates = Mapping[str, bool]

IS_NEGATIVE = "must be greater than or equal to 0"
LENDING_ABOVE_NOMINAL = "must be less than or equal to the nominalQuota"
ONE_NANO = Quantity.parse("1n")
ADMISSION_GATED_BY = "kueue.x-k8s.io/admission-gated-by"
PRIORITY_BOOST = "kueue.x-k8s.io/priority-boost"
MAX_GATE_NAME = 63


def _non_negative(q: Quantity, path: str) -> list[FieldError]:
    return [e.invalid(path, str(q), IS_NEGATIVE)] if q.sign() < 0 else []


def _label_name(name: str, path: str) -> list[FieldError]:
    return [e.invalid(path, name, msg) for msg in is_qualified_name(name)]


# ------------------------------------------------------------------ shared quota rules
def validate_fair_sharing(fs: t.FairSharing | None, path: str) -> list[FieldError]:
    if fs is None or fs.weight is None:
        return []
    w = fs.weight
    if w.sign() < 0:
        return [e.invalid(path, str(w), IS_NEGATIVE)]
    if w.sign() > 0 and w <= ONE_NANO:
        return [e.invalid(path, str(w), "When not 0, weight must be > 10e-9")]
    return []


def validate_resource_groups(
    groups: list[t.ResourceGroup] | None,
    path: str,
    *,
    has_parent: bool,
    lending_at_most_nominal: bool,
    parent_word: str,
) -> list[FieldError]:
    errs: list[FieldError] = []
    seen_resources: set[str] = set()
    seen_flavors: set[str] = set()
    limit_msg = f"must be nil when {parent_word} is empty"
    for i, rg in enumerate(groups or ()):
        gp = index(path, i)
        for j, name in enumerate(rg.covered_resources):
            rp = index(child(gp, "coveredResources"), j)
            errs += _label_name(name, rp)
            if name in seen_resources:
                errs.append(e.duplicate(rp, name))
            else:
                seen_resources.add(name)
        for j, fq in enumerate(rg.flavors):
            fp = index(child(gp, "flavors"), j)
            for k, rq in enumerate(fq.resources):
                if k >= len(rg.covered_resources):
                    break
                qp = index(child(fp, "resources"), k)
                if rq.name != rg.covered_resources[k]:
                    errs.append(
                        e.invalid(
                            child(qp, "name"), rq.name, "must match the name in coveredResources"
                        )
                    )
                errs += _non_negative(rq.nominal_quota, child(qp, "nominalQuota"))
                if rq.borrowing_limit is not None:
                    bp = child(qp, "borrowingLimit")
                    if not has_parent:
                        errs.append(e.invalid(bp, str(rq.borrowing_limit), limit_msg))
                    errs += _non_negative(rq.borrowing_limit, bp)
                if rq.lending_limit is not None:
                    lp = child(qp, "lendingLimit")
                    errs += _non_negative(rq.lending_limit, lp)
                    if not has_parent:
                        errs.append(e.invalid(lp, str(rq.lending_limit), limit_msg))
                    if lending_at_most_nominal and rq.lending_limit > rq.nominal_quota:
                        errs.append(e.invalid(lp, str(rq.lending_limit), LENDING_ABOVE_NOMINAL))
            if fq.name in seen_flavors:
                errs.append(e.duplicate(child(fp, "name"), fq.name))
            else:
                seen_flavors.add(fq.name)
    return errs


# ------------------------------------------------------------------ ClusterQueue
def all_flavors(groups: list[t.ResourceGroup] | None) -> list[str]:
    return [f.name for g in groups or () for f in g.flavors]


def validate_cluster_queue(
    cq: t.ClusterQueue,
    gates: Gates,
    *,
    tolerated_on_flavors: Mapping[str, frozenset[str]] | None = None,
) -> list[FieldError]:
    """Kueue's ClusterQueue webhook. On update, ``tolerated_on_flavors`` names
    the checks whose stored onFlavors may stay as they are even if invalid."""
    s = cq.spec
    groups = s.resource_groups or []
    errs = validate_resource_groups(
        groups,
        "spec.resourceGroups",
        has_parent=bool(s.cohort_name),
        lending_at_most_nominal=True,
        parent_word="cohort",
    )
    if s.namespace_selector is not None:
        errs += validate_label_selector(s.namespace_selector, "spec.namespaceSelector")
    p = s.preemption
    if (
        p.reclaim_within_cohort == "Never"
        and p.borrow_within_cohort is not None
        and p.borrow_within_cohort.policy != "Never"
    ):
        errs.append(
            e.invalid(
                "spec.preemption",
                "object",
                "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never",
            )
        )
    ff = s.flavor_fungibility
    if ff.preference is not None and (
        ff.when_can_borrow != "TryNextFlavor" or ff.when_can_preempt != "TryNextFlavor"
    ):
        errs.append(
            e.invalid(
                "spec.flavorFungibility.preference",
                ff.preference,
                f'preference "{ff.preference}" requires both whenCanBorrow and whenCanPreempt '
                "to be TryNextFlavor",
            )
        )
    errs += validate_fair_sharing(s.fair_sharing, "spec.fairSharing")
    total_flavors = sum(len(g.flavors) for g in groups)
    if total_flavors > 256:
        errs.append(
            e.invalid(
                "spec.resourceGroups",
                total_flavors,
                f"total number of flavors across all resourceGroups must be ≤ 256, got {total_flavors}",
            )
        )
    total_resources = sum(len(g.covered_resources) for g in groups)
    if total_resources > 256:
        errs.append(
            e.invalid(
                "spec.resourceGroups",
                total_resources,
                "total number of covered resources across all resourceGroups must be ≤ 256, "
                f"got {total_resources}",
            )
        )
    for i, g in enumerate(groups):
        combos = sum(len(f.resources) for f in g.flavors)
        if combos > 512:
            errs.append(
                e.invalid(
                    index("spec.resourceGroups", i),
                    combos,
                    f"number of flavor-resource combinations in a resourceGroup must be ≤ 512, got {combos}",
                )
            )
    if gates.get("ConcurrentAdmission", False) and s.concurrent_admission_policy is not None:
        errs += _validate_concurrent_admission(cq)
    if s.admission_checks_strategy is not None:
        valid = all_flavors(groups)
        valid_set = set(valid)
        tolerated = tolerated_on_flavors or {}
        for i, rule in enumerate(s.admission_checks_strategy.admission_checks):
            if tolerated.get(rule.name) == frozenset(rule.on_flavors or ()):
                continue  # stored like this before the rule: left to converge
            op = child(index("spec.admissionChecksStrategy.admissionChecks", i), "onFlavors")
            for j, fl in enumerate(rule.on_flavors or ()):
                if fl not in valid_set:
                    errs.append(e.not_supported(index(op, j), fl, valid))
    return errs


def _validate_concurrent_admission(cq: t.ClusterQueue) -> list[FieldError]:
    s = cq.spec
    groups = s.resource_groups or []
    pol = s.concurrent_admission_policy
    assert pol is not None
    errs: list[FieldError] = []
    if len(groups) != 1:
        errs.append(
            e.invalid(
                "spec.resourceGroups",
                len(groups),
                "must have exactly one ResourceGroup when ConcurrentAdmissionPolicy is defined",
            )
        )
    if len(groups) == 1 and len(groups[0].flavors) > 16:
        errs.append(
            e.invalid(
                "spec.resourceGroups[0].flavors",
                len(groups[0].flavors),
                "cannot have more than 16 resource flavors in the ResourceGroup when "
                "ConcurrentAdmissionPolicy is defined",
            )
        )
    cons = pol.migration.constraints
    cpath = "spec.concurrentAdmissionPolicy.migration.constraints"
    if cons is not None:
        mode = pol.migration.mode
        if mode and mode != "TryPreferredFlavors":
            errs.append(
                e.forbidden(
                    cpath,
                    f'may only be set when migration.mode is "TryPreferredFlavors" (got "{mode}")',
                )
            )
        elif cons.last_acceptable_flavor_name is not None:
            valid = all_flavors(groups)
            if cons.last_acceptable_flavor_name not in valid:
                errs.append(
                    e.invalid(
                        child(cpath, "lastAcceptableFlavorName"),
                        cons.last_acceptable_flavor_name,
                        f"must be one of the flavors defined in the ClusterQueue: [{' '.join(valid)}]",
                    )
                )
    if s.queueing_strategy == "StrictFIFO":
        errs.append(
            e.invalid(
                "spec.queueingStrategy",
                s.queueing_strategy,
                "StrictFIFO queueing strategy cannot be used when ConcurrentAdmissionPolicy is defined",
            )
        )
    return errs


# ------------------------------------------------------------------ Cohort
def validate_cohort(co: t.Cohort, gates: Gates) -> list[FieldError]:
    s = co.spec
    errs = validate_fair_sharing(s.fair_sharing, "spec.fairSharing")
    errs += validate_resource_groups(
        s.resource_groups,
        "spec.resourceGroups",
        has_parent=bool(s.parent_name),
        lending_at_most_nominal=False,
        parent_word="parent",
    )
    return errs


# ------------------------------------------------------------------ ResourceFlavor
def validate_node_taints(taints: list[Taint] | None, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(taints or ()):
        ip = index(path, i)
        errs += _label_name(taint.key, child(ip, "key"))
        value = taint.value or ""
        msgs = is_label_value(value)
        if msgs:
            errs.append(e.invalid(child(ip, "value"), value, ";".join(msgs)))
        k = (taint.key, taint.effect or "")
        if k in seen:
            errs.append(
                e.FieldError(
                    ip, e.DUPLICATE, "taints must be unique by key and effect pair", taint.key
                )
            )
            continue
        seen.add(k)
    return errs


def validate_toleration_keys(tols: list[Toleration] | None, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, tol in enumerate(tols or ()):
        if tol.key:
            errs += _label_name(tol.key, child(index(path, i), "key"))
    return errs


def validate_resource_flavor(rf: t.ResourceFlavor, gates: Gates) -> list[FieldError]:
    s = rf.spec
    errs = validate_labels(s.node_labels, "spec.nodeLabels")
    errs += validate_node_taints(s.node_taints, "spec.nodeTaints")
    errs += validate_toleration_keys(s.tolerations, "spec.tolerations")
    return errs


# ------------------------------------------------------------------ Workload
def _resource_list(res: ResourceList | None, path: str, gates: Gates) -> list[FieldError]:
    errs: list[FieldError] = []
    for name, q in (res or {}).items():
        kp = key(path, name)
        if name == "pods":
            errs.append(e.invalid(kp, "pods", "the key is reserved for internal kueue use"))
        if gates.get("WorkloadValidateResourcesAreNonNegative", True):
            errs += _non_negative(q, kp)
    return errs


def _requirements_ok(r: ResourceRequirements, non_negative: bool) -> bool:
    """``_resource_list`` would find nothing in either list (told apart without
    building paths)."""
    for res in (r.requests, r.limits):
        if res:
            if "pods" in res:
                return False
            if non_negative:
                for q in res.values():
                    if q.nanos < 0:
                        return False
    return True


def _validate_pod_set(ps: t.PodSet, path: str, gates: Gates) -> list[FieldError]:
    # Runs for every podSet of every Workload: the valid case is told apart
    # first, and paths and error lists are built only where something is wrong.
    errs: list[FieldError] = []
    tmpl = ps.template
    md = tmpl.metadata
    if (
        md is not None
        and (md.labels or md.annotations)
        and gates.get("WorkloadValidationForPodSetMetadata", True)
    ):
        errs += validate_labels(md.labels, child(path, "template.metadata.labels"))
        errs += validate_annotations(md.annotations, child(path, "template.metadata.annotations"))
    spec = tmpl.spec
    if spec is None:
        return errs
    non_negative = gates.get("WorkloadValidateResourcesAreNonNegative", True)
    for field_name, containers in (
        ("initContainers", spec.init_containers),
        ("containers", spec.containers),
    ):
        if not containers:
            continue
        for ci, c in enumerate(containers):
            r = c.resources
            if r is None or _requirements_ok(r, non_negative):
                continue
            rp = child(index(child(path, f"template.spec.{field_name}"), ci), "resources")
            errs += _resource_list(r.requests, child(rp, "requests"), gates)
            errs += _resource_list(r.limits, child(rp, "limits"), gates)
    r = spec.resources
    if r is not None and not _requirements_ok(r, non_negative):
        rp = child(path, "template.spec.resources")
        errs += _resource_list(r.requests, child(rp, "requests"), gates)
        errs += _resource_list(r.limits, child(rp, "limits"), gates)
    tr = ps.topology_request
    if tr is not None and gates.get("TASValidateWorkloadSliceSize", True):
        tp = child(path, "topologyRequest")
        if tr.pod_set_slice_required_topology is not None:
            if tr.pod_set_slice_size is None:
                errs.append(
                    e.required(
                        child(tp, "podSetSliceSize"),
                        "must be set when podSetSliceRequiredTopology is specified",
                    )
                )
            elif tr.pod_set_slice_size <= 0:
                errs.append(
                    e.invalid(
                        child(tp, "podSetSliceSize"),
                        tr.pod_set_slice_size,
                        "must be greater than 0",
                    )
                )
        elif tr.pod_set_slice_size is not None:
            errs.append(
                e.forbidden(
                    child(tp, "podSetSliceSize"),
                    "may not be set when podSetSliceRequiredTopology is not specified",
                )
            )
    return errs


def quota_reserved(wl: t.Workload) -> bool:
    return workload_types.quota_reserved(wl)


def validate_workload(
    wl: t.Workload, gates: Gates, *, old: t.Workload | None = None, status_only: bool = False
) -> list[FieldError]:
    """Kueue's ValidateWorkload; ``old`` is the stored object on update.
    ``status_only``: spec and metadata are the stored ones, checked then."""
    errs: list[FieldError] = []
    if not status_only:
        with_min = 0
        for i, ps in enumerate(wl.spec.pod_sets):
            errs += _validate_pod_set(ps, index("spec.podSets", i), gates)
            if ps.min_count is not None:
                with_min += 1
        if with_min > 1:
            errs.append(e.invalid("spec.podSets", with_min, "at most one podSet can use minCount"))
        if with_min and _elastic(wl, gates):
            errs.append(
                e.invalid(
                    "spec.podSets",
                    with_min,
                    "partial admission and elastic job cannot be used together",
                )
            )
    st = wl.status
    if st is not None:
        names = [ps.name for ps in wl.spec.pod_sets]
        if quota_reserved(wl) and not (
            st.admission is None and old is not None and _reserves_without_admission(old)
        ):
            # One stored like this already goes through, so it can converge.
            errs += _validate_admission(wl, names)
        errs += _validate_conditions(st)
        errs += _validate_reclaimable(wl, names, old, gates)
        for i, acs in enumerate(st.admission_checks or ()):
            bp = child(index("status.admissionChecks", i), "podSetUpdates")
            for j, psu in enumerate(acs.pod_set_updates or ()):
                up = index(bp, j)
                if psu.name not in names:
                    errs.append(e.not_supported(child(up, "name"), psu.name, sorted(names)))
                errs += validate_toleration_keys(psu.tolerations, child(up, "tolerations"))
                errs += validate_annotations(psu.annotations, child(up, "annotations"))
                errs += validate_labels(psu.node_selector, child(up, "nodeSelector"))
                errs += validate_labels(psu.labels, child(up, "labels"))
    if status_only:
        return errs
    annotations = wl.metadata.annotations or {}
    if gates.get("AdmissionGatedBy", True):
        if old is None:
            errs += validate_admission_gated_by(annotations.get(ADMISSION_GATED_BY, ""))
        else:
            was = (old.metadata.annotations or {}).get(ADMISSION_GATED_BY, "")
            errs += admission_gated_by_update(was, annotations.get(ADMISSION_GATED_BY, ""))
    if gates.get("PriorityBoost", False) and PRIORITY_BOOST in annotations:
        errs += _validate_priority_boost(annotations[PRIORITY_BOOST])
    return errs


def _reserves_without_admission(wl: t.Workload) -> bool:
    return quota_reserved(wl) and (wl.status is None or wl.status.admission is None)


def _validate_admission(wl: t.Workload, names: list[str]) -> list[FieldError]:
    adm = wl.status.admission if wl.status else None
    path = "status.admission"
    if adm is None:
        return [e.required(path, "must be set while the QuotaReserved condition is true")]
    errs: list[FieldError] = []
    known = set(names)
    for i, psa in enumerate(adm.pod_set_assignments):
        pp = index(child(path, "podSetAssignments"), i)
        if psa.name not in known:
            errs.append(e.FieldError(child(pp, "name"), "Not found", "", psa.name))
        count = psa.count or 0
        if count > 0:
            for rname, q in (psa.resource_usage or {}).items():
                value = q.milli_value() if rname == "cpu" else q.value()
                if value % count:
                    errs.append(
                        e.invalid(
                            key(child(pp, "resourceUsage"), rname),
                            str(q),
                            f"is not a multiple of {count}",
                        )
                    )
    return errs


def _validate_conditions(st: t.WorkloadStatus) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, c in enumerate(st.conditions or ()):
        cp = index("status.conditions", i)
        errs += [e.invalid(child(cp, "type"), c.type, m) for m in is_qualified_name(c.type)]
        if c.last_transition_time is None:
            errs.append(e.required(child(cp, "lastTransitionTime"), "must be set"))
        if c.reason and not _CONDITION_REASON(c.reason):
            errs.append(
                e.invalid(
                    child(cp, "reason"),
                    c.reason,
                    "a condition reason must start with alphabetic character, optionally followed "
                    "by a string of alphanumeric characters or '_,:', and must end with an "
                    "alphanumeric character or '_'",
                )
            )
    return errs


def _condition_reason_matcher() -> Callable[[str], bool]:
    import re

    rx = re.compile(r"[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?")
    return lambda s: len(s) <= 1024 and rx.fullmatch(s) is not None


_CONDITION_REASON = _condition_reason_matcher()


def _elastic(wl: t.Workload, gates: Gates) -> bool:
    """Kueue's workloadslicing.Enabled: an elastic-job Workload, the gate on."""
    return gates.get("ElasticJobsViaWorkloadSlices", True) and (
        (wl.metadata.annotations or {}).get("kueue.x-k8s.io/elastic-job") == "true"
    )


def _validate_reclaimable(
    wl: t.Workload, names: list[str], old: t.Workload | None, gates: Gates
) -> list[FieldError]:
    """Kueue's validateReclaimablePods. An elastic workload's count over its
    podSet's size that the stored object already had is let through: a scale
    down left it stale, and it must be able to converge (kueue#12670)."""
    st = wl.status
    if st is None or not st.reclaimable_pods:
        return []
    counts = {ps.name: ps.count for ps in wl.spec.pod_sets}
    stale: set[tuple[str, int]] = set()
    if old is not None and old.status is not None and _elastic(wl, gates):
        stale = {(rp.name, rp.count) for rp in old.status.reclaimable_pods or ()}
    errs: list[FieldError] = []
    for rp in st.reclaimable_pods:
        p = key("status.reclaimablePods", rp.name)
        if rp.name not in counts:
            errs.append(e.not_supported(child(p, "name"), rp.name, names))
        elif rp.count > counts[rp.name] and (rp.name, rp.count) not in stale:
            errs.append(
                e.invalid(
                    child(p, "count"), rp.count, f"should be less or equal to {counts[rp.name]}"
                )
            )
    return errs


_AGB_PATH = "metadata.annotations[kueue.x-k8s.io/admission-gated-by]"


def validate_admission_gated_by(value: str) -> list[FieldError]:
    if not value:
        return []
    errs: list[FieldError] = []
    seen: set[str] = set()
    for gate in (g.strip() for g in value.split(",")):
        if not gate:
            errs.append(e.invalid(_AGB_PATH, value, "cannot contain empty gate names"))
            continue
        if gate in seen:
            errs.append(e.invalid(_AGB_PATH, value, f"duplicate gate name: {gate}"))
            continue
        seen.add(gate)
        errs += _domain_prefixed_path(gate)
        if len(gate) > MAX_GATE_NAME:
            errs.append(e.too_long(_AGB_PATH, MAX_GATE_NAME))
    return errs


def _gates_of(value: str) -> list[str]:
    return [g.strip() for g in value.split(",")]


def admission_gated_by_update(old: str, new: str) -> list[FieldError]:
    """Gates cannot be added after creation, only removed."""
    errs: list[FieldError] = []
    if not old and new:
        errs.append(e.forbidden(_AGB_PATH, "cannot add admission gate after creation"))
    if old and new:
        before = _gates_of(old)
        if any(g not in before for g in _gates_of(new)):
            errs.append(e.forbidden(_AGB_PATH, "can only remove gates, not add new ones"))
    return errs + validate_admission_gated_by(new)


def _domain_prefixed_path(gate: str) -> list[FieldError]:
    """apimachinery IsDomainPrefixedPath: ``<dns-subdomain>/<path>``."""
    from kuota.api.names import is_dns1123_subdomain

    parts = gate.split("/", 1)
    if len(parts) != 2 or not parts[1]:
        return [
            e.invalid(_AGB_PATH, gate, 'must be a domain-prefixed path (such as "acme.io/foo")')
        ]
    host, rest = parts
    errs = [e.invalid(_AGB_PATH, host, m) for m in is_dns1123_subdomain(host)]
    if not all(ch.isalnum() or ch in "-_./~%!$&'()*+,;=:@" for ch in rest):
        errs.append(e.invalid(_AGB_PATH, rest, "Invalid path"))
    return errs


def _validate_priority_boost(value: str) -> list[FieldError]:
    path = f"metadata.annotations[{PRIORITY_BOOST}]"
    if value == "":
        return [
            e.invalid(
                path,
                value,
                'must be a valid signed integer; use "0" explicitly, empty string is not allowed',
            )
        ]
    if parse_int32(value) is None:
        return [e.invalid(path, value, "must be a valid signed integer")]
    return []


_INT = re.compile(r"[+-]?[0-9]+")


def parse_int32(value: str) -> int | None:
    """Go's strconv.ParseInt(value, 10, 32): an optional sign and ASCII
    digits only (Python's int() also takes "1_0", spaces and other digits),
    within int32; None otherwise."""
    if _INT.fullmatch(value) is None:
        return None
    n = int(value)
    return n if -(2**31) <= n < 2**31 else None


def _none(obj: object, gates: Gates) -> list[FieldError]:
    return []


def default_workload(wl: t.Workload, gates: Gates) -> None:
    """Kueue's mutating Workload webhook (on create, before validation): with
    PartialAdmission off, every podSet's minCount is dropped, so a Workload
    with several is accepted and admitted at full count."""
    if not gates.get("PartialAdmission", True):
        for ps in wl.spec.pod_sets:
            ps.min_count = None


# kind -> mutating webhook (on create), run before the validator.
DEFAULTERS: dict[str, Callable[..., None]] = {"Workload": default_workload}


# kind -> webhook validator (on create). LocalQueue, WorkloadPriorityClass and
# AdmissionCheck have no validating webhook in Kueue.
WEBHOOKS: dict[str, Callable[..., list[FieldError]]] = {
    "ClusterQueue": validate_cluster_queue,
    "Cohort": validate_cohort,
    "ResourceFlavor": validate_resource_flavor,
    "Workload": validate_workload,
    "LocalQueue": _none,
    "WorkloadPriorityClass": _none,
    "AdmissionCheck": _none,
    "Topology": _none,  # Kueue has no Topology webhook: the CRD's rules are all
}
