"""The Reject webhook decides on the group's stored version, whoever wrote it
last: a check that follows another writer's status write (the controller's
resync repairing drift) or a spec change (hard raised) sees those numbers, not
the ones the webhook itself wrote before (its per-version ledger)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest

from kuota.api.decode import decode_object
from kuota.api.quantity import Quantity
from kuota.controllers.kuotadev.bizrq.object_webhook import ObjectQuotaWebhook
from kuota.store import Invalid, MemoryStore, clone
from kuota.store.resources import BIZRQ

START = datetime(2026, 1, 1, tzinfo=UTC)
GPU = "limits.nvidia.com/gpu"


def _decoded(raw: dict[str, Any]) -> Any:
    doc = decode_object(raw)
    assert not doc.errors, doc.errors
    return doc.obj


def _group(gpus: str) -> Any:
    return _decoded(
        {
            "apiVersion": "kuota.dev/v1alpha1",
            "kind": "BizGroupResourceQuota",
            "metadata": {"name": "ml"},
            # (Keys a request leaves alone, as in most groups.)
            "spec": {"hard": {GPU: gpus, "pods": "100", "requests.cpu": "8", "limits.cpu": "8"}},
        }
    )


def _job(name: str, gpus: int) -> Any:
    return _decoded(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": name,
                "namespace": "default",
                "labels": {"biz.group.resource.quota": "ml"},
            },
            "spec": {
                "parallelism": gpus,
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [
                            {
                                "name": "c",
                                "image": "x",
                                "resources": {"limits": {"nvidia.com/gpu": "1"}},
                            }
                        ],
                    }
                },
            },
        }
    )


def _set_used(store: MemoryStore, gpus: int) -> None:
    """Another writer's status write (as the resync's repair): used and selfUsed."""
    cur = store.get(BIZRQ, "", "ml")
    st = cur.status
    used = dict(st.used) | {GPU: Quantity.from_int(gpus)}
    self_used = dict(st.self_used) | {GPU: Quantity.from_int(gpus)}
    new = msgspec.structs.replace(st, used=used, self_used=self_used)
    store.update_status(msgspec.structs.replace(cur, status=new))


def _used(store: MemoryStore) -> int:
    return store.get(BIZRQ, "", "ml").status.used[GPU].value()  # type: ignore[no-any-return]


def test_checks_after_other_writers_use_the_stored_numbers() -> None:
    ref: list[MemoryStore] = []
    hook = ObjectQuotaWebhook(lambda: ref[0])
    store = MemoryStore(lambda: START)
    ref.append(store)
    store.create(_group("4"))
    hook("CREATE", _job("a", 2), None)
    hook("CREATE", _job("b", 1), None)
    assert _used(store) == 3

    _set_used(store, 4)  # drift repaired upward: full
    with pytest.raises(Invalid, match=r"bizrq ml: limits.nvidia.com/gpu needs 1, 0 of 4 left"):
        hook("CREATE", _job("c", 1), None)
    assert _used(store) == 4

    _set_used(store, 0)  # and downward: room for all 4
    hook("CREATE", _job("d", 4), None)
    assert _used(store) == 4

    cur = clone(store.get(BIZRQ, "", "ml"))
    cur.spec = _group("6").spec  # hard raised by a spec update
    store.update(cur)
    hook("CREATE", _job("e", 2), None)
    assert _used(store) == 6
    with pytest.raises(Invalid, match=r"needs 1, 0 of 6 left"):
        hook("CREATE", _job("f", 1), None)
