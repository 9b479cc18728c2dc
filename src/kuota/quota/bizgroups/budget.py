"""Budgets (``cash/`` keys, in resource-hours): what a group's pods burn.
Each pod's run (bound to a node until it ends) x its resources accrues to the
``cash/`` key of each resource, for the part of the run since the group's last
accrual. Amounts are exact: a run is counted in milli-units x microseconds
and what is below one milli-unit-hour is carried to the next accrual, so
accruing often or seldom gives the same hours."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Final

from kuota.api.kuotadev.bizrq import CASH
from kuota.quota.bizgroups.usage import Usage

__all__ = ["US_PER_HOUR", "BudgetLedger", "PodRun", "cash_rates", "run_out_at"]

US_PER_HOUR: Final = 3_600_000_000  # microseconds


def cash_rates(use: Mapping[str, int], cash_keys: Iterable[str]) -> Usage:
    """The burn of one pod per ``cash/`` key: the use of the key it budgets
    (``cash/limits.nvidia.com/gpu.A100`` burns ``limits.nvidia.com/gpu.A100``)."""
    out: Usage = {}
    for k in cash_keys:
        v = use.get(k[len(CASH) :], 0)
        if v:
            out[k] = v
    return out


def _us(d: timedelta) -> int:
    return (d.days * 86_400 + d.seconds) * 1_000_000 + d.microseconds


@dataclass(slots=True)
class PodRun:
    group: str
    use: Usage  # the pod's use (milli-units per key)
    start: datetime  # bound to a node
    end: datetime | None = None  # ended (finished, failed or deleted)


@dataclass(slots=True)
class _Group:
    pods: dict[str, PodRun] = field(default_factory=dict)
    carry: dict[str, int] = field(
        default_factory=dict
    )  # milli-unit-microseconds below 1 milli-hour
    since: datetime | None = None  # accrued until then


class BudgetLedger:
    """The runs of every group's pods, by pod uid."""

    def __init__(self) -> None:
        self._groups: dict[str, _Group] = {}
        self._pod_group: dict[str, str] = {}

    def started(self, uid: str, run: PodRun) -> None:
        if uid in self._pod_group:
            return
        self._pod_group[uid] = run.group
        self._groups.setdefault(run.group, _Group()).pods[uid] = run

    def ended(self, uid: str, at: datetime) -> str | None:
        """Mark a pod's run over; its group (None: an unknown pod)."""
        g = self._pod_group.get(uid)
        if g is None:
            return None
        run = self._groups[g].pods[uid]
        if run.end is None:
            run.end = at
        return g

    def known(self, uid: str) -> bool:
        return uid in self._pod_group

    def accrue(
        self, group: str, cash_keys: Iterable[str], since: datetime | None, now: datetime
    ) -> Usage | None:
        """Milli-unit-hours per ``cash/`` key burnt until ``now`` since the
        last accrual (the first: since ``since``, the status's last reconcile;
        None: since each run began); runs over by ``now`` are forgotten.
        None when the group has no runs to account for."""
        g = self._groups.get(group)
        if g is None:
            return None
        if g.since is not None:
            since = g.since
        g.since = now
        if not g.pods and not g.carry:
            return None
        keys = list(cash_keys)
        total: dict[str, int] = dict(g.carry)
        done = []
        for uid, run in g.pods.items():
            begin = run.start if since is None or run.start > since else since
            end = run.end if run.end is not None and run.end < now else now
            if end > begin:
                us = _us(end - begin)
                for k, rate in cash_rates(run.use, keys).items():
                    total[k] = total.get(k, 0) + rate * us
            if run.end is not None and run.end <= now:
                done.append(uid)
        for uid in done:
            del g.pods[uid]
            del self._pod_group[uid]
        out: Usage = {}
        g.carry = {}
        for k, v in total.items():
            whole, rest = divmod(v, US_PER_HOUR)
            if whole:
                out[k] = whole
            if rest:
                g.carry[k] = rest
        return out

    def burn(self, group: str, cash_keys: Iterable[str]) -> Usage:
        """Milli-units per ``cash/`` key burning now (the running pods')."""
        g = self._groups.get(group)
        if g is None:
            return {}
        keys = list(cash_keys)
        out: Usage = {}
        for run in g.pods.values():
            if run.end is None:
                for k, rate in cash_rates(run.use, keys).items():
                    out[k] = out.get(k, 0) + rate
        return out


def run_out_at(
    now: datetime, used: Mapping[str, int], hard: Mapping[str, int], burn: Mapping[str, int]
) -> datetime | None:
    """When the first budget still left runs out at the current burn (None:
    none is burning, or every burning one is spent)."""
    best: datetime | None = None
    for k, rate in burn.items():
        left = hard.get(k, 0) - used.get(k, 0)
        if rate <= 0 or k not in hard or left <= 0:
            continue
        us = -(-left * US_PER_HOUR // rate)  # rounded up: at that instant it is spent
        try:
            at = now + timedelta(microseconds=us)
        except OverflowError:
            continue
        if best is None or at < best:
            best = at
    return best
