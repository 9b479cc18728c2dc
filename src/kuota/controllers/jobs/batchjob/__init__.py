"""Kueue's batch/v1 Job integration (framework ``batch/job``,
``pkg/controller/jobs/job``): an adapter for the generic job reconciler."""

from __future__ import annotations

from kuota.controllers.integration import Integration
from kuota.controllers.jobs.batchjob.job_adapter import BatchJobAdapter

__all__ = ["INTEGRATION"]

INTEGRATION = Integration("batch/job", adapter=BatchJobAdapter)
