"""Kueue's batch/v1 Job integration (framework ``batch/job``,
``pkg/controller/jobs/job``): an adapter for the generic job reconciler."""

from __future__ import annotations

from kuota.controllers.integration import Integration
from kuota.controllers.jobs.batchjob.job_adapter import BatchJobAdapter
from kuota.controllers.jobs.batchjob.job_multikueue_adapter import job_multikueue_adapter

__all__ = ["INTEGRATION"]

INTEGRATION = Integration("batch/job", adapter=BatchJobAdapter, multikueue=job_multikueue_adapter)
