"""Field errors in Kubernetes' own shape: a field path, an error type and a reason.

The path uses Kubernetes' notation (``spec.podSets[0].count``, ``requests[cpu]``) and
``str(FieldError)`` prints what the API server prints, so a user who knows
``kubectl`` reads kuota's errors the same way.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

# Kubernetes' field.ErrorType names, as they appear in messages.
REQUIRED = "Required value"
INVALID = "Invalid value"
DUPLICATE = "Duplicate value"
NOT_SUPPORTED = "Unsupported value"
FORBIDDEN = "Forbidden"
TOO_LONG = "Too long"
TOO_MANY = "Too many"
TYPE_INVALID = "Invalid value"

_OMIT = object()


def _show(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if value is None:
        return "null"
    if isinstance(value, dict | list):
        return '"object"' if isinstance(value, dict) else '"array"'
    return json.dumps(str(value))


@dataclass(frozen=True, slots=True)
class FieldError:
    """One problem at one field path."""

    path: str
    type: str
    detail: str = ""
    value: Any = _OMIT

    def __str__(self) -> str:
        head = f"{self.path or '<root>'}: {self.type}"
        if self.value is not _OMIT and self.type not in (REQUIRED, FORBIDDEN, TOO_LONG):
            head += f": {_show(self.value)}"
        return f"{head}: {self.detail}" if self.detail else head


def required(path: str, detail: str = "") -> FieldError:
    return FieldError(path, REQUIRED, detail)


def invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(path, INVALID, detail, value)


def duplicate(path: str, value: Any) -> FieldError:
    return FieldError(path, DUPLICATE, "", value)


def not_supported(path: str, value: Any, supported: list[str] | tuple[str, ...]) -> FieldError:
    detail = "supported values: " + ", ".join(json.dumps(s) for s in supported)
    return FieldError(path, NOT_SUPPORTED, detail, value)


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError(path, FORBIDDEN, detail)


def too_many(path: str, actual: int, limit: int) -> FieldError:
    return FieldError(path, TOO_MANY, f"must have at most {limit} items", actual)


def too_long(path: str, limit: int) -> FieldError:
    return FieldError(path, TOO_LONG, f"may not be more than {limit} bytes")


def child(path: str, name: str) -> str:
    """``spec`` + ``podSets`` -> ``spec.podSets``."""
    return f"{path}.{name}" if path else name


def index(path: str, i: int) -> str:
    return f"{path}[{i}]"


def key(path: str, k: str) -> str:
    """Map entries are named in brackets: ``resources.requests[cpu]``."""
    return f"{path}[{k}]"


_STEP = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]")


def value_at(raw: Any, path: str) -> Any:
    """The value a user wrote at ``path`` (``metadata.creationTimestamp``,
    ``spec.podSets[0].count``) in the raw document, or ``"value"`` when the
    path cannot be followed (msgspec names a map entry only as ``[...]``)."""
    if not path:
        return "value"
    at, pos, text = raw, 0, path if path.startswith("[") else "." + path
    for m in _STEP.finditer(text):
        if m.start() != pos:
            return "value"
        pos = m.end()
        if m.group(1) is not None and isinstance(at, dict) and m.group(1) in at:
            at = at[m.group(1)]
        elif m.group(2) is not None and isinstance(at, list) and int(m.group(2)) < len(at):
            at = at[int(m.group(2))]
        else:
            return "value"
    return at if pos == len(text) else "value"
