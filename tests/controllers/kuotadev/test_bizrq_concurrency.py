"""Concurrent requests against one nearly full group never overspend and
nothing is charged twice: the Reject webhook (as a webhook server would run
it, outside the API server) charges through the store protocol with
compare-and-set, and each store call is one request of its own, so threads
interleave between the read and the write. Many rounds, random interleavings
and stale reads (an informer cache that lags)."""

from __future__ import annotations

import random
import threading
import time
from datetime import UTC, datetime
from typing import Any

import pytest

from kuota.api.decode import decode_object
from kuota.controllers.kuotadev.bizrq.object_webhook import ObjectQuotaWebhook
from kuota.store import Invalid, MemoryStore, clone
from kuota.store.resources import BIZRQ

START = datetime(2026, 1, 1, tzinfo=UTC)


class _RequestStore:
    """The memory store behind a lock per request (as an API server
    serializes each write), with a random pause after every read so that
    concurrent requests interleave, and, with ``stale``, reads that sometimes
    return an older copy (a lagging cache)."""

    def __init__(self, store: MemoryStore, rng: random.Random, stale: bool) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._rng = rng
        self._stale = stale
        self._old: dict[str, Any] = {}

    def get(self, rtype: Any, namespace: str, name: str) -> Any:
        with self._lock:
            cur = self._store.get(rtype, namespace, name)
            old = self._old.get(name)
            self._old[name] = cur
            pick = old if self._stale and old is not None and self._rng.random() < 0.3 else cur
        time.sleep(self._rng.random() * 2e-4)
        return clone(pick)

    def update_status(self, obj: Any) -> Any:
        with self._lock:
            return self._store.update_status(obj)


def _decoded(raw: dict[str, Any]) -> Any:
    doc = decode_object(raw)
    assert not doc.errors, doc.errors
    return doc.obj


def _group(hard_gpus: int) -> Any:
    return _decoded(
        {
            "apiVersion": "kuota.dev/v1alpha1",
            "kind": "BizGroupResourceQuota",
            "metadata": {"name": "ml"},
            "spec": {"hard": {"limits.nvidia.com/gpu": str(hard_gpus), "pods": "1000"}},
        }
    )


def _job(i: int, gpus: int) -> Any:
    return _decoded(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": f"job-{i}",
                "namespace": "default",
                "labels": {"biz.group.resource.quota": "ml"},
            },
            "spec": {
                "parallelism": 1,
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [
                            {
                                "name": "c",
                                "image": "x",
                                "resources": {"limits": {"nvidia.com/gpu": str(gpus)}},
                            }
                        ],
                    }
                },
            },
        }
    )


def _round(seed: int, stale: bool) -> tuple[int, int, int, int]:
    rng = random.Random(seed)
    hard = rng.randint(5, 20)
    mem = MemoryStore(lambda: START)
    mem.create(_group(hard))
    store = _RequestStore(mem, rng, stale)
    hook = ObjectQuotaWebhook(lambda: store)  # type: ignore[arg-type,return-value]
    jobs = [_job(i, rng.randint(1, 4)) for i in range(rng.randint(8, 16))]
    admitted: list[int] = []
    refused: list[int] = []
    start = threading.Barrier(len(jobs))

    def request(job: Any) -> None:
        gpus = job.spec.template.spec.containers[0].resources.limits["nvidia.com/gpu"].value()
        start.wait()
        try:
            hook("CREATE", job, None)
        except Invalid:
            refused.append(gpus)
        else:
            admitted.append(gpus)

    threads = [threading.Thread(target=request, args=(j,)) for j in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    status = mem.get(BIZRQ, "", "ml").status
    used = status.used["limits.nvidia.com/gpu"].value()
    pods = status.used["pods"].value()
    return hard, sum(admitted), used, pods - len(admitted)


@pytest.mark.parametrize("stale", [False, True], ids=["fresh-reads", "stale-reads"])
def test_concurrent_requests_never_overspend_nor_double_charge(stale: bool) -> None:
    full_rounds = 0
    for seed in range(40):
        hard, admitted, used, extra_pods = _round(seed, stale)
        assert admitted <= hard, f"seed {seed}: admitted {admitted} GPUs over hard {hard}"
        assert used == admitted, f"seed {seed}: status used {used}, admitted {admitted}"
        assert extra_pods == 0, f"seed {seed}: pods charged twice or lost"
        full_rounds += admitted > hard - 4  # the group really was filled up
    assert full_rounds > 20
