"""Budgets in a trace replay: a design's business-group quota trees
(kuota.dev BizGroupResourceQuota) join the replay when a LocalQueue of the
design is labelled ``biz.group.resource.quota: GROUP``: its teams' Jobs carry
that label (and their GPU model as ``…/gpu-type``), so the tree's webhooks,
admission check and controller treat them as any other object. This records
each budget's (``cash/`` key's) burn-down as the controller accrues it, and
when it ran out."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from rich.table import Table

from kuota.api.kuotadev.bizrq import GROUP_LABEL, is_cash
from kuota.quota.bizgroups.usage import GPU_TYPE_LABEL
from kuota.store.resources import BIZRQ

__all__ = [
    "BudgetBurn",
    "BudgetResult",
    "budget_json",
    "budget_table",
    "group_labels",
    "job_labels",
    "refused_by_group",
]


def group_labels(objects: list[Any]) -> dict[str, str]:
    """LocalQueue ``namespace/name`` -> the group its label names."""
    out = {}
    for o in objects:
        if o.kind == "LocalQueue":
            g = (o.metadata.labels or {}).get(GROUP_LABEL)
            if g:
                out[f"{o.metadata.namespace}/{o.metadata.name}"] = g
    return out


def job_labels(group: str | None, gpu_model: str) -> dict[str, str]:
    if not group:
        return {}
    labels = {GROUP_LABEL: group}
    if gpu_model:
        labels[GPU_TYPE_LABEL] = gpu_model
    return labels


@dataclass
class BudgetResult:
    group: str
    key: str
    granted_h: float
    used_h: float
    ran_out_s: float | None  # seconds from the start; None: never spent
    refused: int  # the group's Jobs refused (Reject) during the replay
    series: list[tuple[float, float]] = field(default_factory=list)  # (s, hours used)


class BudgetBurn:
    def __init__(self, mgr: Any, t0: datetime) -> None:
        self.t0 = t0
        self._clock = mgr.clock
        self._hard: dict[tuple[str, str], float] = {}
        self._series: dict[tuple[str, str], list[tuple[float, float]]] = {}
        self._ran_out: dict[tuple[str, str], float] = {}
        inf = mgr.informer(BIZRQ)
        inf.on_change(self._on_change)
        for node in inf.list():
            self._on_change("ADDED", node, None)

    def _on_change(self, etype: str, node: Any, old: Any | None) -> None:
        if etype == "DELETED":
            return
        st = node.status
        used = (st.used if st is not None else None) or {}
        t = (self._clock.now() - self.t0).total_seconds()
        for k, q in (node.spec.hard or {}).items():
            if not is_cash(k):
                continue
            ref = (node.metadata.name, k)
            hard = q.milli_value() / 1000
            u = used[k].milli_value() / 1000 if k in used else 0.0
            self._hard[ref] = hard
            series = self._series.setdefault(ref, [])
            if not series or series[-1][1] != u:
                series.append((t, u))
            if u >= hard and ref not in self._ran_out:
                self._ran_out[ref] = t

    def results(self, refused: dict[str, int]) -> list[BudgetResult]:
        return [
            BudgetResult(
                g,
                k,
                self._hard[(g, k)],
                self._series[(g, k)][-1][1] if self._series.get((g, k)) else 0.0,
                self._ran_out.get((g, k)),
                refused.get(g, 0),
                self._series.get((g, k), []),
            )
            for g, k in sorted(self._hard)
        ]


def refused_by_group(refusals: list[Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in refusals:
        g = (r.obj.metadata.labels or {}).get(GROUP_LABEL)
        if g:
            out[g] = out.get(g, 0) + 1
    return out


def budget_json(b: BudgetResult) -> dict[str, Any]:
    return {
        "group": b.group,
        "budget": b.key,
        "granted_hours": round(b.granted_h, 3),
        "used_hours": round(b.used_h, 3),
        "ran_out_s": round(b.ran_out_s, 3) if b.ran_out_s is not None else None,
        "refused_jobs": b.refused,
        "burn": [[round(t, 3), round(u, 3)] for t, u in b.series],
    }


def _at(s: float | None) -> str:
    if s is None:
        return "-"
    return f"{s / 3600:.2f}h"


def budget_table(budgets: list[BudgetResult]) -> Table:
    """Each group's budget: granted, used, left, when it ran out (from the
    start of the replay) and the Jobs refused for the group."""
    t = Table(title="business-group budgets (GPU-hours burnt by the replay)", title_justify="left")
    for col in ("GROUP", "BUDGET", "GRANTED", "USED", "LEFT", "RAN OUT AT", "REFUSED"):
        t.add_column(col)
    for b in budgets:
        t.add_row(
            b.group,
            b.key,
            f"{b.granted_h:g}h",
            f"{b.used_h:g}h",
            f"{max(b.granted_h - b.used_h, 0):g}h",
            _at(b.ran_out_s),
            str(b.refused),
        )
    return t
