"""A status write copies only what changed (codec.clone_over), and still stores
exactly what was written, private from the writer, checked against the schema."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from store_testlib import FakeClock
from store_testlib import workload as make_workload

from kuota.api.decode import decode_object
from kuota.api.hooks import dec_hook, enc_hook
from kuota.api.kueue.types import Admission, PodSetAssignment, RequeueState, WorkloadStatus
from kuota.api.kuotadev.bizrq import BizGroupStatus
from kuota.api.meta import Condition
from kuota.api.quantity import Quantity
from kuota.store import Invalid, MemoryStore
from kuota.store.codec import EditedMap, clone, clone_over
from kuota.store.resources import BIZRQ, WORKLOAD

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _status(
    cpu: str = "2", reason: str = "Admitted", requeues: int | None = None
) -> WorkloadStatus:
    return WorkloadStatus(
        conditions=[
            Condition(
                type="QuotaReserved",
                status="True",
                reason="QuotaReserved",
                message="ok",
                last_transition_time=T0,
            ),
            Condition(
                type="Admitted", status="True", reason=reason, message="in", last_transition_time=T0
            ),
        ],
        admission=Admission(
            cluster_queue="cq",
            pod_set_assignments=[
                PodSetAssignment(
                    name="workers",
                    flavors={"cpu": "default"},
                    resource_usage={"cpu": Quantity(cpu)},
                    count=4,
                )
            ],
        ),
        requeue_state=RequeueState(count=requeues) if requeues is not None else None,
    )


def _written(store: MemoryStore, status: WorkloadStatus) -> WorkloadStatus:
    wl = clone(store.get(WORKLOAD, "team-a", "w"))  # never write to it
    wl.status = status
    out: WorkloadStatus = store.update_status(wl).status
    return out


@settings(max_examples=60, deadline=None)
@given(
    before=st.tuples(
        st.sampled_from(["1", "2", "500m"]),
        st.sampled_from(["Admitted", "Again"]),
        st.none() | st.integers(0, 3),
    ),
    after=st.tuples(
        st.sampled_from(["1", "2", "500m"]),
        st.sampled_from(["Admitted", "Again"]),
        st.none() | st.integers(0, 3),
    ),
)
def test_a_status_write_stores_what_was_written_and_keeps_it_private(
    before: tuple[str, str, int | None], after: tuple[str, str, int | None]
) -> None:
    store = MemoryStore(FakeClock())
    store.create(make_workload("w"))
    _written(store, _status(*before))
    mine = _status(*after)
    stored = _written(store, mine)
    assert stored == _status(*after)
    # Nothing the writer holds is in the store: changing it changes nothing stored.
    assert mine.conditions is not None and mine.admission is not None
    mine.conditions[0].message = "changed by the writer"
    mine.admission.pod_set_assignments[0].count = 99
    again = store.get(WORKLOAD, "team-a", "w").status
    assert again == _status(*after)


def test_unchanged_parts_are_shared_with_the_stored_version_changed_ones_are_copied() -> None:
    old = clone(_status())
    new = _status(reason="Again")
    out = clone_over(new, old)
    assert out == new
    assert out.admission is old.admission  # equal: the stored value is taken
    assert out.conditions is not new.conditions and out.conditions is not old.conditions
    assert clone_over(_status(), old) is old  # nothing changed: nothing copied


def test_a_bad_changed_field_is_invalid_at_its_full_path() -> None:
    store = MemoryStore(FakeClock())
    store.create(make_workload("w"))
    _written(store, _status())
    bad = _status()
    assert bad.admission is not None
    bad.admission.pod_set_assignments[0].count = -1
    with pytest.raises(Invalid) as err:
        _written(store, bad)
    assert [e.path for e in err.value.errors] == ["status.admission.podSetAssignments[0].count"]
    with pytest.raises(msgspec.ValidationError, match=r"at `\$\.requeueState\.count`"):
        clone_over(_status(requeues=-1), _status(requeues=1))


def test_a_mutating_hook_changes_its_own_copy_not_the_stored_version() -> None:
    """A hook that sees status writes gets a whole copy: what it changes in place
    is not shared with the version already stored (and already watched)."""

    def hook(op: str, new: Any, old: Any) -> Any:
        st = getattr(new, "status", None)
        again = st is not None and st.conditions and st.conditions[1].reason == "Again"
        if op == "UPDATE" and again and st.admission is not None:
            st.admission.cluster_queue = "set-by-the-hook"
        return new

    store = MemoryStore(FakeClock(), [hook])
    store.create(make_workload("w"))
    first = _written(store, _status())
    second = _written(store, _status(reason="Again"))  # the same admission as the first
    assert second.admission is not None and first.admission is not None
    assert second.admission.cluster_queue == "set-by-the-hook"
    assert first.admission.cluster_queue == "cq"


def test_a_bad_changed_field_of_the_wrong_type_is_invalid_at_the_field() -> None:
    """An error at the field's own value (not inside it) still names the field."""
    store = MemoryStore(FakeClock())
    store.create(make_workload("w"))
    bad = _status()
    bad.admission = "not an admission"  # type: ignore[assignment]
    with pytest.raises(Invalid) as err:
        _written(store, bad)
    assert [e.path for e in err.value.errors] == ["status.admission"]


def _conditions_status(*reasons: str) -> WorkloadStatus:
    return WorkloadStatus(
        conditions=[
            Condition(
                type=f"Type{i}",
                status="True",
                reason=reason,
                message="m",
                last_transition_time=T0,
            )
            for i, reason in enumerate(reasons)
        ]
    )


def test_a_condition_write_copies_the_changed_conditions_and_keeps_the_others() -> None:
    store = MemoryStore(FakeClock())
    store.create(make_workload("w"))
    first = _written(store, _conditions_status("A", "B", "C"))
    mine = _conditions_status("A", "Changed", "C", "New")
    second = _written(store, mine)
    assert second == _conditions_status("A", "Changed", "C", "New")
    assert first.conditions is not None and second.conditions is not None
    # The unchanged conditions are the stored ones; the others are copies.
    assert second.conditions[0] is first.conditions[0]
    assert second.conditions[2] is first.conditions[2]
    assert mine.conditions is not None
    assert second.conditions[1] is not mine.conditions[1]
    assert second.conditions[3] is not mine.conditions[3]
    mine.conditions[1].reason = "changed by the writer"
    mine.conditions[3].reason = "changed by the writer"
    again = store.get(WORKLOAD, "team-a", "w").status
    assert again == _conditions_status("A", "Changed", "C", "New")
    assert first == _conditions_status("A", "B", "C")  # the earlier version is untouched


def test_an_invalid_changed_condition_is_named_at_its_own_place() -> None:
    store = MemoryStore(FakeClock())
    store.create(make_workload("w"))
    _written(store, _conditions_status("A", "B", "C"))
    with pytest.raises(Invalid) as err:
        _written(store, _conditions_status("A", "B", "x" * 1025))
    assert [e.path for e in err.value.errors] == ["status.conditions[2].reason"]


def test_conditions_beyond_the_list_limit_are_invalid_though_each_is_valid() -> None:
    """Kueue's Workload takes at most 16 conditions: one more over 16 stored
    ones is refused, though the one new condition alone would convert."""
    store = MemoryStore(FakeClock())
    store.create(make_workload("w"))
    sixteen = [f"R{i}" for i in range(16)]
    _written(store, _conditions_status(*sixteen))
    with pytest.raises(Invalid) as err:
        _written(store, _conditions_status(*sixteen, "R16"))
    assert [e.path for e in err.value.errors] == ["status.conditions"]


def test_a_quantity_written_as_text_is_stored_as_a_quantity() -> None:
    """A status without quantities is copied without the quantity hooks; a
    later one whose quantity is text still gets it decoded."""
    store = MemoryStore(FakeClock())
    store.create(make_workload("w"))
    _written(store, _conditions_status("A"))
    status = _status()
    assert status.admission is not None
    status.admission.pod_set_assignments[0].resource_usage = {"cpu": "3"}  # type: ignore[dict-item]
    stored = _written(store, status)
    assert stored.admission is not None
    usage = stored.admission.pod_set_assignments[0].resource_usage
    assert usage == {"cpu": Quantity("3")} and isinstance(usage["cpu"], Quantity)


def _by_conversion(c: Condition) -> Condition | str:
    """What converting the condition (the reference copy) stores, or the path
    of what it refuses."""
    try:
        return msgspec.convert(msgspec.to_builtins(c, builtin_types=(datetime,)), Condition)
    except msgspec.ValidationError as err:
        return str(err).rsplit("$.", 1)[-1].rstrip("`")


@settings(max_examples=150, deadline=None)
@given(
    ctype=st.sampled_from(["Type1", "x" * 316, "x" * 317, "", 5]),
    status=st.sampled_from(["True", "False", "Unknown", "true", "Maybe", None]),
    reason=st.sampled_from(["R", "", "r" * 1024, "r" * 1025, b"R"]),
    message=st.sampled_from(["m", "m" * 32768, "m" * 32769]),
    ltt=st.sampled_from([None, T0, datetime(2026, 1, 1), "2026-01-02T00:00:00Z", 3]),
    generation=st.sampled_from([None, 0, 7, -1, True]),
)
def test_a_new_condition_is_stored_or_refused_as_converting_it_would(
    ctype: Any, status: Any, reason: Any, message: str, ltt: Any, generation: Any
) -> None:
    """A status write copies its new conditions by a check of their fields
    and a replace when they are plainly valid; whatever the fields, what is
    stored (values and types) or refused (at which field) is what converting
    the condition gives."""
    store = MemoryStore(FakeClock())
    store.create(make_workload("w"))
    _written(store, _conditions_status("A"))
    new = Condition(type="Type0", status="True", reason="A", message="m", last_transition_time=T0)
    cond = Condition(type=ctype, status=status, reason=reason, message=message)
    cond.last_transition_time = ltt
    cond.observed_generation = generation
    expected = _by_conversion(cond)
    try:
        stored = _written(store, WorkloadStatus(conditions=[new, cond]))
    except Invalid as err:
        assert isinstance(expected, str), (expected, err)
        (e,) = err.errors
        assert e.path == f"status.conditions[1].{expected}", (e.path, expected)
        return
    assert not isinstance(expected, str), expected
    assert stored.conditions is not None
    got = stored.conditions[1]
    assert got == expected and got is not cond
    assert [type(v) for v in msgspec.structs.astuple(got)] == [
        type(v) for v in msgspec.structs.astuple(expected)
    ]


# ------------------------------------------------------------- maps of quantities
# A bizrq's status holds maps of fifty quantities; charging a request changes a
# few. The write keeps the stored values of the keys it did not change.


def _group_status(**used: Quantity) -> BizGroupStatus:
    keys = {f"limits.nvidia.com/gpu.M{i:02d}": Quantity.from_int(i) for i in range(50)}
    keys.update(used)
    return BizGroupStatus(hard=dict(keys), used=dict(keys), self_used=dict(keys))


def test_a_map_write_keeps_the_stored_values_it_did_not_change() -> None:
    old = clone(_group_status())
    assert old.used is not None
    new = BizGroupStatus(hard=old.hard, used=dict(old.used), self_used=old.self_used)
    assert new.used is not None
    new.used["limits.nvidia.com/gpu.M07"] = Quantity.from_milli(8_500)
    out = clone_over(new, old)
    assert out == new
    assert out.used is not None
    assert out.used is not new.used and out.used is not old.used  # private from both
    assert out.used["limits.nvidia.com/gpu.M08"] is old.used["limits.nvidia.com/gpu.M08"]
    assert str(out.used["limits.nvidia.com/gpu.M07"]) == "8500m"
    assert list(out.used) == list(new.used)  # the writer's order
    new.used["limits.nvidia.com/gpu.M07"] = Quantity.from_int(1)
    assert str(out.used["limits.nvidia.com/gpu.M07"]) == "8500m"


def test_an_equal_map_keeps_the_stored_one_even_in_another_format() -> None:
    """As for any field equal to the stored one: the stored value is kept (an
    equal Quantity may print otherwise: 1Ki is 1024)."""
    old = clone(_group_status(**{"memory": Quantity("1Ki")}))
    assert old.used is not None
    used = dict(old.used)
    used["memory"] = Quantity.from_int(1024)
    out = clone_over(BizGroupStatus(hard=old.hard, used=used, self_used=old.self_used), old)
    assert out is old
    assert out.used is not None and str(out.used["memory"]) == "1Ki"


def test_a_bad_changed_map_entry_is_refused_and_nothing_is_written() -> None:
    store = MemoryStore(FakeClock())
    store.create(
        decode_object(
            {
                "apiVersion": "kuota.dev/v1alpha1",
                "kind": "BizGroupResourceQuota",
                "metadata": {"name": "g"},
                "spec": {"hard": {"pods": "10"}},
            }
        ).obj
    )
    cur = store.get(BIZRQ, "", "g")
    store.update_status(msgspec.structs.replace(cur, status=_group_status()))
    cur = store.get(BIZRQ, "", "g")
    assert cur.status is not None and cur.status.used is not None
    used = dict(cur.status.used)
    used["limits.nvidia.com/gpu.M03"] = "three"  # not a quantity
    bad = msgspec.structs.replace(cur.status, used=used)
    with pytest.raises(Invalid) as err:
        store.update_status(msgspec.structs.replace(cur, status=bad))
    # (msgspec names a map's value "[...]", as the whole map's conversion did.)
    assert [e.path for e in err.value.errors] == ["status.used[...]"]
    assert store.get(BIZRQ, "", "g").status == cur.status  # nothing written


@settings(max_examples=300, deadline=None)
@given(
    nanos=st.integers(-(10**31), 10**31) | st.integers(-(10**12), 10**12),
    fmt=st.sampled_from(["DecimalSI", "BinarySI", "DecimalExponent"]),
)
def test_a_quantity_the_copier_shares_is_what_the_round_trip_gives(nanos: int, fmt: str) -> None:
    """The copier keeps a wire-stable quantity itself instead of decoding its
    text: both must be the same value, format and text."""
    q = Quantity.from_nanos(nanos, fmt)
    back = msgspec.json.decode(msgspec.json.encode(q, enc_hook=enc_hook), type=Quantity,
                               dec_hook=dec_hook)  # fmt: skip
    if q.wire_stable():
        assert (back.nanos, back.format, str(back)) == (q.nanos, q.format, str(q))
    copied = clone_over(BizGroupStatus(used={"k": q}), BizGroupStatus(used={"k": back}))
    assert copied.used is not None
    assert (copied.used["k"].nanos, str(copied.used["k"])) == (back.nanos, str(back))


# ---------------------------------------------------- edited maps (codec.EditedMap)
# A writer that sets a few entries of a stored map says which (EditedMap): the
# write checks and copies only those while the stored map is still its base,
# and reads the whole map otherwise. Either way the store holds what was written.


def _bizrq_store() -> MemoryStore:
    store = MemoryStore(FakeClock())
    store.create(
        decode_object(
            {
                "apiVersion": "kuota.dev/v1alpha1",
                "kind": "BizGroupResourceQuota",
                "metadata": {"name": "g"},
                "spec": {"hard": {"pods": "10"}},
            }
        ).obj
    )
    cur = store.get(BIZRQ, "", "g")
    store.update_status(msgspec.structs.replace(cur, status=_group_status()))
    return store


def _edited(cur: Any, **changes: Quantity) -> Any:
    st_ = cur.status
    used = EditedMap(st_.used, dict(changes))
    return msgspec.structs.replace(cur, status=msgspec.structs.replace(st_, used=used))


M07, M08, M09 = (f"limits.nvidia.com/gpu.M{i:02d}" for i in (7, 8, 9))


def test_an_edited_map_over_the_stored_one_stores_it_sharing_the_rest() -> None:
    store = _bizrq_store()
    cur = store.get(BIZRQ, "", "g")
    mine = _edited(cur, **{M07: Quantity.from_milli(8_500)})
    stored = store.update_status(mine).status
    assert stored.used == mine.status.used and type(stored.used) is dict
    assert str(stored.used[M07]) == "8500m"
    assert stored.used[M08] is cur.status.used[M08]
    assert list(stored.used) == list(cur.status.used)
    mine.status.used[M07] = Quantity.from_int(1)  # the writer's map, not the store's
    assert str(store.get(BIZRQ, "", "g").status.used[M07]) == "8500m"


def test_an_edited_map_over_a_stale_base_is_stored_whole_as_written() -> None:
    """Another writer changed M08 after this one read: written over the newer
    version, the map is read whole, so M08 is what this writer's map says
    (its own edit, M07, sets the value both versions hold)."""
    store = _bizrq_store()
    stale = store.get(BIZRQ, "", "g")
    store.update_status(_edited(stale, **{M08: Quantity.from_int(99)}))
    newer = store.get(BIZRQ, "", "g")
    mine = _edited(stale, **{M07: stale.status.used[M07]})
    mine.metadata = newer.metadata  # written over the newer version (no conflict)
    stored = store.update_status(mine).status
    assert stored.used == stale.status.used
    assert stored.used[M08] == Quantity.from_int(8)


def test_an_edited_map_changed_after_it_was_made_is_checked_and_stored_as_it_is() -> None:
    store = _bizrq_store()
    cur = store.get(BIZRQ, "", "g")
    mine = _edited(cur, **{M07: Quantity.from_int(70)})
    mine.status.used[M09] = Quantity.from_int(90)  # not among the edits it was made with
    mine.status.used.pop(M08)
    stored = store.update_status(mine).status
    assert stored.used == mine.status.used
    assert stored.used[M09] == Quantity.from_int(90) and M08 not in stored.used
    again = _edited(store.get(BIZRQ, "", "g"), **{M07: Quantity.from_int(71)})
    again.status.used[M09] = "ninety"  # checked as any changed entry
    with pytest.raises(Invalid) as err:
        store.update_status(again)
    assert [e.path for e in err.value.errors] == ["status.used[...]"]
    assert store.get(BIZRQ, "", "g").status.used == stored.used


def test_a_bad_edited_entry_is_refused_at_its_map_and_nothing_is_written() -> None:
    store = _bizrq_store()
    cur = store.get(BIZRQ, "", "g")
    with pytest.raises(Invalid) as err:
        store.update_status(_edited(cur, **{M07: "seven"}))  # type: ignore[arg-type]
    assert [e.path for e in err.value.errors] == ["status.used[...]"]
    assert store.get(BIZRQ, "", "g").status == cur.status
