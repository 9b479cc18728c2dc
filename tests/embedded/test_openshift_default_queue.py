"""OpenShift's Red Hat build of Kueue, both ways: with the operator's
``Kueue`` resource only namespaces labelled ``kueue.openshift.io/managed=true``
are managed, a LocalQueue named ``default`` takes the namespace's unlabelled
Jobs, and ``labelPolicy`` decides whether unlabelled Jobs are managed at all.
Without it, upstream Kueue's defaults hold."""

from __future__ import annotations

from typing import Any

import pytest

from kuota.api.kueue import types as kt
from kuota.api.openshift.operator_config import to_kueue_config

from .world import (
    cluster_queue,
    config,
    control_plane,
    flavor,
    job,
    local_queue,
    namespace,
    node,
    obj,
)

WL = (kt.GROUP, "Workload")
JOB = ("batch", "Job")
MANAGED = {"kueue.openshift.io/managed": "true"}


def _openshift(label_policy: str = "QueueName") -> Any:
    cr = obj(
        {
            "apiVersion": "kueue.openshift.io/v1",
            "kind": "Kueue",
            "metadata": {"name": "cluster"},
            "spec": {
                "config": {
                    "integrations": {"frameworks": ["BatchJob"]},
                    "workloadManagement": {"labelPolicy": label_policy},
                }
            },
        }
    )
    cfg, errs = to_kueue_config(cr)
    assert cfg is not None, errs
    return control_plane(cfg, openshift=True, cluster=False)


def _world(ns_labels: dict[str, str] | None, default_lq: bool = True) -> list[Any]:
    objs = [
        namespace("team", ns_labels),
        flavor("a100", {"gpu": "a100"}),
        cluster_queue("cq", {"a100": 8}),
        node("n", 8, {"gpu": "a100"}),
    ]
    if default_lq:
        objs.append(local_queue("team", "default", "cq"))
    return objs


def _run(cp: Any, objs: list[Any], jobs: list[Any]) -> tuple[Any, list[Any]]:
    cp.create(objs)
    cp.mgr.run_until_idle()
    cp.create(jobs)
    cp.mgr.run_until_idle()
    return cp.store.get(JOB, "team", jobs[0].metadata.name), cp.store.list(WL, "team").items


def test_openshift_default_local_queue_takes_unlabelled_jobs_in_managed_namespaces() -> None:
    j, wls = _run(_openshift(), _world(MANAGED), [job("team", "j", 1, queue=None)])
    assert j.metadata.labels["kueue.x-k8s.io/queue-name"] == "default"
    assert [w.spec.queue_name for w in wls] == ["default"]
    assert j.spec.suspend is False  # admitted through the default queue


def test_openshift_leaves_unlabelled_namespaces_alone_even_with_a_queue_label() -> None:
    j, wls = _run(_openshift(), _world(None), [job("team", "j", 1, queue="default")])
    assert wls == []
    assert not j.spec.suspend  # not Kueue's business: it runs as created


def test_openshift_label_policy_none_manages_jobs_without_a_queue() -> None:
    # No default LocalQueue: the Job is managed anyway and waits, unqueued.
    cp = _openshift("None")
    j, wls = _run(cp, _world(MANAGED, default_lq=False), [job("team", "j", 1, queue=None)])
    assert j.spec.suspend is True
    assert len(wls) == 1 and wls[0].spec.queue_name is None


def test_openshift_label_policy_queue_name_ignores_jobs_without_a_queue() -> None:
    cp = _openshift("QueueName")
    j, wls = _run(cp, _world(MANAGED, default_lq=False), [job("team", "j", 1, queue=None)])
    assert wls == [] and not j.spec.suspend


@pytest.mark.parametrize("labels", [None, MANAGED])
def test_upstream_manages_labelled_jobs_in_any_namespace_and_uses_the_default_queue(
    labels: dict[str, str] | None,
) -> None:
    cp = control_plane(config(), cluster=False)
    j, wls = _run(cp, _world(labels), [job("team", "j", 1, queue=None)])
    assert j.metadata.labels["kueue.x-k8s.io/queue-name"] == "default"
    assert len(wls) == 1


def test_upstream_leaves_system_namespaces_alone() -> None:
    cp = control_plane(config(), cluster=False)
    objs = [
        namespace("kube-system"),
        flavor("a100", {"gpu": "a100"}),
        cluster_queue("cq", {"a100": 8}),
    ]
    cp.create([*objs, local_queue("kube-system", "main", "cq")])
    cp.create([job("kube-system", "j", 1, queue="main")])
    cp.mgr.run_until_idle()
    assert cp.store.list(WL, "kube-system").items == []


def test_default_queue_applies_only_to_jobs_created_after_it() -> None:
    cp = _openshift()
    cp.create(_world(MANAGED, default_lq=False))
    cp.create([job("team", "early", 1, queue=None)])
    cp.create([local_queue("team", "default", "cq")])
    cp.create([job("team", "late", 1, queue=None)])
    cp.mgr.run_until_idle()
    early = cp.store.get(JOB, "team", "early")
    late = cp.store.get(JOB, "team", "late")
    assert "kueue.x-k8s.io/queue-name" not in (early.metadata.labels or {})
    assert late.metadata.labels["kueue.x-k8s.io/queue-name"] == "default"
