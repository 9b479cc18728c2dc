"""Kueue's pod webhook (``pkg/controller/jobs/pod/pod_webhook.go``) as two
store admission hooks: ``PodWebhook`` (mutating, on create) gates the pods
Kueue manages; ``PodValidation`` (validating, on create and update) refuses
malformed pod-group metadata with Kueue's messages and field paths."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, Final, NoReturn

from kuota.api import errors as e
from kuota.api.kueue.config import BUILTIN_FRAMEWORKS
from kuota.api.kueue.topology import is_tas_pod
from kuota.api.names import is_dns1123_subdomain
from kuota.controllers.jobframework import (
    DEFAULT_QUEUE,
    LOCAL_QUEUE,
    NAMESPACE,
    PRIORITY_CLASS,
    QUEUE_NAME,
    WPC,
    ManagePolicy,
    OwnerRules,
)
from kuota.controllers.jobs.pod import podmeta as pm
from kuota.controllers.tas_requests import validate_annotations as tas_errors
from kuota.store import Invalid, clone
from kuota.store.kinds import resource_type
from kuota.store.protocol import Operation, ResourceType, group_of
from kuota.store.resources import POD

POD_GVK: Final = "/v1, Kind=Pod"  # as Go prints the pod's GroupVersionKind
# The namespaces Kueue's pod webhooks are not called for (their namespaceSelector).
UNWATCHED_NAMESPACES: Final = frozenset({"kube-system", "kueue-system"})
_MAX_OWNER_DEPTH: Final = 10  # managedOwnersChainLimit
_DEFAULT_WPC: Final = "default"

Lookup = Callable[[ResourceType, str, str], Any | None]


def _framework_kinds() -> dict[tuple[str, str], str]:
    """(group, kind) -> framework name, from the GVK strings of the frameworks."""
    out: dict[tuple[str, str], str] = {}
    for name, fw in BUILTIN_FRAMEWORKS.items():
        gv, _, kind = fw.gvk.partition(", Kind=")
        group = gv.rpartition("/")[0] if "/" in gv else ""
        out[(group, kind)] = name
    return out


FRAMEWORK_OF_KIND: Final = _framework_kinds()


_EXTERNAL: Final = "<external framework>"  # an owner kind of integrations.externalFrameworks


class PodWebhook:
    """The defaulting half: a pod whose parent suspends it (Deployment,
    StatefulSet, LeaderWorkerSet templates) is only gated; any other pod
    Kueue manages (namespace selected, no Kueue-managed ancestor, a queue
    name after the default-LocalQueue defaulting, or manageJobsWithoutQueueName)
    gets the managed label and finalizer and the admission gate. Both get
    their role hash."""

    kinds = frozenset({POD})
    operations = ("CREATE",)
    status_writes = False

    def __init__(
        self,
        policy: ManagePolicy,
        lookup: Lookup,
        enabled: Collection[str],
        *,
        ids: bool = True,
        default_priority_class: bool = True,
        external: frozenset[tuple[str, str]] = frozenset(),
    ) -> None:
        self.policy = policy
        self.lookup = lookup  # (rtype, namespace, name) -> object or None
        self.enabled = frozenset(enabled)
        # integrations.externalFrameworks: (group, kind) of owners whose own
        # controllers integrate with Kueue (their children are theirs).
        self.external = external
        self.ids = ids  # WorkloadIdentifierAnnotations
        self.default_priority_class = default_priority_class  # WorkloadPriorityClassDefaulting

    def __call__(self, op: Operation, new: Any, old: Any | None) -> Any:
        if op != "CREATE" or new.kind != "Pod":
            return new
        m = new.metadata
        if m.namespace in UNWATCHED_NAMESPACES:
            return new
        labels = dict(m.labels or {})
        by_parent = pm.SUSPENDING_PARENT in (m.annotations or {})
        if not by_parent:
            ns = self.lookup(NAMESPACE, "", m.namespace)
            if not self.policy.namespace_managed(ns, m.namespace):
                return new
            if self.managed_ancestor(new) is not None:
                return new  # admitted with its ancestor
            if not labels.get(QUEUE_NAME) and self.lookup(LOCAL_QUEUE, m.namespace, DEFAULT_QUEUE):
                labels[QUEUE_NAME] = DEFAULT_QUEUE
            if (
                self.default_priority_class
                and not labels.get(PRIORITY_CLASS)
                and self.lookup(WPC, "", _DEFAULT_WPC) is not None
            ):
                labels[PRIORITY_CLASS] = _DEFAULT_WPC
            if not (labels.get(QUEUE_NAME) or self.policy.manage_without_queue_name):
                # Not Kueue's: a default priority-class label stays off it too.
                return new
            labels[pm.MANAGED] = pm.MANAGED_VALUE
        new = clone(new)
        new.metadata.labels = labels or None
        if not by_parent and pm.MANAGED not in (new.metadata.finalizers or ()):
            new.metadata.finalizers = [*(new.metadata.finalizers or ()), pm.MANAGED]
        if new.spec is not None:
            pm.gate(new.spec)
            if is_tas_pod(new):
                # Kueue gates every pod for TAS; kuota only those asking for a
                # topology (the gate goes at admission when TAS placed nothing).
                pm.gate(new.spec, pm.TOPOLOGY_GATE)
        new.metadata.annotations = {
            **(new.metadata.annotations or {}),
            pm.ROLE_HASH: pm.role_hash(new),
        }
        return new

    def managed_ancestor(self, obj: Any) -> Any | None:
        """FindAncestorJobManagedByKueue: the topmost owner up the controller
        chain that is a job of an enabled integration with a queue name (or any,
        with manageJobsWithoutQueueName); None when there is none."""
        top = None
        seen: set[str] = set()
        current = obj
        for _ in range(_MAX_OWNER_DEPTH):
            uid = current.metadata.uid
            if uid:
                if uid in seen:
                    return top
                seen.add(uid)
            ref = next((r for r in current.metadata.owner_references or () if r.controller), None)
            if ref is None:
                return top
            gk = (group_of(ref.api_version), ref.kind)
            framework = FRAMEWORK_OF_KIND.get(gk) or (_EXTERNAL if gk in self.external else None)
            if framework is None:
                return top  # not a kind Kueue knows
            parent = self.lookup(resource_type(ref), obj.metadata.namespace, ref.name)
            if parent is None or parent.metadata.uid != ref.uid:
                return top
            queue = (parent.metadata.labels or {}).get(QUEUE_NAME)
            enabled = framework in self.enabled or framework == _EXTERNAL
            if enabled and (self.policy.manage_without_queue_name or queue):
                top = parent
            current = parent
        return top


class PodValidation:
    """The validating half, for every pod outside Kueue's and the system's
    namespaces (Kueue's webhook has no object selector): jobframework's
    common rules (queue name, prebuilt workload name, max execution time,
    priority class) and the pod's own (managed label, group name and total
    count together, group name immutable, prebuilt name equal to the group's,
    an unretriable group stays so)."""

    kinds = frozenset({POD})
    operations = ("CREATE", "UPDATE")
    validating = True
    status_writes = False  # the webhook's rules name pods, not pods/status

    def __init__(self, rules: OwnerRules, *, ids: bool = True) -> None:
        """``rules``: jobframework's validation, shared with every integration
        (ValidateJobOnCreate / ValidateJobOnUpdate)."""
        self.rules = rules
        self.ids = ids

    def __call__(self, op: Operation, new: Any, old: Any | None) -> Any:
        if new.kind != "Pod" or new.metadata.namespace in UNWATCHED_NAMESPACES:
            return new
        if op == "CREATE":
            errs = self.rules.job_create_errors(new, POD_GVK)
        elif op == "UPDATE" and old is not None:
            errs = self.rules.job_update_errors(
                new, old, POD_GVK, pm.is_suspended(new), pm.is_suspended(old)
            )
            errs += self._update_errors(new, old)
        else:
            return new
        errs += self._common(new)
        if errs:
            _refuse(new, errs)
        return new

    def _update_errors(self, new: Any, old: Any) -> list[e.FieldError]:
        """The pod's own update rules: an unretriable group stays so, and the
        group name never changes."""
        errs: list[e.FieldError] = []
        group = pm.group_name(new, self.ids)
        if group and pm.is_unretriable(old) and not pm.is_unretriable(new):
            path = e.key("metadata.annotations", pm.RETRIABLE_IN_GROUP)
            errs.append(e.forbidden(path, "unretriable pod group can't be converted to retriable"))
        before = pm.group_name(old, self.ids)
        if before and group != before:
            errs.append(e.invalid(pm.group_name_path(new, self.ids), group, "field is immutable"))
        return errs

    # -------------------------------------------------------------- the pod's own
    def _common(self, pod: Any) -> list[e.FieldError]:
        """validateCommon: the managed label, the group's metadata, the TAS
        annotations, the prebuilt workload's name."""
        errs: list[e.FieldError] = []
        managed = _labels(pod).get(pm.MANAGED)
        if managed is not None and managed != pm.MANAGED_VALUE:
            path = e.key("metadata.labels", pm.MANAGED)
            errs.append(e.forbidden(path, f"managed label value can only be '{pm.MANAGED_VALUE}'"))
        errs += self._group_errors(pod)
        errs += tas_errors("metadata", pod.metadata.annotations, self.rules.tas_multi_layer)
        group = pm.group_name(pod, self.ids)
        prebuilt = pm.prebuilt_name(pod, self.ids)
        if group and prebuilt and prebuilt != group:
            errs.append(
                e.invalid(
                    pm.prebuilt_path(pod, self.ids),
                    prebuilt,
                    "prebuilt workload and pod group should be equal",
                )
            )
        return errs

    def _group_errors(self, pod: Any) -> list[e.FieldError]:
        """validatePodGroupMetadata: a group name (a valid name) and a total
        count come together; the count is an integer ≥ 1."""
        ann = pod.metadata.annotations or {}
        has_count = pm.TOTAL_COUNT in ann
        by_annotation = self.ids and bool(ann.get(pm.GROUP_NAME))
        other = "annotation" if by_annotation else "label"
        detail = f"both the '{pm.TOTAL_COUNT}' annotation and the '{pm.GROUP_NAME}' {other} should be set"
        count_path = e.key("metadata.annotations", pm.TOTAL_COUNT)
        errs: list[e.FieldError] = []
        if not pm.group_name(pod, self.ids):
            if has_count:
                errs.append(e.required(pm.group_name_path(pod, self.ids), detail))
            return errs
        where = "annotations" if by_annotation else "labels"
        errs += _name_errors(pod, where, pm.GROUP_NAME)
        if not has_count:
            errs.append(e.required(count_path, detail))
            return errs
        try:
            pm.total_count(pod, self.ids)
        except ValueError as err:
            errs.append(e.invalid(count_path, ann[pm.TOTAL_COUNT], str(err)))
        return errs


def _labels(obj: Any) -> Mapping[str, str]:
    return obj.metadata.labels or {}


def _name_errors(obj: Any, where: str, key: str) -> list[e.FieldError]:
    """ValidateLabelAsCRDName / ValidateAnnotationAsCRDName: the value, when
    present, names an object (a DNS-1123 subdomain)."""
    values = (obj.metadata.labels if where == "labels" else obj.metadata.annotations) or {}
    value = values.get(key)
    if value is None:
        return []
    msgs = is_dns1123_subdomain(value)
    if not msgs:
        return []
    return [e.invalid(e.key(f"metadata.{where}", key), value, ",".join(msgs))]


def _refuse(obj: Any, errs: list[e.FieldError]) -> NoReturn:
    raise Invalid(f'{obj.kind} "{obj.metadata.name}"', errs)
