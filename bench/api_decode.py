"""Benchmark: decode and validate 10,000 Workloads from YAML and from JSON.

Reported as numbers (``make bench``), never asserted in tests. Workloads are
realistic: two podSets, resources, tolerations, labels.
"""

from __future__ import annotations

import json
import time

import yaml

import kuota
from kuota.api.decode import decode_json, decode_yaml

N = 10_000


def workload(i: int) -> dict:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": f"job-{i}", "namespace": f"team-{i % 50}", "labels": {"app": "train"}},
        "spec": {
            "queueName": "main",
            "priority": i % 7,
            "priorityClassRef": {
                "group": "kueue.x-k8s.io",
                "kind": "WorkloadPriorityClass",
                "name": "high",
            },
            "podSets": [
                {
                    "name": "driver",
                    "count": 1,
                    "template": {
                        "spec": {
                            "restartPolicy": "Never",
                            "containers": [
                                {
                                    "name": "d",
                                    "image": "trainer:1",
                                    "resources": {"requests": {"cpu": "2", "memory": "8Gi"}},
                                }
                            ],
                        }
                    },
                },
                {
                    "name": "workers",
                    "count": 8,
                    "minCount": 4,
                    "template": {
                        "spec": {
                            "restartPolicy": "Never",
                            "tolerations": [
                                {
                                    "key": "nvidia.com/gpu",
                                    "operator": "Exists",
                                    "effect": "NoSchedule",
                                }
                            ],
                            "nodeSelector": {"nvidia.com/gpu.product": "A100"},
                            "containers": [
                                {
                                    "name": "w",
                                    "image": "trainer:1",
                                    "resources": {
                                        "requests": {
                                            "cpu": "8",
                                            "memory": "64Gi",
                                            "nvidia.com/gpu": "1",
                                        },
                                        "limits": {"nvidia.com/gpu": "1"},
                                    },
                                }
                            ],
                        }
                    },
                },
            ],
        },
    }


def main() -> None:
    print(f"build: {kuota.build()}, {kuota.interpreter()} (every figure below)")
    docs = [workload(i) for i in range(N)]
    json_blobs = [json.dumps(d).encode() for d in docs]
    yaml_text = yaml.safe_dump_all(docs, sort_keys=False)

    # The first decode of a kind builds msgspec's decoders and the rule
    # checkers (typing resolution); time it apart from the steady state.
    t0 = time.perf_counter()
    decode_json(json_blobs[0])
    decode_yaml(yaml.safe_dump(docs[0]))
    t_first = time.perf_counter() - t0

    t0 = time.perf_counter()
    ok = sum(decode_json(b)[0].ok for b in json_blobs)
    t_json = time.perf_counter() - t0
    assert ok == N, ok

    t0 = time.perf_counter()
    parsed = list(yaml.load_all(yaml_text, Loader=yaml.CSafeLoader))
    t_parse = time.perf_counter() - t0

    t0 = time.perf_counter()
    res = decode_yaml(yaml_text)
    t_yaml = time.perf_counter() - t0
    assert len(parsed) == N and all(d.ok for d in res)

    print(f"decode+validate {N} Workloads (first decode, one-time setup: {t_first * 1e3:.0f} ms)")
    print(f"  JSON: {t_json:.3f} s ({t_json / N * 1e6:.1f} µs each)")
    print(
        f"  YAML: {t_yaml:.3f} s ({t_yaml / N * 1e6:.1f} µs each); libyaml parse alone {t_parse:.3f} s "
        f"= {t_parse / t_yaml:.0%} of it"
    )


if __name__ == "__main__":
    main()
