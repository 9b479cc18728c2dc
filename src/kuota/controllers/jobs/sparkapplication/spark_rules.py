"""The Spark rules of Kueue's SparkApplication validating webhook
(``sparkapplication_webhook.go`` validateCreate), for an application Kueue
manages (a queue name, or ``manageJobsWithoutQueueName``): cluster mode
only, and no dynamic allocation unless the application is an elastic job."""

from __future__ import annotations

from typing import Final

from kuota.api import errors as e
from kuota.api.spark import spark_types as s

__all__ = ["spark_errors"]

DYNAMIC_ALLOCATION_PATH: Final = "spec.dynamicAllocation.enabled"
DYNAMIC_ALLOCATION_MSG: Final = (
    "a kueue managed job can use dynamicAllocation only when the "
    "ElasticJobsViaWorkloadSlices feature gate is on and the job is an elastic job"
)


def spark_errors(app: s.SparkApplication, elastic: bool) -> list[e.FieldError]:
    spec = app.spec
    errs: list[e.FieldError] = []
    if spec.mode != "cluster":
        errs.append(
            e.invalid(
                "spec.mode",
                spec.mode or "",
                "only Cluster mode is supported for a kueue managed job",
            )
        )
    da = spec.dynamic_allocation
    if not elastic and da is not None and da.enabled:
        errs.append(e.invalid(DYNAMIC_ALLOCATION_PATH, True, DYNAMIC_ALLOCATION_MSG))
    return errs
