"""kube-apiserver's checks of a CustomResourceDefinition, as far as kuota
serves what one defines (``apiextensions/validation``): its name, group and
names, scope, one storage version, served versions, a structural schema per
version (a type at every node but under x-kubernetes-preserve-unknown-fields
or int-or-string), and columns' JSON paths. Messages and paths are
kube-apiserver's."""

from __future__ import annotations

from typing import Any

from kuota.api import names
from kuota.api.apiextensions.crd_types import CustomResourceDefinition
from kuota.api.cel import CelError, compile_expr
from kuota.api.errors import FieldError, child, forbidden, index, invalid, key, required
from kuota.api.k8s.validation.objectmeta import name_errors, validate_object_meta

__all__ = ["validate_crd"]

_TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean"})


def _structural(s: Any, path: str, errs: list[FieldError], root: bool = False) -> None:
    """The structural-schema rules kuota depends on: a type at every node
    (but where unknown fields are preserved or int-or-string is declared),
    ``items`` for arrays, no ``additionalProperties`` beside ``properties``."""
    if not isinstance(s, dict):
        errs.append(invalid(path, "", "must be an object"))
        return
    typ = s.get("type")
    free = s.get("x-kubernetes-preserve-unknown-fields") or s.get("x-kubernetes-int-or-string")
    if typ is None and not free and not s.get("x-kubernetes-embedded-resource"):
        errs.append(required(child(path, "type"), "must not be empty for specified object fields"))
    elif typ is not None and typ not in _TYPES:
        errs.append(
            invalid(child(path, "type"), typ, "must be one of " + ", ".join(sorted(_TYPES)))
        )
    if root and typ not in (None, "object"):
        errs.append(invalid(child(path, "type"), typ, 'must be "object" at the root'))
    props = s.get("properties")
    if isinstance(props, dict):
        if s.get("additionalProperties") not in (None, False):
            errs.append(
                forbidden(
                    child(path, "additionalProperties"),
                    "additionalProperties and properties are mutual exclusive",
                )
            )
        for k, sub in props.items():
            if root and k in ("apiVersion", "kind", "metadata"):
                continue
            _structural(sub, key(child(path, "properties"), k), errs)
    addl = s.get("additionalProperties")
    if isinstance(addl, dict):
        _structural(addl, child(path, "additionalProperties"), errs)
    if typ == "array":
        items = s.get("items")
        if items is None:
            errs.append(required(child(path, "items"), "must be specified"))
        else:
            _structural(items, child(path, "items"), errs)


def _rules(s: Any, path: str, out: list[tuple[str, str, str]]) -> None:
    """Each CEL expression of the schema: (its path, its source, its
    variables' kind)."""
    if not isinstance(s, dict):
        return
    for i, r in enumerate(s.get("x-kubernetes-validations") or ()):
        if isinstance(r, dict):
            at = index(child(path, "x-kubernetes-validations"), i)
            for name in ("rule", "messageExpression"):
                if isinstance(r.get(name), str) and r[name]:
                    out.append((child(at, name), r[name], name))
    for k, sub in (s.get("properties") or {}).items():
        _rules(sub, key(child(path, "properties"), k), out)
    for name in ("items", "additionalProperties"):
        _rules(s.get(name), child(path, name), out)


def _compiled(crd: CustomResourceDefinition) -> list[tuple[str, str, CelError]]:
    """The CRD's CEL expressions that do not compile: (path, source, why)."""
    found: list[tuple[str, str, str]] = []
    for i, v in enumerate(crd.spec.versions):
        sch = v.schema.open_apiv3_schema if v.schema is not None else None
        _rules(sch, f"spec.versions[{i}].schema.openAPIV3Schema", found)
    out = []
    for where, src, _ in found:
        try:
            compile_expr(src)
        except CelError as err:
            out.append((where, src, err))
    return out


def crd_warnings(obj: Any) -> list[str]:
    """What of a CRD kuota does not apply to its objects, said when it is
    read: CEL rules calling a function kuota's CEL environment lacks (they
    are not evaluated) and conversion webhooks."""
    if not isinstance(obj, CustomResourceDefinition):
        return []
    out = [
        f"{where}: not evaluated (kuota's CEL environment has no {err.unsupported}())"
        for where, _, err in _compiled(obj)
        if err.unsupported
    ]
    if (obj.spec.conversion or {}).get("strategy") == "Webhook":
        out.append(
            "spec.conversion: the conversion webhook is not called: each version is read and kept as written"
        )
    return out


def validate_crd(crd: CustomResourceDefinition) -> list[FieldError]:
    errs = validate_object_meta(crd.metadata, False, names.is_dns1123_subdomain)
    spec = crd.spec
    n = spec.names
    if crd.metadata.name != f"{n.plural}.{spec.group}":
        errs.append(
            invalid("metadata.name", crd.metadata.name, 'must be spec.names.plural+"."+spec.group')
        )
    if not spec.group:
        errs.append(required("spec.group"))
    elif len(spec.group.split(".")) < 2:
        errs.append(invalid("spec.group", spec.group, "should be a domain with at least one dot"))
    else:
        errs += name_errors(names.is_dns1123_subdomain, spec.group, "spec.group")
    for field_name, value in (("plural", n.plural), ("singular", n.singular or "")):
        if value:
            errs += name_errors(names.is_dns1035_label, value, f"spec.names.{field_name}")
    if not n.plural:
        errs.append(required("spec.names.plural"))
    if not n.kind:
        errs.append(required("spec.names.kind"))
    elif n.kind != n.kind[:1].upper() + n.kind[1:] or not n.kind.isalnum():
        errs.append(
            invalid(
                "spec.names.kind",
                n.kind,
                "may have mixed case, but should otherwise match: [A-Z][a-z0-9]*",
            )
        )
    if not spec.versions:
        errs.append(
            required("spec.versions", "must have exactly one version marked as storage version")
        )
        return errs
    storage = [v for v in spec.versions if v.storage]
    if len(storage) != 1:
        errs.append(
            invalid(
                "spec.versions",
                [v.name for v in spec.versions],
                "must have exactly one version marked as storage version",
            )
        )
    if not any(v.served for v in spec.versions):
        errs.append(
            invalid(
                "spec.versions",
                [v.name for v in spec.versions],
                "must have at least one version marked as served",
            )
        )
    seen: set[str] = set()
    for i, v in enumerate(spec.versions):
        vp = index("spec.versions", i)
        errs += name_errors(names.is_dns1035_label, v.name, child(vp, "name"))
        if v.name in seen:
            errs.append(invalid(child(vp, "name"), v.name, "must be unique"))
        seen.add(v.name)
        sch = v.schema.open_apiv3_schema if v.schema is not None else None
        sp = child(child(vp, "schema"), "openAPIV3Schema")
        if sch is None:
            errs.append(required(sp, "schemas are required"))
        else:
            _structural(sch, sp, errs, root=True)
        for j, col in enumerate(v.additional_printer_columns or ()):
            cp = index(child(vp, "additionalPrinterColumns"), j)
            if not col.json_path.startswith("."):
                errs.append(
                    invalid(
                        child(cp, "jsonPath"),
                        col.json_path,
                        "must be a simple json path starting with .",
                    )
                )
            if col.type not in ("integer", "number", "string", "boolean", "date"):
                errs.append(
                    invalid(
                        child(cp, "type"),
                        col.type,
                        "must be one of integer, number, string, boolean, date",
                    )
                )
    # A CEL expression that does not compile (but one calling a function
    # kuota's environment lacks, which crd_warnings names) refuses the CRD.
    errs += [
        invalid(where, src, str(err)) for where, src, err in _compiled(crd) if not err.unsupported
    ]
    return errs
