"""StatefulSets: pods ``<sts>-<ordinal>`` created in order (OrderedReady) or
all at once (Parallel), removed from the highest ordinal, recreated under
their name, rolled from the top down to the partition; revisions; the API
server's validation."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kuota.api.apps import StatefulSet
from kuota.api.decode import decode_object
from kuota.cluster.apiserver.apps_validation import AppsValidation
from kuota.cluster.podutil import POD, is_deleting, is_pod_ready
from kuota.store import MemoryStore, clone
from kuota.store.protocol import Invalid

from ..conftest import NS, World, decode, node_manifest

STATEFULSET = ("apps", "StatefulSet")
REVISIONS = ("apps", "ControllerRevision")
HOLD = "example.com/hold"  # a finalizer the test removes: a pod that takes its time to go


def statefulset(
    name: str = "db",
    replicas: int = 3,
    *,
    image: str = "v1",
    cpu: str = "100m",
    policy: str | None = None,
    partition: int | None = None,
    strategy: str | None = None,
    finalizers: list[str] | None = None,
    annotations: dict[str, str] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"labels": {"app": name}}
    if finalizers:
        meta["finalizers"] = finalizers
    if annotations:
        meta["annotations"] = annotations
    spec: dict[str, Any] = {
        "replicas": replicas,
        "serviceName": f"{name}-headless",
        "selector": {"matchLabels": {"app": name}},
        "template": {
            "metadata": meta,
            "spec": {
                "containers": [
                    {"name": "c", "image": image, "resources": {"requests": {"cpu": cpu}}}
                ]
            },
        },
        **extra,
    }
    if policy:
        spec["podManagementPolicy"] = policy
    if strategy:
        spec["updateStrategy"] = {"type": strategy}
    if partition is not None:
        spec["updateStrategy"] = {"rollingUpdate": {"partition": partition}}
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": NS},
        "spec": spec,
    }


def get(world: World, name: str = "db") -> StatefulSet:
    sts: StatefulSet = world.store.get(STATEFULSET, NS, name)
    return sts


def edit(world: World, change: Callable[[Any], None], name: str = "db") -> None:
    sts = clone(get(world, name))
    change(sts.spec)
    world.store.update(sts)


def set_image(image: str) -> Callable[[Any], None]:
    def change(spec: Any) -> None:
        spec.template.spec.containers[0].image = image

    return change


def set_replicas(n: int) -> Callable[[Any], None]:
    def change(spec: Any) -> None:
        spec.replicas = n

    return change


def pods(world: World) -> dict[str, Any]:
    """name -> pod, for the pods not being deleted."""
    return {p.metadata.name: p for p in world.store.list(POD, NS).items if not is_deleting(p)}


def phases(world: World) -> dict[str, str]:
    return {n: p.status.phase for n, p in sorted(pods(world).items())}


def images(world: World) -> dict[str, str]:
    return {n: p.spec.containers[0].image for n, p in sorted(pods(world).items())}


def release(world: World, name: str) -> None:
    """Drop the test's finalizer: the pod being deleted goes."""
    pod = clone(world.pod(name))
    pod.metadata.finalizers = [f for f in pod.metadata.finalizers or () if f != HOLD]
    world.store.update(pod)


class Log:
    """The store's pod writes from now on, as (event type, pod name, ready)."""

    def __init__(self, world: World) -> None:
        self.watch = world.store.watch(POD, world.store.resource_version)

    def events(self) -> list[tuple[str, str, bool]]:
        return [
            (ev.type, ev.object.metadata.name, is_pod_ready(ev.object)) for ev in self.watch.poll()
        ]


def first(events: list[tuple[str, str, bool]], match: Callable[[str, str, bool], bool]) -> int:
    return next(i for i, e in enumerate(events) if match(*e))


def test_ordered_ready_creates_each_pod_after_the_previous_is_ready(world: World) -> None:
    world.apply(node_manifest("n1"))
    log = Log(world)
    world.apply(statefulset())
    world.run(until=timedelta(seconds=1))
    assert phases(world) == {"db-0": "Running", "db-1": "Running", "db-2": "Running"}
    ev = log.events()
    for prev, nxt in (("db-0", "db-1"), ("db-1", "db-2")):
        ready = first(ev, lambda t, n, r, prev=prev: n == prev and r)
        created = first(ev, lambda t, n, r, nxt=nxt: n == nxt and t == "ADDED")
        assert ready < created, f"{nxt} created before {prev} was Ready"


def test_ordered_ready_waits_for_a_pod_that_cannot_run(world: World) -> None:
    # db-0 fits no node: db-1 and db-2 are not created.
    world.apply(node_manifest("small", cpu="1"), statefulset(cpu="2"))
    world.run(until=timedelta(seconds=30))
    assert phases(world) == {"db-0": "Pending"}
    world.apply(node_manifest("big", cpu="8"))
    world.run(until=timedelta(seconds=31))
    assert phases(world) == {"db-0": "Running", "db-1": "Running", "db-2": "Running"}


def test_parallel_creates_every_pod_at_once(world: World) -> None:
    world.apply(node_manifest("small", cpu="1"), statefulset(cpu="2", policy="Parallel"))
    world.run(until=timedelta(seconds=30))
    assert phases(world) == {"db-0": "Pending", "db-1": "Pending", "db-2": "Pending"}


def test_pods_have_stable_identity(world: World) -> None:
    world.apply(node_manifest("n1"), statefulset(replicas=2, ordinals={"start": 5}))
    world.run(until=timedelta(seconds=1))
    assert sorted(pods(world)) == ["db-5", "db-6"]
    pod = world.pod("db-6")
    rev = get(world).status.update_revision
    assert pod.metadata.labels == {
        "app": "db",
        "statefulset.kubernetes.io/pod-name": "db-6",
        "apps.kubernetes.io/pod-index": "6",
        "controller-revision-hash": rev,
    }
    assert (pod.spec.hostname, pod.spec.subdomain) == ("db-6", "db-headless")
    ref = pod.metadata.owner_references[0]
    assert (ref.kind, ref.name, ref.controller) == ("StatefulSet", "db", True)
    (cr,) = world.store.list(REVISIONS, NS).items
    assert cr.metadata.name == rev and rev.startswith("db-") and cr.revision == 1


def test_scale_down_removes_the_highest_ordinal_first_one_at_a_time(world: World) -> None:
    world.apply(node_manifest("n1"), statefulset(finalizers=[HOLD]))
    world.run(until=timedelta(seconds=1))
    edit(world, set_replicas(1))
    world.run(until=timedelta(seconds=2))
    # db-2 is going (its finalizer holds it): db-1 waits.
    assert is_deleting(world.pod("db-2")) and not is_deleting(world.pod("db-1"))
    release(world, "db-2")
    world.run(until=timedelta(seconds=3))
    assert not world.exists(POD, "db-2")
    assert is_deleting(world.pod("db-1"))
    release(world, "db-1")
    world.run(until=timedelta(seconds=4))
    assert phases(world) == {"db-0": "Running"}
    assert get(world).status.replicas == 1


def test_parallel_scale_down_removes_all_at_once(world: World) -> None:
    world.apply(node_manifest("n1"), statefulset(policy="Parallel", finalizers=[HOLD]))
    world.run(until=timedelta(seconds=1))
    edit(world, set_replicas(1))
    world.run(until=timedelta(seconds=2))
    assert is_deleting(world.pod("db-2")) and is_deleting(world.pod("db-1"))


def test_a_deleted_pod_comes_back_with_the_same_name(world: World) -> None:
    world.apply(node_manifest("n1"), statefulset())
    world.run(until=timedelta(seconds=1))
    uid = world.pod("db-1").metadata.uid
    world.store.delete(POD, NS, "db-1")
    world.run(until=timedelta(seconds=2))
    again = world.pod("db-1")
    assert again.metadata.uid != uid and again.status.phase == "Running"


def test_a_pod_being_deleted_is_recreated_only_once_gone(world: World) -> None:
    world.apply(node_manifest("n1"), statefulset(finalizers=[HOLD]))
    world.run(until=timedelta(seconds=1))
    uid = world.pod("db-1").metadata.uid
    world.store.delete(POD, NS, "db-1")
    world.run(until=timedelta(seconds=5))
    assert world.pod("db-1").metadata.uid == uid  # still the old one, going
    release(world, "db-1")
    world.run(until=timedelta(seconds=6))
    assert world.pod("db-1").metadata.uid != uid


def test_a_pod_that_ends_is_recreated_with_the_same_name(world: World) -> None:
    world.apply(
        node_manifest("n1"),
        statefulset(
            replicas=1, annotations={"kuota.dev/duration": "10s", "kuota.dev/fail": "true"}
        ),
    )
    world.run(until=timedelta(seconds=1))
    uid = world.pod("db-0").metadata.uid
    world.run(until=timedelta(seconds=10))
    again = world.pod("db-0")
    assert again.metadata.uid != uid and again.status.phase == "Running"


@pytest.mark.parametrize("policy", ["OrderedReady", "Parallel"])
def test_rolling_update_goes_down_from_the_highest_ordinal_and_stops_at_the_partition(
    world: World, policy: str
) -> None:
    world.apply(node_manifest("n1"), statefulset(replicas=4, partition=1, policy=policy))
    world.run(until=timedelta(seconds=1))
    old_rev = get(world).status.current_revision
    log = Log(world)
    edit(world, set_image("v2"))
    world.run(until=timedelta(seconds=2))
    assert images(world) == {"db-0": "v1", "db-1": "v2", "db-2": "v2", "db-3": "v2"}
    ev = log.events()
    deleted = [n for t, n, _ in ev if t == "DELETED"]
    assert deleted == ["db-3", "db-2", "db-1"]
    # One at a time: the next goes only once the replaced one is Ready again.
    for prev, nxt in (("db-3", "db-2"), ("db-2", "db-1")):
        back = first(ev, lambda t, n, r, prev=prev: n == prev and t != "DELETED" and r)
        going = first(ev, lambda t, n, r, nxt=nxt: n == nxt and t == "DELETED")
        assert back < going
    st = get(world).status
    assert (st.current_revision, st.updated_replicas, st.current_replicas) == (old_rev, 3, 1)
    assert st.update_revision != old_rev
    # A pod below the partition that is deleted comes back at the old revision.
    world.store.delete(POD, NS, "db-0")
    world.run(until=timedelta(seconds=3))
    assert world.pod("db-0").metadata.labels["controller-revision-hash"] == old_rev

    def no_partition(spec: Any) -> None:
        spec.update_strategy.rolling_update.partition = 0

    edit(world, no_partition)
    world.run(until=timedelta(seconds=4))
    assert set(images(world).values()) == {"v2"}
    st = get(world).status
    assert st.current_revision == st.update_revision
    assert (st.current_replicas, st.updated_replicas, st.ready_replicas) == (4, 4, 4)


def test_the_only_pod_below_the_partition_comes_back_at_the_old_revision(
    world: World,
) -> None:
    # With db-0 gone, every remaining pod is updated: the rollout must still
    # not read as complete, since db-0 is recreated at the old revision.
    world.apply(node_manifest("n1"), statefulset(replicas=2, partition=1))
    world.run(until=timedelta(seconds=1))
    old_rev = get(world).status.current_revision
    edit(world, set_image("v2"))
    world.run(until=timedelta(seconds=2))
    for round_ in (3, 4):  # twice: the second recreation reads the status the first wrote
        world.store.delete(POD, NS, "db-0")
        world.run(until=timedelta(seconds=round_))
        assert world.pod("db-0").metadata.labels["controller-revision-hash"] == old_rev
        st = get(world).status
        assert st.current_revision == old_rev != st.update_revision
        assert (st.current_replicas, st.updated_replicas) == (1, 1)


def test_rolling_back_reuses_the_old_revision(world: World) -> None:
    world.apply(node_manifest("n1"), statefulset(replicas=2))
    world.run(until=timedelta(seconds=1))
    v1 = get(world).status.update_revision
    edit(world, set_image("v2"))
    world.run(until=timedelta(seconds=2))
    edit(world, set_image("v1"))
    world.run(until=timedelta(seconds=3))
    st = get(world).status
    assert st.update_revision == st.current_revision == v1
    revs = {r.metadata.name: r.revision for r in world.store.list(REVISIONS, NS).items}
    assert revs[v1] == 3  # renumbered the newest


def test_on_delete_only_recreated_pods_take_the_new_revision(world: World) -> None:
    world.apply(node_manifest("n1"), statefulset(strategy="OnDelete"))
    world.run(until=timedelta(seconds=1))
    edit(world, set_image("v2"))
    world.run(until=timedelta(seconds=10))
    assert images(world) == {"db-0": "v1", "db-1": "v1", "db-2": "v1"}
    world.store.delete(POD, NS, "db-1")
    world.run(until=timedelta(seconds=11))
    assert images(world) == {"db-0": "v1", "db-1": "v2", "db-2": "v1"}
    assert get(world).status.updated_replicas == 1


def test_unused_revisions_beyond_the_history_limit_are_deleted(world: World) -> None:
    world.apply(node_manifest("n1"), statefulset(replicas=1, revisionHistoryLimit=1))
    for i, image in enumerate(("v2", "v3", "v4"), start=1):
        world.run(until=timedelta(seconds=i))
        edit(world, set_image(image))
    world.run(until=timedelta(seconds=10))
    revs = sorted(r.revision for r in world.store.list(REVISIONS, NS).items)
    assert revs == [3, 4]


# ------------------------------------------------------------ validation
def errors(manifest: dict[str, Any]) -> list[str]:
    return [str(e) for e in decode_object(manifest, source="test", index=0).errors]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            lambda s: s.update(replicas=-1),
            "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            lambda s: s.update(updateStrategy={"rollingUpdate": {"partition": -1}}),
            "spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: "
            "must be greater than or equal to 0",
        ),
        (
            lambda s: s.update(ordinals={"start": -1}),
            "spec.ordinals.start: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            lambda s: s.update(podManagementPolicy="Random"),
            "spec.podManagementPolicy: Invalid value: \"Random\": must be 'OrderedReady' or 'Parallel'",
        ),
        (
            lambda s: s["template"]["metadata"].update(labels={"app": "x"}),
            'spec.template.metadata.labels: Invalid value: "object": '
            "`selector` does not match template `labels`",
        ),
        (
            lambda s: s.update(selector={}),
            'spec.selector: Invalid value: "object": empty selector is invalid for statefulset',
        ),
        (
            lambda s: s.update(updateStrategy={"type": "OnDelete", "rollingUpdate": {}}),
            'spec.updateStrategy.rollingUpdate: Invalid value: "object": '
            "only allowed for updateStrategy 'RollingUpdate'",
        ),
    ],
)
def test_validation_errors_name_the_field(
    change: Callable[[dict[str, Any]], Any], expected: str
) -> None:
    m = statefulset()
    change(m["spec"])
    errs = errors(m)
    assert any(e.startswith(expected) for e in errs), errs


def test_defaults() -> None:
    sts: StatefulSet = decode(statefulset())
    spec = sts.spec
    assert errors(statefulset()) == []
    assert (spec.pod_management_policy, spec.update_strategy.type) == (
        "OrderedReady",
        "RollingUpdate",
    )
    assert spec.update_strategy.rolling_update.partition == 0
    assert spec.revision_history_limit == 10
    pvc = spec.persistent_volume_claim_retention_policy
    assert (pvc.when_deleted, pvc.when_scaled) == ("Retain", "Retain")
    m = statefulset()
    del m["spec"]["replicas"]
    assert decode(m).spec.replicas == 1


def test_only_some_spec_fields_may_change() -> None:
    store = MemoryStore(lambda: datetime(2025, 1, 1, tzinfo=UTC), admission=[AppsValidation()])
    store.create(decode(statefulset()))

    def update(change: Callable[[Any], None]) -> StatefulSet:
        sts = clone(store.get(STATEFULSET, NS, "db"))
        change(sts.spec)
        stored: StatefulSet = store.update(sts)
        return stored

    def service(spec: Any) -> None:
        spec.service_name = "other"

    with pytest.raises(Invalid) as err:
        update(service)
    assert (
        "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', "
        "'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', "
        "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
    ) in str(err.value)

    def allowed(spec: Any) -> None:
        spec.replicas = 5
        spec.template.spec.containers[0].image = "v9"
        spec.update_strategy.rolling_update.partition = 2
        spec.min_ready_seconds = 3
        spec.revision_history_limit = 2

    assert update(allowed).spec.replicas == 5

    def negative(spec: Any) -> None:
        spec.replicas = -1

    with pytest.raises(Invalid, match=r"spec\.replicas: Invalid value: -1"):
        update(negative)
