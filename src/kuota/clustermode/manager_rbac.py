"""The manager's least-privilege RBAC, derived from the controllers
``kuota controller`` runs: what it reads is what its informers list and
watch (the Kueue controller and every job integration, built with all of
them enabled, as a Deployment's Configuration may enable any), and what it
writes is the short list below, one line per write the controllers make.
tests/clustermode/test_manifests.py runs the controller with only these
rules against ``kuota serve`` (which enforces RBAC): a write missing here
is a 403 there."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime
from typing import Any, Final

from kuota.api.kueue.config import KueueConfig, load_config
from kuota.controllers.jobs.integrations import INTEGRATIONS
from kuota.runtime.clock import VirtualClock
from kuota.store import MemoryStore
from kuota.store.kinds import kind_info

READ: Final = ("get", "list", "watch")

# (group, resource, verbs) of the writes, beyond reading, and who makes them.
_WRITES: Final[tuple[tuple[str, str, tuple[str, ...]], ...]] = (
    # the job reconcilers create, update and delete Workloads; the Kueue
    # controller writes their status (admission, conditions, requeueState)
    ("kueue.x-k8s.io", "workloads", ("create", "update", "patch", "delete")),
    ("kueue.x-k8s.io", "workloads/status", ("get", "update", "patch")),
    ("kueue.x-k8s.io", "clusterqueues/status", ("get", "update", "patch")),
    ("kueue.x-k8s.io", "localqueues/status", ("get", "update", "patch")),
    ("kueue.x-k8s.io", "cohorts/status", ("get", "update", "patch")),
    ("kueue.x-k8s.io", "admissionchecks/status", ("get", "update", "patch")),
    # kuota's quota trees: their controller writes status
    ("kuota.dev", "bizgroupresourcequotas/status", ("get", "update", "patch")),
    # MultiKueue: each cluster's Active condition
    ("kueue.x-k8s.io", "multikueueclusters/status", ("get", "update", "patch")),
    # the ProvisioningRequest check: its requests and their pod templates
    ("autoscaling.x-k8s.io", "provisioningrequests", ("create", "update", "patch", "delete")),
    ("", "podtemplates", ("create", "update", "delete")),
    # the pod integration: gates removed, pods of an evicted group stopped
    # (and TAS's ungater: gates removed, node selectors set)
    ("", "pods", ("update", "patch", "delete")),
    ("", "pods/status", ("get", "update", "patch")),
    # the recorder (client-go's: create, then patch the count); at start it
    # lists the kept Events to take over their counts, and deletes them at
    # their one-hour expiry
    ("", "events", ("list", "create", "update", "patch", "delete")),
    # the webhook server registers its configurations and injects its CA
    (
        "admissionregistration.k8s.io",
        "mutatingwebhookconfigurations",
        (*READ, "create", "update", "patch"),
    ),
    (
        "admissionregistration.k8s.io",
        "validatingwebhookconfigurations",
        (*READ, "create", "update", "patch"),
    ),
)
# Every job kind's adapter suspends, resumes and labels its jobs.
_JOB_WRITES: Final = ("update", "patch")

# Leader election and the webhook certificates, in Kueue's namespace only
# (kueue-leader-election-role and the rotator's Secret).
NAMESPACED: Final[tuple[tuple[str, str, tuple[str, ...]], ...]] = (
    ("coordination.k8s.io", "leases", (*READ, "create", "update", "patch")),
    ("", "events", ("create", "patch")),
    ("", "secrets", (*READ, "create", "update", "patch")),
)


def _all_frameworks() -> KueueConfig:
    names = [i.name for i in INTEGRATIONS]
    cfg, errs = load_config(
        {
            "apiVersion": "config.kueue.x-k8s.io/v1beta2",
            "kind": "Configuration",
            # (Kueue's role grants every integration's kinds, alpha ones too)
            "featureGates": {"SparkApplicationIntegration": True},
            "integrations": {"frameworks": names},
        }
    )
    assert cfg is not None, errs
    return cfg


def read_resources() -> list[tuple[str, str]]:
    """(group, resource) of every informer the manager opens."""
    from kuota.clustermode.kueue_manager import build

    clock = VirtualClock(datetime(2026, 1, 1, tzinfo=UTC))
    km = build(_all_frameworks(), MemoryStore(clock), clock)
    # (a scoped informer reads one namespace: NAMESPACED grants it)
    return sorted({(rt[0], rt[2]) for rt in km.mgr.informers if rt not in km.mgr.scopes})


def job_resources() -> list[tuple[str, str]]:
    """(group, resource) of the job kinds the generic reconciler runs."""
    out = set()
    for integration in INTEGRATIONS:
        if integration.adapter is not None:
            rt = kind_info(integration.adapter().rtype).rtype
            out.add((rt[0], rt[2]))
    return sorted(out)


def _rules(grants: dict[tuple[str, str], set[str]]) -> list[dict[str, Any]]:
    """One rule per group and verb set, resources sorted (as controller-gen
    writes role.yaml)."""
    by: dict[tuple[str, tuple[str, ...]], list[str]] = defaultdict(list)
    for (group, res), verbs in sorted(grants.items()):
        by[(group, tuple(sorted(verbs)))].append(res)
    return [
        {"apiGroups": [group], "resources": sorted(res), "verbs": list(verbs)}
        for (group, verbs), res in sorted(by.items())
    ]


def cluster_rules() -> list[dict[str, Any]]:
    grants: dict[tuple[str, str], set[str]] = defaultdict(set)
    for key in read_resources():
        grants[key] |= set(READ)
    for group, res in job_resources():
        grants[(group, res)] |= set(_JOB_WRITES)
        # (MultiKueue mirrors a worker's job status into the manager's job)
        grants[(group, f"{res}/status")] |= {"get", "update", "patch"}
    for group, res, verbs in _WRITES:
        grants[(group, res)] |= set(verbs)
    return _rules(grants)


def namespace_rules() -> list[dict[str, Any]]:
    grants: dict[tuple[str, str], set[str]] = defaultdict(set)
    for group, res, verbs in NAMESPACED:
        grants[(group, res)] |= set(verbs)
    return _rules(grants)
