"""Whether a podSet can use a flavor at all: its node labels against the
pod's selector and affinity, its taints against the pod's tolerations."""

from __future__ import annotations

from kuota.api.k8s import NodeSelectorRequirement, PodSpec, Taint
from kuota.api.k8s.nodeselection import node_selector_requirement_matches, tolerates
from kuota.api.kueue.types import ResourceFlavor


def flavor_mismatch(flavor: ResourceFlavor | None, fname: str, spec: PodSpec | None) -> str | None:
    """Why a podSet cannot use a flavor (untolerated taint, node labels), or None."""
    if flavor is None:
        return f"flavor {fname} not found"
    fs = flavor.spec
    tolerations = list(spec.tolerations or ()) if spec else []
    tolerations += list(fs.tolerations or ())
    for taint in fs.node_taints or ():
        if taint.effect not in ("NoSchedule", "NoExecute"):
            continue
        if not any(tolerates(t, taint) for t in tolerations):
            return f"untolerated taint {_taint_str(taint)} in flavor {fname}"
    labels = fs.node_labels or {}
    if spec is not None and not _selector_matches(spec, labels):
        return f"flavor {fname} doesn't match node affinity"
    return None


def _taint_str(t: Taint) -> str:
    # k8s Taint.ToString: key=value:effect
    if t.value:
        return f"{t.key}={t.value}:{t.effect}"
    return f"{t.key}:{t.effect}"


def _selector_matches(spec: PodSpec, labels: dict[str, str]) -> bool:
    """The podSet's nodeSelector and required node affinity, restricted to the
    flavor's own label keys, against a node carrying the flavor's labels."""
    keys = labels.keys()
    for k, v in (spec.node_selector or {}).items():
        if k in keys and labels[k] != v:
            return False
    aff = spec.affinity
    na = aff.node_affinity if aff is not None else None
    req = na.required_during_scheduling_ignored_during_execution if na is not None else None
    if req is None:
        return True
    terms: list[list[NodeSelectorRequirement]] = []
    for term in req.node_selector_terms or ():
        exprs = [e for e in (term.match_expressions or ()) if e.key in keys]
        if not exprs:
            return True  # an emptied term matches anything (terms are ORed)
        terms.append(exprs)
    if not terms:
        return True
    return any(all(node_selector_requirement_matches(e, labels) for e in t) for t in terms)
