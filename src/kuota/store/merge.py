"""JSON merge patch (RFC 7386) on plain dicts, as ``kubectl patch --type=merge``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def merge_patch(target: Any, patch: Any) -> Any:
    """``target`` with ``patch`` applied; neither argument is changed and the
    result shares no mutable value with ``patch``.

    An object patch merges key by key, ``null`` removing the key; anything else
    (lists included) replaces the target whole.
    """
    if not isinstance(patch, Mapping):
        return _copy(patch)
    result = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _copy(value: Any) -> Any:
    # Values taken from the patch are copied so the caller may reuse its patch.
    if isinstance(value, Mapping):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_copy(v) for v in value]
    return value
