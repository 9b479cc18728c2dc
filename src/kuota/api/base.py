"""The conventions every API type follows.

One declaration drives three things: msgspec decodes straight into these structs
(the fast path), the CRD exporter turns them into OpenAPI v3 schemas, and the
schema validator checks raw documents against those schemas (the path that
collects every error). Constraints therefore live only in type annotations:

* ``Annotated[str, pattern(GO_RE)]``, ``Meta(ge=0)``, ``Meta(max_length=8)``,
  ``Literal[...]`` for enums;
* ``cel(Rule(...))`` for a CRD ``x-kubernetes-validations`` rule: the CEL text
  goes into the CRD, the Python predicate runs here;
* ``list_map("name")`` / ``LIST_SET`` for list semantics.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec
from msgspec import Meta

from kuota.api.names import go_pattern
from kuota.api.quantity import Quantity

__all__ = [
    "LIST_ATOMIC",
    "LIST_SET",
    "MAP_ATOMIC",
    "Meta",
    "Object",
    "Quantity",
    "Rule",
    "cel",
    "dec_hook",
    "enc_hook",
    "list_map",
    "pattern",
    "preserve_unknown",
]


class Object(
    msgspec.Struct,
    rename="camel",
    omit_defaults=True,
    forbid_unknown_fields=True,
    kw_only=True,
    gc=False,
):
    """Base of every API struct: camelCase on the wire, unknown fields refused
    (the strict fast path; the schema validator turns them into warnings).

    Not tracked by the garbage collector (``gc=False``): API objects are trees
    that never take part in a reference cycle, and a control plane keeps
    hundreds of thousands of them (stored versions, the watch history, the
    controllers' copies), which every full collection would otherwise walk."""


@dataclass(frozen=True, slots=True)
class Rule:
    """A CRD validation rule (``x-kubernetes-validations``).

    ``check`` receives the decoded value at the node the rule sits on (a struct,
    list or map) and returns True when the rule holds. ``field_path`` is CEL's
    optional fieldPath (relative, e.g. ``.preference``); errors are reported at
    the node plus that path, as the API server does.

    A transition rule (one that reads ``oldSelf``) binds updates only: its
    ``check`` holds on create, and ``transition(new, old)`` decides an update
    where the node exists before and after (the API server skips it otherwise).
    """

    rule: str
    message: str
    check: Callable[[Any], bool]
    field_path: str | None = None
    reason: str | None = None
    transition: Callable[[Any, Any], bool] | None = None

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rule": self.rule, "message": self.message}
        if self.field_path:
            out["fieldPath"] = self.field_path
        if self.reason:
            out["reason"] = self.reason
        return out


# Rules are kept out of the JSON schema dicts (they hold Python callables) and
# found again by the rule and message placed there (the same CEL text, such as
# ``self == oldSelf``, carries different messages in different CRDs).
RULES: dict[tuple[str, str], Rule] = {}


def cel(*rules: Rule) -> Meta:
    for r in rules:
        RULES[(r.rule, r.message)] = r
    return Meta(extra_json_schema={"x-kubernetes-validations": [r.schema() for r in rules]})


def list_map(*keys: str) -> Meta:
    return Meta(
        extra_json_schema={
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": list(keys),
        }
    )


LIST_SET = Meta(extra_json_schema={"x-kubernetes-list-type": "set"})
LIST_ATOMIC = Meta(extra_json_schema={"x-kubernetes-list-type": "atomic"})
MAP_ATOMIC = Meta(extra_json_schema={"x-kubernetes-map-type": "atomic"})


def preserve_unknown(description: str = "") -> Meta:
    """A subtree kuota carries through unchanged without interpreting it."""
    extra: dict[str, Any] = {"x-kubernetes-preserve-unknown-fields": True}
    return Meta(extra_json_schema=extra, description=description or None)


_PATTERNS: dict[str, re.Pattern[str]] = {}


def pattern(go_re: str) -> Meta:
    """A CRD ``pattern``: written to the CRD in Go syntax, checked with a
    Python translation (see ``names.go_pattern``)."""
    py = go_pattern(go_re)
    _PATTERNS[go_re] = py
    GO_PATTERN_OF[py.pattern] = go_re
    return Meta(pattern=py.pattern)


# msgspec writes the Python pattern into the schema; the CRD shows the Go one.
GO_PATTERN_OF: dict[str, str] = {}


def crd_default(value: Any) -> Meta:
    """A ``+kubebuilder:default`` shown in the CRD where the struct default is a
    factory (``{}`` for nested structs whose fields default)."""
    return Meta(extra_json_schema={"default": value})


def compiled_pattern(go_re: str) -> re.Pattern[str]:
    p = _PATTERNS.get(go_re)
    if p is None:
        p = _PATTERNS[go_re] = go_pattern(go_re)
    return p


# Quantity texts repeat across manifests ("1", "500m", "16Gi") and quantities are
# immutable, so the decoder hands out one object per text. Bounded: odd texts
# past the limit are parsed each time.
_QUANTITY_OF_TEXT: dict[str, Quantity] = {}
_QUANTITY_CACHE_SIZE = 4096


def quantity_of(text: str) -> Quantity:
    """The Quantity of a text, one object per text (see _QUANTITY_OF_TEXT)."""
    q = _QUANTITY_OF_TEXT.get(text)
    if q is None:
        q = Quantity.from_value(text)
        if len(_QUANTITY_OF_TEXT) < _QUANTITY_CACHE_SIZE:
            _QUANTITY_OF_TEXT[text] = q
    return q


def dec_hook(typ: type, obj: Any) -> Any:
    if typ is Quantity:
        if type(obj) is str:
            return quantity_of(obj)
        return Quantity.from_value(obj)
    raise NotImplementedError(f"cannot decode {typ!r}")


def enc_hook(obj: Any) -> Any:
    if isinstance(obj, Quantity):
        return str(obj)
    raise NotImplementedError(f"cannot encode {type(obj)!r}")


def emitted_zero() -> Any:
    """The default of a Go integer field without ``omitempty`` (a queue's
    ``pendingWorkloads``, a fair-sharing ``weightedShare``): 0, and written
    as 0 rather than left out as ``omit_defaults`` leaves out defaults, so
    clients that read ``status["admittedWorkloads"]`` (Kueue's Python
    samples do) find it. msgspec always writes a default_factory field it
    cannot compare."""
    return msgspec.field(default_factory=int)
