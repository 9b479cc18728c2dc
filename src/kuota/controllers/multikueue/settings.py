"""The Configuration's ``multiKueue`` block as Kueue reads it
(``cmd/kueue/main.go``'s setup of the MultiKueue controllers): the defaults
are the Configuration's own (gcInterval 1m, origin ``multikueue``,
workerLostTimeout 15m, the AllAtOnce dispatcher)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from kuota.api.kueue.config import KueueConfig
from kuota.api.kueue.config.defaults import (
    DEFAULT_MULTIKUEUE_ORIGIN,
    DISPATCHER_ALL_AT_ONCE,
    DISPATCHER_INCREMENTAL,
)
from kuota.api.kueue.config.durations import parse_duration
from kuota.controllers.multikueue.job_adapters import Adapters, adapters_for

__all__ = ["DISPATCHER_ALL_AT_ONCE", "DISPATCHER_INCREMENTAL", "MultiKueueSettings"]


@dataclass(frozen=True, slots=True)
class MultiKueueSettings:
    gc_interval: timedelta  # 0: no garbage collection
    origin: str  # the value of the origin label on the objects made in workers
    worker_lost_timeout: timedelta
    dispatcher: str
    namespace: str  # where the kubeconfig Secrets are (Kueue's own namespace)
    step_size: int = 3  # the Incremental dispatcher's workers per round
    respect_order: bool = True  # MultiKueueIncrementalDispatcherRespectConfigOrder
    # the kinds dispatched: those of the enabled integrations (every kind's by default)
    adapters: Adapters = field(default_factory=lambda: adapters_for(None))

    @classmethod
    def from_config(cls, config: KueueConfig) -> MultiKueueSettings:
        mk = config.source.multi_kueue
        inc = mk.incremental_dispatcher_config if mk is not None else None

        def dur(text: str | None, default: str) -> timedelta:
            return parse_duration(text if text is not None else default)

        return cls(
            gc_interval=dur(mk.gc_interval if mk else None, "1m"),
            origin=(mk.origin if mk else None) or DEFAULT_MULTIKUEUE_ORIGIN,
            worker_lost_timeout=dur(mk.worker_lost_timeout if mk else None, "15m"),
            dispatcher=(mk.dispatcher_name if mk else None) or DISPATCHER_ALL_AT_ONCE,
            namespace=config.namespace or "kueue-system",
            step_size=(inc.step_size if inc is not None else None) or 3,
            respect_order=config.gate("MultiKueueIncrementalDispatcherRespectConfigOrder"),
            adapters=adapters_for(config),
        )
