"""The MultiKueue AdmissionCheck's Active condition over the store protocol,
translated from Kueue's ``pkg/controller/admissionchecks/multikueue/
admissioncheck_test.go`` (TestReconcile, one case per test here): the
check's MultiKueueConfig and the Active condition of its clusters decide
Active, SomeActiveClusters or NoUsableClusters, with Kueue's messages."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kuota.api.decode import decode_object
from kuota.controllers.multikueue import MultiKueueCheckActivity
from kuota.runtime.clock import VirtualClock
from kuota.runtime.manager import Manager
from kuota.store.memory import MemoryStore
from kuota.store.resources import ADMISSION_CHECK

T0 = datetime(2026, 1, 1, tzinfo=UTC)
G = "kueue.x-k8s.io/v1beta2"


def _obj(raw: dict[str, Any]) -> Any:
    doc = decode_object(raw)
    assert not doc.errors, doc.errors
    return doc.obj


def check(controller: str = "kueue.x-k8s.io/multikueue", config: str = "config1") -> Any:
    return _obj(
        {
            "apiVersion": G,
            "kind": "AdmissionCheck",
            "metadata": {"name": "ac1"},
            "spec": {
                "controllerName": controller,
                "parameters": {
                    "apiGroup": "kueue.x-k8s.io",
                    "kind": "MultiKueueConfig",
                    "name": config,
                },
            },
        }
    )


def config(*clusters: str) -> Any:
    return _obj(
        {
            "apiVersion": G,
            "kind": "MultiKueueConfig",
            "metadata": {"name": "config1"},
            "spec": {"clusters": list(clusters)},
        }
    )


def cluster(name: str) -> Any:
    return _obj(
        {
            "apiVersion": G,
            "kind": "MultiKueueCluster",
            "metadata": {"name": name},
            "spec": {"clusterSource": {"kubeConfig": {"location": f"{name}-secret"}}},
        }
    )


def active_condition(objs: list[Any], active: set[str]) -> Any:
    store = MemoryStore(lambda: T0)
    for o in objs:
        made = store.create(o)
        if o.kind == "MultiKueueCluster":
            made.status = _status(o.metadata.name in active)
            store.update_status(made)
    mgr = Manager(store, VirtualClock(T0), raise_errors=True)
    mgr.add(MultiKueueCheckActivity())  # type: ignore[arg-type]
    mgr.start()
    mgr.run_until_idle()
    try:
        ac = store.get(ADMISSION_CHECK, "", "ac1")
    except Exception:
        return None
    conds = ac.status.conditions if ac.status else None
    return next((c for c in conds or () if c.type == "Active"), None)


def _status(active: bool) -> Any:
    from kuota.api.kueue.multikueue_types import MultiKueueClusterStatus
    from kuota.api.meta import Condition

    return MultiKueueClusterStatus(
        conditions=[
            Condition(
                type="Active",
                status="True" if active else "False",
                reason="Active" if active else "ClientConnectionFailed",
                message="Connected" if active else "refused",
                last_transition_time=T0,
            )
        ]
    )


def test_missing_config() -> None:
    c = active_condition([check()], set())
    assert (c.status, c.reason, c.message) == (
        "False",
        "BadConfig",
        'Cannot load the AdmissionChecks parameters: multikueueconfigs.kueue.x-k8s.io "config1" not found',
    )


def test_unmanaged_check_is_left_alone() -> None:
    assert (
        active_condition([check(controller="other-controller"), config("worker1")], set()) is None
    )


@pytest.mark.parametrize(
    ("clusters", "present", "active", "want"),
    [
        (("worker1",), (), set(), ("False", "NoUsableClusters", "Missing clusters: [worker1]")),
        (
            ("worker1",),
            ("worker1",),
            set(),
            ("False", "NoUsableClusters", "Inactive clusters: [worker1]"),
        ),
        (
            ("worker1", "worker2", "worker3"),
            ("worker1", "worker2"),
            set(),
            (
                "False",
                "NoUsableClusters",
                "Missing clusters: [worker3], Inactive clusters: [worker1 worker2]",
            ),
        ),
        (
            ("worker1", "worker2", "worker3"),
            ("worker1", "worker2"),
            {"worker2"},
            (
                "True",
                "SomeActiveClusters",
                "Missing clusters: [worker3], Inactive clusters: [worker1]",
            ),
        ),
        (
            ("worker1",),
            ("worker1",),
            {"worker1"},
            ("True", "Active", "The admission check is active"),
        ),
    ],
    ids=[
        "missing cluster",
        "inactive cluster",
        "all clusters missing or inactive",
        "partially active",
        "active",
    ],
)
def test_clusters_decide_activity(
    clusters: tuple[str, ...],
    present: tuple[str, ...],
    active: set[str],
    want: tuple[str, str, str],
) -> None:
    objs = [check(), config(*clusters), *(cluster(n) for n in present)]
    c = active_condition(objs, active)
    assert (c.status, c.reason, c.message) == want
