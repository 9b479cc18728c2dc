"""A group's budgets in its status: the ``BudgetExhausted`` condition, True
while some ``cash/`` key's used reached its hard (new requests of the group
are refused, or held in Queue mode; what runs goes on), with the numbers."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Final

from kuota.api.kuotadev.bizrq import BizGroupResourceQuota, is_cash
from kuota.api.meta import Condition
from kuota.quota.bizgroups.tree import shown

__all__ = ["BUDGET_EXHAUSTED", "budget_condition", "spent_message"]

BUDGET_EXHAUSTED: Final = "BudgetExhausted"


def spent_message(group: str, k: str, used: int, hard: int, enforcement: str | None) -> str:
    held = "held in their queues" if enforcement == "Queue" else "refused"
    return (
        f"bizrq {group}: budget {k} is spent ({shown(used)} of {shown(hard)} used): "
        f"new requests are {held}; what runs goes on"
    )


def budget_condition(
    node: BizGroupResourceQuota, used: Mapping[str, int], now: datetime
) -> tuple[list[Condition] | None, list[str]]:
    """The node's conditions with ``BudgetExhausted`` brought up to date, and
    the messages of budgets spent by this change (for an Event)."""
    st = node.status
    conds = list((st.conditions if st is not None else None) or ())
    hard = node.spec.hard or {}
    cash = [k for k in sorted(hard) if is_cash(k)]
    prev = next((c for c in conds if c.type == BUDGET_EXHAUSTED), None)
    if not cash and prev is None:
        return (conds or None), []
    group = node.metadata.name
    spent = [
        spent_message(group, k, used.get(k, 0), hard[k].milli_value(), node.spec.enforcement)
        for k in cash
        if used.get(k, 0) >= hard[k].milli_value()
    ]
    if spent:
        status, reason, message = "True", "BudgetSpent", "; ".join(spent)
    else:
        status, reason, message = "False", "BudgetLeft", "every budget has hours left"
    was_true = prev is not None and prev.status == "True"
    cond = Condition(
        type=BUDGET_EXHAUSTED,
        status=status,  # type: ignore[arg-type]
        reason=reason,
        message=message,
        last_transition_time=prev.last_transition_time
        if prev is not None and prev.status == status
        else now,
    )
    out = [c for c in conds if c.type != BUDGET_EXHAUSTED] + [cond]
    return out, (spent if spent and not was_true else [])
