"""OpenAPI documents of every kind kuota serves, generated from kuota's types:
v3 per group-version (what kubectl 1.32 reads for validation, ``explain`` and
client-side apply) and v2 (swagger 2.0, for older clients)."""

from __future__ import annotations

from kuota.server.openapi.schemas import kind_schema
from kuota.server.openapi.v2 import v2_document
from kuota.server.openapi.v3 import v3_document, v3_index

__all__ = ["kind_schema", "v2_document", "v3_document", "v3_index"]
