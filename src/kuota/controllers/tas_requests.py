"""A pod set's topology request, as every job integration builds it from its
pod template's annotations (Kueue's jobframework/tas.go), and the job
webhooks' checks of those annotations (jobframework/tas_validation.go)."""

from __future__ import annotations

from collections.abc import Sequence

from kuota.api import errors as e
from kuota.api.gojson import GoJSONError, unmarshal_structs
from kuota.api.kueue import types as kt
from kuota.api.kueue.topology import (
    GROUP_NAME,
    PREFERRED,
    REQUIRED,
    SLICE_CONSTRAINTS,
    SLICE_REQUIRED,
    SLICE_SIZE,
    UNCONSTRAINED,
)
from kuota.api.names import is_qualified_name

_CONSTRAINT_TYPE = "v1beta2.PodsetSliceRequiredTopologyConstraint"
_CONSTRAINT_FIELDS = {"topology": "string", "size": "int32"}
_LAYER_COUNT = "topology constraints must contain between 1 and 3 entries"


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


def parse_constraints(text: str) -> list[kt.PodSetSliceTopologyConstraint] | None:
    """The constraints annotation as Build parses it: None when it is no JSON
    array of one to three layers (the webhook refused those)."""
    try:
        raw = unmarshal_structs(text, _CONSTRAINT_TYPE, _CONSTRAINT_FIELDS)
    except GoJSONError:
        return None
    if not 1 <= len(raw) <= 3:
        return None
    return [kt.PodSetSliceTopologyConstraint(topology=c["topology"], size=c["size"]) for c in raw]


def topology_request(
    annotations: dict[str, str] | None, multi_layer: bool = True
) -> kt.PodSetTopologyRequest | None:
    """NewPodSetTopologyRequest(meta).Build(): None when the template asks for
    no topology (or the annotations do not parse: the webhook refused those).
    ``multi_layer``: the TASMultiLayerTopology gate."""
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
    elif not (SLICE_REQUIRED in ann and SLICE_SIZE in ann) and SLICE_CONSTRAINTS not in ann:
        return None
    if multi_layer and SLICE_CONSTRAINTS in ann:
        layers = parse_constraints(ann[SLICE_CONSTRAINTS])
        if layers is None:
            return None
        req.podset_slice_required_topology_constraints = layers
    elif SLICE_REQUIRED in ann and SLICE_SIZE in ann:
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


def validate_annotations(
    meta_path: str, annotations: dict[str, str] | None, multi_layer: bool = True
) -> list[e.FieldError]:
    """ValidateTASPodSetRequest for the pod template metadata at ``meta_path``
    (``multi_layer``: the TASMultiLayerTopology gate)."""
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
    return errs + _constraints_errors(path, ann, multi_layer)


def _constraints_errors(path: str, ann: dict[str, str], multi_layer: bool) -> list[e.FieldError]:
    """validateSliceRequiredTopologyConstraintsAnnotation: the syntax only
    (the order of the layers needs the flavor's Topology: the scheduler
    checks it)."""
    if SLICE_CONSTRAINTS not in ann:
        return []
    text = ann[SLICE_CONSTRAINTS]
    fp = e.key(path, SLICE_CONSTRAINTS)
    if not multi_layer:
        detail = "the TASMultiLayerTopology feature gate must be enabled to use this annotation"
        return [e.forbidden(fp, detail)]
    errs: list[e.FieldError] = []
    for other in (SLICE_REQUIRED, SLICE_SIZE):
        if other in ann:
            errs.append(e.forbidden(fp, f"may not be set when '{other}' is specified"))
    if GROUP_NAME in ann:
        detail = f"may not be set when '{SLICE_CONSTRAINTS}' is specified"
        errs.append(e.forbidden(e.key(path, GROUP_NAME), detail))
    try:
        layers = unmarshal_structs(text, _CONSTRAINT_TYPE, _CONSTRAINT_FIELDS)
    except GoJSONError as err:
        return [*errs, e.invalid(fp, text, f"must be a valid JSON array: {err}")]
    if not 1 <= len(layers) <= 3:
        return [*errs, e.invalid(fp, text, _LAYER_COUNT)]
    for i, c in enumerate(layers):
        ep = e.index(fp, i)
        tp = e.child(ep, "topology")
        errs += [e.invalid(tp, c["topology"], m) for m in is_qualified_name(c["topology"])]
        if c["size"] < 1:
            errs.append(
                e.invalid(e.child(ep, "size"), c["size"], "must be greater than or equal to 1")
            )
    seen: dict[str, int] = {}
    for i, c in enumerate(layers):
        if c["topology"] in seen:
            also = f"{c['topology']} (also at index {seen[c['topology']]})"
            errs.append(e.duplicate(e.child(e.index(fp, i), "topology"), also))
        else:
            seen[c["topology"]] = i
    for i in range(len(layers) - 1):
        outer, inner = layers[i]["size"], layers[i + 1]["size"]
        if inner > 0 and outer % inner != 0:
            sp = e.child(e.index(fp, i + 1), "size")
            errs.append(e.invalid(sp, inner, f"must evenly divide the parent layer size {outer}"))
    return errs


def validate_slice_size_bound(
    meta_path: str, annotations: dict[str, str] | None, count: int
) -> list[e.FieldError]:
    """ValidateSliceSizeAnnotationUpperBound: a slice (or the outermost layer
    of the constraints) no larger than the pod set."""
    ann = annotations or {}
    errs: list[e.FieldError] = []
    v = ann.get(SLICE_SIZE)
    if v is not None:
        p = e.key(e.child(meta_path, "annotations"), SLICE_SIZE)
        try:
            size = _parse_int32(v)
        except ValueError:
            return [e.invalid(p, v, "must be a numeric value")]
        if size > count:
            errs.append(e.invalid(p, v, f"must not be greater than pod set count {count}"))
    text = ann.get(SLICE_CONSTRAINTS)
    if text is not None:
        try:
            layers = unmarshal_structs(text, _CONSTRAINT_TYPE, _CONSTRAINT_FIELDS)
        except GoJSONError:
            layers = []
        if layers and layers[0]["size"] > count:
            p = e.key(e.child(meta_path, "annotations"), SLICE_CONSTRAINTS)
            detail = f"must not be greater than pod set count {count}"
            errs.append(e.invalid(p, layers[0]["size"], detail))
    return errs


def validate_pod_sets(
    entries: Sequence[tuple[str, kt.PodSet]],
    annotation_paths: dict[str, str] | None = None,
    multi_layer: bool = True,
) -> list[e.FieldError]:
    """A job webhook's validateTopologyRequest over its pod sets, each with the
    path of its template's metadata: ValidateTASPodSetRequest and the slice
    bound per pod set, then (for the kinds that check groups, given each pod
    set's annotations path) ValidatePodSetGroupingTopology."""
    errs: list[e.FieldError] = []
    for path, ps in entries:
        ann = ps.template.metadata.annotations
        errs += validate_annotations(path, ann, multi_layer)
        errs += validate_slice_size_bound(path, ann, ps.count)
    if annotation_paths is not None:
        errs += validate_grouping([ps for _, ps in entries], annotation_paths)
    return errs


def validate_grouping(
    pod_sets: Sequence[kt.PodSet], annotation_paths: dict[str, str]
) -> list[e.FieldError]:
    """ValidatePodSetGroupingTopology: a pod-set group is two pod sets, one
    of them a single pod, both asking for the same required or preferred
    level (a leader and its workers placed together)."""
    groups: dict[str, list[tuple[kt.PodSet, kt.PodSetTopologyRequest]]] = {}
    for ps in pod_sets:
        tr = ps.topology_request or topology_request(ps.template.metadata.annotations)
        if tr is not None and tr.pod_set_group_name is not None:
            groups.setdefault(tr.pod_set_group_name, []).append((ps, tr))
    errs: list[e.FieldError] = []
    for name, members in groups.items():
        if len(members) != 2:
            detail = f"can only define groups of exactly 2 pod sets, got: {len(members)} pod set(s)"
            for ps, _ in members:
                errs.append(
                    e.invalid(e.key(annotation_paths.get(ps.name, ""), GROUP_NAME), name, detail)
                )
            continue
        (ps1, tr1), (ps2, tr2) = members
        p1, p2 = annotation_paths.get(ps1.name, ""), annotation_paths.get(ps2.name, "")
        if ps1.count != 1 and ps2.count != 1:
            detail = (
                "can only define groups where at least one pod set has only 1 replica, got: "
                f"{ps1.count} replica(s) and {ps2.count} replica(s) in the group"
            )
            errs.append(e.invalid(e.key(p1, GROUP_NAME), name, detail))
            errs.append(e.invalid(e.key(p2, GROUP_NAME), name, detail))
        if not _consistent(tr1, tr2):
            errs.append(e.FieldError(p1, e.INVALID, _inconsistent(p2, name)))
            errs.append(e.FieldError(p2, e.INVALID, _inconsistent(p1, name)))
    return errs


def _inconsistent(other: str, group: str) -> str:
    return (
        f"must specify '{REQUIRED}' or '{PREFERRED}' topology consistent with "
        f"'{other}' in group '{group}'"
    )


def _consistent(r1: kt.PodSetTopologyRequest, r2: kt.PodSetTopologyRequest) -> bool:
    """topologyRequestsValid: both required or preferred, at the same level."""
    if r1.required is None and r1.preferred is None:
        return False
    if r2.required is None and r2.preferred is None:
        return False
    return r1.required == r2.required and r1.preferred == r2.preferred
