"""Counter- and capacity-based DRA quota through ``kuota run`` (kueue@ff69552e
pkg/dra/counters.go, capacity.go, claims.go; the cases of
test/integration/singlecluster/controller/dra/dra_pd_test.go and
dra_cc_test.go): the charge written to the workload's admission, and Kueue's
message on QuotaReserved=False Misconfigured and Requeued=False Inadmissible
when it cannot be computed."""

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
featureGates: {KueueDRAIntegrationConsumableCapacity: true}
resources:
  deviceClassMappings:
  - name: gpu.memory
    deviceClassNames: [mig.example.com, gpu.example.com]
    sources:
    - counter:
        name: memory
        driver: gpu.example.com
        deviceSelector: {cel: {expression: "device.driver == 'gpu.example.com'"}}
  - name: vgpu.memory
    deviceClassNames: [vgpu.example.com]
    sources:
    - capacity:
        name: memory
        driver: vgpu.example.com
        deviceSelector: {cel: {expression: "device.driver == 'vgpu.example.com'"}}
---
{apiVersion: v1, kind: Namespace, metadata: {name: dra}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: mig.example.com}
spec:
  selectors: [{cel: {expression: "device.attributes['gpu.example.com'].type == 'mig'"}}]
---
{apiVersion: resource.k8s.io/v1, kind: DeviceClass, metadata: {name: vgpu.example.com}}
---
{apiVersion: resource.k8s.io/v1, kind: DeviceClass, metadata: {name: gpu.example.com}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: gpus}
spec:
  driver: gpu.example.com
  nodeName: fake-node
  pool: {name: node1-gpu0, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes: {type: {string: gpu}}
    consumesCounters: [{counterSet: s, counters: {memory: {value: 40320Mi}}}]
  - name: gpu-0-mig-1g5gb-0
    attributes: {type: {string: mig}, profile: {string: 1g.5gb}}
    consumesCounters: [{counterSet: s, counters: {memory: {value: 4864Mi}}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: vgpus}
spec:
  driver: vgpu.example.com
  nodeName: fake-node
  pool: {name: node1-vgpu0, generation: 1, resourceSliceCount: 1}
  devices:
  - name: vgpu-0
    allowMultipleAllocations: true
    capacity: {memory: {value: 80Gi, requestPolicy: {validValues: [10Gi, 20Gi, 40Gi]}}}
---
{apiVersion: kueue.x-k8s.io/v1beta2, kind: ResourceFlavor, metadata: {name: rf}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [gpu.memory, vgpu.memory]
    flavors:
    - name: rf
      resources: [{name: gpu.memory, nominalQuota: 160Gi}, {name: vgpu.memory, nominalQuota: 160Gi}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: dra}
spec: {clusterQueue: cq}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: tmpl, namespace: dra}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: %(request)s
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
        resourceClaims: [{name: dev, resourceClaimTemplateName: tmpl}]
        containers: [{name: c, resources: {claims: [{name: dev}]}}]
"""
BASE = "spec.podSets[0].template.spec.resourceClaims[0]"
REQ = f"{BASE}.devices.requests[0]"
MIG_1G = "{cel: {expression: \"device.attributes['gpu.example.com'].profile == '1g.5gb'\"}}"


def _run(tmp_path: Path, request: str) -> dict[str, Any]:
    world = tmp_path / "world.yaml"
    world.write_text(WORLD % {"request": request})
    state = tmp_path / "state"
    r = CliRunner().invoke(main, ["run", str(world), "--state", str(state), "--until", "1m"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(
        main, ["get", "workload", "wl", "-n", "dra", "--state", str(state), "-o", "json"]
    )
    assert r.exit_code == 0, r.output
    wl: dict[str, Any] = json.loads(r.output)
    return wl


def _usage(wl: dict[str, Any]) -> dict[str, str]:
    usage: dict[str, str] = wl["status"]["admission"]["podSetAssignments"][0]["resourceUsage"]
    return usage


def _conds(wl: dict[str, Any]) -> dict[str, tuple[str, str, str]]:
    return {c["type"]: (c["status"], c["reason"], c["message"]) for c in wl["status"]["conditions"]}


@pytest.mark.parametrize(
    ("request_", "usage"),
    [
        # dra_pd_test.go "Should admit MIG workload with correct counter-based
        # gpu.memory charge" (two pods: 2 x 4864Mi)
        (f"{{deviceClassName: mig.example.com, selectors: [{MIG_1G}]}}", {"gpu.memory": "9728Mi"}),
        # "Should charge consumesCounters for whole GPU request without CEL"
        # (the class without selectors: the largest device, 40320Mi, per pod)
        ("{deviceClassName: gpu.example.com}", {"gpu.memory": "80640Mi"}),
        # dra_cc_test.go "Should round up capacity request to ValidValues"
        (
            "{deviceClassName: vgpu.example.com, capacity: {requests: {memory: 15Gi}}}",
            {"vgpu.memory": "40Gi"},
        ),
    ],
    ids=["counter-mig", "counter-whole-gpu", "capacity-valid-values"],
)
def test_charged_from_slices(tmp_path: Path, request_: str, usage: dict[str, str]) -> None:
    assert _usage(_run(tmp_path, request_)) == usage


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        # dra_pd_test.go "Should write granular conditions and reasons when DRA
        # claim resolution fails under the observability feature gate"
        (
            "{deviceClassName: mig.example.com, selectors: [{cel: {expression:"
            " \"device.attributes['gpu.example.com'].profile == 'nonexistent'\"}}]}",
            f"{REQ}.exactly.selectors: Internal error: ResourceClaimTemplate tmpl: insufficient"
            " matching devices for CEL selector in DeviceClass mig.example.com: 0 device(s)"
            " match in the cluster but 1 requested",
        ),
        # counters.go processCounterCharge: fewer devices than the request's count
        (
            "{deviceClassName: gpu.example.com, count: 3}",
            f"{REQ}: Internal error: insufficient matching devices for counter driver:"
            " 2 device(s) match but 3 requested",
        ),
        # capacity.go computeCapacityCharge: no device's policy takes 50Gi
        # (dra_cc_test.go "Should mark workload inadmissible when request exceeds ValidValues")
        (
            "{deviceClassName: vgpu.example.com, capacity: {requests: {memory: 50Gi}}}",
            f'{REQ}: Invalid value: "null": capacity request cannot be satisfied by any'
            ' matched device\'s RequestPolicy for dimension "memory"',
        ),
        # claims.go: every class must be mapped
        (
            "{deviceClassName: absent.example.com}",
            f'{BASE}.resourceClaimTemplateName: Not found: "DeviceClass absent.example.com'
            ' is not mapped in DRA configuration for podset main"',
        ),
    ],
    ids=["cel-matches-none", "too-few-devices", "policy-rejects", "unmapped-class"],
)
def test_uncharged_claim_is_misconfigured(tmp_path: Path, request_: str, message: str) -> None:
    conds = _conds(_run(tmp_path, request_))
    assert conds["QuotaReserved"] == ("False", "Misconfigured", message)
    assert conds["Requeued"] == ("False", "Inadmissible", message)


def test_resource_slices_are_listed(tmp_path: Path) -> None:
    _run(tmp_path, "{deviceClassName: gpu.example.com}")
    r = CliRunner().invoke(main, ["get", "resourceslices", "--state", str(tmp_path / "state")])
    assert r.exit_code == 0, r.output
    lines = [line.split() for line in r.output.splitlines()]
    assert lines[0][:4] == ["NAME", "NODE", "DRIVER", "POOL"]
    assert lines[1][:4] == ["gpus", "fake-node", "gpu.example.com", "node1-gpu0"]


def test_resource_slice_without_a_node_choice_is_refused(tmp_path: Path) -> None:
    world = tmp_path / "slice.yaml"
    world.write_text(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
        "spec: {driver: gpu.example.com, pool: {name: p, generation: 1, resourceSliceCount: 0}}\n"
    )
    r = CliRunner().invoke(main, ["validate", str(world)])
    assert r.exit_code != 0
    assert "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero" in r.output
    assert "exactly one of `nodeName`, `nodeSelector`, `allNodes`" in r.output


def test_configuration_refuses_a_source_selector_that_does_not_compile(tmp_path: Path) -> None:
    """pkg/config/validation.go validateDeviceClassSource: the deviceSelector
    is compiled in the DRA CEL environment ("Kueue fails to start with "CEL
    compilation failed"", setup_dra.md's troubleshooting)."""
    cfg = tmp_path / "config.yaml"
    cfg.write_text(
        WORLD.split("---")[0].replace(
            "\"device.driver == 'gpu.example.com'\"", '"device.driver =="'
        )
    )
    r = CliRunner().invoke(main, ["validate", str(cfg)])
    assert r.exit_code != 0
    assert (
        "resources.deviceClassMappings[0].sources[0].counter.deviceSelector.cel.expression:"
        ' Invalid value: "device.driver ==": CEL compilation failed: compilation failed:'
    ) in r.output, r.output
