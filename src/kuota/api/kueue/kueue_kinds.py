"""Kueue's kinds (``kueue.x-k8s.io``), declared once: names, short names, printer
columns and subresources as Kueue's CRDs have them (the kubebuilder markers of
``apis/kueue/v1beta2``; Kueue declares no categories), v1beta2 stored and v1beta1
served as deprecated, each version's struct and conversion, Kueue's webhooks."""

from __future__ import annotations

from kuota.api.kindspec import KindSpec, PrinterColumn, VersionSpec
from kuota.api.kueue import types as kt
from kuota.api.kueue import v1alpha1, v1beta1
from kuota.api.kueue.webhooks import DEFAULTERS, WEBHOOKS

__all__ = ["KUEUE_KINDS"]


def _cq_columns(cohort_field: str) -> tuple[PrinterColumn, ...]:
    return (
        PrinterColumn("Cohort", "string", f".spec.{cohort_field}"),
        PrinterColumn("Strategy", "string", ".spec.queueingStrategy", 1),
        PrinterColumn("Pending Workloads", "integer", ".status.pendingWorkloads"),
        PrinterColumn("Admitted Workloads", "integer", ".status.admittedWorkloads", 1),
    )


_COLUMNS: dict[str, tuple[PrinterColumn, ...]] = {
    "LocalQueue": (
        PrinterColumn("ClusterQueue", "string", ".spec.clusterQueue"),
        PrinterColumn("Pending Workloads", "integer", ".status.pendingWorkloads"),
        PrinterColumn("Admitted Workloads", "integer", ".status.admittedWorkloads"),
    ),
    "WorkloadPriorityClass": (PrinterColumn("Value", "integer", ".value"),),
    "Workload": (
        PrinterColumn("Queue", "string", ".spec.queueName"),
        PrinterColumn("Reserved in", "string", ".status.admission.clusterQueue"),
        PrinterColumn("Admitted", "string", '.status.conditions[?(@.type=="Admitted")].status'),
        PrinterColumn("Finished", "string", '.status.conditions[?(@.type=="Finished")].status'),
        PrinterColumn("Age", "date", ".metadata.creationTimestamp"),
    ),
}

# kind -> (plural, short names, status subresource); in the order of ``kuota crds``.
_NAMES: dict[str, tuple[str, tuple[str, ...], bool]] = {
    "ResourceFlavor": ("resourceflavors", ("flavor", "flavors", "rf"), False),
    "ClusterQueue": ("clusterqueues", ("cq",), True),
    "LocalQueue": ("localqueues", ("queue", "queues", "lq"), True),
    "Cohort": ("cohorts", ("co",), True),
    "WorkloadPriorityClass": ("workloadpriorityclasses", ("wpc",), False),
    "AdmissionCheck": ("admissionchecks", ("ac",), True),
    "Workload": ("workloads", ("kwl", "kueueworkload", "kueueworkloads"), True),
    "Topology": ("topologies", ("topo",), False),
}


def _versions(kind: str) -> tuple[VersionSpec, ...]:
    wire, to_internal, from_internal = v1beta1.KINDS[kind]
    v1: tuple[PrinterColumn, ...] = _COLUMNS.get(kind, ())
    v2: tuple[PrinterColumn, ...] = v1
    if kind == "ClusterQueue":
        v1, v2 = _cq_columns("cohort"), _cq_columns("cohortName")
    versions = (
        VersionSpec(
            "v1beta2", kt.KINDS[kind], storage=True, root_rules=kt.ROOT_RULES.get(kind), columns=v2
        ),
        VersionSpec(
            "v1beta1",
            wire,
            deprecated=True,
            to_internal=to_internal,
            from_internal=from_internal,
            root_rules=v1beta1.ROOT_RULES.get(kind),
            columns=v1,
        ),
    )
    if kind == "Cohort":
        # No longer served by Kueue; kuota still reads old manifests.
        alpha = VersionSpec(
            "v1alpha1", v1alpha1.CohortAlpha, served=False, to_internal=v1alpha1.cohort_from_alpha
        )
        versions = (*versions, alpha)
    return versions


KUEUE_KINDS: tuple[KindSpec, ...] = tuple(
    KindSpec(
        group=kt.GROUP,
        kind=kind,
        plural=plural,
        namespaced=kind in kt.NAMESPACED_KINDS,
        internal=kt.KINDS[kind],
        versions=_versions(kind),
        short_names=short,
        status_subresource=status,
        validate=WEBHOOKS[kind],
        default=DEFAULTERS.get(kind),
    )
    for kind, (plural, short, status) in _NAMES.items()
)
