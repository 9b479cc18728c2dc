"""JSON merge patch (RFC 7386): ``kubectl patch --type merge`` and every CRD's
default patch type. The algorithm is the store's (``kuota.store.merge``); the
API adds only that a merge patch is a JSON object."""

from __future__ import annotations

from typing import Any

from kuota.server.patch.errors import PatchError
from kuota.store.merge import merge_patch as _rfc7386


def merge_patch(obj: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """``obj`` with ``patch`` merged in; neither argument is changed."""
    if not isinstance(patch, dict):  # a non-object patch would replace the whole document
        raise PatchError("a merge patch must be a JSON object")
    out: dict[str, Any] = _rfc7386(obj, patch)
    return out
