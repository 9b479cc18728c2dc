"""Strategic merge patch on built-in kinds, with the cases of apimachinery's
strategicpatch tests (patch_test.go): lists merged by their merge key, scalar
merge lists as sets, atomic lists replaced, and the directives."""

from __future__ import annotations

from typing import Any

import pytest

from kuota.server.patch import PatchError, strategic_merge_patch

POD = ("", "v1", "Pod")
JOB = ("batch", "v1", "Job")


def _pod(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


def test_containers_merge_by_name_and_new_ones_append() -> None:
    live = _pod(containers=[{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}])
    patch = {"spec": {"containers": [{"name": "b", "image": "b:2"}, {"name": "c", "image": "c:1"}]}}
    out = strategic_merge_patch(live, patch, POD)
    assert out["spec"]["containers"] == [
        {"name": "a", "image": "a:1"},
        {"name": "b", "image": "b:2"},
        {"name": "c", "image": "c:1"},
    ]
    assert live["spec"]["containers"][1]["image"] == "b:1"  # not changed in place


def test_nested_merge_key_lists_in_a_job_template() -> None:
    live = {
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "m",
                            "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                        }
                    ]
                }
            }
        }
    }
    patch = {
        "spec": {
            "template": {
                "spec": {"containers": [{"name": "m", "env": [{"name": "B", "value": "3"}]}]}
            }
        }
    }
    out = strategic_merge_patch(live, patch, JOB)
    env = out["spec"]["template"]["spec"]["containers"][0]["env"]
    assert env == [{"name": "A", "value": "1"}, {"name": "B", "value": "3"}]


def test_patch_delete_directive_removes_the_element_by_key() -> None:
    live = _pod(containers=[{"name": "a"}, {"name": "b"}])
    out = strategic_merge_patch(
        live, {"spec": {"containers": [{"name": "a", "$patch": "delete"}]}}, POD
    )
    assert out["spec"]["containers"] == [{"name": "b"}]


def test_patch_replace_directive_in_a_list_replaces_it() -> None:
    live = _pod(containers=[{"name": "a"}, {"name": "b"}])
    patch = {"spec": {"containers": [{"name": "z"}, {"$patch": "replace"}]}}
    assert strategic_merge_patch(live, patch, POD)["spec"]["containers"] == [{"name": "z"}]


def test_patch_replace_directive_in_a_map_replaces_it() -> None:
    live = {"metadata": {"name": "p", "labels": {"a": "1", "b": "2"}}}
    patch = {"metadata": {"labels": {"c": "3", "$patch": "replace"}}}
    assert strategic_merge_patch(live, patch, POD)["metadata"]["labels"] == {"c": "3"}


def test_patch_delete_directive_in_a_map_removes_it() -> None:
    live = _pod(nodeSelector={"a": "1"}, containers=[])
    out = strategic_merge_patch(live, {"spec": {"nodeSelector": {"$patch": "delete"}}}, POD)
    assert "nodeSelector" not in out["spec"]


def test_null_deletes_a_field_and_maps_merge() -> None:
    live = {"metadata": {"name": "p", "labels": {"a": "1", "b": "2"}}}
    out = strategic_merge_patch(live, {"metadata": {"labels": {"a": None, "c": "3"}}}, POD)
    assert out["metadata"]["labels"] == {"b": "2", "c": "3"}


def test_atomic_lists_are_replaced() -> None:
    live = _pod(containers=[], tolerations=[{"key": "a"}, {"key": "b"}])
    out = strategic_merge_patch(live, {"spec": {"tolerations": [{"key": "c"}]}}, POD)
    assert out["spec"]["tolerations"] == [{"key": "c"}]
    live = _pod(containers=[{"name": "m", "args": ["x", "y"]}])
    out = strategic_merge_patch(live, {"spec": {"containers": [{"name": "m", "args": ["z"]}]}}, POD)
    assert out["spec"]["containers"][0]["args"] == ["z"]


def test_scalar_merge_list_is_a_set_and_delete_from_primitive_list() -> None:
    live = {"metadata": {"name": "p", "finalizers": ["a", "b"]}}
    out = strategic_merge_patch(live, {"metadata": {"finalizers": ["b", "c"]}}, POD)
    assert out["metadata"]["finalizers"] == ["a", "b", "c"]
    out = strategic_merge_patch(
        live, {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}, POD
    )
    assert out["metadata"]["finalizers"] == ["b"]


def test_set_element_order_orders_the_merged_list() -> None:
    live = _pod(containers=[{"name": "a"}, {"name": "b"}])
    patch = {
        "spec": {
            "$setElementOrder/containers": [{"name": "c"}, {"name": "b"}, {"name": "a"}],
            "containers": [{"name": "c"}],
        }
    }
    names = [c["name"] for c in strategic_merge_patch(live, patch, POD)["spec"]["containers"]]
    assert names == ["c", "b", "a"]


def test_retain_keys_drops_the_other_members_of_a_volume() -> None:
    live = _pod(containers=[], volumes=[{"name": "v", "emptyDir": {}}])
    patch = {
        "spec": {
            "volumes": [
                {"name": "v", "hostPath": {"path": "/x"}, "$retainKeys": ["hostPath", "name"]}
            ]
        }
    }
    assert strategic_merge_patch(live, patch, POD)["spec"]["volumes"] == [
        {"name": "v", "hostPath": {"path": "/x"}}
    ]


def test_directives_never_reach_the_stored_object() -> None:
    out = strategic_merge_patch(
        {"metadata": {"name": "p"}},
        {"spec": {"containers": [{"name": "a", "$patch": "merge"}]}},
        POD,
    )
    assert out["spec"]["containers"] == [{"name": "a"}]


def test_errors() -> None:
    with pytest.raises(PatchError, match="merge key: name"):
        strategic_merge_patch(
            _pod(containers=[{"name": "a"}]), {"spec": {"containers": [{"image": "x"}]}}, POD
        )
    with pytest.raises(PatchError, match="not supported for ClusterQueue"):
        strategic_merge_patch({}, {"spec": {}}, ("kueue.x-k8s.io", "v1beta2", "ClusterQueue"))
    with pytest.raises(PatchError, match="unknown patch type"):
        strategic_merge_patch({}, {"metadata": {"$patch": "frob"}}, POD)
