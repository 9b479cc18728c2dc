"""Kueue's JAXJob integration (framework ``kubeflow.org/jaxjob``,
``pkg/controller/jobs/kubeflow/jobs/jaxjob``): the shared Kubeflow adapter for
the kind. The training operator runs in the embedded cluster
(``kuota.cluster.kubeflow``)."""

from __future__ import annotations

from functools import partial

from kuota.controllers.integration import Integration
from kuota.controllers.jobs.kubeflowjob.kubeflow_adapter import KubeflowAdapter
from kuota.controllers.multikueue_adapter import generic

__all__ = ["INTEGRATION"]

_ADAPTER = partial(KubeflowAdapter, "JAXJob")
INTEGRATION = Integration("kubeflow.org/jaxjob", adapter=_ADAPTER, multikueue=generic(_ADAPTER))
