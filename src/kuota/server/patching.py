"""PATCH: the four patch types applied to the live object's wire form, then
stored as an update with the live resourceVersion as precondition (so a
concurrent write makes it a 409, never a lost update). The patch algorithms
themselves are ``kuota.server.patch``'s."""

from __future__ import annotations

from typing import Any

import yaml

from kuota.server import status as st

MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"
PATCH_TYPES = (MERGE, JSON_PATCH, STRATEGIC, APPLY)


def parse_patch(content_type: str, body: bytes) -> Any:
    try:
        return yaml.safe_load(body) if content_type == APPLY else yaml.safe_load(body or b"null")
    except yaml.YAMLError as err:
        raise st.bad_request(f"the body of the request could not be decoded: {err}") from None


def apply(
    content_type: str,
    live: dict[str, Any] | None,
    patch: Any,
    *,
    gvk: tuple[str, str, str],
    builtin: bool,
    manager: str,
    force: bool,
    now: str,
) -> dict[str, Any]:
    """The patched object. Raises ApiError (400 bad patch or a patched object
    that is no object, 409 apply conflict, 415 strategic merge on a custom
    resource)."""
    from kuota.server import patch as p  # the patch algorithms (their own package)

    out: Any
    try:
        if content_type == APPLY:
            if not manager:
                raise st.bad_request(
                    'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch'
                )
            if isinstance(patch, dict) and not _object_meta(patch):
                raise st.bad_request("metadata must be an object")
            out = p.apply_patch(live, patch, manager=manager, force=force, gvk=gvk, now=now)
        elif live is None:
            raise AssertionError("only an apply patch creates")
        elif content_type == MERGE:
            if not isinstance(patch, dict):
                raise st.bad_request("a merge patch must be a JSON object")
            out = p.merge_patch(live, patch)
        elif content_type == JSON_PATCH:
            if not isinstance(patch, list):
                raise st.bad_request("a JSON patch must be a list of operations")
            out = p.json_patch(live, patch)
        elif not builtin:
            raise st.ApiError(
                415,
                "UnsupportedMediaType",
                f"the body of the request was in an unknown format - accepted media types "
                f"include: {JSON_PATCH}, {MERGE}, {APPLY}",
            )
        elif not isinstance(patch, dict):
            raise st.bad_request("a strategic merge patch must be a JSON object")
        else:
            out = p.strategic_merge_patch(live, patch, gvk)
    except p.ApplyConflict as err:
        causes = [
            {"reason": "FieldManagerConflict", "message": msg, "field": f} for f, msg in err.causes
        ]
        raise st.ApiError(
            409,
            "Conflict",
            _conflict_message(err.causes),
            details={"causes": causes},
        ) from None
    except p.PatchError as err:
        raise st.ApiError(422, "Invalid", str(err)) from None
    # (a patch may replace the whole object, or its metadata, with a scalar:
    # the API server cannot decode that into the kind)
    if not isinstance(out, dict):
        raise st.bad_request(f"the patched object must be a {gvk[2]} object")
    if not _object_meta(out):
        raise st.bad_request("metadata must be an object")
    return out


def _object_meta(obj: dict[str, Any]) -> bool:
    """Its metadata is absent, null or an object."""
    meta = obj.get("metadata")
    return meta is None or isinstance(meta, dict)


def _conflict_message(causes: list[tuple[str, str]]) -> str:
    """As the apiserver words it (fieldmanager/internal/conflict.go getConflictMessage):
    one conflict with its path; several grouped by manager, in managers' order."""
    if len(causes) == 1:
        path, who = causes[0]
        return f"Apply failed with 1 conflict: {who}: {path}"
    by_manager: dict[str, list[str]] = {}
    for path, who in causes:
        by_manager.setdefault(who.removeprefix("conflict with "), []).append(path)
    lines = []
    for manager in sorted(by_manager):
        lines.append(f"conflicts with {manager}:")
        lines += [f"- {p}" for p in by_manager[manager]]
    return f"Apply failed with {len(causes)} conflicts: " + "\n".join(lines)
