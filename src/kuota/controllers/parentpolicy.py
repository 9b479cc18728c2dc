"""What Kueue's webhooks do alike (jobframework, integrations.md §0): whether
an object is managed (``WorkloadShouldBeSuspended``, with the owner-chain walk
``FindAncestorJobManagedByKueue``), the default LocalQueue and
WorkloadPriorityClass labels, and the rules they validate: jobframework's
``ValidateJobOnCreate`` / ``ValidateJobOnUpdate`` for job kinds (the batch/v1
Job webhook), and the lighter set the kinds whose pods Kueue admits one by one
or as a group (frameworks ``deployment``, ``statefulset``, LWS; §3) check."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Final, NoReturn

from kuota.api import errors as e
from kuota.api import k8s as kc
from kuota.api.kueue.config import KueueConfig
from kuota.api.kueue.config.frameworks import external_kinds
from kuota.api.kueue.webhooks import (
    ADMISSION_GATED_BY,
    admission_gated_by_update,
    validate_admission_gated_by,
)
from kuota.api.names import is_dns1123_subdomain
from kuota.controllers import jobframework
from kuota.controllers.jobframework import (
    DEFAULT_QUEUE,
    LOCAL_QUEUE,
    MAX_EXEC_TIME,
    NAMESPACE,
    PRIORITY_CLASS,
    QUEUE_NAME,
    WPC,
    ManagePolicy,
    go_atoi,
)
from kuota.controllers.jobs.pod import podmeta as pm
from kuota.controllers.jobs.pod.podwebhook import (
    FRAMEWORK_OF_KIND,
    UNWATCHED_NAMESPACES,
    Lookup,
    PodWebhook,
)
from kuota.store import clone
from kuota.store.protocol import group_of

QUEUE_PATH: Final = e.key("metadata.labels", QUEUE_NAME)
PRIORITY_CLASS_PATH: Final = e.key("metadata.labels", PRIORITY_CLASS)
MAX_EXEC_TIME_PATH: Final = e.key("metadata.labels", MAX_EXEC_TIME)
ELASTIC_JOB: Final = "kueue.x-k8s.io/elastic-job"  # workloadslicing.EnabledAnnotationKey
ELASTIC_JOB_PATH: Final = e.key("metadata.annotations", ELASTIC_JOB)
IMMUTABLE: Final = "field is immutable"
_DEFAULT_WPC: Final = "default"
# The kinds (GVK strings) jobframework lets use a prebuilt Workload and be
# elastic (validation.go: supportedPrebuiltWlJobGVKs, supportedElasticJobGVKs).
_PREBUILT_GVKS: Final = frozenset(
    {
        "batch/v1, Kind=Job",
        "jobset.x-k8s.io/v1alpha2, Kind=JobSet",
        "kubeflow.org/v1, Kind=TFJob",
        "kubeflow.org/v1, Kind=PaddleJob",
        "kubeflow.org/v1, Kind=PyTorchJob",
        "kubeflow.org/v1, Kind=XGBoostJob",
        "trainer.kubeflow.org/v1alpha1, Kind=TrainJob",
        "kubeflow.org/v2beta1, Kind=MPIJob",
        "ray.io/v1, Kind=RayJob",
        "/v1, Kind=Pod",
        "ray.io/v1, Kind=RayCluster",
        "ray.io/v1, Kind=RayService",
        "workload.codeflare.dev/v1beta2, Kind=AppWrapper",
    }
)
_ELASTIC_GVKS: Final = frozenset(
    {
        "batch/v1, Kind=Job",
        "ray.io/v1, Kind=RayCluster",
        "ray.io/v1, Kind=RayJob",
        "ray.io/v1, Kind=RayService",
    }
)


class ParentPolicy:
    """Which objects Kueue manages, their defaults, and the rules their
    webhooks validate (the Job webhook's and those of the kinds built on pods).

    An object outside the ``managedJobsNamespaceSelector`` is never managed,
    queue name or not: Kueue's webhook would suspend it and its reconcilers
    then skip it (ManagedJobsNamespaceSelectorAlwaysRespected), leaving it
    suspended or its pods gated."""

    def __init__(
        self,
        policy: ManagePolicy,
        lookup: Lookup,
        enabled: Collection[str],
        *,
        default_priority_class: bool = True,
        skip_deleting: bool = True,
        admission_gated_by: bool = True,
        ids: bool = True,
        elastic: bool = True,
        tas: bool = True,
        tas_multi_layer: bool = True,
        external: frozenset[tuple[str, str]] = frozenset(),
    ) -> None:
        self.policy = policy
        self.lookup = lookup  # (rtype, namespace, name) -> object or None
        # FindAncestorJobManagedByKueue: the pod webhook already walks owner chains.
        self._ancestry = PodWebhook(policy, lookup, enabled, external=external)
        self.default_priority_class = default_priority_class  # WorkloadPriorityClassDefaulting
        self.skip_deleting = skip_deleting  # SkipAncestorCheckForDeletedWorkloads
        self.admission_gated_by = admission_gated_by  # AdmissionGatedBy
        self.ids = ids  # WorkloadIdentifierAnnotations (the prebuilt name's annotation)
        self.elastic = elastic  # ElasticJobsViaWorkloadSlices
        self.tas = tas  # TopologyAwareScheduling: the job webhooks check TAS annotations
        self.tas_multi_layer = tas_multi_layer  # TASMultiLayerTopology

    @staticmethod
    def watched(obj: Any) -> bool:
        """Kueue's webhooks are not called for the system's and Kueue's namespaces."""
        return obj.metadata.namespace not in UNWATCHED_NAMESPACES

    def namespace_managed(self, namespace: str) -> bool:
        return self.policy.namespace_managed(self.lookup(NAMESPACE, "", namespace), namespace)

    def managed_ancestor(self, obj: Any) -> Any | None:
        """FindAncestorJobManagedByKueue: the topmost Kueue-managed owner up the
        controller chain, or None."""
        return self._ancestry.managed_ancestor(obj)

    def owner_managed(self, obj: Any) -> bool:
        return self._ancestry.managed_ancestor(obj) is not None

    def owner_integrated(self, obj: Any) -> bool:
        """IsOwnerManagedByKueueForObject: the object's controller is of a kind
        an enabled integration manages (whether it manages that one or not)."""
        ref = next((r for r in obj.metadata.owner_references or () if r.controller), None)
        if ref is None:
            return False
        gk = (group_of(ref.api_version), ref.kind)
        return FRAMEWORK_OF_KIND.get(gk) in self._ancestry.enabled or gk in self._ancestry.external

    def with_defaults(self, obj: Any, *, owner_kind: bool = False) -> dict[str, str]:
        """ApplyDefaultLocalQueue and ApplyDefaultWorkloadPriorityClass: the
        object's labels with the ``default`` LocalQueue (when the namespace has
        one and is managed) and the ``default`` WorkloadPriorityClass (when it
        exists), unless a Kueue-managed owner speaks for the object. With
        ``owner_kind`` (Kueue's own test, the Job webhook's) any controller of
        an integrated kind does, managed or not."""
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
        if not (want_queue or want_wpc):
            return labels
        if self.owner_integrated(obj) if owner_kind else self.owner_managed(obj):
            return labels
        if want_queue and self.namespace_managed(m.namespace):
            labels[QUEUE_NAME] = DEFAULT_QUEUE
        if want_wpc:
            labels[PRIORITY_CLASS] = _DEFAULT_WPC
        return labels

    def defaulted(self, obj: Any) -> tuple[Any, bool]:
        """A parent webhook's first half: ``obj`` with Kueue's default labels
        (a copy when they change or Kueue manages it, for the caller to mark
        its pod templates) and whether Kueue manages it."""
        labels = self.with_defaults(obj)
        suspend = self.should_suspend(obj, labels)
        if not suspend and labels == (obj.metadata.labels or {}):
            return obj, False
        obj = clone(obj)
        obj.metadata.labels = labels or None
        return obj, suspend

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
        errs += priority_class_update_errors(new, old, suspended)
        errs += self._gated_by_update_errors(new, old)
        return errs

    # -------------------------------------------------------------- jobframework's
    def is_elastic(self, obj: Any) -> bool:
        """workloadslicing.Enabled."""
        return self.elastic and _annotations(obj).get(ELASTIC_JOB) == "true"

    def elastic_errors(self, obj: Any, gvk: str) -> list[e.FieldError]:
        """ValidateElasticJobAnnotation: only some kinds may be elastic jobs."""
        if self.is_elastic(obj) and gvk not in _ELASTIC_GVKS:
            return [e.forbidden(ELASTIC_JOB_PATH, f'elastic job is not supported for "{gvk}"')]
        return []

    def job_create_errors(self, obj: Any, gvk: str) -> list[e.FieldError]:
        """ValidateJobOnCreate (the Job webhook runs it on updates too): the
        queue name names an object; the prebuilt workload's name too, for a
        kind that may have one; the max-exec-time label a positive integer;
        the elastic-job annotation on a kind that can be elastic; admission
        gates well formed. ``gvk``: the kind, as Go prints it."""
        errs = queue_name_errors(obj)
        errs += self._prebuilt_errors(obj, gvk)
        raw = _labels(obj).get(MAX_EXEC_TIME)
        if raw is not None:
            try:
                v = go_atoi(raw)
            except ValueError as err:
                errs.append(e.invalid(MAX_EXEC_TIME_PATH, raw, str(err)))
            else:
                if v <= 0:
                    errs.append(e.invalid(MAX_EXEC_TIME_PATH, v, "should be greater than 0"))
        errs += self.elastic_errors(obj, gvk)
        if self.admission_gated_by:
            errs += validate_admission_gated_by(_annotations(obj).get(ADMISSION_GATED_BY, ""))
        return errs

    def job_update_errors(
        self, new: Any, old: Any, gvk: str, suspended: bool, was_suspended: bool
    ) -> list[e.FieldError]:
        """ValidateJobOnUpdate; ``suspended``, ``was_suspended``: the job's
        IsSuspended after and before. While it runs its queue name, prebuilt
        workload and max-exec-time stay; a queue name is not removed where a
        ``default`` LocalQueue would put one back; the priority-class rules;
        the elastic toggle never changes; admission gates only go."""
        errs: list[e.FieldError] = []
        q_new = _labels(new).get(QUEUE_NAME, "")
        q_old = _labels(old).get(QUEUE_NAME, "")
        if not suspended and q_new != q_old:
            errs.append(e.invalid(QUEUE_PATH, q_new, IMMUTABLE))
        if not q_new and q_old and self.lookup(LOCAL_QUEUE, old.metadata.namespace, DEFAULT_QUEUE):
            detail = "queue-name must not be empty in namespace with default queue"
            errs.append(e.invalid(QUEUE_PATH, "", detail))
        if suspended or self.is_elastic(old):
            errs += self._prebuilt_errors(new, gvk)
        else:
            name = pm.prebuilt_name(new, self.ids)
            if name != pm.prebuilt_name(old, self.ids):
                errs.append(e.invalid(pm.prebuilt_path(new, self.ids), name, IMMUTABLE))
        if not (suspended and was_suspended):
            a = _labels(new).get(MAX_EXEC_TIME, "")
            if a != _labels(old).get(MAX_EXEC_TIME, ""):
                errs.append(e.invalid(MAX_EXEC_TIME_PATH, a, IMMUTABLE))
        errs += priority_class_update_errors(new, old, suspended)
        elastic = self.is_elastic(new)
        if elastic != self.is_elastic(old):
            errs.append(e.invalid(ELASTIC_JOB_PATH, elastic, IMMUTABLE))
        errs += self._gated_by_update_errors(new, old)
        return errs

    def _prebuilt_errors(self, obj: Any, gvk: str) -> list[e.FieldError]:
        """validateCreateForPrebuiltWorkload: ValidatePrebuiltWorkloadName,
        and only the kinds that support one may name a prebuilt Workload."""
        ann = _annotations(obj).get(pm.PREBUILT_WORKLOAD, "")
        if ann and (self.ids or len(ann) > pm.LABEL_VALUE_MAX):
            errs = _name_errors(ann, e.key("metadata.annotations", pm.PREBUILT_WORKLOAD))
        else:
            label = _labels(obj).get(pm.PREBUILT_WORKLOAD)
            path = e.key("metadata.labels", pm.PREBUILT_WORKLOAD)
            errs = _name_errors(label, path) if label is not None else []
        if pm.prebuilt_name(obj, self.ids) and gvk not in _PREBUILT_GVKS:
            path = pm.prebuilt_path(obj, self.ids)
            errs.append(e.forbidden(path, f'Is not supported for "{gvk}"'))
        return errs

    def _gated_by_update_errors(self, new: Any, old: Any) -> list[e.FieldError]:
        if not self.admission_gated_by:
            return []
        return admission_gated_by_update(
            _annotations(old).get(ADMISSION_GATED_BY, ""),
            _annotations(new).get(ADMISSION_GATED_BY, ""),
        )


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
        ids=config.gate("WorkloadIdentifierAnnotations"),
        elastic=config.gate("ElasticJobsViaWorkloadSlices"),
        tas=config.gate("TopologyAwareScheduling"),
        tas_multi_layer=config.gate("TASMultiLayerTopology"),
        external=external_kinds(config.integrations.external_frameworks),
    )


def queue_name_errors(obj: Any) -> list[e.FieldError]:
    """ValidateQueueName: the queue-name label, when set, names an object."""
    value = _labels(obj).get(QUEUE_NAME)
    return _name_errors(value, QUEUE_PATH) if value is not None else []


def _name_errors(value: str, path: str) -> list[e.FieldError]:
    """ValidateLabelAsCRDName / ValidateAnnotationAsCRDName: a DNS-1123 subdomain."""
    msgs = is_dns1123_subdomain(value)
    return [e.invalid(path, value, ",".join(msgs))] if msgs else []


def priority_class_update_errors(new: Any, old: Any, suspended: bool) -> list[e.FieldError]:
    """ValidateUpdateForWorkloadPriorityClassName: no priority class added to
    a running object; none removed, running or not."""
    wpc_new = _labels(new).get(PRIORITY_CLASS, "")
    wpc_old = _labels(old).get(PRIORITY_CLASS, "")
    if not suspended and not wpc_old and wpc_new:
        msg = "WorkloadPriorityClass cannot be added to a non-suspended workload"
        return [e.invalid(PRIORITY_CLASS_PATH, wpc_new, msg)]
    if wpc_old and not wpc_new:
        msg = "WorkloadPriorityClass cannot be removed from a workload"
        return [e.invalid(PRIORITY_CLASS_PATH, wpc_new, msg)]
    return []


def refuse(obj: Any, errs: list[e.FieldError]) -> NoReturn:
    jobframework.refuse(obj, errs)


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
