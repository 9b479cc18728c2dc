"""DRA claims Kueue cannot count (kueue@v0.19.2 pkg/dra/claims.go,
pkg/controller/core/workload_controller.go): each workload is refused with
Kueue's message on QuotaReserved=False Misconfigured and Requeued=False
Inadmissible; a ResourceClaimTemplate that appears later lets it in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kuota.cli.main import main

WORLD = """
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
resources:
  deviceClassMappings:
  - {name: foo, deviceClassNames: [foo.example.com]}
---
{apiVersion: v1, kind: Namespace, metadata: {name: dra, creationTimestamp: '2026-01-01T00:00:00Z'}}
---
{apiVersion: kueue.x-k8s.io/v1beta2, kind: ResourceFlavor, metadata: {name: rf}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [foo]
    flavors: [{name: rf, resources: [{name: foo, nominalQuota: "10"}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: dra}
spec: {clusterQueue: cq}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: tmpl, namespace: dra%(created)s}
spec:
  spec:
    devices:
      requests:
      - name: req
        %(request)s
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: wl, namespace: dra}
spec:
  queueName: lq
  podSets:
  - name: main
    count: 2
    template:
      spec:
        restartPolicy: Never
        resourceClaims: [{name: dev, %(ref)s}]
        containers: [{name: c}]
"""
BASE = "spec.podSets[0].template.spec.resourceClaims[0]"


def _run(tmp_path: Path, *args: str, **parts: str) -> dict[str, Any]:
    """Run the world with ``parts`` filled in (resumed with ``args`` when its
    state is there) and read the Workload."""
    values = {"created": "", "request": "exactly: {deviceClassName: foo.example.com}"}
    values["ref"] = "resourceClaimTemplateName: tmpl"
    values.update(parts)
    world = tmp_path / "world.yaml"
    state = tmp_path / "state"
    paths = [] if state.exists() else [str(world)]
    world.write_text(WORLD % values)
    r = CliRunner().invoke(main, ["run", *paths, "--state", str(state), *args])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(
        main, ["get", "workload", "wl", "-n", "dra", "--state", str(state), "-o", "json"]
    )
    assert r.exit_code == 0, r.output
    wl: dict[str, Any] = json.loads(r.output)
    return wl


def _conds(wl: dict[str, Any]) -> dict[str, tuple[str, str, str]]:
    return {c["type"]: (c["status"], c["reason"], c["message"]) for c in wl["status"]["conditions"]}


@pytest.mark.parametrize(
    ("parts", "message"),
    [
        (
            {"request": "exactly: {deviceClassName: foo.example.com, allocationMode: All}"},
            f'{BASE}.devices.requests[0].exactly.allocationMode: Invalid value: "All":'
            " ResourceClaimTemplate tmpl: AllocationMode 'All' is not supported",
        ),
        (
            {"request": "firstAvailable: [{name: a, deviceClassName: foo.example.com}]"},
            f'{BASE}.devices.requests[0]: Invalid value: "null": ResourceClaimTemplate tmpl:'
            " FirstAvailable device selection is not supported",
        ),
        (
            {"request": "exactly: {deviceClassName: foo.example.com, adminAccess: true}"},
            f'{BASE}.devices.requests[0].exactly.adminAccess: Invalid value: "null":'
            " ResourceClaimTemplate tmpl: AdminAccess is not supported",
        ),
        (
            {"request": "exactly: {deviceClassName: bar.example.com}"},
            f'{BASE}.resourceClaimTemplateName: Not found: "DeviceClass bar.example.com'
            ' is not mapped in DRA configuration for podset main"',
        ),
    ],
    ids=["allocation-mode-all", "first-available", "admin-access", "unmapped-class"],
)
def test_uncountable_claim_is_misconfigured(
    tmp_path: Path, parts: dict[str, str], message: str
) -> None:
    conds = _conds(_run(tmp_path, **parts))
    assert conds["QuotaReserved"] == ("False", "Misconfigured", message)
    assert conds["Requeued"] == ("False", "Inadmissible", message)


def test_resource_claim_named_directly_is_not_supported(tmp_path: Path) -> None:
    conds = _conds(_run(tmp_path, ref="resourceClaimName: shared"))
    assert conds["QuotaReserved"] == (
        "False",
        "Misconfigured",
        "KueueDRAIntegration feature does not support use of resource claims",
    )
    assert conds["Requeued"] == ("False", "Inadmissible", "DRA resource claims not supported")


def test_template_created_later_admits_the_workload(tmp_path: Path) -> None:
    late = ", creationTimestamp: '2026-01-01T00:05:00Z'"
    wl = _run(tmp_path, "--until", "1m", created=late)
    qr = _conds(wl)["QuotaReserved"]
    assert qr[:2] == ("False", "Misconfigured")
    assert qr[2] == (
        f"{BASE}: Internal error: failed to get claim spec for ResourceClaimTemplate tmpl"
        ' in podset main: resourceclaimtemplates.resource.k8s.io "tmpl" not found'
    )
    wl = _run(tmp_path, "--until", "6m", created=late)
    assert wl["status"]["admission"]["podSetAssignments"][0]["resourceUsage"] == {"foo": "2"}
    assert "Requeued" not in _conds(wl)
