"""The LWS operator's webhooks (integrations.md §5.1, §5.3): the
LeaderWorkerSet's defaults and rules, and its pods' labels, annotations and env."""

from __future__ import annotations

from typing import Any

import pytest

from kuota.api.core import Pod
from kuota.store import Invalid

from ..conftest import NS, decode
from .conftest import (
    LwsWorld,
    P,
    container,
    env_of,
    errors_of,
    lws_manifest,
    sha1,
)


# ------------------------------------------------------------------ validation
def test_defaults_of_the_crd_and_the_webhook() -> None:
    obj = decode(lws_manifest(replicas=None, size=None, restartPolicy="Default"))
    spec = obj.spec
    assert spec.replicas == 1 and spec.leader_worker_template.size == 1
    assert spec.leader_worker_template.restart_policy == "None"  # deprecated Default
    assert spec.startup_policy == "LeaderCreated"
    ruc = spec.rollout_strategy.rolling_update_configuration
    assert (ruc.max_unavailable, ruc.max_surge, ruc.partition) == (1, 0, 0)
    assert spec.network_config.subdomain_policy == "Shared"
    plain = decode(lws_manifest())
    assert plain.spec.leader_worker_template.restart_policy == "RecreateGroupOnPodRestart"


RUC = "spec.rolloutStrategy.rollingUpdateConfiguration"
SGS = "spec.leaderWorkerTemplate.SubGroupPolicy.subGroupSize"  # the webhook's own spelling


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (
            {"size": 0},
            "spec.leaderWorkerTemplate.size: Invalid value: 0: size must be equal or greater than 1",
        ),
        (
            {"replicas": 1_000_001},
            "spec.replicas: Invalid value: 1000001: spec.replicas in body should be "
            "less than or equal to 1000000",
        ),
        (
            {"replicas": 1_000_000, "size": 3000},
            "spec.replicas: Invalid value: 1000000: the product of replicas and worker "
            "replicas must not exceed 2147483647",
        ),
        (
            {"rolloutStrategy": {"rollingUpdateConfiguration": {"maxSurge": "150%"}}},
            f'{RUC}.maxSurge: Invalid value: "150%": must not be greater than 100%',
        ),
        (
            {"rolloutStrategy": {"rollingUpdateConfiguration": {"maxSurge": -1}}},
            f"{RUC}.maxSurge: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            {"rolloutStrategy": {"rollingUpdateConfiguration": {"maxUnavailable": "half"}}},
            f'{RUC}.maxUnavailable: Invalid value: "half": a valid percent string must be',
        ),
        (
            {"rolloutStrategy": {"rollingUpdateConfiguration": {"maxUnavailable": 0}}},
            f"{RUC}.maxUnavailable: Invalid value: 0: must not be 0 when `maxSurge` is 0",
        ),
        (
            # 10% of 2 replicas rounds down to 0, and there is no surge.
            {"rolloutStrategy": {"rollingUpdateConfiguration": {"maxUnavailable": "10%"}}},
            f'{RUC}.maxUnavailable: Invalid value: "10%": must not be 0 when `maxSurge` is 0',
        ),
        (
            {"rolloutStrategy": {"rollingUpdateConfiguration": {"partition": -1}}},
            f"{RUC}.partition: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            {"subGroupPolicy": {"subGroupSize": 4}},
            f"{SGS}: Invalid value: 4: size or size - 1 must be divisible by subGroupSize",
        ),
        (
            {
                "subGroupPolicy": {"subGroupSize": 2, "subGroupPolicyType": "LeaderExcluded"},
                "size": 4,
            },
            f"{SGS}: Invalid value: 2: size-1 must be divisible by subGroupSize when using "
            "LeaderExcluded",
        ),
        (
            {"subGroupPolicy": {"subGroupSize": 0}},
            f"{SGS}: Invalid value: 0: subGroupSize must be equal or greater than 1",
        ),
        (
            {"annotations": {P + "subgroup-exclusive-topology": "rack"}},
            f'metadata.annotations.{P}subgroup-exclusive-topology: Invalid value: "rack": '
            "cannot have subgroup-exclusive-topology without subGroupSize set",
        ),
        (
            {"networkConfig": {}},
            "spec.networkConfig.subdomainPolicy: Required value",
        ),
        (
            {"name": "1vllm"},
            'metadata.name: Invalid value: "1vllm": a DNS-1035 label must consist of lower case',
        ),
    ],
)
def test_validation_names_the_field(change: dict[str, Any], error: str) -> None:
    kw = dict(change)
    name = kw.pop("name", "vllm")
    errs = errors_of(lws_manifest(name, **kw))
    assert any(e.startswith(error) for e in errs), errs


def test_valid_sets_pass() -> None:
    ok = [
        lws_manifest(
            rolloutStrategy={"rollingUpdateConfiguration": {"maxUnavailable": 0, "maxSurge": 1}}
        ),
        lws_manifest(
            replicas=0, rolloutStrategy={"rollingUpdateConfiguration": {"maxUnavailable": 0}}
        ),
        lws_manifest(size=5, subGroupPolicy={"subGroupSize": 2}),  # size - 1 divisible
        lws_manifest(size=4, subGroupPolicy={"subGroupSize": 2}),  # size divisible
    ]
    for m in ok:
        assert errors_of(m) == []


def test_the_store_runs_the_webhooks_on_create_and_update(world: LwsWorld) -> None:
    bad = decode(lws_manifest())
    bad.spec.leader_worker_template.size = 0
    with pytest.raises(Invalid, match=r"spec\.leaderWorkerTemplate\.size: Invalid value: 0"):
        world.store.create(bad)
    world.apply(lws_manifest(size=4, subGroupPolicy={"subGroupSize": 2}))
    with pytest.raises(Invalid, match="field is immutable"):
        world.update_lws(
            lambda s: setattr(s.leader_worker_template.sub_group_policy, "sub_group_size", 4)
        )
    with pytest.raises(Invalid, match="cannot remove subGroupSize after enabled"):
        world.update_lws(lambda s: setattr(s.leader_worker_template, "sub_group_policy", None))
    # The defaulting webhook runs on update too: Default becomes None.
    world.update_lws(lambda s: setattr(s.leader_worker_template, "restart_policy", "Default"))
    assert world.lws().spec.leader_worker_template.restart_policy == "None"


# ------------------------------------------------------------------ pod webhook
def stateful_pod(
    name: str, labels: dict[str, str], annotations: dict[str, str], **spec: Any
) -> Any:
    """A pod as a StatefulSet of the LWS would create it from its template."""
    return decode(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": NS,
                "labels": labels,
                "annotations": annotations,
            },
            "spec": {
                "containers": [
                    {
                        **container(),
                        "env": [
                            {"name": "MINE", "value": "x"},
                            {"name": "LWS_GROUP_SIZE", "value": "9"},
                        ],
                    }
                ],
                "initContainers": [container("init")],
                **spec,
            },
        }
    )


def test_pod_webhook_labels_a_worker_from_its_ordinal_and_subgroup(world: LwsWorld) -> None:
    leader = "vllm-1"
    pod = stateful_pod(
        "vllm-1-3",
        {P + "name": "vllm", P + "group-index": "1", P + "group-key": sha1(f"{NS}/{leader}")},
        {P + "size": "5", P + "leader-name": leader, P + "subgroup-size": "2"},
        subdomain="vllm",
    )
    world.store.create(pod)
    got = world.pod("vllm-1-3")
    labels = got.metadata.labels
    assert labels[P + "worker-index"] == "3"
    # size - 1 = 4 is divisible by 2 and size is not: the leader joins subgroup 0,
    # workers 1-2 are subgroup 0, workers 3-4 subgroup 1.
    assert labels[P + "subgroup-index"] == "1"
    assert labels[P + "subgroup-key"] == sha1(f"{leader}/1")
    # LWS's variables come first, replace the container's own of the same name.
    assert env_of(got) == [
        ("LWS_LEADER_ADDRESS", f"vllm-1.vllm.{NS}"),
        ("LWS_GROUP_SIZE", "5"),
        ("LWS_WORKER_INDEX", "3"),
        ("MINE", "x"),
    ]
    assert [n for n, _ in env_of_init(got)] == [
        "LWS_LEADER_ADDRESS",
        "LWS_GROUP_SIZE",
        "LWS_WORKER_INDEX",
    ]


def env_of_init(pod: Pod) -> list[tuple[str, str]]:
    return [(v["name"], v.get("value", "")) for v in pod.spec.init_containers[0].env or []]


def test_pod_webhook_refuses_a_group_pod_without_its_size(world: LwsWorld) -> None:
    pod = stateful_pod("vllm-0", {P + "name": "vllm", P + "worker-index": "0"}, {})
    with pytest.raises(Invalid, match=rf"metadata\.annotations\[{P}size\]: Required value"):
        world.store.create(pod)
