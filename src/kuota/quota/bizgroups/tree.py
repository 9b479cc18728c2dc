"""The tree's rules (../shared/specs/bizrq.md "Rules the bizrq webhook
enforces"), as pure checks over the nodes involved: a parent exists and never
changes, a child declares every key its parent declares and is carved from
the parent's remainder, a parent never shrinks below what it granted, only a
leaf is deleted, no cycles. Errors name the field path and the numbers."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from kuota.api.errors import FieldError, forbidden, invalid, key, required
from kuota.api.kuotadev.bizrq import BizGroupResourceQuota
from kuota.api.quantity import Quantity
from kuota.quota.bizgroups.usage import Usage, exceeded

__all__ = [
    "delete_errors",
    "grant_delta",
    "hard_milli",
    "parent_errors",
    "shown",
    "update_errors",
]

Lookup = Callable[[str], BizGroupResourceQuota | None]


def hard_milli(obj: BizGroupResourceQuota) -> Usage:
    return {k: q.milli_value() for k, q in (obj.spec.hard or {}).items()}


def shown(milli: int) -> str:
    return str(Quantity.from_milli(milli))


def parent_errors(child: BizGroupResourceQuota, lookup: Lookup) -> list[FieldError]:
    """The parent checks of a non-root node, before any grant: the parent
    exists, no cycle, the child declares every key of the parent."""
    pname = child.spec.parent_biz_group
    if not pname:
        return []
    parent = lookup(pname)
    if parent is None:
        return [
            invalid(
                "spec.parentBizGroup", pname, f"parent BizGroupResourceQuota {pname} does not exist"
            )
        ]
    seen = {child.metadata.name}
    node: BizGroupResourceQuota | None = parent
    while node is not None and node.spec.parent_biz_group:
        if node.metadata.name in seen:
            return [invalid("spec.parentBizGroup", pname, "the parent chain is a cycle")]
        seen.add(node.metadata.name)
        node = lookup(node.spec.parent_biz_group)
    if node is not None and node.metadata.name in seen:
        return [invalid("spec.parentBizGroup", pname, "the parent chain is a cycle")]
    missing = sorted(set(parent.spec.hard or {}) - set(child.spec.hard or {}))
    return [
        required(key("spec.hard", k), f"parent {pname} declares {k}: every child must declare it")
        for k in missing
    ]


def grant_delta(
    new: BizGroupResourceQuota | None,
    old: BizGroupResourceQuota | None,
    parent: BizGroupResourceQuota,
) -> Usage:
    """What the parent grants more (or takes back) for a child's hard: the
    delta on the keys the parent declares."""
    keys = parent.spec.hard or {}
    a = hard_milli(new) if new is not None else {}
    b = hard_milli(old) if old is not None else {}
    out: Usage = {}
    for k in keys:
        d = a.get(k, 0) - b.get(k, 0)
        if d:
            out[k] = d
    return out


def remainder_errors(
    parent: BizGroupResourceQuota, used: Mapping[str, int], delta: Mapping[str, int]
) -> list[FieldError]:
    """A grant fits the parent's remainder (hard - used), key by key."""
    return [
        invalid(
            key("spec.hard", k),
            shown(need),
            f"parent {parent.metadata.name} has {shown(max(left, 0))} of {shown(hard)} left "
            f"for {k}: the child's grant would exceed it",
        )
        for k, need, left, hard in exceeded(parent.spec.hard or {}, used, delta)
    ]


def update_errors(
    new: BizGroupResourceQuota,
    old: BizGroupResourceQuota,
    children: Iterable[BizGroupResourceQuota],
) -> list[FieldError]:
    """An update: the parent never changes; a parent keeps room for its grants
    and keeps every key its children must declare."""
    if new.spec.parent_biz_group != old.spec.parent_biz_group:
        return [
            forbidden(
                "spec.parentBizGroup",
                f"field is immutable (was {old.spec.parent_biz_group!r})",
            )
        ]
    errs: list[FieldError] = []
    kids = list(children)
    granted: Usage = {}
    for c in kids:
        for k, v in hard_milli(c).items():
            granted[k] = granted.get(k, 0) + v
    hard = new.spec.hard or {}
    for k in sorted(hard):
        h = hard[k].milli_value()
        if granted.get(k, 0) > h:
            errs.append(
                invalid(
                    key("spec.hard", k),
                    str(hard[k]),
                    f"children were granted {shown(granted[k])}: a parent cannot shrink below its grants",
                )
            )
        for c in kids:
            if k not in (c.spec.hard or {}):
                errs.append(
                    invalid(
                        key("spec.hard", k),
                        str(hard[k]),
                        f"child {c.metadata.name} does not declare {k}: a parent's keys are every child's",
                    )
                )
    return errs


def delete_errors(
    node: BizGroupResourceQuota, children: Iterable[BizGroupResourceQuota]
) -> list[FieldError]:
    names = sorted(c.metadata.name for c in children)
    if names:
        return [
            forbidden(
                "metadata.name",
                f"only a leaf may be deleted: {node.metadata.name} has children {', '.join(names)}",
            )
        ]
    return []
