"""kuota's own series for business-group quota trees, read from the
BizGroupResourceQuotas at scrape time: ``kuota_bizrq_budget_used_ratio``,
each budget's (``cash/`` key's) used over its hard; 1 or more means spent
(new requests of the group are refused or held; what runs goes on)."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from kuota.api.kuotadev.bizrq import is_cash
from kuota.store.protocol import ObjectStore
from kuota.store.resources import BIZRQ

__all__ = ["BizrqCollector"]


class BizrqCollector(Collector):
    def __init__(self, store: ObjectStore, role: str) -> None:
        self.store = store
        self.role = role

    def describe(self) -> list[Metric]:
        return []  # computed at scrape time only

    def collect(self) -> Iterator[Metric]:
        ratio = GaugeMetricFamily(
            "kuota_bizrq_budget_used_ratio",
            "A business group's budget (cash/ key, resource-hours): used over hard",
            labels=["bizrq", "resource", "replica_role"],
        )
        for node in self.store.list(BIZRQ).items:
            st = node.status
            used = (st.used if st is not None else None) or {}
            for k, q in sorted((node.spec.hard or {}).items()):
                if not is_cash(k):
                    continue
                hard = q.milli_value()
                u = used[k].milli_value() if k in used else 0
                value = u / hard if hard else (float("inf") if u else 0.0)
                ratio.add_metric([node.metadata.name, k, self.role], value)
        yield ratio
