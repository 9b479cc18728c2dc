"""OpenShift's project node selector on pod creation: the namespace's
openshift.io/node-selector annotation, else the cluster default from the
Scheduler config, is merged into the pod's nodeSelector; a conflicting pod is
refused with OpenShift's message."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kuota.cluster import api_server_hooks
from kuota.store import Invalid, MemoryStore

from ..conftest import decode

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def store(default: dict[str, str] | None = None, *, openshift: bool = True) -> MemoryStore:
    holder: list[MemoryStore] = []
    s = MemoryStore(
        lambda: T0,
        api_server_hooks(lambda: holder[0], openshift=openshift, default_node_selector=default),
    )
    holder.append(s)
    return s


def namespace(name: str, selector: str | None = None) -> Any:
    ann = {"openshift.io/node-selector": selector} if selector is not None else {}
    return decode(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "annotations": ann}}
    )


def pod(ns: str, selector: dict[str, str] | None = None) -> Any:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x"}]}
    if selector:
        spec["nodeSelector"] = selector
    return decode(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": ns},
            "spec": spec,
        }
    )


def test_cluster_default_is_merged_into_the_pod() -> None:
    s = store({"node-role.kubernetes.io/worker": ""})
    s.create(namespace("team"))
    made = s.create(pod("team", {"gpu": "a100"}))
    assert made.spec.node_selector == {"gpu": "a100", "node-role.kubernetes.io/worker": ""}


def test_project_annotation_overrides_the_default_and_empty_means_none() -> None:
    s = store({"node-role.kubernetes.io/worker": ""})
    s.create(namespace("infra", "role=infra,zone=a"))
    s.create(namespace("free", ""))
    assert s.create(pod("infra")).spec.node_selector == {"role": "infra", "zone": "a"}
    assert not s.create(pod("free")).spec.node_selector


def test_a_conflicting_pod_is_refused() -> None:
    s = store()
    s.create(namespace("infra", "role=infra"))
    with pytest.raises(Invalid) as err:
        s.create(pod("infra", {"role": "gpu"}))
    assert err.value.errors[0].path == "spec.nodeSelector[role]"
    assert "conflicts with its project node label selector" in str(err.value)


def test_plain_kubernetes_has_no_project_selector() -> None:
    s = store(openshift=False)
    s.create(namespace("infra", "role=infra"))
    assert not s.create(pod("infra")).spec.node_selector
