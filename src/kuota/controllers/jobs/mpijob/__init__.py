"""Kueue's MPIJob integration (framework ``kubeflow.org/mpijob``,
``pkg/controller/jobs/mpijob``: mpi-operator v2beta1): podSets launcher and
worker, over the shared Kubeflow adapter. The operator runs in the embedded
cluster (``kuota.cluster.kubeflow``)."""

from __future__ import annotations

from functools import partial

from kuota.controllers.integration import Integration
from kuota.controllers.jobs.kubeflowjob.kubeflow_adapter import KubeflowAdapter
from kuota.controllers.multikueue_adapter import generic

__all__ = ["INTEGRATION"]

_ADAPTER = partial(KubeflowAdapter, "MPIJob")
INTEGRATION = Integration("kubeflow.org/mpijob", adapter=_ADAPTER, multikueue=generic(_ADAPTER))
