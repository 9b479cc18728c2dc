"""A TAS world as Kueue's docs and site examples build it: a Topology of
blocks, racks and hosts, a TAS ResourceFlavor, a ClusterQueue and a LocalQueue,
and nodes labelled with their block and rack."""

from __future__ import annotations

from typing import Any

import yaml

from embedded.world import control_plane, obj

BLOCK = "cloud.provider.com/topology-block"
RACK = "cloud.provider.com/topology-rack"
HOST = "kubernetes.io/hostname"

SETUP = f"""
apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {{name: default}}
spec:
  levels: [{{nodeLabel: {BLOCK}}}, {{nodeLabel: {RACK}}}, {{nodeLabel: {HOST}}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: tas-flavor}}
spec:
  nodeLabels: {{cloud.provider.com/node-group: tas-node-group}}
  topologyName: default
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: tas-cluster-queue}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: tas-flavor
      resources:
      - {{name: cpu, nominalQuota: "{{cpu}}"}}
      - {{name: memory, nominalQuota: 1000Gi}}
---
apiVersion: v1
kind: Namespace
metadata: {{name: default}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: tas-user-queue, namespace: default}}
spec: {{clusterQueue: tas-cluster-queue}}
"""


def node(name: str, block: str, rack: str, cpu: int = 1) -> Any:
    return obj(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "labels": {
                    "cloud.provider.com/node-group": "tas-node-group",
                    BLOCK: block,
                    RACK: rack,
                    HOST: name,
                },
            },
            "status": {
                "allocatable": {"cpu": str(cpu), "memory": "100Gi", "pods": "110"},
                "capacity": {"cpu": str(cpu), "memory": "100Gi", "pods": "110"},
                "conditions": [{"type": "Ready", "status": "True"}],
            },
        }
    )


def job(name: str, count: int, annotations: dict[str, str], cpu: str = "1") -> Any:
    return obj(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": name,
                "namespace": "default",
                "labels": {"kueue.x-k8s.io/queue-name": "tas-user-queue"},
            },
            "spec": {
                "parallelism": count,
                "completions": count,
                "template": {
                    "metadata": {"annotations": annotations},
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [
                            {"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}
                        ],
                    },
                },
            },
        }
    )


def setup(cpu: int = 100) -> list[Any]:
    return [obj(d) for d in yaml.safe_load_all(SETUP.replace("{cpu}", str(cpu)))]


def plane(nodes: list[Any], cpu: int = 100, **kw: Any) -> Any:
    cp = control_plane(**kw)
    cp.create(setup(cpu) + nodes)
    return cp
