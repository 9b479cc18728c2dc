"""A bizrq's status as numbers: used and selfUsed in milli-units over its
hard keys; charging a delta (an object's) or a grant (a child's hard)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from kuota.api.kuotadev.bizrq import BizGroupResourceQuota, BizGroupStatus, is_cash
from kuota.controllers.kuotadev.bizrq.status_cas import milli_of, resource_list
from kuota.quota.bizgroups.usage import Usage, add_into

__all__ = ["charged_status", "spent_budgets", "used_of"]


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
    selfUsed and used) or a child's grant (used only)."""
    used, self_used = used_of(obj)
    hard = obj.spec.hard or {}
    keep = {k: v for k, v in delta.items() if k in hard}
    add_into(used, keep)
    if own:
        add_into(self_used, keep)
    old = obj.status
    return BizGroupStatus(
        hard=dict(hard),
        used=resource_list(used, hard),
        self_used=resource_list(self_used, hard),
        last_reconcile_time=old.last_reconcile_time if old is not None else now,
        conditions=old.conditions if old is not None else None,
    )


def spent_budgets(obj: BizGroupResourceQuota) -> list[tuple[str, int, int]]:
    """The ``cash/`` keys whose used reached hard: (key, used, hard)."""
    used, _ = used_of(obj)
    out = []
    for k, q in sorted((obj.spec.hard or {}).items()):
        if is_cash(k):
            h = q.milli_value()
            if used.get(k, 0) >= h:
                out.append((k, used.get(k, 0), h))
    return out
