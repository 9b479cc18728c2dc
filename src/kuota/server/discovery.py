"""API discovery as kube-apiserver serves it: the legacy documents (``/api``,
``/apis``, ``/api/v1``, ``/apis/G/V``) and aggregated discovery
(``apidiscovery.k8s.io/v2`` APIGroupDiscoveryList, what kubectl 1.32 asks
first), built from the api registry's declarations plus the groups the
server itself implements (CRDs, Kueue's visibility API)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kuota.server.served import Served, group_versions, resources_of

AGGREGATED_TYPE = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
_FULL = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
_SUB = ["get", "patch", "update"]

CRD_GROUP = "apiextensions.k8s.io"
VISIBILITY_GROUP = "visibility.kueue.x-k8s.io"
VISIBILITY_VERSIONS = ("v1beta2", "v1beta1")


@dataclass(frozen=True)
class Resource:
    """A resource entry in discovery."""

    name: str
    singular: str
    namespaced: bool
    kind: str
    verbs: tuple[str, ...]
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    # (subresource, response (group, version, kind), verbs)
    subresources: tuple[tuple[str, tuple[str, str, str], tuple[str, ...]], ...] = ()


def _of(s: Served) -> Resource:
    subs: list[tuple[str, tuple[str, str, str], tuple[str, ...]]] = []
    if s.spec.status_subresource:
        subs.append(("status", (s.group, s.version.name, s.kind), tuple(_SUB)))
    if s.spec.scale_subresource:
        subs.append(("scale", ("autoscaling", "v1", "Scale"), tuple(_SUB)))
    return Resource(
        s.resource,
        s.spec.singular,
        s.namespaced,
        s.kind,
        tuple(_FULL),
        s.spec.short_names,
        s.spec.categories,
        tuple(subs),
    )


def _extra() -> dict[tuple[str, str], list[Resource]]:
    """The groups the server implements itself."""
    out: dict[tuple[str, str], list[Resource]] = {}
    for v in VISIBILITY_VERSIONS:
        out[(VISIBILITY_GROUP, v)] = [
            Resource(
                "clusterqueues",
                "clusterqueue",
                False,
                "ClusterQueue",
                ("get",),
                subresources=(
                    (
                        "pendingworkloads",
                        (VISIBILITY_GROUP, v, "PendingWorkloadsSummary"),
                        ("get",),
                    ),
                ),
            ),
            Resource(
                "localqueues",
                "localqueue",
                True,
                "LocalQueue",
                ("get",),
                subresources=(
                    (
                        "pendingworkloads",
                        (VISIBILITY_GROUP, v, "PendingWorkloadsSummary"),
                        ("get",),
                    ),
                ),
            ),
        ]
    return out


def _all() -> list[tuple[str, list[str], dict[str, list[Resource]]]]:
    """Every group in priority order: (group, versions preferred first, resources by version)."""
    groups: list[tuple[str, list[str], dict[str, list[Resource]]]] = []
    served = group_versions()
    # The core group first, then the rest by name, Kueue's groups with them.
    order = ([""] if "" in served else []) + sorted(g for g in served if g)
    for g in order:
        versions = served[g]
        groups.append((g, versions, {v: [_of(s) for s in resources_of(g, v)] for v in versions}))
    by_group: dict[str, dict[str, list[Resource]]] = {}
    for (g, v), res in _extra().items():
        by_group.setdefault(g, {})[v] = res
    for g in sorted(by_group):
        versions = list(by_group[g])
        groups.append((g, versions, by_group[g]))
    return groups


GROUPS = _all()


def refresh() -> None:
    """Discovery again, after a CustomResourceDefinition defined a kind."""
    global GROUPS
    GROUPS = _all()


def api_versions(address: str) -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}],
    }


def api_group_list() -> dict[str, Any]:
    groups = []
    for g, versions, _ in GROUPS:
        if not g:
            continue
        gvs = [{"groupVersion": f"{g}/{v}", "version": v} for v in versions]
        groups.append({"name": g, "versions": gvs, "preferredVersion": gvs[0]})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(group: str) -> dict[str, Any] | None:
    for g, versions, _ in GROUPS:
        if g == group and g:
            gvs = [{"groupVersion": f"{g}/{v}", "version": v} for v in versions]
            return {
                "kind": "APIGroup",
                "apiVersion": "v1",
                "name": g,
                "versions": gvs,
                "preferredVersion": gvs[0],
            }
    return None


def resource_list(group: str, version: str) -> dict[str, Any] | None:
    for g, _, by_version in GROUPS:
        if g != group or version not in by_version:
            continue
        items: list[dict[str, Any]] = []
        for r in by_version[version]:
            entry: dict[str, Any] = {
                "name": r.name,
                "singularName": r.singular,
                "namespaced": r.namespaced,
                "kind": r.kind,
                "verbs": list(r.verbs),
            }
            if r.short_names:
                entry["shortNames"] = list(r.short_names)
            if r.categories:
                entry["categories"] = list(r.categories)
            items.append(entry)
            for sub, (sg, sv, sk), verbs in r.subresources:
                e: dict[str, Any] = {
                    "name": f"{r.name}/{sub}",
                    "singularName": "",
                    "namespaced": r.namespaced,
                    "kind": sk,
                    "verbs": list(verbs),
                }
                if sg != group or sv != version:
                    e["group"], e["version"] = sg, sv
                items.append(e)
        return {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": f"{group}/{version}" if group else version,
            "resources": items,
        }
    return None


def _aggregated_resource(r: Resource, group: str, version: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "resource": r.name,
        "singularResource": r.singular,
        "scope": "Namespaced" if r.namespaced else "Cluster",
        "responseKind": {"group": group, "version": version, "kind": r.kind},
        "verbs": list(r.verbs),
    }
    if r.short_names:
        out["shortNames"] = list(r.short_names)
    if r.categories:
        out["categories"] = list(r.categories)
    if r.subresources:
        out["subresources"] = [
            {
                "subresource": sub,
                "responseKind": {"group": sg, "version": sv, "kind": sk},
                "verbs": list(verbs),
            }
            for sub, (sg, sv, sk), verbs in r.subresources
        ]
    return out


def aggregated(core: bool) -> dict[str, Any]:
    """``/api`` (core=True: the core group alone) or ``/apis`` (the others)."""
    items = []
    for g, versions, by_version in GROUPS:
        if bool(g) == core:
            continue
        item: dict[str, Any] = {
            "metadata": {"name": g} if g else {},
            "versions": [
                {
                    "version": v,
                    "freshness": "Current",
                    "resources": [_aggregated_resource(r, g, v) for r in by_version[v]],
                }
                for v in versions
            ],
        }
        items.append(item)
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    }
