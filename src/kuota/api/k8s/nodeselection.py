"""Node selector requirements against a node's labels, as Kubernetes'
``nodeaffinity`` matches them, and tolerations against taints: one matcher
each for flavor assignment (a flavor's node labels and taints) and for pod
placement (a node's)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from kuota.api.k8s.corev1 import NodeSelectorRequirement, Taint, Toleration

_INT64 = re.compile(r"^[+-]?[0-9]+$")  # strconv.ParseInt(s, 10, 64)


def _parse_int64(s: str | None) -> int | None:
    if s is None or not _INT64.match(s):
        return None
    v = int(s)
    return v if -(2**63) <= v < 2**63 else None


def node_selector_requirement_matches(
    req: NodeSelectorRequirement, labels: Mapping[str, str]
) -> bool:
    """One requirement of a node selector term against a node's labels (or,
    for matchFields, ``{"metadata.name": name}``)."""
    has = req.key in labels
    value = labels.get(req.key)
    values = req.values or []
    op = req.operator
    if op == "In":
        return has and value in values
    if op == "NotIn":
        return not has or value not in values
    if op == "Exists":
        return has
    if op == "DoesNotExist":
        return not has
    if op in ("Gt", "Lt"):
        # Exactly one integer value; a label that is not an integer fails.
        bound = _parse_int64(values[0]) if len(values) == 1 else None
        actual = _parse_int64(value) if has else None
        if bound is None or actual is None:
            return False
        return actual > bound if op == "Gt" else actual < bound
    return False


def tolerates(t: Toleration, taint: Taint) -> bool:
    """``Toleration.ToleratesTaint``: an empty effect matches every effect, an
    empty key (with Exists) every key; an empty operator means Equal.
    Lt/Gt sit behind an alpha gate (off by default) and match nothing."""
    if t.effect and t.effect != taint.effect:
        return False
    if t.key and t.key != taint.key:
        return False
    op = t.operator or "Equal"
    if op == "Exists":
        return True
    if op == "Equal":
        return (t.value or "") == (taint.value or "")
    return False
