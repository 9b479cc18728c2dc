"""Deployments: a ReplicaSet per pod template, rolling updates within
maxSurge/maxUnavailable, Recreate, revision history, status and conditions;
the API server's validation; a world with a Deployment under ``kuota run``."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kuota.api.apps import Deployment, ReplicaSet
from kuota.api.base import Quantity
from kuota.api.decode import decode_object
from kuota.cli.main import main
from kuota.cluster.apiserver.apps_validation import AppsValidation
from kuota.cluster.podutil import POD, controller_ref, is_deleting, is_pod_ready, is_terminal
from kuota.store import MemoryStore, clone
from kuota.store.protocol import Invalid

from ..conftest import NS, World, decode, node_manifest

DEPLOYMENT = ("apps", "Deployment")
REPLICASET = ("apps", "ReplicaSet")


def deployment(
    name: str = "web",
    replicas: int = 3,
    *,
    image: str = "v1",
    cpu: str = "100m",
    strategy: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "replicas": replicas,
        "selector": {"matchLabels": {"app": name}},
        "template": {
            "metadata": {"labels": {"app": name}},
            "spec": {
                "containers": [
                    {"name": "c", "image": image, "resources": {"requests": {"cpu": cpu}}}
                ]
            },
        },
        **extra,
    }
    if strategy is not None:
        spec["strategy"] = strategy
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": NS},
        "spec": spec,
    }


def get(world: World, name: str = "web") -> Deployment:
    d: Deployment = world.store.get(DEPLOYMENT, NS, name)
    return d


def edit(world: World, change: Callable[[Deployment], None], name: str = "web") -> None:
    d = clone(get(world, name))
    change(d)
    world.store.update(d)


def set_image(image: str) -> Callable[[Deployment], None]:
    def change(d: Deployment) -> None:
        assert d.spec is not None
        d.spec.template.spec.containers[0].image = image  # type: ignore[union-attr]

    return change


def set_replicas(n: int) -> Callable[[Deployment], None]:
    def change(d: Deployment) -> None:
        assert d.spec is not None
        d.spec.replicas = n

    return change


def sets(world: World) -> dict[str, ReplicaSet]:
    return {rs.metadata.name: rs for rs in world.store.list(REPLICASET, NS).items}


def sizes(world: World) -> dict[str, int]:
    """image -> spec.replicas of its ReplicaSet."""
    out = {}
    for rs in sets(world).values():
        out[rs.spec.template.spec.containers[0].image] = rs.spec.replicas
    return out


def conditions(world: World, name: str = "web") -> dict[str, tuple[str, str | None]]:
    st = get(world, name).status
    return {c.type: (c.status, c.reason) for c in (st.conditions if st else None) or ()}


class PodLog:
    """Every pod write since it was made, replayed: the pods as they were
    after each write, for invariants that must hold at every instant."""

    def __init__(self, world: World) -> None:
        self.watch = world.store.watch(POD, world.store.resource_version)
        self.pods: dict[str, Any] = {p.metadata.name: p for p in world.store.list(POD, NS).items}

    def states(self) -> list[dict[str, Any]]:
        out = []
        for ev in self.watch.poll():
            name = ev.object.metadata.name
            if ev.type == "DELETED":
                self.pods.pop(name, None)
            else:
                self.pods[name] = ev.object
            out.append(dict(self.pods))
        return out


def image_of(pod: Any) -> str:
    image: str = pod.spec.containers[0].image
    return image


def test_a_replica_set_per_template_named_by_its_hash(world: World) -> None:
    world.apply(node_manifest("n1"), deployment())
    world.run(until=timedelta(seconds=1))
    (rs,) = sets(world).values()
    h = rs.metadata.labels["pod-template-hash"]
    assert rs.metadata.name == f"web-{h}"
    assert rs.spec.selector.match_labels == {"app": "web", "pod-template-hash": h}
    assert rs.spec.template.metadata.labels == {"app": "web", "pod-template-hash": h}
    assert rs.metadata.annotations["deployment.kubernetes.io/revision"] == "1"
    ref = controller_ref(rs)
    assert ref is not None and (ref.kind, ref.name) == ("Deployment", "web")
    pods = world.store.list(POD, NS, label_selector=f"pod-template-hash={h}").items
    assert len(pods) == 3 and all(p.status.phase == "Running" for p in pods)
    d = get(world)
    assert d.metadata.annotations["deployment.kubernetes.io/revision"] == "1"
    st = d.status
    assert (st.replicas, st.updated_replicas, st.ready_replicas, st.available_replicas) == (
        3,
        3,
        3,
        3,
    )
    assert (st.unavailable_replicas, st.observed_generation) == (0, 1)
    assert conditions(world) == {
        "Available": ("True", "MinimumReplicasAvailable"),
        "Progressing": ("True", "NewReplicaSetAvailable"),
    }


def test_rolling_update_with_surge_keeps_every_replica_available(world: World) -> None:
    # minReadySeconds spreads the rollout over time: a new pod counts as
    # available (and lets an old one go) 5 s after it is Ready.
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    world.apply(node_manifest("n1"), deployment(replicas=3, strategy=strategy, minReadySeconds=5))
    world.run(until=timedelta(seconds=10))
    log = PodLog(world)
    edit(world, set_image("v2"))
    world.run(until=timedelta(seconds=14))
    assert conditions(world)["Progressing"] == ("True", "ReplicaSetUpdated")
    assert sizes(world) == {"v1": 3, "v2": 1}  # the new pod is not available yet
    world.run(until=timedelta(seconds=15))
    assert sizes(world) == {"v1": 2, "v2": 2}
    world.run(until=timedelta(seconds=60))
    states = log.states()
    ready = [sum(is_pod_ready(p) and not is_deleting(p) for p in s.values()) for s in states]
    alive = [sum(not is_terminal(p) for p in s.values()) for s in states]
    assert min(ready) == 3  # maxUnavailable 0: never fewer than replicas
    assert max(alive) == 4  # maxSurge 1: one more at most, and it was used
    assert sizes(world) == {"v1": 0, "v2": 3}
    pods = [p for p in world.store.list(POD, NS).items if not is_terminal(p)]
    assert sorted(image_of(p) for p in pods) == ["v2"] * 3
    assert get(world).metadata.annotations["deployment.kubernetes.io/revision"] == "2"
    assert conditions(world)["Progressing"] == ("True", "NewReplicaSetAvailable")


def test_default_strategy_is_rolling_update_25_percent(world: World) -> None:
    world.apply(node_manifest("n1"), deployment(replicas=4, minReadySeconds=5))
    d = get(world)
    ru = d.spec.strategy.rolling_update
    assert (d.spec.strategy.type, ru.max_surge, ru.max_unavailable) == (
        "RollingUpdate",
        "25%",
        "25%",
    )
    assert (d.spec.revision_history_limit, d.spec.progress_deadline_seconds) == (10, 600)
    world.run(until=timedelta(seconds=10))
    log = PodLog(world)
    edit(world, set_image("v2"))
    world.run(until=timedelta(seconds=60))
    states = log.states()
    # 25% of 4: one pod more, one unavailable.
    assert min(sum(is_pod_ready(p) for p in s.values()) for s in states) == 3
    assert max(sum(not is_terminal(p) for p in s.values()) for s in states) == 5
    assert sizes(world) == {"v1": 0, "v2": 4}


def test_recreate_removes_old_pods_before_making_new_ones(world: World) -> None:
    world.apply(node_manifest("n1"), deployment(strategy={"type": "Recreate"}))
    world.run(until=timedelta(seconds=1))
    log = PodLog(world)
    edit(world, set_image("v2"))
    world.run(until=timedelta(seconds=5))
    for s in log.states():
        images = {image_of(p) for p in s.values() if not is_terminal(p)}
        assert images != {"v1", "v2"}, "old and new pods at once"
    assert sizes(world) == {"v1": 0, "v2": 3}
    pods = world.store.list(POD, NS).items
    assert sorted(image_of(p) for p in pods) == ["v2"] * 3


def test_old_replica_sets_beyond_the_history_limit_are_deleted(world: World) -> None:
    world.apply(node_manifest("n1"), deployment(replicas=1, revisionHistoryLimit=1))
    for i, image in enumerate(("v2", "v3", "v4"), start=1):
        world.run(until=timedelta(seconds=i))
        edit(world, set_image(image))
    world.run(until=timedelta(seconds=10))
    by_rev = {
        rs.metadata.annotations["deployment.kubernetes.io/revision"]: rs.spec.replicas
        for rs in sets(world).values()
    }
    assert by_rev == {"3": 0, "4": 1}


def test_scaling_scales_the_current_replica_set(world: World) -> None:
    world.apply(node_manifest("n1"), deployment(replicas=2))
    world.run(until=timedelta(seconds=1))

    edit(world, set_replicas(5))
    world.run(until=timedelta(seconds=2))
    (rs,) = sets(world).values()
    assert rs.spec.replicas == 5
    assert rs.metadata.annotations["deployment.kubernetes.io/desired-replicas"] == "5"
    assert get(world).status.available_replicas == 5


def test_scaling_during_a_rollout_is_proportional(world: World) -> None:
    # Kubernetes' documented example: 10 replicas, maxSurge 3, maxUnavailable
    # 2, a new template whose pods never run: 8 old + 5 new. Scaled to 15,
    # the 5 more go 3 to the old set and 2 to the new one.
    strategy = {"rollingUpdate": {"maxSurge": 3, "maxUnavailable": 2}}
    world.apply(node_manifest("n1", cpu="64"), deployment(replicas=10, strategy=strategy))
    world.run(until=timedelta(seconds=1))

    def unschedulable(d: Deployment) -> None:
        assert d.spec is not None and d.spec.template.spec is not None
        d.spec.template.spec.containers[0].image = "v2"
        d.spec.template.spec.containers[0].resources.requests = {"cpu": Quantity("100")}

    edit(world, unschedulable)
    world.run(until=timedelta(seconds=5))
    assert sizes(world) == {"v1": 8, "v2": 5}
    edit(world, set_replicas(15))
    world.run(until=timedelta(seconds=10))
    assert sizes(world) == {"v1": 11, "v2": 7}


def test_a_paused_deployment_does_not_roll_out_until_resumed(world: World) -> None:
    world.apply(node_manifest("n1"), deployment())
    world.run(until=timedelta(seconds=1))

    def pause(paused: bool) -> Callable[[Deployment], None]:
        def change(d: Deployment) -> None:
            assert d.spec is not None
            d.spec.paused = paused

        return change

    edit(world, pause(True))
    edit(world, set_image("v2"))
    world.run(until=timedelta(seconds=5))
    assert sizes(world) == {"v1": 3}
    assert conditions(world)["Progressing"] == ("Unknown", "DeploymentPaused")
    edit(world, pause(False))
    world.run(until=timedelta(seconds=10))
    assert sizes(world) == {"v1": 0, "v2": 3}
    assert conditions(world)["Progressing"] == ("True", "NewReplicaSetAvailable")


def test_a_rollout_that_cannot_progress_times_out(world: World) -> None:
    # Pods no node can hold: nothing becomes available.
    world.apply(node_manifest("n1"), deployment(cpu="64", progressDeadlineSeconds=30))
    world.run(until=timedelta(seconds=29))
    assert conditions(world) == {
        "Available": ("False", "MinimumReplicasUnavailable"),
        "Progressing": ("True", "ReplicaSetUpdated"),  # its pods were created
    }
    world.run(until=timedelta(seconds=40))
    assert conditions(world)["Progressing"] == ("False", "ProgressDeadlineExceeded")
    assert get(world).status.unavailable_replicas == 3


# ------------------------------------------------------------ validation
def errors(manifest: dict[str, Any]) -> list[str]:
    doc = decode_object(manifest, source="test", index=0)
    return [str(e) for e in doc.errors]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            lambda s: s.update(replicas=-1),
            "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            lambda s: s["selector"].update(matchLabels={"app": "other"}),
            'spec.template.metadata.labels: Invalid value: "object": '
            "`selector` does not match template `labels`",
        ),
        (
            lambda s: s.update(selector={}),
            'spec.selector: Invalid value: "object": empty selector is invalid for deployment',
        ),
        (lambda s: s.pop("selector"), "spec.selector: Required value"),
        (
            lambda s: s.update(strategy={"rollingUpdate": {"maxSurge": 0, "maxUnavailable": "0%"}}),
            'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "0%": '
            "may not be 0 when `maxSurge` is 0",
        ),
        (
            lambda s: s.update(strategy={"rollingUpdate": {"maxSurge": "x"}}),
            'spec.strategy.rollingUpdate.maxSurge: Invalid value: "x": a valid percent string',
        ),
        (
            lambda s: s.update(strategy={"rollingUpdate": {"maxUnavailable": "120%"}}),
            'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "120%": '
            "must not be greater than 100%",
        ),
        (
            lambda s: s.update(strategy={"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}),
            "spec.strategy.rollingUpdate: Forbidden: "
            "may not be specified when strategy `type` is 'Recreate'",
        ),
        (
            lambda s: s.update(minReadySeconds=700),
            "spec.progressDeadlineSeconds: Invalid value: 600: must be greater than minReadySeconds",
        ),
        (
            lambda s: s["template"]["spec"].update(restartPolicy="Never"),
            'spec.template.spec.restartPolicy: Unsupported value: "Never"',
        ),
    ],
)
def test_validation_errors_name_the_field(
    change: Callable[[dict[str, Any]], Any], expected: str
) -> None:
    m = deployment()
    change(m["spec"])
    errs = errors(m)
    assert any(e.startswith(expected) for e in errs), errs


def test_a_valid_deployment_and_replica_set_have_no_errors() -> None:
    assert errors(deployment()) == []


def test_the_selector_of_a_deployment_is_immutable() -> None:
    store = MemoryStore(lambda: datetime(2025, 1, 1, tzinfo=UTC), admission=[AppsValidation()])
    store.create(decode(deployment()))
    d = clone(store.get(DEPLOYMENT, NS, "web"))
    d.spec.selector.match_labels = {"app": "web", "tier": "x"}
    d.spec.template.metadata.labels = {"app": "web", "tier": "x"}
    with pytest.raises(Invalid) as err:
        store.update(d)
    assert 'spec.selector: Invalid value: "object": field is immutable' in str(err.value)
    # Anything else may change.
    d = clone(store.get(DEPLOYMENT, NS, "web"))
    d.spec.replicas = 7
    assert store.update(d).spec.replicas == 7
    # A bad object is refused on create too.
    bad = decode(deployment("other"))
    bad.spec.replicas = -2
    with pytest.raises(Invalid, match=r"spec\.replicas: Invalid value: -2"):
        store.create(bad)


# ------------------------------------------------------------ kuota run
WORLD = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: "2", memory: 8Gi}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status:
  allocatable: {cpu: "2", memory: 8Gi}
---
apiVersion: apps/v1
kind: Deployment
metadata: {namespace: default, name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: nginx, resources: {requests: {cpu: "1"}}}]
"""


def test_kuota_run_runs_a_deployment_on_the_nodes(tmp_path: Path) -> None:
    world = tmp_path / "world.yaml"
    world.write_text(WORLD)
    state = str(tmp_path / "state")
    r = CliRunner().invoke(main, ["run", str(world), "--state", state, "--no-live"])
    assert r.exit_code == 0, r.output
    assert "stopped: idle" in r.output
    r = CliRunner().invoke(main, ["get", "deployments", "--state", state])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0].split() == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert lines[1].split()[:4] == ["web", "3/3", "3", "3"]
    r = CliRunner().invoke(main, ["get", "rs", "--state", state])
    assert r.output.splitlines()[1].split()[1:4] == ["3", "3", "3"]
    r = CliRunner().invoke(main, ["get", "pods", "-o", "wide", "--state", state])
    rows = [line.split() for line in r.output.splitlines()[1:]]
    assert len(rows) == 3
    assert all(row[2] == "Running" for row in rows)
    # 1 cpu each on two 2-cpu nodes: both nodes run the Deployment's pods.
    assert {row[-1] for row in rows} == {"n1", "n2"}


def test_kuota_run_refuses_a_deployment_whose_selector_misses_its_template(
    tmp_path: Path,
) -> None:
    world = tmp_path / "world.yaml"
    world.write_text(WORLD.replace("matchLabels: {app: web}", "matchLabels: {app: api}"))
    r = CliRunner().invoke(main, ["run", str(world), "--no-live"])
    assert r.exit_code != 0
    out = " ".join(r.output.split())  # the message may be wrapped at the path's length
    assert "spec.template.metadata.labels" in out
    assert "`selector` does not match template `labels`" in out
    assert "Traceback" not in out
