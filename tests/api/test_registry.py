"""The registry declares each kind once, and decoding and the store read it."""

from __future__ import annotations

from kuota.api import registry
from kuota.api.decode import REGISTRY
from kuota.api.kueue import types as kt
from kuota.store.kinds import kind_info, registered_kinds


def test_each_kind_is_declared_once_with_one_storage_version() -> None:
    seen_resources = set()
    for spec in registry.KINDS:
        assert (spec.group, spec.plural) not in seen_resources
        seen_resources.add((spec.group, spec.plural))
        assert sum(v.storage for v in spec.versions) == 1, spec.kind
        assert spec.storage_version.wire is spec.internal


def test_lookups_by_kind_resource_short_name_and_api_version() -> None:
    cq = registry.by_group_kind(kt.GROUP, "ClusterQueue")
    assert cq is not None
    assert registry.by_group_resource(kt.GROUP, "clusterqueues") is cq
    assert registry.by_short_name("cq") is cq
    assert cq.singular == "clusterqueue"
    assert not cq.namespaced and cq.status_subresource
    found = registry.by_api_version("kueue.x-k8s.io/v1beta1", "ClusterQueue")
    assert found is not None and found[0] is cq and found[1].deprecated
    assert registry.by_group_resource("", "pods") is registry.by_group_kind("", "Pod")
    deployments = registry.by_group_resource("apps", "deployments")
    assert deployments is not None and deployments.scale_subresource
    assert registry.by_group_kind("", "NoSuchKind") is None
    wl = registry.by_group_kind(kt.GROUP, "Workload")
    assert wl is not None and wl.short_names == ("kwl", "kueueworkload", "kueueworkloads")


def test_decoding_reads_every_decoded_version_and_only_those() -> None:
    expected = {(s.api_version(v), s.kind) for s in registry.KINDS for v in s.versions if v.decoded}
    assert set(REGISTRY) == expected
    # Events are decoded too since clients write them (a controller in
    # another process records its Events over the API, as client-go does).
    assert ("v1", "Event") in REGISTRY


def test_the_store_holds_the_stored_kinds_as_declared() -> None:
    stored = {(s.group, s.storage_version.name, s.plural): s for s in registry.KINDS if s.stored}
    # (Other tests may register kinds of their own at run time.)
    assert set(stored) <= set(registered_kinds())
    for rtype, spec in stored.items():
        info = kind_info(rtype)
        assert info.type is spec.internal
        assert info.namespaced == spec.namespaced
        assert info.kind == spec.kind
        for v in spec.versions:  # every served version names the same kind
            if v.served:
                assert kind_info((spec.group, v.name, spec.plural)) is info
