"""Server-side apply: managedFields as kube-apiserver writes them, a second
apply a no-op, conflicts with another manager's fields (and force taking them
over), fields no longer applied removed, list-map items merged by their keys."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kuota.server.patch import ApplyConflict, PatchError, apply_patch

JOB = ("batch", "v1", "Job")
NOW = "2026-11-28T06:00:00Z"


def _job(parallelism: int = 2, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "default", "labels": {"app": "x"}},
        "spec": {
            "parallelism": parallelism,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "busybox", "args": ["sleep", "1"]}],
                    **extra,
                }
            },
        },
    }


def _apply(
    live: Any, applied: dict[str, Any], manager: str = "kubectl", force: bool = False
) -> dict[str, Any]:
    return apply_patch(live, applied, manager=manager, force=force, gvk=JOB, now=NOW)


def test_create_records_the_managers_fields_as_fields_v1() -> None:
    out = _apply(None, _job())
    (entry,) = out["metadata"]["managedFields"]
    assert {k: v for k, v in entry.items() if k != "fieldsV1"} == {
        "manager": "kubectl",
        "operation": "Apply",
        "apiVersion": "batch/v1",
        "time": NOW,
        "fieldsType": "FieldsV1",
    }
    assert entry["fieldsV1"] == {
        "f:metadata": {"f:labels": {"f:app": {}}},
        "f:spec": {
            "f:parallelism": {},
            "f:template": {
                "f:spec": {
                    "f:containers": {
                        'k:{"name":"main"}': {".": {}, "f:args": {}, "f:image": {}, "f:name": {}}
                    },
                    "f:restartPolicy": {},
                }
            },
        },
    }
    assert (
        next(
            iter(
                entry["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:containers"][
                    'k:{"name":"main"}'
                ]
            )
        )
        == "."
    )


def test_second_identical_apply_is_a_no_op() -> None:
    once = _apply(None, _job())
    assert _apply(copy.deepcopy(once), _job()) == once


def test_another_managers_field_with_a_new_value_conflicts() -> None:
    live = _apply(None, _job())
    with pytest.raises(ApplyConflict) as err:
        _apply(live, _job(parallelism=5), manager="ci")
    assert err.value.causes == [(".spec.parallelism", 'conflict with "kubectl"')]


def test_an_update_managers_conflict_names_its_api_version() -> None:
    live = _apply(None, _job())
    live["metadata"]["managedFields"] = [
        {
            "manager": "kubectl-client-side-apply",
            "operation": "Update",
            "apiVersion": "batch/v1",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:parallelism": {}}},
        }
    ]
    with pytest.raises(ApplyConflict) as err:
        _apply(live, _job(parallelism=5))
    assert err.value.causes == [
        (".spec.parallelism", 'conflict with "kubectl-client-side-apply" using batch/v1')
    ]


def test_same_value_is_shared_ownership_not_a_conflict() -> None:
    live = _apply(None, _job())
    out = _apply(live, _job(), manager="ci")
    managers = [e["manager"] for e in out["metadata"]["managedFields"]]
    assert managers == ["kubectl", "ci"]


def test_force_takes_the_field_over() -> None:
    live = _apply(None, _job())
    out = _apply(live, _job(parallelism=5), manager="ci", force=True)
    assert out["spec"]["parallelism"] == 5
    kubectl = next(e for e in out["metadata"]["managedFields"] if e["manager"] == "kubectl")
    assert "f:parallelism" not in kubectl["fieldsV1"]["f:spec"]


def test_fields_no_longer_applied_are_removed_unless_someone_else_owns_them() -> None:
    live = _apply(None, _job(nodeSelector={"zone": "a"}))
    trimmed = _job()
    out = _apply(live, trimmed)
    assert "nodeSelector" not in out["spec"]["template"]["spec"]
    both = _apply(
        _apply(None, _job(nodeSelector={"zone": "a"})),
        _job(nodeSelector={"zone": "a"}),
        manager="ci",
    )
    kept = _apply(both, trimmed)
    assert kept["spec"]["template"]["spec"]["nodeSelector"] == {"zone": "a"}


def test_list_map_items_merge_by_key_across_managers() -> None:
    live = _apply(None, _job())
    sidecar = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "default"},
        "spec": {"template": {"spec": {"containers": [{"name": "side", "image": "envoy"}]}}},
    }
    out = _apply(live, sidecar, manager="injector")
    names = [c["name"] for c in out["spec"]["template"]["spec"]["containers"]]
    assert names == ["main", "side"]


def test_an_object_without_managed_fields_is_owned_before_first_apply() -> None:
    live = _job()
    with pytest.raises(ApplyConflict) as err:
        _apply(live, _job(parallelism=7))
    assert err.value.causes[0][0] == ".spec.parallelism"
    assert err.value.causes[0][1].startswith('conflict with "before-first-apply" using batch/v1')


def test_bad_requests() -> None:
    with pytest.raises(PatchError, match="fieldManager is required"):
        apply_patch(None, _job(), manager="", force=False, gvk=JOB, now=NOW)
    with pytest.raises(PatchError, match="the object is batch/v1/Job"):
        _apply(None, {**_job(), "kind": "CronJob"})
