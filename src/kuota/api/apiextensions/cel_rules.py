"""A CRD's ``x-kubernetes-validations`` rules run on a custom resource as
kube-apiserver runs them (apiextensions-apiserver's
``pkg/apiserver/schema/cel/validation.go``): each rule at the schema node it
sits on, with ``self`` that node's value (at a resource's root also its
apiVersion, kind and metadata.name/generateName) and, for a transition rule
(one reading ``oldSelf``), ``oldSelf`` the correlated old value, only where
there is one (object fields by name, ``map`` lists by their keys). A rule
that does not hold is an error at the node (or at its ``fieldPath``) with
its ``messageExpression``, ``message`` or ``failed rule: <rule>``, of its
``reason``'s type; null values are not checked.

Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Final

from kuota.api import errors as e
from kuota.api.cel import CelError, compile_expr, optional_old_self
from kuota.api.errors import FieldError, child, index, key

__all__ = ["BLOCKED", "BODY", "CREATE", "UPDATE", "has_rules", "validate_rules"]

BLOCKED: Final = (
    "some validation rules were not checked because the object was invalid; "
    "correct the existing errors to complete validation"
)
_RULES = "x-kubernetes-validations"


def has_rules(s: Any) -> bool:
    if not isinstance(s, dict):
        return False
    if s.get(_RULES):
        return True
    return (
        any(has_rules(p) for p in (s.get("properties") or {}).values())
        or has_rules(s.get("items"))
        or has_rules(s.get("additionalProperties"))
    )


# Which rules run where: where a write's body is read (BODY: those not
# reading oldSelf, which need no stored object), and where the store admits
# it (CREATE: the optionalOldSelf ones, oldSelf none; UPDATE: those reading
# oldSelf, where an old value is correlated or oldSelf is optional).
BODY, CREATE, UPDATE = "body", "create", "update"


def _runs(phase: str, reads_old: bool, optional_old: bool, has_old: bool) -> bool:
    if phase == BODY:
        return not reads_old
    if phase == CREATE:
        return reads_old and optional_old
    return reads_old and (has_old or optional_old)


def _rule_name(rule: dict[str, Any]) -> str:
    """kube-apiserver's ruleErrorString: the message, else the rule."""
    return str(rule.get("message") or "").strip() or str(rule.get("rule") or "").strip()


def _field_path(path: str, rel: str) -> str:
    """A rule's ``fieldPath`` (``.a.b``, ``.a['k']``) under ``path``."""
    out, i = path, 0
    while i < len(rel):
        if rel[i] == ".":
            j = i + 1
            while j < len(rel) and rel[j] not in ".[":
                j += 1
            out, i = child(out, rel[i + 1 : j]), j
        elif rel.startswith("['", i):
            j = rel.index("']", i)
            out, i = key(out, rel[i + 2 : j]), j + 2
        else:
            break
    return out


def _message(rule: dict[str, Any], data: dict[str, Any]) -> str:
    expr = rule.get("messageExpression")
    if expr:
        try:
            value = compile_expr(str(expr)).eval(data)
        except CelError:
            value = None
        if isinstance(value, str) and value.strip() and "\n" not in value.strip():
            return value.strip()
    msg = str(rule.get("message") or "").strip()
    return msg or f"failed rule: {str(rule.get('rule') or '').strip()}"


def _error(path: str, typ: str, detail: str, reason: Any) -> FieldError:
    if reason == "FieldValueForbidden":
        return e.forbidden(path, detail)
    if reason == "FieldValueRequired":
        return e.required(path, detail)
    if reason == "FieldValueDuplicate":
        return e.duplicate(path, typ)
    return e.invalid(path, typ, detail)


def _run(
    s: dict[str, Any], v: Any, old: Any, path: str, head: dict[str, Any] | None, phase: str
) -> list[FieldError]:
    out: list[FieldError] = []
    typ = str(s.get("type") or "")
    this = {**head, **v} if head is not None and isinstance(v, dict) else v
    was = {**head, **old} if head is not None and isinstance(old, dict) else old
    for rule in s.get(_RULES) or ():
        if not isinstance(rule, dict) or not rule.get("rule"):
            continue
        optional_old = rule.get("optionalOldSelf") is True
        source = str(rule["rule"])
        try:
            compiled = compile_expr(optional_old_self(source) if optional_old else source)
        except CelError as err:
            if not err.unsupported:  # (those the CRD's reading warned of)
                out.append(e.invalid(path, typ, f"rule compile error: {err}"))
            continue
        if not _runs(phase, compiled.uses_old_self, optional_old, old is not None):
            continue
        data = {"self": this, "oldSelf": was} if compiled.uses_old_self else {"self": this}
        try:
            ok = compiled.eval(data)
        except CelError as err:
            if str(err).startswith("no such overload"):
                out.append(
                    e.invalid(
                        path,
                        typ,
                        f"'{err}': call arguments did not match a supported operator, "
                        f"function or macro signature for rule: {_rule_name(rule)}",
                    )
                )
            else:
                out.append(e.invalid(path, typ, f"{err} evaluating rule: {_rule_name(rule)}"))
            continue
        if ok is True:
            continue
        where = _field_path(path, str(rule.get("fieldPath") or ""))
        out.append(_error(where, typ, _message(rule, data), rule.get("reason")))
    return out


def _map_keys(s: dict[str, Any]) -> list[str] | None:
    if s.get("x-kubernetes-list-type") == "map":
        return list(s.get("x-kubernetes-list-map-keys") or ())
    return None


def _walk(
    s: Any,
    v: Any,
    old: Any,
    path: str,
    out: list[FieldError],
    head: dict[str, Any] | None,
    phase: str,
) -> None:
    if not isinstance(s, dict) or v is None or not has_rules(s):
        return
    if s.get(_RULES):
        out.extend(_run(s, v, old, path, head, phase))
    if isinstance(v, dict):
        correlated = isinstance(old, dict) and s.get("x-kubernetes-map-type") != "atomic"
        props = s.get("properties") or {}
        addl = s.get("additionalProperties")
        for k, sub in v.items():
            ps = props.get(k) if props else (addl if isinstance(addl, dict) else None)
            if ps is None:
                continue
            kp = child(path, k) if props else key(path, k)
            prev = old.get(k) if correlated else None
            _walk(ps, sub, prev, kp, out, _embedded_head(ps, sub), phase)
    elif isinstance(v, list):
        item = s.get("items")
        keys = _map_keys(s)
        olds: dict[tuple[Any, ...], Any] = {}
        if keys and isinstance(old, list):
            olds = {tuple(o.get(k) for k in keys): o for o in old if isinstance(o, dict)}
        for i, x in enumerate(v):
            prev = olds.get(tuple(x.get(k) for k in keys)) if keys and isinstance(x, dict) else None
            _walk(item, x, prev, index(path, i), out, _embedded_head(item, x), phase)


def _embedded_head(s: Any, v: Any) -> dict[str, Any] | None:
    if isinstance(s, dict) and s.get("x-kubernetes-embedded-resource") and isinstance(v, dict):
        return _head(v)
    return None


def _head(raw: dict[str, Any]) -> dict[str, Any]:
    """What a resource root's ``self`` has beside its schema's fields:
    apiVersion, kind and metadata's name and generateName (model.WithTypeAndObjectMeta)."""
    found = raw.get("metadata")
    meta: dict[str, Any] = found if isinstance(found, dict) else {}
    head: dict[str, Any] = {
        k: raw[k] for k in ("apiVersion", "kind") if isinstance(raw.get(k), str)
    }
    head["metadata"] = {k: meta[k] for k in ("name", "generateName") if k in meta}
    return head


def validate_rules(
    obj: dict[str, Any],
    schema: dict[str, Any],
    old: dict[str, Any] | None = None,
    phase: str = BODY,
) -> list[FieldError]:
    """The errors of the rules under ``schema`` (a version's
    openAPIV3Schema) for the custom resource ``obj`` (defaulted and pruned)
    and, on an update, its stored ``old``: the rules of ``phase`` (see
    BODY, CREATE, UPDATE)."""
    out: list[FieldError] = []
    body = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata")}
    before = (
        {k: v for k, v in old.items() if k not in ("apiVersion", "kind", "metadata")}
        if old is not None
        else None
    )
    root = {**schema, "type": "object"}
    head = _head(obj)
    if root.get(_RULES):
        out.extend(_run(root, body, before, "", head, phase))
    inner = {k: v for k, v in root.items() if k != _RULES}
    _walk(inner, body, before, "", out, None, phase)
    return out
