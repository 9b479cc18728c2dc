"""A pod set's topology request, as every job integration builds it from its
pod template's annotations (Kueue's jobframework/tas.go), and the job
webhooks' checks of those annotations (jobframework/tas_validation.go)."""

from __future__ import annotations

from kuota.api import errors as e
from kuota.api.kueue import types as kt
from kuota.api.kueue.topology import (
    GROUP_NAME,
    PREFERRED,
    REQUIRED,
    SLICE_REQUIRED,
    SLICE_SIZE,
    UNCONSTRAINED,
)
from kuota.api.names import is_qualified_name


def _parse_bool(text: str) -> bool:
    """Go's strconv.ParseBool."""
    if text in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if text in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    raise ValueError(text)


def _parse_int32(text: str) -> int:
    """strconv.ParseInt(text, 10, 32)."""
    body = text[1:] if text[:1] in "+-" else text
    if not body.isdigit() or not body.isascii():
        raise ValueError(text)
    v = int(text)
    if not -(2**31) <= v < 2**31:
        raise ValueError(text)
    return v


def topology_request(annotations: dict[str, str] | None) -> kt.PodSetTopologyRequest | None:
    """NewPodSetTopologyRequest(meta).Build(): None when the template asks for
    no topology (or the annotations do not parse: the webhook refused those)."""
    ann = annotations or {}
    req = kt.PodSetTopologyRequest()
    if REQUIRED in ann:
        req.required = ann[REQUIRED]
    elif PREFERRED in ann:
        req.preferred = ann[PREFERRED]
    elif UNCONSTRAINED in ann:
        try:
            req.unconstrained = _parse_bool(ann[UNCONSTRAINED])
        except ValueError:
            return None
    elif not (SLICE_REQUIRED in ann and SLICE_SIZE in ann):
        return None
    if SLICE_REQUIRED in ann and SLICE_SIZE in ann:
        try:
            size = _parse_int32(ann[SLICE_SIZE])
        except ValueError:
            return None
        req.pod_set_slice_required_topology = ann[SLICE_REQUIRED]
        req.pod_set_slice_size = size
    if GROUP_NAME in ann and (REQUIRED in ann or PREFERRED in ann):
        req.pod_set_group_name = ann[GROUP_NAME]
    return req


def with_topology_requests(pod_sets: list[kt.PodSet]) -> list[kt.PodSet]:
    """The pod sets, each with the topology request its template's
    annotations ask for (one an integration set itself is kept)."""
    for ps in pod_sets:
        if ps.topology_request is None:
            ps.topology_request = topology_request(ps.template.metadata.annotations)
    return pod_sets


def validate_annotations(meta_path: str, annotations: dict[str, str] | None) -> list[e.FieldError]:
    """ValidateTASPodSetRequest for the pod template metadata at ``meta_path``."""
    ann = annotations or {}
    path = e.child(meta_path, "annotations")
    errs: list[e.FieldError] = []
    found = [k for k in (REQUIRED, PREFERRED, UNCONSTRAINED) if k in ann]
    if len(found) > 1:
        detail = (
            "must not contain more than one topology annotation: "
            f'["{REQUIRED}", "{PREFERRED}", "{UNCONSTRAINED}"]'
        )
        errs.append(e.FieldError(path, e.INVALID, detail))
    for k in (REQUIRED, PREFERRED, SLICE_REQUIRED):
        if k in ann:
            errs += [e.invalid(e.key(path, k), ann[k], m) for m in is_qualified_name(ann[k])]
    if GROUP_NAME in ann:
        gp = e.key(path, GROUP_NAME)
        name = ann[GROUP_NAME]
        if name.isascii() and name.isdigit() and int(name) < 2**64:
            errs.append(e.invalid(gp, name, "must not be a number"))
        if SLICE_SIZE in ann:
            errs.append(e.forbidden(gp, f"may not be set when '{SLICE_SIZE}' is specified"))
        if SLICE_REQUIRED in ann:
            errs.append(e.forbidden(gp, f"may not be set when '{SLICE_REQUIRED}' is specified"))
        if REQUIRED not in ann and PREFERRED not in ann:
            detail = f"may not be set when neither '{PREFERRED}' nor '{REQUIRED}' is specified"
            errs.append(e.forbidden(gp, detail))
    if UNCONSTRAINED in ann:
        try:
            _parse_bool(ann[UNCONSTRAINED])
        except ValueError:
            v = ann[UNCONSTRAINED]
            errs.append(e.invalid(e.key(path, UNCONSTRAINED), v, "must be a boolean value"))
    if SLICE_SIZE in ann:
        v = ann[SLICE_SIZE]
        try:
            size = _parse_int32(v)
        except ValueError:
            errs.append(e.invalid(e.key(path, SLICE_SIZE), v, "must be a numeric value"))
        else:
            if size < 1:
                detail = "must be greater than or equal to 1"
                errs.append(e.invalid(e.key(path, SLICE_SIZE), v, detail))
    if SLICE_REQUIRED in ann and SLICE_SIZE not in ann:
        detail = f"must be set when '{SLICE_REQUIRED}' is specified"
        errs.append(e.required(e.key(path, SLICE_SIZE), detail))
    if SLICE_REQUIRED not in ann and SLICE_SIZE in ann:
        detail = f"may not be set when '{SLICE_REQUIRED}' is not specified"
        errs.append(e.forbidden(e.key(path, SLICE_SIZE), detail))
    return errs


def validate_slice_size_bound(
    meta_path: str, annotations: dict[str, str] | None, count: int
) -> list[e.FieldError]:
    """ValidateSliceSizeAnnotationUpperBound: a slice no larger than the pod set."""
    v = (annotations or {}).get(SLICE_SIZE)
    if v is None:
        return []
    p = e.key(e.child(meta_path, "annotations"), SLICE_SIZE)
    try:
        size = _parse_int32(v)
    except ValueError:
        return [e.invalid(p, v, "must be a numeric value")]
    if size > count:
        return [e.invalid(p, v, f"must not be greater than pod set count {count}")]
    return []
