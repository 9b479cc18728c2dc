"""Kueue's JAXJob integration (framework ``kubeflow.org/jaxjob``,
``pkg/controller/jobs/kubeflow/jobs/jaxjob``): the shared Kubeflow adapter for
the kind. The training operator runs in the embedded cluster
(``kuota.cluster.kubeflow``)."""

from __future__ import annotations

from functools import partial

from kuota.controllers.integration import Integration
from kuota.controllers.jobs.kubeflowjob.kubeflow_adapter import KubeflowAdapter

__all__ = ["INTEGRATION"]

INTEGRATION = Integration("kubeflow.org/jaxjob", adapter=partial(KubeflowAdapter, "JAXJob"))
