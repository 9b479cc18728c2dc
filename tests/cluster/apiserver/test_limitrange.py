"""What the API server does to a pod on create (the embedded cluster's
admission hooks): requests from limits, LimitRange defaults, the
LimitRanger's min / max / maxLimitRequestRatio refusals with the API
server's message, and the QoS class; requests then drive placement."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from kuota.api.quantity import Quantity
from kuota.cluster import api_server_hooks, install
from kuota.cluster.apiserver.limitrange import (
    LIMIT_RANGER_ANNOTATION,
    Forbidden,
    pod_qos_class,
)
from kuota.cluster.podutil import POD
from kuota.runtime.clock import VirtualClock
from kuota.runtime.manager import Manager
from kuota.store import MemoryStore, clone

from ..conftest import NS, T0, World, decode, job_manifest, node_manifest


class ApiServerWorld(World):
    """The test cluster with the API server's admission hooks in its store."""

    def __init__(self, *, openshift: bool = False) -> None:
        self.clock = VirtualClock(T0)
        self.store = MemoryStore(
            self.clock.now, api_server_hooks(lambda: self.store, openshift=openshift)
        )
        self.mgr = Manager(self.store, self.clock, raise_errors=True)
        self.cluster = install(self.mgr)


def limit_range(*items: dict[str, Any], name: str = "limits") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"limits": list(items)},
    }


def pod(
    name: str,
    *containers: dict[str, Any],
    pod_resources: dict[str, Any] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": list(containers) or [{"name": "main", "image": "x"}],
    }
    if pod_resources is not None:
        spec["resources"] = pod_resources
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS},
        "spec": spec,
    }


def ctr(
    name: str = "main",
    *,
    requests: dict[str, str] | None = None,
    limits: dict[str, str] | None = None,
) -> dict[str, Any]:
    res: dict[str, Any] = {}
    if requests:
        res["requests"] = requests
    if limits:
        res["limits"] = limits
    return {"name": name, "image": "x", **({"resources": res} if res else {})}


def refused(world: World, manifest: dict[str, Any]) -> str:
    with pytest.raises(Forbidden) as err:
        world.store.create(decode(manifest))
    return str(err.value)


@pytest.fixture
def api() -> ApiServerWorld:
    return ApiServerWorld()


def shown(rl: dict[str, Any] | None) -> dict[str, str]:
    return {k: str(v) for k, v in (rl or {}).items()}


# ------------------------------------------------------------------ defaults
def test_limit_range_defaults_fill_missing_limits_and_requests(api: ApiServerWorld) -> None:
    api.apply(
        limit_range(
            {
                "type": "Container",
                "default": {"cpu": "1", "memory": "1Gi"},
                "defaultRequest": {"cpu": "500m"},
            }
        ),
        pod("bare"),
        pod("half", ctr(requests={"cpu": "250m"})),
    )
    bare = api.pod("bare")
    res = bare.spec.containers[0].resources
    assert shown(res.limits) == {"cpu": "1", "memory": "1Gi"}
    # defaultRequest falls back to default (the LimitRange's own API defaults).
    assert shown(res.requests) == {"cpu": "500m", "memory": "1Gi"}
    assert bare.metadata.annotations[LIMIT_RANGER_ANNOTATION] == (
        "LimitRanger plugin set: cpu, memory request for container main; "
        "cpu, memory limit for container main"
    )
    assert bare.status.qos_class == "Burstable"
    half = api.pod("half").spec.containers[0].resources
    assert shown(half.requests) == {"cpu": "250m", "memory": "1Gi"}
    assert shown(half.limits) == {"cpu": "1", "memory": "1Gi"}


def test_max_defaults_the_limit_and_min_the_request(api: ApiServerWorld) -> None:
    api.apply(
        limit_range({"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "64Mi"}}),
        pod("p"),
    )
    res = api.pod("p").spec.containers[0].resources
    assert shown(res.limits) == {"cpu": "2"}
    assert shown(res.requests) == {"cpu": "2", "memory": "64Mi"}


def test_requests_default_to_limits_and_drive_placement(api: ApiServerWorld) -> None:
    api.apply(
        node_manifest("n1", cpu="2"),
        pod("a", ctr(limits={"cpu": "1500m", "memory": "1Gi"})),
        pod("b", ctr(limits={"cpu": "1500m", "memory": "1Gi"})),
    )
    api.run(until=timedelta(seconds=1))
    a = api.pod("a")
    assert shown(a.spec.containers[0].resources.requests) == {"cpu": "1500m", "memory": "1Gi"}
    assert a.status.qos_class == "Guaranteed"
    assert a.spec.node_name == "n1"
    assert api.pod("b").spec.node_name is None
    assert "Insufficient cpu" in api.condition("b", "PodScheduled").message


# -------------------------------------------------------------------- refusals
def test_container_max_refusal_lists_every_violation(api: ApiServerWorld) -> None:
    api.apply(limit_range({"type": "Container", "max": {"cpu": "2", "memory": "1Gi"}}))
    msg = refused(api, pod("x", ctr(limits={"cpu": "4", "memory": "2Gi"})))
    assert msg == (
        'pods "x" is forbidden: [maximum cpu usage per Container is 2, but limit is 4, '
        "maximum memory usage per Container is 1Gi, but limit is 2Gi]"
    )
    assert not api.exists(POD, "x")


def test_container_min_refusal(api: ApiServerWorld) -> None:
    api.apply(limit_range({"type": "Container", "min": {"cpu": "100m"}}))
    msg = refused(api, pod("x", ctr(requests={"cpu": "50m"}, limits={"cpu": "1"})))
    assert (
        msg == 'pods "x" is forbidden: minimum cpu usage per Container is 100m, but request is 50m'
    )


def test_max_limit_request_ratio_refusal(api: ApiServerWorld) -> None:
    api.apply(limit_range({"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}}))
    msg = refused(api, pod("x", ctr(requests={"cpu": "250m"}, limits={"cpu": "1"})))
    assert msg == (
        'pods "x" is forbidden: cpu max limit to request ratio per Container is 2, '
        "but provided ratio is 4.000000"
    )
    # Within the ratio: admitted.
    api.apply(pod("ok", ctr(requests={"cpu": "500m"}, limits={"cpu": "1"})))
    assert api.exists(POD, "ok")


def test_pod_max_counts_every_container(api: ApiServerWorld) -> None:
    api.apply(limit_range({"type": "Pod", "max": {"cpu": "2"}}))
    msg = refused(
        api,
        pod("x", ctr("a", limits={"cpu": "1500m"}), ctr("b", limits={"cpu": "1500m"})),
    )
    assert msg == 'pods "x" is forbidden: maximum cpu usage per Pod is 2, but limit is 3'


def test_missing_limit_under_a_max_is_refused(api: ApiServerWorld) -> None:
    api.apply(limit_range({"type": "Pod", "max": {"memory": "1Gi"}}))
    msg = refused(api, pod("x", ctr(requests={"memory": "100Mi"})))
    assert (
        msg == 'pods "x" is forbidden: maximum memory usage per Pod is 1Gi.  No limit is specified'
    )


def test_job_pods_refused_are_reported_and_created_once_the_limit_range_changes(
    api: ApiServerWorld,
) -> None:
    api.apply(
        node_manifest("n1", cpu="8"),
        limit_range({"type": "Container", "max": {"cpu": "2"}}),
        job_manifest("j", cpu="4", duration="60s"),
    )
    api.run(until=timedelta(seconds=30))
    assert api.pods_of("j") == []
    events = [
        e
        for e in api.store.list(("", "Event"), NS).items
        if e.involved_object.name == "j" and e.reason == "FailedCreate"
    ]
    assert len(events) == 1
    assert events[0].message.startswith('Error creating: pods "j-')
    assert events[0].message.endswith(
        "is forbidden: maximum cpu usage per Container is 2, but limit is 4"
    )
    lr = clone(api.store.get(("", "LimitRange"), NS, "limits"))
    lr.spec.limits[0].max = {"cpu": Quantity("8")}
    api.store.update(lr)
    assert api.run() == "idle"
    assert "Complete" in api.job_conditions("j")
    assert api.job("j").status.completion_time == T0 + timedelta(seconds=90)


# ------------------------------------------------------------------------ QoS
@pytest.mark.parametrize(
    ("containers", "expected"),
    [
        ([ctr()], "BestEffort"),
        ([ctr(requests={"nvidia.com/gpu": "1"}, limits={"nvidia.com/gpu": "1"})], "BestEffort"),
        ([ctr(requests={"cpu": "1"})], "Burstable"),
        (
            [ctr(requests={"cpu": "1", "memory": "1Gi"}, limits={"cpu": "2", "memory": "1Gi"})],
            "Burstable",
        ),
        ([ctr(limits={"cpu": "1"})], "Burstable"),  # memory has no limit
        (
            [ctr(requests={"cpu": "1", "memory": "1Gi"}, limits={"cpu": "1", "memory": "1Gi"})],
            "Guaranteed",
        ),
        ([ctr(limits={"cpu": "1", "memory": "1Gi"})], "Guaranteed"),  # requests from limits
        (
            [ctr("a", limits={"cpu": "1", "memory": "1Gi"}), ctr("b", requests={"cpu": "1"})],
            "Burstable",
        ),
    ],
)
def test_qos_class(api: ApiServerWorld, containers: list[dict[str, Any]], expected: str) -> None:
    api.apply(pod("p", *containers))
    p = api.pod("p")
    assert p.status.qos_class == expected
    assert pod_qos_class(p.spec) == expected


def test_pod_level_resources_decide_the_qos_class(api: ApiServerWorld) -> None:
    api.apply(
        pod(
            "p",
            ctr(requests={"cpu": "100m"}),
            pod_resources={"limits": {"cpu": "2", "memory": "2Gi"}},
        )
    )
    p = api.pod("p")
    assert shown(p.spec.resources.requests) == {"cpu": "2", "memory": "2Gi"}
    assert p.status.qos_class == "Guaranteed"


# ------------------------------------------------- with Kueue, in the control plane
def test_kueue_and_the_pods_see_the_same_limit_range_defaults() -> None:
    from kuota.api.config import load_config
    from kuota.embedded.controlplane import ControlPlane

    cfg, errs = load_config(
        {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration"}
    )
    assert cfg is not None, errs
    cp = ControlPlane(cfg, T0, raise_errors=True)
    queue = {"kueue.x-k8s.io/queue-name": "main"}
    objs = [
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ResourceFlavor",
            "metadata": {"name": "f"},
        },
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ClusterQueue",
            "metadata": {"name": "cq"},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu", "memory"],
                        "flavors": [
                            {
                                "name": "f",
                                "resources": [
                                    {"name": "cpu", "nominalQuota": "4"},
                                    {"name": "memory", "nominalQuota": "8Gi"},
                                ],
                            }
                        ],
                    }
                ],
            },
        },
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "LocalQueue",
            "metadata": {"name": "main", "namespace": NS},
            "spec": {"clusterQueue": "cq"},
        },
        limit_range({"type": "Container", "default": {"cpu": "2", "memory": "1Gi"}}),
        node_manifest("n1", cpu="8"),
    ]
    for name, n in (("fits", 2), ("too-big", 3)):
        job = job_manifest(name, parallelism=n, completions=n, cpu=None, duration="60s")
        job["metadata"]["labels"] = queue
        objs.append(job)
    cp.submit([decode(m) for m in objs])
    cp.run(until=T0 + timedelta(seconds=30))
    pods = cp.store.list(POD, NS).items
    assert {p.metadata.labels["job-name"] for p in pods} == {"fits"}  # 3 x 2 cpu > 4
    for p in pods:
        res = p.spec.containers[0].resources
        assert shown(res.requests) == {"cpu": "2", "memory": "1Gi"}
        assert p.status.qos_class == "Guaranteed"
        assert p.spec.node_name == "n1"
    cp.close()
