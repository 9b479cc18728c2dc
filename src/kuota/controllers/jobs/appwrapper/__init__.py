"""Kueue's AppWrapper integration (framework ``workload.codeflare.dev/
appwrapper``, ``pkg/controller/jobs/appwrapper``): an adapter for the
generic job reconciler. The AppWrapper controller that creates the wrapped
objects runs in the embedded cluster (``kuota.cluster.appwrapper``); the
objects it creates are the AppWrapper's (its Kueue-managed owner speaks for
them)."""

from __future__ import annotations

from kuota.controllers.integration import Integration
from kuota.controllers.jobs.appwrapper.appwrapper_adapter import AppWrapperAdapter
from kuota.controllers.multikueue_adapter import generic

__all__ = ["INTEGRATION"]

INTEGRATION = Integration(
    "workload.codeflare.dev/appwrapper",
    adapter=AppWrapperAdapter,
    multikueue=generic(AppWrapperAdapter),
)
