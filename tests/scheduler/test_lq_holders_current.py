"""Snapshot.holders_current, which a LocalQueue's status asks every instant
it changes (are its quota holders the current infos of their workloads?),
looks again only at the holders changed since its last answer: it must give
the answer of a full look after any sequence of holds, releases, re-files
and stale re-adds (a search's put-back of an info filed again since)."""

from __future__ import annotations

import random

import pytest

from kuota.api.kueue import types as kt
from kuota.api.meta import ObjectMeta
from kuota.quota.tree import ClusterQueueNode, QuotaTree
from kuota.quota.workload import PodSetResources, WorkloadInfo
from kuota.scheduler.cache import ClusterQueueState, CurrentInfos, Snapshot

QUEUES = ("ns/lq-a", "ns/lq-b")


def _info(name: str, queue: str) -> WorkloadInfo:
    wl = kt.Workload(
        metadata=ObjectMeta(name=name, namespace="ns"),
        spec=kt.WorkloadSpec(queue_name=queue.split("/")[1], pod_sets=[]),
    )
    ps = PodSetResources("main", 1, {"cpu": 1000}, {"cpu": "default"})
    return WorkloadInfo(wl, [ps], 0, "cq")


def _full_look(snap: Snapshot, lq: str, infos: dict[str, WorkloadInfo]) -> bool:
    held = snap.by_lq.get(lq) or {}
    return all(infos.get(k, i) is i for k, i in held.items())


@pytest.mark.parametrize("seed", range(20))
def test_holders_current_agrees_with_a_full_look(seed: int) -> None:
    rnd = random.Random(seed)
    snap = Snapshot(QuotaTree(), {"cq": ClusterQueueState("cq", ClusterQueueNode("cq"))}, {})
    infos: dict[str, WorkloadInfo] = CurrentInfos(snap)
    names = [f"w{i}" for i in range(12)]
    queue_of = {n: QUEUES[i % 2] for i, n in enumerate(names)}
    old: dict[str, WorkloadInfo] = {}  # an earlier info of each workload
    for _ in range(400):
        n = rnd.choice(names)
        key = f"ns/{n}"
        op = rnd.randrange(6)
        if op == 0:  # filed as a holder (the core: info set, then held)
            if key in infos:
                old[key] = infos[key]
            if key in snap.holders:
                snap.remove_workload(infos.get(key) or snap.holders[key].workloads[key])
            infos[key] = _info(n, queue_of[n])
            snap.add_workload(infos[key])
        elif op == 1 and key in snap.holders:  # released
            snap.remove_workload(snap.holders[key].workloads[key])
        elif op == 2:  # filed again without touching the snapshot (pending)
            if key in infos:
                old[key] = infos[key]
            infos[key] = _info(n, queue_of[n])
        elif op == 3 and key in old and key in snap.holders:  # a stale put-back
            snap.remove_workload(snap.holders[key].workloads[key])
            snap.add_workload(old[key])
        elif op == 4 and key in infos:  # forgotten
            infos.pop(key)
        else:
            for lq in QUEUES:  # a status write
                assert snap.holders_current(lq, infos) == _full_look(snap, lq, infos)
    for lq in QUEUES:
        assert snap.holders_current(lq, infos) == _full_look(snap, lq, infos)


def test_current_infos_refuse_untracked_writes() -> None:
    snap = Snapshot(QuotaTree(), {}, {})
    infos = CurrentInfos(snap)
    with pytest.raises(TypeError):
        infos.update({})
    with pytest.raises(TypeError):
        infos.setdefault("ns/x", _info("x", QUEUES[0]))
