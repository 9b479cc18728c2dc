"""The four PATCH types of the Kubernetes API, on objects in their wire form
(dicts): JSON merge patch, JSON patch, strategic merge patch and server-side
apply. Pure functions; the server routes requests to them."""

from __future__ import annotations

from kuota.server.patch.apply import apply_patch
from kuota.server.patch.errors import ApplyConflict, PatchError
from kuota.server.patch.jsonpatch import json_patch
from kuota.server.patch.merge import merge_patch
from kuota.server.patch.strategic import strategic_merge_patch

__all__ = [
    "ApplyConflict",
    "PatchError",
    "apply_patch",
    "json_patch",
    "merge_patch",
    "strategic_merge_patch",
]
