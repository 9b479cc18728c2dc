"""JSON merge patch (RFC 7386): ``kubectl patch --type merge`` and every CRD's
default patch type."""

from __future__ import annotations

import copy
from typing import Any

from kuota.server.patch.errors import PatchError


def merge_patch(obj: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """``obj`` with ``patch`` merged in; neither argument is changed."""
    out = _merge(obj, patch)
    if not isinstance(out, dict):  # a non-object patch replaces the whole document
        raise PatchError("a merge patch must be a JSON object")
    return out


def _merge(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = _merge(out.get(k), v)
    return out
