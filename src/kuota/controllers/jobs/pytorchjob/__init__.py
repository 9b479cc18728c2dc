"""Kueue's PyTorchJob integration (framework ``kubeflow.org/pytorchjob``,
``pkg/controller/jobs/kubeflow/jobs/pytorchjob``): the shared Kubeflow adapter for
the kind. The training operator runs in the embedded cluster
(``kuota.cluster.kubeflow``)."""

from __future__ import annotations

from functools import partial

from kuota.controllers.integration import Integration
from kuota.controllers.jobs.kubeflowjob.kubeflow_adapter import KubeflowAdapter
from kuota.controllers.multikueue_adapter import generic

__all__ = ["INTEGRATION"]

_ADAPTER = partial(KubeflowAdapter, "PyTorchJob")
INTEGRATION = Integration("kubeflow.org/pytorchjob", adapter=_ADAPTER, multikueue=generic(_ADAPTER))
