"""Object metadata (names, namespace, labels, annotations, owner references,
finalizers) and label selectors, as apimachinery's ``api/validation`` and
``apis/meta/v1/validation`` check them; and the helpers every kind's rules share."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from kuota.api import names
from kuota.api.errors import (
    FieldError,
    child,
    forbidden,
    index,
    invalid,
    required,
    too_long,
)
from kuota.api.meta import LabelSelector, ObjectMeta

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


def mask_trailing_dash(name: str) -> str:
    # A generateName may end in "-": the generated suffix follows it. Go drops
    # the last two characters and appends "a" (so "x-" checks as "a").
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def name_errors(fn: NameFn, value: str, path: str) -> Errors:
    return [invalid(path, value, msg) for msg in fn(value)]


def nonnegative(value: int, path: str) -> Errors:
    return [invalid(path, value, IS_NEGATIVE)] if value < 0 else []


def inclusive_range(lo: int, hi: int) -> str:
    return f"must be between {lo} and {hi}, inclusive"


def as_builtins(obj: Any) -> Any:
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


def validate_kube_finalizer_name(value: str, path: str) -> Errors:
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
        errs += validate_kube_finalizer_name(f, index(path, i))
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
                invalid(p, as_builtins(ref), "/v1, Kind=Event is disallowed from being an owner")
            )
        if ref.controller:
            current = f"{ref.kind}/{ref.name}"
            if first_controller:
                errs.append(
                    invalid(
                        path,
                        as_builtins(meta.owner_references),
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
            for msg in name_fn(mask_trailing_dash(meta.generate_name))
        ]
    if meta.name:
        msgs = name_fn(meta.name)
        if msgs:
            errs += [invalid(child(path, "name"), meta.name, msg) for msg in msgs]
    elif not meta.generate_name:
        errs.append(required(child(path, "name"), "name or generateName is required"))
    if namespaced:
        if meta.namespace and not names.dns1123_label_ok(meta.namespace):
            errs += name_errors(names.is_dns1123_label, meta.namespace, child(path, "namespace"))
    elif meta.namespace:
        errs.append(forbidden(child(path, "namespace"), "not allowed on this type"))
    if meta.generation < 0:
        errs += nonnegative(meta.generation, child(path, "generation"))
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
        errs += selector_requirement_errors(
            req.key,
            req.operator,
            req.values or [],
            p,
            numeric=False,
            allow_invalid_label_value=allow_invalid_label_value,
        )
    return errs


def selector_requirement_errors(
    key: str,
    operator: str,
    values: list[str],
    path: str,
    *,
    numeric: bool,
    allow_invalid_label_value: bool = False,
) -> Errors:
    """A label or node selector requirement's rules (Kubernetes'
    ValidateLabelSelectorRequirement and ValidateNodeSelectorRequirement):
    values by operator (``numeric``: the node selector's Gt and Lt too), the
    key, and each value as a label value."""
    errs: Errors = []
    if operator in ("In", "NotIn"):
        if not values:
            errs.append(
                required(
                    child(path, "values"), "must be specified when `operator` is 'In' or 'NotIn'"
                )
            )
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            errs.append(
                forbidden(
                    child(path, "values"),
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                )
            )
    elif numeric and operator in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(
                required(
                    child(path, "values"),
                    "must be specified single value when `operator` is 'Lt' or 'Gt'",
                )
            )
    else:
        errs.append(invalid(child(path, "operator"), operator, "not a valid selector operator"))
    errs += validate_label_name(key, child(path, "key"))
    if not allow_invalid_label_value:
        for i, v in enumerate(values):
            vp = index(child(path, "values"), i)
            errs += [invalid(vp, v, msg) for msg in names.is_label_value(v)]
    return errs
