"""Object metadata shared by every kind (apimachinery ``metav1``)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any, Literal

from kuota.api.base import LIST_ATOMIC, Meta, Object, list_map, preserve_unknown


class OwnerReference(Object, kw_only=True):
    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ObjectMeta(Object, kw_only=True):
    name: str = ""
    generate_name: str = ""
    namespace: str = ""
    uid: str = ""
    resource_version: str = ""
    generation: int = 0
    creation_timestamp: datetime | None = None
    deletion_timestamp: datetime | None = None
    deletion_grace_period_seconds: int | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    owner_references: Annotated[list[OwnerReference], list_map("uid")] | None = None
    finalizers: list[str] | None = None
    managed_fields: Annotated[list[Any], preserve_unknown()] | None = None
    self_link: str = ""


class LabelSelectorRequirement(Object, kw_only=True):
    key: str
    operator: str  # checked by validate_label_selector, as in Go
    values: Annotated[list[str], LIST_ATOMIC] | None = None


class LabelSelector(Object, kw_only=True):
    """``nil`` and ``{}`` differ: nil usually selects nothing, ``{}`` everything."""

    match_labels: dict[str, str] | None = None
    match_expressions: Annotated[list[LabelSelectorRequirement], LIST_ATOMIC] | None = None


def owner_reference(owner: Any) -> OwnerReference:
    """``SetControllerReference``: ``owner`` as the controller of what it makes."""
    m = owner.metadata
    return OwnerReference(
        api_version=owner.api_version,
        kind=owner.kind,
        name=m.name,
        uid=m.uid,
        controller=True,
        block_owner_deletion=True,
    )


ConditionStatus = Literal["True", "False", "Unknown"]


class Condition(Object, kw_only=True):
    type: Annotated[str, Meta(max_length=316)]
    status: ConditionStatus
    reason: Annotated[str, Meta(max_length=1024)] = ""
    message: Annotated[str, Meta(max_length=32768)] = ""
    last_transition_time: datetime | None = None
    observed_generation: Annotated[int, Meta(ge=0)] | None = None


Conditions = Annotated[list[Condition], list_map("type")]

# Fields present on every top-level object, in the order Kubernetes prints them.
TYPE_META_FIELDS = ("apiVersion", "kind")


def object_key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name


def selector_matches(sel: LabelSelector | None, labels: Mapping[str, str] | None) -> bool:
    """``metav1.LabelSelectorAsSelector(sel).Matches(labels)``; a nil selector
    matches nothing (``labels.Nothing()``), an empty one everything."""
    if sel is None:
        return False
    labels = labels or {}
    for k, v in (sel.match_labels or {}).items():
        if labels.get(k) != v:
            return False
    for req in sel.match_expressions or ():
        present = req.key in labels
        values = req.values or []
        if req.operator == "In" and not (present and labels[req.key] in values):
            return False
        if req.operator == "NotIn" and present and labels[req.key] in values:
            return False
        if req.operator == "Exists" and not present:
            return False
        if req.operator == "DoesNotExist" and present:
            return False
    return True
