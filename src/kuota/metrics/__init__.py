"""Kueue's Prometheus metrics (names, types, labels, buckets of
``pkg/metrics/metrics.go``) for every mode: ``kuota serve``, ``kuota run`` and
the cluster controller. The pure core stays I/O-free: gauges are read from the
store at scrape time, counters and histograms from the Workload transitions
the store's watch reports (see ``kuota.metrics.kueue``)."""

from typing import Any

from kuota.metrics.kueue import KueueMetrics

__all__ = ["KueueMetrics", "for_control_plane"]


def for_control_plane(cp: Any, role: str = "standalone") -> KueueMetrics:
    """The registry of an embedded control plane (``ControlPlane``) or a
    controller: gauges read its store; pending workloads are split into
    active and inadmissible by its queue manager, as Kueue's are."""

    def queued(key: str) -> str | None:
        core = cp.kueue.core
        return core.queues.queued(key) if core is not None else None

    return KueueMetrics(cp.store, role=role, queued=queued)
