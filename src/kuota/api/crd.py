"""CustomResourceDefinitions of Kueue's kinds, generated from kuota's types.

Both versions are served; v1beta2 is the storage version and v1beta1 is marked
deprecated, as in Kueue. The schemas are the ones ``kuota validate`` checks
documents against (``schema.openapi``), so what the CRD admits and what kuota
admits cannot drift apart.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import yaml

from kuota.api.kueue import types as kt
from kuota.api.kueue import v1beta1
from kuota.api.schema import openapi


@dataclass(frozen=True)
class Names:
    plural: str
    short: tuple[str, ...]
    status: bool
    columns: tuple[tuple[str, str, str, int], ...] = ()  # name, type, jsonPath, priority


NAMES: dict[str, Names] = {
    "ResourceFlavor": Names("resourceflavors", ("flavor", "flavors", "rf"), False),
    "ClusterQueue": Names(
        "clusterqueues",
        ("cq",),
        True,
        (
            ("Cohort", "string", ".spec.{cohort}", 0),
            ("Strategy", "string", ".spec.queueingStrategy", 1),
            ("Pending Workloads", "integer", ".status.pendingWorkloads", 0),
            ("Admitted Workloads", "integer", ".status.admittedWorkloads", 1),
        ),
    ),
    "LocalQueue": Names(
        "localqueues",
        ("queue", "queues", "lq"),
        True,
        (
            ("ClusterQueue", "string", ".spec.clusterQueue", 0),
            ("Pending Workloads", "integer", ".status.pendingWorkloads", 0),
            ("Admitted Workloads", "integer", ".status.admittedWorkloads", 0),
        ),
    ),
    "Cohort": Names("cohorts", ("co",), True),
    "WorkloadPriorityClass": Names(
        "workloadpriorityclasses", ("wpc",), False, (("Value", "integer", ".value", 0),)
    ),
    "AdmissionCheck": Names("admissionchecks", ("ac",), True),
    "Workload": Names(
        "workloads",
        ("kwl", "kueueworkload", "kueueworkloads"),
        True,
        (
            ("Queue", "string", ".spec.queueName", 0),
            ("Reserved in", "string", ".status.admission.clusterQueue", 0),
            ("Admitted", "string", '.status.conditions[?(@.type=="Admitted")].status', 0),
            ("Finished", "string", '.status.conditions[?(@.type=="Finished")].status', 0),
            ("Age", "date", ".metadata.creationTimestamp", 0),
        ),
    ),
}


def _version_schema(typ: type, root_rules: Any = None) -> dict[str, Any]:
    s = copy.deepcopy(openapi(typ))
    extra = (root_rules.extra_json_schema if root_rules is not None else None) or {}
    if extra.get("x-kubernetes-validations"):
        s["x-kubernetes-validations"] = extra["x-kubernetes-validations"]
    props = s.setdefault("properties", {})
    props["apiVersion"] = {"type": "string"}
    props["kind"] = {"type": "string"}
    props["metadata"] = {"type": "object"}
    s.pop("required", None)
    required = [
        r for r in openapi(typ).get("required", []) if r not in ("apiVersion", "kind", "metadata")
    ]
    if required:
        s["required"] = required
    return s


def crd(kind: str) -> dict[str, Any]:
    n = NAMES[kind]
    versions = []
    for version, typ, rules in (
        ("v1beta1", v1beta1.KINDS[kind][0], v1beta1.ROOT_RULES.get(kind)),
        ("v1beta2", kt.KINDS[kind], kt.ROOT_RULES.get(kind)),
    ):
        cohort_field = "cohort" if version == "v1beta1" else "cohortName"
        v: dict[str, Any] = {
            "name": version,
            "served": True,
            "storage": version == "v1beta2",
            "schema": {"openAPIV3Schema": _version_schema(typ, rules)},
        }
        if version == "v1beta1":
            v["deprecated"] = True
            v["deprecationWarning"] = (
                f"kueue.x-k8s.io/v1beta1 {kind} is deprecated; use kueue.x-k8s.io/v1beta2"
            )
        if n.status:
            v["subresources"] = {"status": {}}
        if n.columns:
            v["additionalPrinterColumns"] = [
                {"name": name, "type": typ_, "jsonPath": path.replace("{cohort}", cohort_field)}
                | ({"priority": prio} if prio else {})
                for name, typ_, path, prio in n.columns
            ]
        versions.append(v)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{n.plural}.{kt.GROUP}"},
        "spec": {
            "group": kt.GROUP,
            "names": {
                "kind": kind,
                "listKind": f"{kind}List",
                "plural": n.plural,
                "singular": kind.lower(),
                "shortNames": list(n.short),
            },
            "scope": "Namespaced" if kind in kt.NAMESPACED_KINDS else "Cluster",
            "versions": versions,
        },
    }


def all_crds(kinds: list[str] | None = None) -> list[dict[str, Any]]:
    return [crd(k) for k in (kinds or list(NAMES))]


def crds_yaml(objs: list[dict[str, Any]]) -> str:
    return yaml.safe_dump_all(objs, sort_keys=False, default_flow_style=False, width=120)
