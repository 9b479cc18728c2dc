"""with_condition: a condition set on a copy of a stored Workload, the
stored object left as it was (informer caches share it), and no copy at all
when nothing would change."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from kuota.api.conditions import set_condition, with_condition
from kuota.api.k8s import PodTemplateSpec
from kuota.api.kueue import types as kt
from kuota.api.meta import Condition, ObjectMeta
from kuota.store.codec import clone

T0 = datetime(2026, 1, 1, tzinfo=UTC)
TYPES = ["Admitted", "PodsReady", "Finished"]
cond = st.builds(
    lambda t, s, r, m, dt: Condition(
        type=t, status=s, reason=r, message=m, last_transition_time=T0 + timedelta(seconds=dt)
    ),
    st.sampled_from(TYPES),
    st.sampled_from(["True", "False"]),
    st.sampled_from(["A", "B"]),
    st.sampled_from(["m", "n"]),
    st.integers(0, 9),
)


def _wl(conds: list[Condition] | None, with_status: bool) -> kt.Workload:
    return kt.Workload(
        metadata=ObjectMeta(name="w", namespace="ns", generation=3),
        spec=kt.WorkloadSpec(
            pod_sets=[kt.PodSet(name="main", count=1, template=PodTemplateSpec())]
        ),
        status=kt.WorkloadStatus(conditions=conds) if with_status else None,
    )


@given(
    st.lists(cond, max_size=4),
    st.booleans(),
    st.sampled_from(TYPES),
    st.sampled_from(["True", "False"]),
    st.sampled_from(["A", "B"]),
    st.sampled_from(["m", "n"]),
)
def test_with_condition_is_set_condition_on_a_copy(
    conds: list[Condition], with_status: bool, ctype: str, status: str, reason: str, msg: str
) -> None:
    stored = _wl(conds or None, with_status)
    before = clone(stored)
    now = T0 + timedelta(hours=1)
    got = with_condition(stored, ctype, status, reason, msg, now)
    expect = clone(stored)
    changed = set_condition(expect, ctype, status, reason, msg, now)
    assert stored == before  # the stored object is untouched
    if not changed:
        assert got is None
    else:
        assert got == expect
        assert got.spec is stored.spec  # the rest is shared, not copied
