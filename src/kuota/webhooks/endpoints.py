"""Kueue's webhook paths (``config/components/webhook/manifests.yaml``):
controller-runtime's ``/mutate-<group>-<version>-<kind>`` and ``/validate-…``."""

from __future__ import annotations

from typing import Final

from kuota.webhooks.review import Endpoint

# (apiVersion, kind, has a mutating webhook). Every kind has a validating one.
KINDS: Final = (
    ("batch/v1", "Job", True),
    ("v1", "Pod", True),
    ("apps/v1", "Deployment", True),
    ("apps/v1", "StatefulSet", True),
    ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", True),
    ("jobset.x-k8s.io/v1alpha2", "JobSet", True),
    ("kubeflow.org/v2beta1", "MPIJob", True),
    ("kubeflow.org/v1", "PyTorchJob", True),
    ("kubeflow.org/v1", "TFJob", True),
    ("kubeflow.org/v1", "XGBoostJob", True),
    ("kubeflow.org/v1", "PaddleJob", True),
    ("kubeflow.org/v1", "JAXJob", True),
    ("trainer.kubeflow.org/v1alpha1", "TrainJob", True),
    ("ray.io/v1", "RayJob", True),
    ("ray.io/v1", "RayCluster", True),
    ("ray.io/v1", "RayService", True),
    ("workload.codeflare.dev/v1beta2", "AppWrapper", True),
    ("sparkoperator.k8s.io/v1beta2", "SparkApplication", True),
    ("kueue.x-k8s.io/v1beta2", "Workload", True),
    ("kueue.x-k8s.io/v1beta2", "ClusterQueue", True),
    ("kueue.x-k8s.io/v1beta2", "ResourceFlavor", True),
    ("kueue.x-k8s.io/v1beta2", "Cohort", False),
)


def endpoints() -> list[Endpoint]:
    out: list[Endpoint] = []
    for api_version, kind, mutating in KINDS:
        if mutating:
            out.append(Endpoint(api_version, kind, True))
        out.append(Endpoint(api_version, kind, False))
    return out
