"""What Kueue and the API server refuse on update, given the object before.

The API server checks an update against the object's own version's schema,
including its transition rules (CEL rules that read ``oldSelf``: LocalQueue
``spec.clusterQueue``, AdmissionCheck ``spec.controllerName``, ResourceFlavor
``topologyName``, the Workload's queueName, priorityClassRef/Source and
maximumExecutionTimeSeconds while quota is reserved or admitted, status
``clusterName``); Kueue's webhooks then run their update rules on the v1beta2
object (``pkg/webhooks/clusterqueue_webhook.go`` ValidateClusterQueueUpdate,
``workload_webhook.go`` ValidateWorkloadUpdate,
``pkg/util/webhook/validation_admissiongatedby.go``). As the API server, a
schema error stops the webhooks from running.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import msgspec
import msgspec.inspect as mi

from kuota.api import errors as e
from kuota.api.base import RULES, Rule, enc_hook
from kuota.api.errors import FieldError, child, index, key
from kuota.api.kueue import types as t
from kuota.api.kueue import v1beta1
from kuota.api.kueue import webhooks as wh

IMMUTABLE = "field is immutable"  # apimachinery's FieldImmutableErrorMsg

Gates = Mapping[str, bool]


def validate_update(new: Any, old: Any, gates: Gates, version: str = t.V1BETA2) -> list[FieldError]:
    """Errors of updating ``old`` to ``new`` (both kuota's v1beta2 model) when
    the write came in ``version``; the create-time rules are not repeated."""
    kind = new.kind
    if kind not in t.KINDS or old.kind != kind:
        return []
    # A status write leaves spec and metadata as they were (the same objects):
    # what only they decide held when they were stored. Kueue's root rules all
    # conclude on spec fields, so they hold too; this keeps the check of the
    # controllers' many status writes cheap.
    status_only = getattr(new, "spec", None) is getattr(old, "spec", None) and (
        new.metadata is old.metadata
    )
    if version == t.V1BETA1:
        to_wire = v1beta1.KINDS[kind][2]
        roots = None if status_only else v1beta1.ROOT_RULES.get(kind)
        errs = transition_errors(to_wire(new), to_wire(old), roots)
    else:
        roots = None if status_only else t.ROOT_RULES.get(kind)
        errs = transition_errors(new, old, roots)
    if errs:
        return errs
    if kind == "ClusterQueue" and not status_only:
        return cluster_queue_update(new, old, gates)
    if kind == "Workload":
        return workload_update(new, old, gates, status_only=status_only)
    return []


# ------------------------------------------------------------------ transition rules
def transition_errors(new: Any, old: Any, root_rules: Any = None) -> list[FieldError]:
    """The CRD's transition rules of ``type(new)``: each is checked where its
    node exists before and after, and reported at that node."""
    errs: list[FieldError] = []
    for attrs, path, rule in _transition_rules(type(new), root_rules):
        a, b = _node(new, attrs), _node(old, attrs)
        if a is None or b is None or (a is b and attrs):
            continue  # absent on a side, or the very same value: nothing changed
        assert rule.transition is not None
        if not rule.transition(a, b):
            errs.append(e.invalid(path, _cel_type(a), rule.message))
    return errs


def _node(obj: Any, attrs: tuple[str, ...]) -> Any:
    for a in attrs:
        obj = getattr(obj, a, None)
        if obj is None:
            return None
    return obj


def _cel_type(v: Any) -> str:
    if isinstance(v, str):
        return "string"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    return "object"


@functools.cache
def _transition_rules(
    typ: type, root_rules: Any = None
) -> tuple[tuple[tuple[str, ...], str, Rule], ...]:
    found: list[tuple[tuple[str, ...], str, Rule]] = []
    extra = (root_rules.extra_json_schema if root_rules is not None else None) or {}
    found += [((), "", r) for r in _rules_of(extra) if r.transition is not None]
    _collect(mi.type_info(typ), (), "", found, set())
    return tuple(found)


def _rules_of(extra: Mapping[str, Any]) -> list[Rule]:
    return [RULES[(r["rule"], r["message"])] for r in extra.get("x-kubernetes-validations", ())]


def _collect(
    info: Any,
    attrs: tuple[str, ...],
    path: str,
    found: list[tuple[tuple[str, ...], str, Rule]],
    open_: set[type],
) -> None:
    """Rules with a transition along struct fields (Kueue has none inside
    lists or maps, where old and new items would have to be correlated)."""
    if isinstance(info, mi.UnionType):
        for member in info.types:
            _collect(member, attrs, path, found, open_)
    elif isinstance(info, mi.Metadata):
        for r in _rules_of(info.extra_json_schema or {}):
            if r.transition is not None:
                found.append((attrs, path, r))
        _collect(info.type, attrs, path, found, open_)
    elif isinstance(info, mi.StructType) and info.cls not in open_:
        open_.add(info.cls)
        for f in info.fields:
            _collect(f.type, (*attrs, f.name), child(path, f.encode_name), found, open_)
        open_.discard(info.cls)


# ------------------------------------------------------------------ ClusterQueue
def cluster_queue_update(
    new: t.ClusterQueue, old: t.ClusterQueue, gates: Gates
) -> list[FieldError]:
    """ValidateClusterQueueUpdate: the create rules, except that onFlavors
    entries already stored unchanged are tolerated while the flavors stay the
    same (unless RejectUpdatesToCQWithInvalidOnFlavors), and
    concurrentAdmissionPolicy may not change."""
    tolerated: dict[str, frozenset[str]] = {}
    if not gates.get("RejectUpdatesToCQWithInvalidOnFlavors", False):
        old_strategy = old.spec.admission_checks_strategy
        same_flavors = set(wh.all_flavors(old.spec.resource_groups)) == set(
            wh.all_flavors(new.spec.resource_groups)
        )
        if old_strategy is not None and same_flavors:
            tolerated = {
                r.name: frozenset(r.on_flavors or ()) for r in old_strategy.admission_checks or ()
            }
    errs = wh.validate_cluster_queue(new, gates, tolerated_on_flavors=tolerated)
    if new.spec.concurrent_admission_policy != old.spec.concurrent_admission_policy:
        errs.append(
            e.invalid(
                "spec.concurrentAdmissionPolicy",
                _shown(new.spec.concurrent_admission_policy),
                IMMUTABLE,
            )
        )
    return errs


# ------------------------------------------------------------------ Workload
def workload_update(
    new: t.Workload, old: t.Workload, gates: Gates, *, status_only: bool = False
) -> list[FieldError]:
    """ValidateWorkloadUpdate, on top of the create rules it re-runs with the
    old object at hand (only the status's when spec and metadata are the
    stored ones)."""
    errs = wh.validate_workload(new, gates, old=old, status_only=status_only)
    old_reserved, new_reserved = wh.quota_reserved(old), wh.quota_reserved(new)
    if old_reserved and not status_only:
        errs += _immutable_pod_sets(new, old, gates)
    if old_reserved and new_reserved:
        errs += _reclaimable_monotone(new, old)
    errs += _admission_unchanged(new, old, gates)
    errs += _ready_pod_set_updates_unchanged(new, old)
    errs += _cluster_name_nominated(new, old)
    return errs


def _immutable_pod_sets(new: t.Workload, old: t.Workload, gates: Gates) -> list[FieldError]:
    a, b = new.spec.pod_sets, old.spec.pod_sets
    if a is b:
        return []
    if len(a) != len(b):
        return [e.invalid("spec.podSets", f"{len(a)} podSets", IMMUTABLE)]
    elastic = gates.get("ElasticJobsViaWorkloadSlices", False)
    errs = []
    for i, (n, o) in enumerate(zip(a, b, strict=True)):
        if elastic and n.count < o.count:
            n = msgspec.structs.replace(n, count=o.count)  # scaling down is allowed
        if n != o:
            errs.append(e.invalid(index("spec.podSets", i), _shown(n.name), IMMUTABLE))
    return errs


def _reclaimable_monotone(new: t.Workload, old: t.Workload) -> list[FieldError]:
    """Reclaimable counts may not shrink, nor entries go, while quota is held."""
    olds = {r.name: r.count for r in (old.status.reclaimable_pods or ())} if old.status else {}
    news = list(new.status.reclaimable_pods or ()) if new.status else []
    if not olds or {r.name: r.count for r in news} == olds:
        return []
    base = "status.reclaimablePods"
    errs = []
    for r in news:
        was = olds.get(r.name)
        if was is not None and r.count < was:
            errs.append(
                e.invalid(child(key(base, r.name), "count"), r.count, f"cannot be less than {was}")
            )
    present = {r.name for r in news}
    errs += [
        e.required(key(base, name), "cannot be removed") for name in olds if name not in present
    ]
    return errs


def _admission_unchanged(new: t.Workload, old: t.Workload, gates: Gates) -> list[FieldError]:
    """status.admission can be set or cleared, not changed (with TAS on, a
    podSet's topology assignment may be filled in)."""
    a = new.status.admission if new.status else None
    b = old.status.admission if old.status else None
    if a is None or b is None or a == b:
        return []
    if gates.get("TopologyAwareScheduling", True) and len(a.pod_set_assignments) == len(
        b.pod_set_assignments
    ):
        b = msgspec.structs.replace(
            b,
            pod_set_assignments=[
                msgspec.structs.replace(
                    o,
                    topology_assignment=n.topology_assignment,
                    delayed_topology_request=n.delayed_topology_request,
                )
                for n, o in zip(a.pod_set_assignments, b.pod_set_assignments, strict=True)
            ],
        )
        if a == b:
            return []
    return [e.invalid("status.admission", f"clusterQueue {a.cluster_queue}", IMMUTABLE)]


def _ready_pod_set_updates_unchanged(new: t.Workload, old: t.Workload) -> list[FieldError]:
    news = {c.name: c for c in (new.status.admission_checks or ())} if new.status else {}
    errs = []
    for i, o in enumerate(old.status.admission_checks or () if old.status else ()):
        n = news.get(o.name)
        if n is None or not (o.state == "Ready" and n.state == "Ready"):
            continue
        if (n.pod_set_updates or None) != (o.pod_set_updates or None):
            path = child(index("status.admissionChecks", i), "podSetUpdates")
            errs.append(e.invalid(path, f"check {n.name}", IMMUTABLE))
    return errs


def _cluster_name_nominated(new: t.Workload, old: t.Workload) -> list[FieldError]:
    name = new.status.cluster_name if new.status else None
    if name is None or (old.status is not None and old.status.cluster_name is not None):
        return []
    nominated = (old.status.nominated_cluster_names or ()) if old.status else ()
    if name in nominated:
        return []
    return [
        e.invalid(
            "status.clusterName",
            name,
            "when setting clusterName it must be one of the nominatedClusterNames",
        )
    ]


def _shown(v: Any) -> Any:
    if v is None or isinstance(v, str | int | float | bool):
        return v
    return msgspec.json.encode(v, enc_hook=enc_hook).decode()


__all__ = ["IMMUTABLE", "transition_errors", "validate_update"]
