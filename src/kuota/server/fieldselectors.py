"""Field selectors as kube-apiserver supports them: ``metadata.name`` and
``metadata.namespace`` for every kind, plus each built-in kind's own
selectable fields; ``=``, ``==``, ``!=``, comma = AND."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kuota.server import status as st

_COMMON = ("metadata.name", "metadata.namespace")

# (group, kind) -> the extra fields its registry's GetAttrs offers (1.32).
SELECTABLE: dict[tuple[str, str], tuple[str, ...]] = {
    ("", "Pod"): (
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.nominatedNodeName",
    ),
    ("", "Event"): (
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "reason",
        "reportingComponent",
        "source",
        "type",
    ),
    ("", "Namespace"): ("status.phase",),
    ("batch", "Job"): ("status.successful",),
    ("", "Node"): ("spec.unschedulable",),
    ("", "Secret"): ("type",),
    ("apps", "ReplicaSet"): ("status.replicas",),
}

# Where a selectable field's value is read when it is not simply its path.
_DEFAULTS: dict[str, str] = {
    "spec.hostNetwork": "false",
    "spec.unschedulable": "false",
    "status.successful": "0",
}
_PATHS: dict[str, str] = {"status.successful": "status.succeeded", "source": "source.component"}

Matcher = Callable[[dict[str, Any]], bool]


def _value(wire: dict[str, Any], field: str) -> str:
    v: Any = wire
    for part in _PATHS.get(field, field).split("."):
        v = v.get(part) if isinstance(v, dict) else None
    if v is None:
        return _DEFAULTS.get(field, "")
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def parse_field_selector(text: str, group: str, kind: str) -> Matcher | None:
    """A matcher on wire dicts, None for an empty selector; raises ApiError 400
    for a malformed selector or a field the kind does not support."""
    if not text.strip():
        return None
    allowed = _COMMON + SELECTABLE.get((group, kind), ())
    terms: list[tuple[str, bool, str]] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if "!=" in part:
            field, _, value = part.partition("!=")
            eq = False
        elif "==" in part:
            field, _, value = part.partition("==")
            eq = True
        elif "=" in part:
            field, _, value = part.partition("=")
            eq = True
        else:
            raise st.bad_request(f"invalid selector: '{text}'; can't understand '{part}'")
        field = field.strip()
        if field not in allowed:
            quoted = ", ".join(f'"{f}"' for f in allowed)
            raise st.bad_request(f'"{field}" is not a known field selector: only {quoted}')
        terms.append((field, eq, value.strip()))
    if not terms:
        return None

    def match(wire: dict[str, Any]) -> bool:
        for field, eq, value in terms:
            if field == "metadata.namespace" and not (wire.get("metadata") or {}).get("namespace"):
                got = ""
            else:
                got = _value(wire, field)
            if (got == value) != eq:
                return False
        return True

    return match
