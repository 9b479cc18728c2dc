"""The ObjectStore protocol, run against the memory store with and without the journal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest
from store_testlib import (
    CLUSTER_QUEUE,
    JOB,
    T0,
    WORKLOAD,
    FakeClock,
    MakeStore,
    cluster_queue,
    decode,
    job,
    uid_seq,
)
from store_testlib import workload as make_workload

from kuota.api.errors import FieldError
from kuota.api.k8s import JobStatus
from kuota.api.kueue.types import WorkloadStatus
from kuota.api.meta import Condition, LabelSelector, LabelSelectorRequirement
from kuota.api.quantity import Quantity
from kuota.store import (
    AlreadyExists,
    BadRequest,
    Conflict,
    Event,
    Gone,
    Invalid,
    JournalError,
    MemoryStore,
    MethodNotAllowed,
    NotFound,
    Operation,
    clone,
    kind_info,
    open_readonly,
    open_store,
    register_kind,
    resource_of,
    rtype_of,
)
from kuota.store.codec import to_wire
from kuota.store.events import revision
from kuota.store.kinds import registered_kinds, resource_type
from kuota.store.resources import NODE, POD
from kuota.store.resources import WORKLOAD_PRIORITY_CLASS as WPC

ALPHABET = set("bcdfghjklmnpqrstvwxz2456789")


def names(items: list[Any]) -> list[tuple[str, str]]:
    return [(o.metadata.namespace, o.metadata.name) for o in items]


def kinds(events: list[Event]) -> list[tuple[str, str | None, int]]:
    """Each event's type, object name and revision: resourceVersions are
    opaque to clients, but these tests are the memory store's own, which may
    read them as its write counter."""
    return [
        (
            e.type,
            e.object.metadata.name if e.object is not None else None,
            revision(e.resource_version),
        )
        for e in events
    ]


# ------------------------------------------------------------------ create / get / list
def test_create_fills_system_fields(store: MemoryStore) -> None:
    created = store.create(job("a"))
    m = created.metadata
    assert m.uid == "00000000-0000-0000-0000-000000000001"
    assert m.resource_version == "1" and store.resource_version == 1
    assert m.generation == 1
    assert m.creation_timestamp == T0.replace(second=1)
    assert store.get(JOB, "team-a", "a") is created
    second = store.create(job("b"))
    assert uid_seq(second.metadata.uid) == 2 and second.metadata.resource_version == "2"


def test_create_keeps_given_status_and_timestamp(store: MemoryStore) -> None:
    given = job("a", status={"active": 3, "startTime": "2025-06-01T00:00:00Z"})
    given.metadata.creation_timestamp = T0
    given.metadata.resource_version = "77"  # ignored: the store assigns it
    created = store.create(given)
    assert created.status.active == 3
    assert created.metadata.creation_timestamp == T0
    assert created.metadata.resource_version == "1"


def test_store_keeps_a_private_copy(store: MemoryStore) -> None:
    given = job("a", labels={"x": "1"})
    created = store.create(given)
    given.metadata.labels["x"] = "changed"
    given.spec.parallelism = 99
    assert created is not given
    assert store.get(JOB, "team-a", "a").metadata.labels == {"x": "1"}
    assert store.get(JOB, "team-a", "a").spec.parallelism == 1


def test_clone_is_deep_and_equal(store: MemoryStore) -> None:
    created = store.create(job("a", labels={"x": "1"}))
    copy = clone(created)
    assert copy == created and copy is not created
    copy.spec.template.spec.containers[0].resources.requests["cpu"] = Quantity("3")
    copy.metadata.labels["x"] = "2"
    assert created.spec.template.spec.containers[0].resources.requests["cpu"] == Quantity("2")
    assert created.metadata.labels == {"x": "1"}
    assert copy.metadata.creation_timestamp is created.metadata.creation_timestamp  # immutable


def test_already_exists_and_not_found(store: MemoryStore) -> None:
    store.create(job("a"))
    with pytest.raises(AlreadyExists):
        store.create(job("a"))
    store.create(job("a", namespace="team-b"))  # another namespace is another object
    with pytest.raises(NotFound):
        store.get(JOB, "team-a", "missing")
    with pytest.raises(NotFound):
        store.update(job("missing"))
    with pytest.raises(NotFound):
        store.update_status(job("missing"))
    with pytest.raises(NotFound):
        store.patch(JOB, "team-a", "missing", {"metadata": {"labels": {"a": "b"}}})
    with pytest.raises(NotFound):
        store.delete(JOB, "team-a", "missing")
    with pytest.raises(NotFound, match="could not find the requested resource"):
        store.get(("example.com", "v1", "nopes"), "", "x")
    assert store.resource_version == 2


def test_generate_name_is_deterministic(make_store: MakeStore) -> None:
    a, b = make_store(), make_store()
    first = [a.create(job("", generate_name="train-")).metadata.name for _ in range(3)]
    second = [b.create(job("", generate_name="train-")).metadata.name for _ in range(3)]
    assert first == second
    assert len(set(first)) == 3
    for name in first:
        assert name.startswith("train-") and len(name) == len("train-") + 5
        assert set(name[len("train-") :]) <= ALPHABET


def test_scope_of_names(store: MemoryStore) -> None:
    with pytest.raises(Invalid, match=r"metadata\.namespace: Required value"):
        store.create(job("a", namespace=""))
    cq = cluster_queue("cq")
    cq.metadata.namespace = "ignored"
    assert store.create(cq).metadata.namespace == ""
    assert store.get(CLUSTER_QUEUE, "", "cq").metadata.name == "cq"
    nameless = job("x")
    nameless.metadata.name = ""
    with pytest.raises(Invalid, match="name or generateName is required"):
        store.create(nameless)


def test_v1beta1_and_v1beta2_objects_share_a_key(store: MemoryStore) -> None:
    store.create(cluster_queue("old", api_version="v1beta1"))
    with pytest.raises(AlreadyExists):
        store.create(cluster_queue("old"))
    got = store.get(CLUSTER_QUEUE, "", "old")
    assert got.api_version == "kueue.x-k8s.io/v1beta1"  # written back as it was read
    assert names(store.list(CLUSTER_QUEUE).items) == [("", "old")]


def test_wrong_struct_type_is_a_type_error(store: MemoryStore) -> None:
    j = job("a")
    j.kind = "Workload"
    j.api_version = "kueue.x-k8s.io/v1beta2"
    with pytest.raises(TypeError, match="stored as Workload"):
        store.create(j)


def test_list_sorted_with_namespace_and_rv(store: MemoryStore) -> None:
    for ns, name in [("team-b", "x"), ("team-a", "z"), ("team-a", "b"), ("team-c", "a")]:
        store.create(job(name, ns))
    store.create(make_workload("w"))
    listed = store.list(JOB)
    assert names(listed.items) == [
        ("team-a", "b"),
        ("team-a", "z"),
        ("team-b", "x"),
        ("team-c", "a"),
    ]
    assert revision(listed.resource_version) == store.resource_version == 5
    assert names(store.list(JOB, "team-a").items) == [("team-a", "b"), ("team-a", "z")]
    assert store.list(JOB, "nowhere").items == []
    assert names(store.list(WORKLOAD).items) == [("team-a", "w")]
    assert store.list(CLUSTER_QUEUE).items == []
    assert store.list(JOB).items[0] is store.get(JOB, "team-a", "b")  # shared, not copied


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        (None, ["gpu-big", "gpu-small", "cpu", "plain"]),
        ("", ["gpu-big", "gpu-small", "cpu", "plain"]),
        ("kind=gpu", ["gpu-big", "gpu-small"]),
        ("kind==gpu", ["gpu-big", "gpu-small"]),
        ("kind!=gpu", ["cpu", "plain"]),
        ("kind in (gpu, cpu)", ["gpu-big", "gpu-small", "cpu"]),
        ("kind notin (gpu)", ["cpu", "plain"]),
        ("size", ["gpu-big", "gpu-small"]),
        ("!size", ["cpu", "plain"]),
        ("kind=gpu,size=8", ["gpu-big"]),
        ("kind in (gpu),!size", []),
        ("size>3", ["gpu-big"]),
        ("size<3", ["gpu-small"]),
        (LabelSelector(), ["gpu-big", "gpu-small", "cpu", "plain"]),
        (LabelSelector(match_labels={"kind": "gpu"}), ["gpu-big", "gpu-small"]),
        (
            LabelSelector(
                match_expressions=[LabelSelectorRequirement(key="size", operator="DoesNotExist")]
            ),
            ["cpu", "plain"],
        ),
    ],
)
def test_list_label_selectors(
    store: MemoryStore, selector: LabelSelector | str | None, expected: list[str]
) -> None:
    store.create(job("gpu-big", labels={"kind": "gpu", "size": "8"}))
    store.create(job("gpu-small", labels={"kind": "gpu", "size": "1"}))
    store.create(job("cpu", labels={"kind": "cpu"}))
    store.create(job("plain"))
    got = [o.metadata.name for o in store.list(JOB, label_selector=selector).items]
    assert sorted(got) == sorted(expected)


def test_bad_selector_string(store: MemoryStore) -> None:
    with pytest.raises(ValueError, match="invalid label selector"):
        store.list(JOB, label_selector="a in (b")


# ------------------------------------------------------------------ update / status / CAS
def test_update_keeps_status_and_bumps_generation_on_spec(store: MemoryStore) -> None:
    created = store.create(job("a", status={"active": 2}))
    changed = clone(created)
    changed.metadata.labels = {"new": "label"}
    changed.status.active = 100  # ignored: status has its own subresource
    updated = store.update(changed)
    assert updated.status.active == 2
    assert updated.metadata.labels == {"new": "label"}
    assert updated.metadata.generation == 1  # metadata only
    assert updated.metadata.resource_version == "2"
    assert updated.metadata.uid == created.metadata.uid
    changed = clone(updated)
    changed.spec.parallelism = 4
    updated = store.update(changed)
    assert updated.metadata.generation == 2
    assert updated.status.active == 2


def test_update_status_keeps_metadata_and_spec(store: MemoryStore) -> None:
    created = store.create(job("a", labels={"a": "1"}))
    changed = clone(created)
    changed.metadata.labels = {"b": "2"}
    changed.spec.parallelism = 7
    changed.status = JobStatus(active=5)
    updated = store.update_status(changed)
    assert updated.status.active == 5
    assert updated.metadata.labels == {"a": "1"}
    assert updated.spec.parallelism == 1
    assert updated.metadata.generation == 1
    assert updated.metadata.resource_version == "2"


def test_compare_and_set(store: MemoryStore) -> None:
    created = store.create(job("a"))
    fresh = clone(created)
    fresh.metadata.labels = {"v": "1"}
    store.update(fresh)  # rv 1 -> 2
    stale = clone(created)  # still says rv 1
    stale.metadata.labels = {"v": "stale"}
    with pytest.raises(Conflict, match="has been modified"):
        store.update(stale)
    with pytest.raises(Conflict):
        store.update_status(stale)
    with pytest.raises(Conflict):
        store.patch(
            JOB, "team-a", "a", {"metadata": {"resourceVersion": "1", "labels": {"x": "y"}}}
        )
    with pytest.raises(Conflict):
        store.delete(JOB, "team-a", "a", resource_version="1")
    assert store.get(JOB, "team-a", "a").metadata.labels == {"v": "1"}
    stale.metadata.resource_version = ""  # no precondition: last write wins
    assert store.update(stale).metadata.labels == {"v": "stale"}
    patched = store.patch(
        JOB, "team-a", "a", {"metadata": {"resourceVersion": "3", "labels": None}}
    )
    assert patched.metadata.labels is None
    assert store.delete(JOB, "team-a", "a", resource_version="4") is None


def test_noop_update_writes_nothing(store: MemoryStore) -> None:
    created = store.create(job("a", labels={"a": "1"}))
    w = store.watch(None, store.resource_version)
    assert store.update(clone(created)) is created
    assert store.update_status(clone(created)) is created
    assert store.patch(JOB, "team-a", "a", {"metadata": {"labels": {"a": "1"}}}) is created
    assert store.resource_version == 1
    assert w.poll() == []


# ------------------------------------------------------------------ patch
def test_merge_patch_semantics(store: MemoryStore) -> None:
    store.create(job("a", labels={"keep": "1", "drop": "2"}))
    patched = store.patch(
        JOB,
        "team-a",
        "a",
        {
            "metadata": {"labels": {"drop": None, "add": "3"}, "annotations": {"n": "v"}},
            "spec": {
                "parallelism": 3,
                "template": {"spec": {"tolerations": [{"key": "spot", "operator": "Exists"}]}},
            },
        },
    )
    assert patched.metadata.labels == {"keep": "1", "add": "3"}
    assert patched.metadata.annotations == {"n": "v"}
    assert patched.spec.parallelism == 3
    tolerations = patched.spec.template.spec.tolerations
    assert [t.key for t in tolerations] == ["spot"]  # lists are replaced whole
    assert patched.spec.template.spec.containers[0].name == "main"  # siblings kept
    assert patched.metadata.generation == 2
    patched = store.patch(JOB, "team-a", "a", {"spec": {"suspend": None}})
    assert patched.spec.suspend is None


def test_patch_status_subresource(store: MemoryStore) -> None:
    store.create(job("a"))
    patched = store.patch(
        JOB, "team-a", "a", {"status": {"active": 4}, "spec": {"parallelism": 9}}, status=True
    )
    assert patched.status.active == 4
    assert patched.spec.parallelism == 1  # only the status is patched
    patched = store.patch(JOB, "team-a", "a", {"status": {"active": 8}, "spec": {"parallelism": 2}})
    assert patched.status.active == 4  # the main resource ignores status
    assert patched.spec.parallelism == 2


def test_patch_errors(store: MemoryStore) -> None:
    store.create(job("a"))
    with pytest.raises(Invalid) as err:
        store.patch(JOB, "team-a", "a", {"spec": {"parallelism": "many"}})
    (fe,) = err.value.errors
    assert isinstance(fe, FieldError)
    assert fe.path == "spec.parallelism"
    assert '"many"' in str(err.value)
    with pytest.raises(Invalid, match="unknown field"):
        store.patch(JOB, "team-a", "a", {"spec": {"bogus": 1}})
    with pytest.raises(Invalid, match="may not change"):
        store.patch(JOB, "team-a", "a", {"metadata": {"name": "b"}})
    assert store.resource_version == 1


def test_patch_does_not_keep_references_to_the_patch(store: MemoryStore) -> None:
    store.create(job("a"))
    labels = {"x": "1"}
    patch = {"metadata": {"labels": labels}}
    store.patch(JOB, "team-a", "a", patch)
    labels["x"] = "mutated"
    assert store.get(JOB, "team-a", "a").metadata.labels == {"x": "1"}


# ------------------------------------------------------------------ delete / finalizers / GC
def test_delete_without_finalizers(store: MemoryStore) -> None:
    store.create(job("a"))
    w = store.watch(JOB, 1)
    assert store.delete(JOB, "team-a", "a") is None
    with pytest.raises(NotFound):
        store.get(JOB, "team-a", "a")
    (ev,) = w.poll()
    assert ev.type == "DELETED" and ev.resource_version == "2"
    assert ev.object.metadata.resource_version == "2"


def test_delete_with_finalizers(store: MemoryStore) -> None:
    created = store.create(job("a", finalizers=["kuota.dev/guard", "example.com/other"]))
    deleting = store.delete(JOB, "team-a", "a")
    m = deleting.metadata
    assert m.deletion_timestamp == T0.replace(second=2)
    assert m.deletion_grace_period_seconds == 0
    assert m.generation == created.metadata.generation + 1
    assert store.get(JOB, "team-a", "a") is deleting
    assert store.delete(JOB, "team-a", "a") is deleting  # already deleting: no-op
    assert store.resource_version == 2
    more = clone(deleting)
    more.metadata.finalizers = ["kuota.dev/guard", "example.com/other", "example.com/new"]
    with pytest.raises(Invalid, match="no new finalizers"):
        store.update(more)
    fewer = clone(deleting)
    fewer.metadata.finalizers = ["example.com/other"]
    fewer.metadata.deletion_timestamp = None  # cannot be cleared by an update
    assert store.update(fewer).metadata.deletion_timestamp == m.deletion_timestamp
    w = store.watch(None, store.resource_version)
    last = store.patch(JOB, "team-a", "a", {"metadata": {"finalizers": None}})
    assert last.metadata.finalizers is None
    with pytest.raises(NotFound):
        store.get(JOB, "team-a", "a")
    assert kinds(w.poll()) == [("DELETED", "a", 4)]


def test_cascading_deletion(store: MemoryStore) -> None:
    owner = store.create(job("owner"))
    wl = store.create(make_workload("wl", owners=[owner]))
    grandchild = store.create(job("grandchild", owners=[wl]))
    guarded = store.create(job("guarded", owners=[owner], finalizers=["kuota.dev/guard"]))
    other = store.create(job("other"))
    shared = store.create(job("shared", owners=[owner, other]))
    unrelated = store.create(job("unrelated"))
    w = store.watch(None, store.resource_version)
    assert store.delete(JOB, "team-a", "owner") is None
    events = kinds(w.poll())
    assert [(t, n) for t, n, _ in events] == [
        ("DELETED", "owner"),
        ("MODIFIED", "guarded"),
        ("MODIFIED", "shared"),
        ("DELETED", "wl"),
        ("DELETED", "grandchild"),
    ]
    assert [rv for _, _, rv in events] == list(range(8, 13))
    with pytest.raises(NotFound):
        store.get(WORKLOAD, "team-a", "wl")
    with pytest.raises(NotFound):
        store.get(JOB, "team-a", "grandchild")
    assert store.get(JOB, "team-a", "guarded").metadata.deletion_timestamp is not None
    kept = store.get(JOB, "team-a", "shared")
    assert [r.uid for r in kept.metadata.owner_references] == [other.metadata.uid]
    assert store.get(JOB, "team-a", "unrelated") is unrelated
    del grandchild, guarded, shared


def test_dependents_wait_for_an_owner_with_finalizers(store: MemoryStore) -> None:
    owner = store.create(job("owner", finalizers=["kuota.dev/guard"]))
    store.create(make_workload("wl", owners=[owner]))
    store.delete(JOB, "team-a", "owner")
    assert store.get(WORKLOAD, "team-a", "wl")  # owner still exists (deleting)
    store.patch(JOB, "team-a", "owner", {"metadata": {"finalizers": []}})
    with pytest.raises(NotFound):
        store.get(WORKLOAD, "team-a", "wl")


# ------------------------------------------------------------------ watch
def test_watch_resume_gets_exactly_the_rest(store: MemoryStore) -> None:
    for i in range(10):
        store.create(job(f"j{i}"))
    everything = store.watch(None, 0).poll()
    assert [revision(e.resource_version) for e in everything] == list(range(1, 11))
    assert all(e.type == "ADDED" for e in everything)
    for n in (0, 3, 9, 10):
        got = store.watch(None, n).poll()
        assert [revision(e.resource_version) for e in got] == list(range(n + 1, 11))
    w = store.watch(None, 4)
    assert len(w.poll()) == 6
    assert w.poll() == []
    store.create(job("later"))
    assert kinds(w.poll()) == [("ADDED", "later", 11)]


def test_watch_filters_by_type_and_namespace(store: MemoryStore) -> None:
    jobs_a = store.watch(JOB, 0, namespace="team-a")
    all_wl = store.watch(WORKLOAD, 0)
    everything_b = store.watch(None, 0, namespace="team-b")
    store.create(job("a1"))
    store.create(job("b1", "team-b"))
    store.create(make_workload("w1"))
    store.create(cluster_queue("cq"))
    assert kinds(jobs_a.poll()) == [("ADDED", "a1", 1)]
    assert kinds(all_wl.poll()) == [("ADDED", "w1", 3)]
    assert kinds(everything_b.poll()) == [("ADDED", "b1", 2)]


def test_watch_bookmarks(store: MemoryStore) -> None:
    store.create(job("a"))
    w = store.watch(WORKLOAD, 1, bookmarks=True)
    plain = store.watch(WORKLOAD, 1)
    assert w.poll() == []  # the store did not move
    store.create(job("b"))
    store.create(job("c"))
    (bm,) = w.poll()
    assert bm.type == "BOOKMARK" and bm.object is None and bm.resource_version == "3"
    assert plain.poll() == []
    assert w.poll() == []
    store.create(make_workload("wl"))
    assert kinds(w.poll()) == [("ADDED", "wl", 4)]


def test_watch_gone_when_history_is_too_short(make_store: MakeStore) -> None:
    store = make_store(history=5)
    assert store.watch(None, 0).poll() == []  # since == current rv: nothing yet
    w = store.watch(None, 0)
    for i in range(8):
        store.create(job(f"j{i}"))
    with pytest.raises(Gone) as err:
        store.watch(None, 1)
    assert err.value.code == 410
    with pytest.raises(Gone):
        w.poll()  # fell behind: must list again
    assert [revision(e.resource_version) for e in store.watch(None, 3).poll()] == [4, 5, 6, 7, 8]
    with pytest.raises(Gone, match="newer"):
        store.watch(None, 9)


def test_open_watch_of_a_quiet_resource_outlives_the_history(make_store: MakeStore) -> None:
    # An open watch misses nothing while the history drops only other
    # resources' events (kube-apiserver's watch cache hands each watcher its
    # events as they come): a Gone here made the cluster bench's controller
    # and runner list every resource again (100 pages of 500 Workloads each)
    # whenever a quiet resource (a ClusterQueue) changed after 100,000 writes.
    store = make_store(history=5)
    w = store.watch(CLUSTER_QUEUE, 0)
    for i in range(8):
        store.create(job(f"j{i}"))
    store.create(cluster_queue("cq"))
    assert [(e.type, e.object.metadata.name) for e in w.poll()] == [("ADDED", "cq")]
    jobs = store.watch(JOB, store.resource_version)
    for i in range(8, 16):
        store.create(job(f"j{i}"))
    with pytest.raises(Gone):
        jobs.poll()  # (its own events were dropped: it must list again)


def test_watch_close(store: MemoryStore) -> None:
    w = store.watch(None, 0)
    w.close()
    store.create(job("a"))
    assert w.poll() == []


# ------------------------------------------------------------------ admission
def test_admission_hook_mutates_and_rejects(make_store: MakeStore) -> None:
    seen: list[tuple[Operation, str, bool]] = []

    def default_label(op: Operation, new: Any, old: Any | None) -> Any:
        seen.append((op, new.metadata.name, old is not None))
        new.metadata.labels = {**(new.metadata.labels or {}), "defaulted": "yes"}
        return new

    def reject_big(op: Operation, new: Any, old: Any | None) -> Any:
        if new.kind == "Job" and new.spec.parallelism > 10:
            raise Invalid(
                f'Job "{new.metadata.name}"',
                [FieldError("spec.parallelism", "Invalid value", "too big")],
            )
        return new

    store = make_store(admission=[default_label, reject_big])
    created = store.create(job("a"))
    assert created.metadata.labels == {"defaulted": "yes"}
    with pytest.raises(Invalid, match="too big"):
        store.create(job("big", parallelism=11))
    assert store.resource_version == 1
    # A refused create uses up no uid.
    assert uid_seq(store.create(job("b")).metadata.uid) == 2
    big = clone(created)
    big.spec.parallelism = 50
    with pytest.raises(Invalid):
        store.update(big)
    assert store.get(JOB, "team-a", "a").spec.parallelism == 1
    store.patch(JOB, "team-a", "a", {"status": {"active": 1}}, status=True)
    assert seen == [
        ("CREATE", "a", False),
        ("CREATE", "big", False),
        ("CREATE", "b", False),
        ("UPDATE", "a", True),
        ("UPDATE", "a", True),
    ]
    assert store.get(JOB, "team-a", "a").status.active == 1


def test_validating_hook_runs_last_and_may_skip_status_writes(make_store: MakeStore) -> None:
    """A validating hook sees the object the mutating hooks made, refuses by
    raising, and (with status_writes False) is not asked about status writes."""
    seen: list[tuple[Operation, str | None]] = []

    def default_label(op: Operation, new: Any, old: Any | None) -> Any:
        new.metadata.labels = {**(new.metadata.labels or {}), "defaulted": "yes"}
        return new

    class NoParallelismChange:
        validating = True
        status_writes = False
        operations = frozenset({"UPDATE"})

        def __call__(self, op: Operation, new: Any, old: Any | None) -> Any:
            seen.append((op, (new.metadata.labels or {}).get("defaulted")))
            if new.spec.parallelism != old.spec.parallelism:
                raise Invalid(
                    f'Job "{new.metadata.name}"',
                    [FieldError("spec.parallelism", "Invalid value", "field is immutable")],
                )
            return new

    store = make_store(admission=[NoParallelismChange(), default_label])
    created = store.create(job("a"))
    changed = clone(created)
    changed.spec.parallelism = 5
    with pytest.raises(Invalid, match="immutable"):
        store.update(changed)
    assert store.get(JOB, "team-a", "a").spec.parallelism == 1
    relabelled = clone(created)
    relabelled.metadata.labels = {"team": "x"}
    store.update(relabelled)
    store.patch(JOB, "team-a", "a", {"status": {"active": 1}}, status=True)
    # Both spec updates were checked after defaulting; the status write was not.
    assert seen == [("UPDATE", "yes"), ("UPDATE", "yes")]
    assert store.get(JOB, "team-a", "a").status.active == 1


def test_mutating_hook_may_skip_status_writes(make_store: MakeStore) -> None:
    """A mutating hook with status_writes False (a webhook whose rules name
    the resource, not its /status) sees creates and spec updates, never a
    status write, whichever way it is made; one without it sees them all."""
    skipping: list[Operation] = []
    all_writes: list[Operation] = []

    class SpecOnly:
        status_writes = False

        def __call__(self, op: Operation, new: Any, old: Any | None) -> Any:
            skipping.append(op)
            new.metadata.labels = {**(new.metadata.labels or {}), "seen": "yes"}
            return new

    def every(op: Operation, new: Any, old: Any | None) -> Any:
        all_writes.append(op)
        return new

    store = make_store(admission=[SpecOnly(), every])
    created = store.create(job("a"))
    relabelled = clone(created)
    relabelled.metadata.labels = {"team": "x"}
    store.update(relabelled)
    done = clone(store.get(JOB, "team-a", "a"))
    done.status = JobStatus(active=2)
    store.update_status(done)
    store.patch(JOB, "team-a", "a", {"status": {"succeeded": 1}}, status=True)
    assert skipping == ["CREATE", "UPDATE"]
    assert all_writes == ["CREATE", "UPDATE", "UPDATE", "UPDATE"]
    stored = store.get(JOB, "team-a", "a")
    assert (stored.status.active, stored.status.succeeded) == (2, 1)
    assert stored.metadata.labels == {"team": "x", "seen": "yes"}


def test_admission_hook_may_not_rename(make_store: MakeStore) -> None:
    def rename(op: Operation, new: Any, old: Any | None) -> Any:
        new.metadata.name = "other"
        return new

    store = make_store(admission=[rename])
    with pytest.raises(Invalid, match="may not change"):
        store.create(job("a"))


# ------------------------------------------------------------------ meta and batches
def test_meta_values(store: MemoryStore) -> None:
    assert store.get_meta("clock") is None
    store.set_meta("clock", T0)
    store.set_meta("state", {"cycle": 3, "names": ["a"]})
    assert store.get_meta("clock") == "2026-01-01T00:00:00Z"  # JSON values
    value = store.get_meta("state")
    value["cycle"] = 4  # a copy
    assert store.get_meta("state") == {"cycle": 3, "names": ["a"]}
    store.set_meta("state", None)
    assert store.get_meta("state", "gone") == "gone"
    assert store.resource_version == 0  # meta is not an object


def test_batch_nests_and_watchers_see_writes_at_once(store: MemoryStore) -> None:
    w = store.watch(None, 0)
    with store.batch():
        store.create(job("a"))
        with store.batch():
            store.create(job("b"))
        assert len(w.poll()) == 2
        with pytest.raises(AlreadyExists), store.batch():
            store.create(job("a"))
        store.create(job("c"))
    assert names(store.list(JOB).items) == [("team-a", "a"), ("team-a", "b"), ("team-a", "c")]


def test_clock_is_the_injected_one(make_store: MakeStore) -> None:
    clock = FakeClock(T0.replace(year=2030))
    store = make_store(clock=clock)
    assert store.create(job("a")).metadata.creation_timestamp.year == 2030


# ------------------------------------------------------------------ schema and kinds
def test_objects_that_break_the_schema_are_invalid(store: MemoryStore) -> None:
    wl = make_workload("w")
    wl.status = WorkloadStatus(conditions=[Condition(type="x" * 400, status="True")])
    with pytest.raises(Invalid) as err:
        store.create(wl)
    assert [e.path for e in err.value.errors] == ["status.conditions[0].type"]
    store.create(make_workload("w"))
    with pytest.raises(Invalid) as err:
        store.update_status(wl)
    assert [e.path for e in err.value.errors] == ["status.conditions[0].type"]
    assert store.resource_version == 1


def test_kinds_without_status(store: MemoryStore) -> None:
    wpc = decode(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "WorkloadPriorityClass",
            "metadata": {"name": "high"},
            "value": 10,
        }
    )
    store.create(wpc)
    with pytest.raises(NotFound, match="no status subresource"):
        store.update_status(wpc)
    with pytest.raises(NotFound, match="no status subresource"):
        store.patch(WPC, "", "high", {"value": 20}, status=True)
    assert store.patch(WPC, "", "high", {"value": 20}).metadata.generation == 2


def test_kind_registry() -> None:
    assert kind_info(POD).namespaced
    assert not kind_info(NODE).namespaced
    assert kind_info(JOB).namespaced and kind_info(JOB).has_status
    assert kind_info(WORKLOAD).namespaced
    assert not kind_info(CLUSTER_QUEUE).namespaced
    assert kind_info(WPC).spec_fields == ("value", "description")
    assert len(registered_kinds()) >= 14
    with pytest.raises(TypeError, match="not an API object"):
        register_kind(("example.com", "v1", "bads"), Condition, namespaced=False, kind="Bad")


def test_an_objects_resource_type_is_the_registered_tuple() -> None:
    """The store's tables are keyed by the tuple a kind was registered with;
    an object's resource type is that tuple itself, whatever its version."""
    wl = make_workload("w")
    assert resource_type(wl) == rtype_of(wl) == WORKLOAD
    assert resource_type(wl) is kind_info(WORKLOAD).rtype
    v1beta1 = msgspec.structs.replace(wl, api_version="kueue.x-k8s.io/v1beta1")
    assert resource_type(v1beta1) is kind_info(WORKLOAD).rtype
    unknown = msgspec.structs.replace(wl, kind="Gizmo")
    assert resource_type(unknown) == ("kueue.x-k8s.io", "v1beta2", "gizmos")
    with pytest.raises(NotFound, match='no matches for kind "Gizmo"'):
        MemoryStore(FakeClock()).create(unknown)


@pytest.mark.parametrize("seq", [1, 2**48 - 1, 2**48, 2**100 + 7])
def test_uids_are_the_sequence_in_uuid_form(seq: int) -> None:
    from kuota.store.memory import _uid

    uid = _uid(seq)
    assert [len(g) for g in uid.split("-")] == [8, 4, 4, 4, 12] or seq >= 2**128
    assert uid_seq(uid) == seq


# ------------------------------------------------------------------ the protocol's addressing
def test_resources_are_named_as_the_api_server_names_them() -> None:
    assert WORKLOAD == ("kueue.x-k8s.io", "v1beta2", "workloads")
    assert POD == ("", "v1", "pods")
    assert WPC == ("kueue.x-k8s.io", "v1beta2", "workloadpriorityclasses")
    assert resource_of("LeaderWorkerSet") == "leaderworkersets"
    assert resource_of("Topology") == "topologies"
    assert resource_of("Gateway") == "gateways"  # a vowel before the y
    assert resource_of("Ingress") == "ingresses"
    assert resource_of("Endpoints") == "endpoints"
    assert kind_info(WORKLOAD).kind == "Workload"


def test_every_version_of_a_kind_is_one_object(store: MemoryStore) -> None:
    created = store.create(make_workload("w"))
    v1beta1 = ("kueue.x-k8s.io", "v1beta1", "workloads")
    assert store.get(v1beta1, "team-a", "w") is created
    assert store.list(v1beta1).items == [created]
    w = store.watch(v1beta1, store.list(v1beta1).resource_version)
    store.patch(v1beta1, "team-a", "w", {"metadata": {"labels": {"a": "b"}}})
    (ev,) = w.poll()
    assert ev.type == "MODIFIED" and ev.object is store.get(WORKLOAD, "team-a", "w")
    with pytest.raises(NotFound):
        store.get(("kueue.x-k8s.io", "v1alpha9", "workloads"), "team-a", "w")


def test_resource_versions_are_opaque_strings(store: MemoryStore) -> None:
    """What a client may do with resourceVersions: hand back one the store
    gave (a precondition, a watch's start) and compare two for equality."""
    listed = store.list(JOB)
    assert isinstance(listed.resource_version, str)
    w = store.watch(JOB, listed.resource_version)  # a list, then a watch from it
    created = store.create(job("a"))
    store.create(make_workload("w"))  # another resource: not this watch's
    (ev,) = w.poll()
    assert ev.type == "ADDED" and ev.object is created
    assert isinstance(ev.resource_version, str)
    assert ev.resource_version == created.metadata.resource_version
    again = store.watch(JOB, ev.resource_version)  # resume after the event
    assert again.poll() == []
    assert store.list(JOB).resource_version != listed.resource_version
    rv = created.metadata.resource_version
    assert store.delete(JOB, "team-a", "a", resource_version=rv) is None
    for bogus in ("", "abc", "-1", "1.5"):
        with pytest.raises(BadRequest) as err:
            store.watch(JOB, bogus)
        assert err.value.code == 400


def test_watches_are_per_resource(store: MemoryStore) -> None:
    jobs = store.watch(JOB, store.list(JOB).resource_version)
    wls = store.watch(WORKLOAD, store.list(WORKLOAD).resource_version, bookmarks=True)
    store.create(job("a"))
    store.create(job("b"))
    assert [e.object.metadata.name for e in jobs.poll()] == ["a", "b"]
    (bm,) = wls.poll()  # nothing of its own: a bookmark to resume from
    assert bm.type == "BOOKMARK"
    store.create(make_workload("w"))
    resumed = store.watch(WORKLOAD, bm.resource_version)
    assert [e.object.metadata.name for e in resumed.poll()] == ["w"]
    assert [e.object.metadata.name for e in wls.poll()] == ["w"]
    assert jobs.poll() == []


# ------------------------------------------------------------------ read-only open
def test_read_only_open_reads_the_kept_state(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with open_store(state, FakeClock()) as store:
        store.create(job("a", labels={"x": "1"}))
        store.create(job("b", "team-b"))
        store.create(make_workload("w"))
        store.create(cluster_queue("cq"))
        store.set_meta("clock", "2026-01-01T00:00:00+00:00")
        want = {rt: [to_wire(o) for o in store.list(rt).items] for rt in (JOB, WORKLOAD)}
        wl = to_wire(store.get(WORKLOAD, "team-a", "w"))
    files = {p.name: p.read_bytes() for p in state.iterdir()}
    ro = open_readonly(state)
    assert {rt: [to_wire(o) for o in ro.list(rt).items] for rt in (JOB, WORKLOAD)} == want
    assert to_wire(ro.get(WORKLOAD, "team-a", "w")) == wl
    assert [o.metadata.name for o in ro.list(JOB, "team-b").items] == ["b"]
    assert [o.metadata.name for o in ro.list(JOB, label_selector="x=1").items] == ["a"]
    assert [o.metadata.name for o in ro.list(CLUSTER_QUEUE).items] == ["cq"]
    assert ro.get_meta("clock") == "2026-01-01T00:00:00+00:00"
    with pytest.raises(NotFound):
        ro.get(JOB, "team-a", "missing")
    assert ro.watch(JOB, ro.list(JOB).resource_version).poll() == []
    ro.close()
    # Reading changed nothing on disk (no snapshot, no segment, no lock holder).
    assert {p.name: p.read_bytes() for p in state.iterdir()} == files


def test_read_only_open_refuses_every_write(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with open_store(state, FakeClock()) as store:
        created = store.create(job("a"))
    with open_readonly(state) as ro:
        attempts = [
            lambda: ro.create(job("b")),
            lambda: ro.update(clone(created)),
            lambda: ro.update_status(clone(created)),
            lambda: ro.patch(JOB, "team-a", "a", {"metadata": {"labels": {"a": "b"}}}),
            lambda: ro.delete(JOB, "team-a", "a"),
        ]
        for attempt in attempts:
            with pytest.raises(MethodNotAllowed, match="read-only") as err:
                attempt()
            assert err.value.code == 405
        assert ro.get(JOB, "team-a", "a").metadata.labels is None
    with open_store(state, FakeClock()) as store:  # and the state is as it was
        assert to_wire(store.get(JOB, "team-a", "a")) == to_wire(created)


def test_read_only_open_reads_a_state_a_writer_holds_and_needs_a_state(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with open_store(state, FakeClock()) as writer:
        writer.create(job("a"))
        with open_readonly(state) as ro:  # no lock: what is acknowledged so far
            assert [o.metadata.name for o in ro.list(JOB).items] == ["a"]
        writer.create(job("b"))
        with open_readonly(state) as ro:
            assert [o.metadata.name for o in ro.list(JOB).items] == ["a", "b"]
    open_readonly(state).close()
    with pytest.raises(JournalError, match="no such state directory"):
        open_readonly(tmp_path / "nowhere")
    assert not (tmp_path / "nowhere").exists()
