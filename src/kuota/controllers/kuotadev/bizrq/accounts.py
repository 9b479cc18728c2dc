"""A bizrq's status as numbers: used and selfUsed in milli-units over its
hard keys; charging a delta (an object's) or a grant (a child's hard)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from kuota.api.kuotadev.bizrq import BizGroupResourceQuota, BizGroupStatus, is_cash
from kuota.api.quantity import Quantity
from kuota.controllers.kuotadev.bizrq.status_cas import milli_of
from kuota.quota.bizgroups.usage import Usage
from kuota.store.codec import note_changed

__all__ = ["charged_status", "spent_budgets", "used_for", "used_of"]


def used_of(obj: BizGroupResourceQuota) -> tuple[Usage, Usage]:
    """(used, selfUsed) in milli-units."""
    st = obj.status
    if st is None:
        return {}, {}
    return milli_of(st.used), milli_of(st.self_used)


def charged_status(
    obj: BizGroupResourceQuota,
    delta: Mapping[str, int],
    *,
    own: bool,
    now: datetime | None = None,
) -> BizGroupStatus:
    """The status after charging ``delta``: an object's (``own``: counts in
    selfUsed and used) or a child's grant (used only). Only the keys the
    delta touches are rebuilt: the others keep their (immutable) Quantities,
    as a request usually touches a few of a node's many keys."""
    hard = obj.spec.hard or {}
    old = obj.status
    zero = Quantity.from_int(0)
    used = dict(old.used or {}) if old is not None else {}
    self_used = dict(old.self_used or {}) if old is not None else {}
    # Already over hard's keys in order (every status this module wrote):
    # changed values keep their places, so no re-sorting of a node's keys.
    ordered = used.keys() == hard.keys() == self_used.keys()
    if not ordered:
        for k in hard:  # a key new to hard starts at 0
            if k not in used:
                used[k] = zero
            if k not in self_used:
                self_used[k] = zero
    changed = tuple(k for k, v in delta.items() if v and k in hard)
    for k in changed:
        v = delta[k]
        u = used[k].milli_value() + v
        q = used[k] = Quantity.from_milli(u)
        if own:
            s = self_used[k].milli_value() + v
            # (A leaf's used is its selfUsed: one immutable Quantity for both.)
            self_used[k] = q if s == u else Quantity.from_milli(s)
    if ordered and old is not None:
        # The status write then copies only the changed entries, not all 50.
        if old.used is not None:
            note_changed(used, old.used, changed)
        if own and old.self_used is not None:
            note_changed(self_used, old.self_used, changed)
    if not ordered:
        used = {k: used[k] for k in sorted(hard)}
        self_used = {k: self_used[k] for k in sorted(hard)}
    return BizGroupStatus(
        hard=old.hard if ordered and old is not None and old.hard == hard else dict(hard),
        used=used,
        self_used=self_used,
        last_reconcile_time=old.last_reconcile_time if old is not None else now,
        conditions=old.conditions if old is not None else None,
    )


def spent_budgets(obj: BizGroupResourceQuota) -> list[tuple[str, int, int]]:
    """The ``cash/`` keys whose used reached hard: (key, used, hard)."""
    hard = obj.spec.hard or {}
    cash = _cash_keys(hard)
    if not cash:
        return []
    st = obj.status
    used = (st.used if st is not None else None) or {}
    out = []
    for k in cash:
        h = hard[k].milli_value()
        u = used[k].milli_value() if k in used else 0
        if u >= h:
            out.append((k, u, h))
    return out


# A group's spec is the same object from write to write (a status write keeps
# it), so its budget keys are found once, not on every request it checks.
_CASH: dict[int, tuple[Mapping[str, Quantity], tuple[str, ...]]] = {}
_CASH_KEPT = 4096


def _cash_keys(hard: Mapping[str, Quantity]) -> tuple[str, ...]:
    known = _CASH.get(id(hard))
    if known is not None and known[0] is hard:
        return known[1]
    keys = tuple(sorted(k for k in hard if is_cash(k)))
    if len(_CASH) >= _CASH_KEPT:
        _CASH.clear()
    _CASH[id(hard)] = (hard, keys)
    return keys


def used_for(obj: BizGroupResourceQuota, keys: Mapping[str, int]) -> Usage:
    """``used`` in milli-units, for these keys only (a request's delta touches
    a few of a node's many keys)."""
    st = obj.status
    used = (st.used if st is not None else None) or {}
    return {k: used[k].milli_value() for k in keys if k in used}
