"""The job frameworks Kueue's Configuration may enable (``integrations.frameworks``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kuota.api.errors import FieldError, forbidden, index


@dataclass(frozen=True, slots=True)
class _Framework:
    gvk: str  # schema.GroupVersionKind.String()
    multikueue: bool  # registers a MultiKueue adapter
    gate: str | None = None  # CanSupportIntegration: the (alpha) gate it needs


# pkg/controller/jobs/*: every built-in integration, its job type and adapter.
BUILTIN_FRAMEWORKS: Mapping[str, _Framework] = {
    "batch/job": _Framework("batch/v1, Kind=Job", True),
    "deployment": _Framework("apps/v1, Kind=Deployment", False),
    "jobset.x-k8s.io/jobset": _Framework("jobset.x-k8s.io/v1alpha2, Kind=JobSet", True),
    "kubeflow.org/jaxjob": _Framework("kubeflow.org/v1, Kind=JAXJob", True),
    "kubeflow.org/mpijob": _Framework("kubeflow.org/v2beta1, Kind=MPIJob", True),
    "kubeflow.org/paddlejob": _Framework("kubeflow.org/v1, Kind=PaddleJob", True),
    "kubeflow.org/pytorchjob": _Framework("kubeflow.org/v1, Kind=PyTorchJob", True),
    "kubeflow.org/tfjob": _Framework("kubeflow.org/v1, Kind=TFJob", True),
    "kubeflow.org/xgboostjob": _Framework("kubeflow.org/v1, Kind=XGBoostJob", True),
    "leaderworkerset.x-k8s.io/leaderworkerset": _Framework(
        "leaderworkerset.x-k8s.io/v1, Kind=LeaderWorkerSet", True
    ),
    "pod": _Framework("/v1, Kind=Pod", True),
    "ray.io/raycluster": _Framework("ray.io/v1, Kind=RayCluster", True),
    "ray.io/rayjob": _Framework("ray.io/v1, Kind=RayJob", True),
    "ray.io/rayservice": _Framework("ray.io/v1, Kind=RayService", True),
    "sparkoperator.k8s.io/sparkapplication": _Framework(
        "sparkoperator.k8s.io/v1beta2, Kind=SparkApplication", False, "SparkApplicationIntegration"
    ),
    "statefulset": _Framework("apps/v1, Kind=StatefulSet", True),
    "trainer.kubeflow.org/trainjob": _Framework(
        "trainer.kubeflow.org/v1alpha1, Kind=TrainJob", True
    ),
    "workload.codeflare.dev/appwrapper": _Framework(
        "workload.codeflare.dev/v1beta2, Kind=AppWrapper", True
    ),
}
# Integrations that switch on the pod integration with them (ImplicitlyEnabledFrameworkNames).
IMPLIES_POD = ("deployment", "statefulset", "leaderworkerset.x-k8s.io/leaderworkerset")


def setup_errors(frameworks: Iterable[str], gates: Mapping[str, bool]) -> list[FieldError]:
    """SetupControllers' CanSupportIntegration: an enabled framework whose
    gate is off stops Kueue's manager ("failed to configure reconcilers")."""
    out: list[FieldError] = []
    for i, name in enumerate(frameworks):
        fw = BUILTIN_FRAMEWORKS.get(name)
        if fw is not None and fw.gate is not None and not gates.get(fw.gate, False):
            out.append(
                forbidden(
                    index("integrations.frameworks", i),
                    f"failed to configure reconcilers: {name} integration is alpha feature. "
                    f"please enable {fw.gate} featuregate",
                )
            )
    return out


def parse_kind_arg(arg: str) -> str | None:
    """schema.ParseKindArg(``Kind.version.group``) as a GVK string, or None."""
    if arg.count(".") < 2:
        return None
    kind, version, group = arg.split(".", 2)
    return f"{group}/{version}, Kind={kind}"


def external_kinds(names: Iterable[str]) -> frozenset[tuple[str, str]]:
    """``integrations.externalFrameworks`` (``Kind.version.group``) as the
    (group, kind) pairs Kueue's integration manager knows as job owners
    (RegisterExternalJobType); malformed entries are the Configuration's
    validation's business."""
    out = set()
    for arg in names:
        if arg.count(".") >= 2:
            kind, _, group = arg.split(".", 2)
            out.add((group, kind))
    return frozenset(out)


# ============================================================================ validation
