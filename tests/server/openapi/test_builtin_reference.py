"""The OpenAPI v3 documents kuota serves for Kubernetes' built-in kinds, field
by field, against Kubernetes' own published v1.32 documents
(tests/data/k8s-openapi-v1.32, trimmed by tools/trim_k8s_openapi.py): the same
properties, types and formats, required lists and x-kubernetes-* markers
(list-type, list-map-keys, map-type, patch-merge-key, patch-strategy).

Differences are named by the upstream schema and field they are found in
(``io.k8s.api.core.v1.Container.env``), once however many kinds embed it. What
kuota knowingly serves differently is listed below with the reason; a
difference not listed, or a listed one no longer found, fails."""

from __future__ import annotations

import functools
import json
import pathlib
from typing import Any

import pytest

from kuota.api.kindspec import KindSpec
from kuota.server.openapi import v3_document
from kuota.server.openapi.schemas import is_crd, schema_name, served_versions
from kuota.server.openapi.v3 import gv_path

DATA = pathlib.Path(__file__).parents[2] / "data" / "k8s-openapi-v1.32"
REF = "#/components/schemas/"
MARKERS = (
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-patch-merge-key",
    "x-kubernetes-patch-strategy",
)

BUILTIN = [(s.group, v.name, s.kind) for s, v in served_versions() if not is_crd(s)]


@functools.cache
def upstream(group: str, version: str) -> dict[str, Any]:
    gv = f"apis__{group}__{version}" if group else f"api__{version}"
    doc = json.loads((DATA / f"{gv}_openapi.json").read_text())
    out: dict[str, Any] = doc["components"]["schemas"]
    return out


@functools.cache
def served(group: str, version: str) -> dict[str, Any]:
    body = v3_document(gv_path(group, version))
    assert body is not None
    out: dict[str, Any] = json.loads(body)["components"]["schemas"]
    return out


def resolve(node: dict[str, Any], comps: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """Follow ``$ref`` and single-member ``allOf`` (upstream's way of giving a
    referenced property its own default); the siblings of a reference stay."""
    name = None
    while True:
        if isinstance(node.get("$ref"), str):
            name = node["$ref"].removeprefix(REF)
            node = {**comps[name], **{k: v for k, v in node.items() if k != "$ref"}}
        elif isinstance(node.get("allOf"), list) and len(node["allOf"]) == 1:
            rest = {k: v for k, v in node.items() if k != "allOf"}
            node = {**node["allOf"][0], **rest}
        else:
            return node, name


def type_of(s: dict[str, Any]) -> str:
    parts = [str(s.get("type", "-"))]
    if "format" in s:
        parts.append(str(s["format"]))
    for key in ("oneOf", "anyOf"):
        if isinstance(s.get(key), list):
            parts.append(f"{key}[{','.join(str(o.get('type')) for o in s[key])}]")
    if s.get("x-kubernetes-int-or-string"):
        parts.append("x-kubernetes-int-or-string")
    return "/".join(parts)


_SUFFIX = {"items": "[]", "additionalProperties": "{}"}


def _opaque(s: dict[str, Any]) -> bool:
    # An untyped list has items (a structural schema needs them), untyped too.
    items = s.get("items")
    return bool(s.get("x-kubernetes-preserve-unknown-fields")) and not (
        s.get("properties")
        or s.get("additionalProperties")
        or (isinstance(items, dict) and not _opaque(items))
    )


class Comparison:
    def __init__(self, group: str, version: str) -> None:
        self.ours_comps = served(group, version)
        self.theirs_comps = upstream(group, version)
        self.found: set[str] = set()
        self._seen: set[tuple[str, str]] = set()

    def compare(self, ours: dict[str, Any], theirs: dict[str, Any], label: str) -> None:
        ours, _ = resolve(ours, self.ours_comps)
        theirs, name = resolve(theirs, self.theirs_comps)
        out = self.found
        if type_of(ours) != type_of(theirs):
            out.add(f"{label}: type {type_of(ours)}, Kubernetes {type_of(theirs)}")
        for m in MARKERS:
            if ours.get(m) != theirs.get(m):
                out.add(f"{label}: {m} {ours.get(m)}, Kubernetes {theirs.get(m)}")
        their_props = theirs.get("properties") or {}
        if _opaque(ours) and (their_props or theirs.get("items")):
            out.add(f"{label}: untyped")
            return
        base = name or label
        key = (base, json.dumps(ours, sort_keys=True))
        if key in self._seen:
            return
        self._seen.add(key)
        if sorted(ours.get("required") or []) != sorted(theirs.get("required") or []):
            out.add(
                f"{base}: required {sorted(ours.get('required') or [])}, "
                f"Kubernetes {sorted(theirs.get('required') or [])}"
            )
        our_props = ours.get("properties") or {}
        for p, sub in our_props.items():
            if p not in their_props:
                out.add(f"{base}.{p}: not in Kubernetes v1.32")
            else:
                self.compare(sub, their_props[p], f"{base}.{p}")
        if our_props or not their_props:
            out.update(f"{base}.{p}: not served" for p in their_props if p not in our_props)
        elif their_props:
            out.add(f"{label}: no properties")
        for key_ in ("items", "additionalProperties"):
            if isinstance(theirs.get(key_), dict):
                if isinstance(ours.get(key_), dict):
                    self.compare(ours[key_], theirs[key_], label + _SUFFIX[key_])
                elif not _opaque(ours):
                    out.add(f"{label}: no {key_}")


def _spec(gvk: tuple[str, str, str]) -> KindSpec:
    return next(s for s, v in served_versions() if (s.group, v.name, s.kind) == gvk)


def differences(gvk: tuple[str, str, str]) -> set[str]:
    group, version, _ = gvk
    name = schema_name(_spec(gvk), version)
    c = Comparison(group, version)
    c.compare({"$ref": REF + name}, {"$ref": REF + name}, name)
    return c.found


_UNTYPED = "kept as given, not typed by kuota (served as x-kubernetes-preserve-unknown-fields)"

# Stored as given (the simulation never reads inside them); each is served
# as x-kubernetes-preserve-unknown-fields, its list markers kept.
UNTYPED: dict[str, list[str]] = {
    "io.k8s.api.apps.v1.DaemonSetSpec": ["updateStrategy"],
    "io.k8s.api.apps.v1.DaemonSetStatus": ["conditions"],
    "io.k8s.api.apps.v1.StatefulSetSpec": ["volumeClaimTemplates"],
    "io.k8s.api.apps.v1.StatefulSetStatus": ["conditions"],
    "io.k8s.api.batch.v1.JobSpec": ["podFailurePolicy", "successPolicy"],
    "io.k8s.api.batch.v1.JobStatus": ["uncountedTerminatedPods"],
    "io.k8s.api.core.v1.Container": [
        "env",
        "envFrom",
        "lifecycle",
        "livenessProbe",
        "readinessProbe",
        "resizePolicy",
        "securityContext",
        "startupProbe",
        "volumeDevices",
        "volumeMounts",
    ],
    "io.k8s.api.core.v1.NamespaceStatus": ["conditions"],
    "io.k8s.api.core.v1.NodeSpec": ["configSource"],
    "io.k8s.api.core.v1.NodeStatus": [
        "config",
        "daemonEndpoints",
        "features",
        "images",
        "nodeInfo",
        "runtimeHandlers",
        "volumesAttached",
    ],
    "io.k8s.api.core.v1.PodSpec": [
        "dnsConfig",
        "ephemeralContainers",
        "hostAliases",
        "imagePullSecrets",
        "os",
        "readinessGates",
        "resourceClaims",
        "securityContext",
        "volumes",
    ],
    "io.k8s.api.core.v1.PodStatus": [
        "containerStatuses",
        "ephemeralContainerStatuses",
        "hostIPs",
        "initContainerStatuses",
        "podIPs",
        "resourceClaimStatuses",
    ],
    "io.k8s.api.core.v1.ResourceRequirements": ["claims"],
    "io.k8s.api.core.v1.ServiceStatus": ["conditions", "loadBalancer"],
    "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": ["managedFields"],
}

_NOT_STORED = "not stored by kuota: its Event and Service keep what the simulated cluster reads"
_LATER = "a field of a later Kubernetes release, which kuota's types carry"
# Fields of Kubernetes v1.32 kuota does not serve, and kuota's fields that
# v1.32 does not have (the release each first appears in checked against
# Kubernetes' published documents of v1.33 to v1.35).
_NO_MATCH_CONDITIONS = (
    "not stored by kuota: its webhook caller has no CEL to evaluate matchConditions with"
)
FIELDS: dict[str, str] = {
    "io.k8s.api.admissionregistration.v1.MutatingWebhook.matchConditions: not served": (
        _NO_MATCH_CONDITIONS
    ),
    "io.k8s.api.admissionregistration.v1.ValidatingWebhook.matchConditions: not served": (
        _NO_MATCH_CONDITIONS
    ),
    "io.k8s.api.core.v1.Event.action: not served": _NOT_STORED,
    "io.k8s.api.core.v1.Event.eventTime: not served": _NOT_STORED,
    "io.k8s.api.core.v1.Event.related: not served": _NOT_STORED,
    "io.k8s.api.core.v1.Event.reportingInstance: not served": _NOT_STORED,
    "io.k8s.api.core.v1.Event.series: not served": _NOT_STORED,
    "io.k8s.api.core.v1.ObjectReference.fieldPath: not served": _NOT_STORED,
    "io.k8s.api.core.v1.ServiceSpec.allocateLoadBalancerNodePorts: not served": _NOT_STORED,
    "io.k8s.api.core.v1.ServiceSpec.externalIPs: not served": _NOT_STORED,
    "io.k8s.api.core.v1.ServiceSpec.externalTrafficPolicy: not served": _NOT_STORED,
    "io.k8s.api.core.v1.ServiceSpec.healthCheckNodePort: not served": _NOT_STORED,
    "io.k8s.api.core.v1.ServiceSpec.loadBalancerClass: not served": _NOT_STORED,
    "io.k8s.api.core.v1.ServiceSpec.loadBalancerIP: not served": _NOT_STORED,
    "io.k8s.api.core.v1.ServiceSpec.loadBalancerSourceRanges: not served": _NOT_STORED,
    "io.k8s.api.core.v1.ServiceSpec.sessionAffinityConfig: not served": _NOT_STORED,
    "io.k8s.api.core.v1.ServiceSpec.trafficDistribution: not served": _NOT_STORED,
    "io.k8s.api.apps.v1.DeploymentStatus.terminatingReplicas: not in Kubernetes v1.32": f"{_LATER} (v1.33)",
    "io.k8s.api.apps.v1.ReplicaSetStatus.terminatingReplicas: not in Kubernetes v1.32": f"{_LATER} (v1.33)",
    "io.k8s.api.core.v1.PodCondition.observedGeneration: not in Kubernetes v1.32": f"{_LATER} (v1.33)",
    "io.k8s.api.core.v1.PodStatus.observedGeneration: not in Kubernetes v1.32": f"{_LATER} (v1.33)",
    "io.k8s.api.core.v1.Container.restartPolicyRules: not in Kubernetes v1.32": f"{_LATER} (v1.34)",
    "io.k8s.api.core.v1.PodSpec.hostnameOverride: not in Kubernetes v1.32": f"{_LATER} (v1.34)",
    "io.k8s.api.core.v1.PodStatus.extendedResourceClaimStatus: not in Kubernetes v1.32": f"{_LATER} (v1.34)",
    "io.k8s.api.core.v1.NodeStatus.declaredFeatures: not in Kubernetes v1.32": f"{_LATER} (v1.35)",
    "io.k8s.api.core.v1.PodStatus.allocatedResources: not in Kubernetes v1.32": f"{_LATER} (v1.35)",
    "io.k8s.api.core.v1.PodStatus.resources: not in Kubernetes v1.32": f"{_LATER} (v1.35)",
    "io.k8s.api.batch.v1.JobSpec.scheduling: not in Kubernetes v1.32": f"{_LATER} (after v1.35)",
    "io.k8s.api.core.v1.NodeSpec.podPreemptionPolicy: not in Kubernetes v1.32": f"{_LATER} (after v1.35)",
    "io.k8s.api.core.v1.PodSpec.evictionResponders: not in Kubernetes v1.32": f"{_LATER} (after v1.35)",
    "io.k8s.api.core.v1.PodSpec.schedulingGroup: not in Kubernetes v1.32": f"{_LATER} (after v1.35)",
    "io.k8s.api.core.v1.PodStatus.nodeAllocatableResourceClaimStatuses: not in Kubernetes v1.32": f"{_LATER} (after v1.35)",
    "io.k8s.api.core.v1.PodStatus.volumeHealth: not in Kubernetes v1.32": f"{_LATER} (after v1.35)",
    "io.k8s.api.apps.v1.StatefulSetSpec: required ['selector', 'template'], "
    "Kubernetes ['selector', 'serviceName', 'template']": "serviceName is optional from v1.33 on, as in kuota's types",
}

# Differences kuota knowingly has, each with its reason.
KNOWN: dict[str, str] = {
    **{f"{c}.{f}: untyped": _UNTYPED for c, fs in UNTYPED.items() for f in fs},
    **FIELDS,
}


@pytest.mark.parametrize("gvk", BUILTIN, ids=["/".join(g) for g in BUILTIN])
def test_builtin_kind_matches_kubernetes(gvk: tuple[str, str, str]) -> None:
    unexpected = sorted(d for d in differences(gvk) if d not in KNOWN)
    assert unexpected == [], "\n".join(unexpected)


def test_every_known_difference_is_still_found() -> None:
    found = set().union(*(differences(g) for g in BUILTIN))
    assert sorted(set(KNOWN) - found) == []


def test_the_reference_covers_every_served_builtin_kind() -> None:
    assert len(BUILTIN) == 34
    for group, version, kind in BUILTIN:
        name = schema_name(_spec((group, version, kind)), version)
        entry = upstream(group, version)[name]
        assert {"group": group, "version": version, "kind": kind} in entry[
            "x-kubernetes-group-version-kind"
        ]
