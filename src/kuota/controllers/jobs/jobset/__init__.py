"""Kueue's JobSet integration (framework ``jobset.x-k8s.io/jobset``,
``pkg/controller/jobs/jobset``): an adapter for the generic job reconciler.
The JobSet operator itself (its webhooks and the controller that makes the
child Jobs) is part of the embedded cluster (``kuota.cluster.jobset``)."""

from __future__ import annotations

from kuota.controllers.integration import Integration
from kuota.controllers.jobs.jobset.jobset_adapter import JobSetAdapter
from kuota.controllers.multikueue_adapter import generic

__all__ = ["INTEGRATION"]

INTEGRATION = Integration(
    "jobset.x-k8s.io/jobset", adapter=JobSetAdapter, multikueue=generic(JobSetAdapter)
)
