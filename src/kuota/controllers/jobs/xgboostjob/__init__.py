"""Kueue's XGBoostJob integration (framework ``kubeflow.org/xgboostjob``,
``pkg/controller/jobs/kubeflow/jobs/xgboostjob``): the shared Kubeflow adapter for
the kind. The training operator runs in the embedded cluster
(``kuota.cluster.kubeflow``)."""

from __future__ import annotations

from functools import partial

from kuota.controllers.integration import Integration
from kuota.controllers.jobs.kubeflowjob.kubeflow_adapter import KubeflowAdapter
from kuota.controllers.multikueue_adapter import generic

__all__ = ["INTEGRATION"]

_ADAPTER = partial(KubeflowAdapter, "XGBoostJob")
INTEGRATION = Integration("kubeflow.org/xgboostjob", adapter=_ADAPTER, multikueue=generic(_ADAPTER))
