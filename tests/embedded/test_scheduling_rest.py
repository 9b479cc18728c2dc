"""The embedded scheduler keeps taking heads while its queues have any, as
Kueue's does: a workload that fits is admitted at the instant it can be, not
left behind a few heads that do not fit until something else wakes the
scheduler. (It rested after three quiet cycles; what a resumed run tried
first then differed from the uninterrupted run, and so did its decisions.)"""

from __future__ import annotations

from typing import Any

from kuota.store.resources import WORKLOAD as WL

from .world import T0, cluster_queue, control_plane, flavor, job, local_queue, namespace, node


def _admitted(cp: Any) -> dict[str, bool]:
    out = {}
    for wl in cp.store.list(WL).items:
        job_name = wl.metadata.owner_references[0].name
        out[job_name] = wl.status is not None and wl.status.admission is not None
    return out


def test_a_fitting_workload_behind_many_that_do_not_fit_is_admitted_at_once() -> None:
    cp = control_plane()
    big = [job("team", f"big-{i}", 3) for i in range(6)]  # never fit beside the one running
    cp.create(
        [
            namespace("team"),
            flavor("a100", {"gpu": "a100"}),
            cluster_queue("cq", {"a100": 4}),
            local_queue("team", "main", "cq"),
            node("n1", 8, {"gpu": "a100"}),
            job("team", "running", 2, duration=None),
        ]
    )
    cp.run(until=T0)
    cp.create([*big, job("team", "small", 1)])
    cp.run(until=T0)
    admitted = _admitted(cp)
    assert admitted["running"] and admitted["small"]
    assert not any(admitted[f"big-{i}"] for i in range(6))
