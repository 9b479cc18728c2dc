"""What Kueue's webhooks do alike for the kinds whose pods Kueue admits one
by one or as a group (frameworks ``deployment`` and ``statefulset``,
integrations.md §0 and §3): whether an object is managed (jobframework's
``WorkloadShouldBeSuspended``), the default LocalQueue and
WorkloadPriorityClass labels, and the rules every such webhook validates
(queue name, priority class, admission-gated-by)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Final, NoReturn

from kuota.api import core as kc
from kuota.api import errors as e
from kuota.api.config import KueueConfig
from kuota.api.kueue.webhooks import (
    ADMISSION_GATED_BY,
    admission_gated_by_update,
    validate_admission_gated_by,
)
from kuota.api.names import is_dns1123_subdomain
from kuota.controllers.jobframework import (
    DEFAULT_QUEUE,
    LOCAL_QUEUE,
    NAMESPACE,
    PRIORITY_CLASS,
    QUEUE_NAME,
    WPC,
    ManagePolicy,
)
from kuota.controllers.jobs.podwebhook import UNWATCHED_NAMESPACES, Lookup, PodWebhook
from kuota.store import Invalid
from kuota.store.protocol import group_of

QUEUE_PATH: Final = e.key("metadata.labels", QUEUE_NAME)
PRIORITY_CLASS_PATH: Final = e.key("metadata.labels", PRIORITY_CLASS)
IMMUTABLE: Final = "field is immutable"
_DEFAULT_WPC: Final = "default"


class ParentPolicy:
    """Which Deployments and StatefulSets Kueue manages, and their defaults.

    As kuota's job webhook (``JobWebhook``), an object outside the
    ``managedJobsNamespaceSelector`` is never managed, queue name or not:
    Kueue's webhook would suspend it and its reconcilers then skip it
    (ManagedJobsNamespaceSelectorAlwaysRespected), leaving its pods gated."""

    def __init__(
        self,
        policy: ManagePolicy,
        lookup: Lookup,
        enabled: Collection[str],
        *,
        default_priority_class: bool = True,
        skip_deleting: bool = True,
        admission_gated_by: bool = True,
    ) -> None:
        self.policy = policy
        self.lookup = lookup  # (rtype, namespace, name) -> object or None
        # FindAncestorJobManagedByKueue: the pod webhook already walks owner chains.
        self._ancestry = PodWebhook(policy, lookup, enabled)
        self.default_priority_class = default_priority_class  # WorkloadPriorityClassDefaulting
        self.skip_deleting = skip_deleting  # SkipAncestorCheckForDeletedWorkloads
        self.admission_gated_by = admission_gated_by  # AdmissionGatedBy

    @staticmethod
    def watched(obj: Any) -> bool:
        """Kueue's webhooks are not called for the system's and Kueue's namespaces."""
        return obj.metadata.namespace not in UNWATCHED_NAMESPACES

    def namespace_managed(self, namespace: str) -> bool:
        return self.policy.namespace_managed(self.lookup(NAMESPACE, "", namespace), namespace)

    def owner_managed(self, obj: Any) -> bool:
        return self._ancestry.managed_ancestor(obj) is not None

    def with_defaults(self, obj: Any) -> dict[str, str]:
        """ApplyDefaultLocalQueue and ApplyDefaultWorkloadPriorityClass: the
        object's labels with the ``default`` LocalQueue (when the namespace has
        one and is managed) and the ``default`` WorkloadPriorityClass (when it
        exists), unless a Kueue-managed owner speaks for the object."""
        m = obj.metadata
        labels = dict(m.labels or {})
        want_queue = not labels.get(QUEUE_NAME) and (
            self.lookup(LOCAL_QUEUE, m.namespace, DEFAULT_QUEUE) is not None
        )
        want_wpc = (
            self.default_priority_class
            and not labels.get(PRIORITY_CLASS)
            and self.lookup(WPC, "", _DEFAULT_WPC) is not None
        )
        if not (want_queue or want_wpc) or self.owner_managed(obj):
            return labels
        if want_queue and self.namespace_managed(m.namespace):
            labels[QUEUE_NAME] = DEFAULT_QUEUE
        if want_wpc:
            labels[PRIORITY_CLASS] = _DEFAULT_WPC
        return labels

    def should_suspend(
        self, obj: Any, labels: Mapping[str, str] | None = None, *, tolerate_deleting: bool = True
    ) -> bool:
        """WorkloadShouldBeSuspended: Kueue manages the object (``labels``: its
        labels after defaulting). An object being deleted is left alone by the
        webhooks (``tolerate_deleting``), as its owners may be gone already."""
        m = obj.metadata
        if tolerate_deleting and self.skip_deleting and m.deletion_timestamp is not None:
            return False
        if not self.namespace_managed(m.namespace):
            return False
        if labels is None:
            labels = m.labels or {}
        if not (labels.get(QUEUE_NAME) or self.policy.manage_without_queue_name):
            return False
        return not self.owner_managed(obj)

    # -------------------------------------------------------------- validation
    def create_errors(self, obj: Any) -> list[e.FieldError]:
        """ValidateCreate: the queue name names a LocalQueue; admission gates
        well formed."""
        errs = queue_name_errors(obj)
        if self.admission_gated_by:
            errs += validate_admission_gated_by(_annotations(obj).get(ADMISSION_GATED_BY, ""))
        return errs

    def update_errors(self, new: Any, old: Any, suspended: bool) -> list[e.FieldError]:
        """ValidateUpdate's common part; ``suspended``: none of the old
        object's pods is ready (its ``status.readyReplicas`` is 0). The queue
        name changes only then, and is never removed; a priority class is not
        added to a running object nor removed."""
        errs = queue_name_errors(new)
        q_new = _labels(new).get(QUEUE_NAME, "")
        q_old = _labels(old).get(QUEUE_NAME, "")
        if (not suspended or not q_new) and q_new != q_old:
            errs.append(e.invalid(QUEUE_PATH, q_new, IMMUTABLE))
        wpc_new = _labels(new).get(PRIORITY_CLASS, "")
        wpc_old = _labels(old).get(PRIORITY_CLASS, "")
        if not suspended and not wpc_old and wpc_new:
            msg = "WorkloadPriorityClass cannot be added to a non-suspended workload"
            errs.append(e.invalid(PRIORITY_CLASS_PATH, wpc_new, msg))
        elif wpc_old and not wpc_new:
            msg = "WorkloadPriorityClass cannot be removed from a workload"
            errs.append(e.invalid(PRIORITY_CLASS_PATH, wpc_new, msg))
        if self.admission_gated_by:
            errs += admission_gated_by_update(
                _annotations(old).get(ADMISSION_GATED_BY, ""),
                _annotations(new).get(ADMISSION_GATED_BY, ""),
            )
        return errs


def parent_policy(
    config: KueueConfig, policy: ManagePolicy, lookup: Lookup, enabled: Collection[str]
) -> ParentPolicy:
    """The rules the integrations built on pods share, under the config's gates."""
    return ParentPolicy(
        policy,
        lookup,
        enabled,
        default_priority_class=config.gate("WorkloadPriorityClassDefaulting"),
        skip_deleting=config.gate("SkipAncestorCheckForDeletedWorkloads"),
        admission_gated_by=config.gate("AdmissionGatedBy"),
    )


def queue_name_errors(obj: Any) -> list[e.FieldError]:
    """ValidateQueueName: the queue-name label, when set, names an object."""
    value = _labels(obj).get(QUEUE_NAME)
    if value is None:
        return []
    msgs = is_dns1123_subdomain(value)
    return [e.invalid(QUEUE_PATH, value, ",".join(msgs))] if msgs else []


def refuse(obj: Any, errs: list[e.FieldError]) -> NoReturn:
    group = group_of(obj.api_version)
    raise Invalid(f'{obj.kind}{"." + group if group else ""} "{obj.metadata.name}"', errs)


def _labels(obj: Any) -> Mapping[str, str]:
    return obj.metadata.labels or {}


def _annotations(obj: Any) -> Mapping[str, str]:
    return obj.metadata.annotations or {}


def spec_shape_errors(
    new: kc.PodSpec | None, old: kc.PodSpec | None, path: str
) -> list[e.FieldError]:
    """ValidateImmutablePodGroupPodSpec: every field of the pod's shape (what
    its role hash covers) unchanged, containers' requests and ports one by
    one (an image may change). Compared as the API server compares values:
    ``1`` and ``1000m`` are the same quantity, empty is unset."""
    a, b = _shape(new), _shape(old)
    errs: list[e.FieldError] = []
    for name in sorted(a.keys() | b.keys()):
        p = e.child(path, name)
        x, y = a.get(name), b.get(name)
        if name in ("containers", "initContainers"):
            xs: list[tuple[Any, Any]] = x or []
            ys: list[tuple[Any, Any]] = y or []
            if len(xs) != len(ys):
                errs.append(e.invalid(p, _shown(xs), IMMUTABLE))
                continue
            for i, ((ports, req), (old_ports, old_req)) in enumerate(zip(xs, ys, strict=True)):
                if not _same(ports, old_ports):
                    errs.append(e.invalid(f"{e.index(p, i)}.ports", _shown(ports), IMMUTABLE))
                if not _same(req, old_req):
                    path_i = f"{e.index(p, i)}.resources.requests"
                    errs.append(e.invalid(path_i, _shown(req), IMMUTABLE))
        elif not _same(x, y):
            errs.append(e.invalid(p, _shown(x), IMMUTABLE))
    return errs


def _shape(spec: kc.PodSpec | None) -> dict[str, Any]:
    """utilpod.SpecShape, on kuota's structs (containers as (ports, requests))."""
    s = spec if spec is not None else kc.PodSpec(containers=[])
    shape: dict[str, Any] = {
        "affinity": s.affinity,
        "containers": _containers(s.containers),
        "initContainers": _containers(s.init_containers),
        "nodeSelector": s.node_selector,
        "overhead": s.overhead,
        "priority": s.priority,
        "resourceClaims": s.resource_claims,
        "runtimeClassName": s.runtime_class_name,
        "tolerations": s.tolerations,
        "topologySpreadConstraints": s.topology_spread_constraints,
    }
    if s.resources is not None:
        shape["resources"] = s.resources.requests
    return shape


def _containers(cs: list[kc.Container] | None) -> list[tuple[Any, Any]]:
    return [(c.ports, c.resources.requests if c.resources else None) for c in cs or ()]


def _same(a: Any, b: Any) -> bool:
    """apiequality.Semantic.DeepEqual: an empty list or map equals an unset one."""
    if isinstance(a, list | dict) and not a:
        a = None
    if isinstance(b, list | dict) and not b:
        b = None
    return bool(a == b)


def _shown(v: Any) -> Any:
    """What a field error shows of a value: scalars as they are, the rest by kind."""
    if v is None or isinstance(v, str | int | float | bool):
        return v
    return [] if isinstance(v, list | tuple) else {}
