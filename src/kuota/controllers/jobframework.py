"""One generic job reconciler; every job kind is a small adapter.

As Kueue's ``jobframework``: the reconciler decides whether a job is managed,
creates its one Workload, starts the job when the Workload is admitted (the
flavors' node labels and tolerations injected), stops and restores it when
the Workload loses its admission, reports PodsReady and Finished back. An
adapter (``JobAdapter``) knows only its kind: its pod sets, how to suspend,
run and stop it, and when it is ready or finished.

Kueue's job webhook is two admission hooks the embedded store runs:
``JobWebhook`` (defaulting: the default LocalQueue and WorkloadPriorityClass,
suspend on create) and ``JobValidation`` (jobframework's rules and the kind's).
The rules every integration shares come in as an ``OwnerRules``
(``parentpolicy.ParentPolicy``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, NoReturn, Protocol, TypeVar

from kuota.api import errors as e
from kuota.api import k8s as kc
from kuota.api.conditions import set_condition, with_condition
from kuota.api.kueue import types as kt
from kuota.api.kueue.config import KueueConfig
from kuota.api.kueue.multikueue_types import ORIGIN_LABEL
from kuota.api.kueue.topology import TOPOLOGY_GATE, UNCONSTRAINED, WORKLOAD_ANNOTATION
from kuota.api.meta import ObjectMeta, OwnerReference, selector_matches
from kuota.api.names import is_dns1123_label
from kuota.controllers import workloadslicing as slicing
from kuota.controllers.tas_requests import with_topology_requests
from kuota.quota.workload import (
    find_condition,
    has_quota_reservation,
    is_admitted,
    is_evicted,
    is_finished,
)
from kuota.runtime.informer import key_of
from kuota.runtime.manager import Manager
from kuota.store import Conflict, Invalid, NotFound, clone
from kuota.store.kinds import resource_type
from kuota.store.protocol import Operation, ResourceType, group_of
from kuota.store.resources import (
    ADMISSION_CHECK,
    CLUSTER_QUEUE,
    LOCAL_QUEUE,
    NAMESPACE,
    WORKLOAD,
)
from kuota.store.resources import PRIORITY_CLASS as PC
from kuota.store.resources import RESOURCE_FLAVOR as FLAVOR
from kuota.store.resources import WORKLOAD_PRIORITY_CLASS as WPC

QUEUE_NAME: Final = "kueue.x-k8s.io/queue-name"
PRIORITY_CLASS: Final = "kueue.x-k8s.io/priority-class"
MAX_EXEC_TIME: Final = "kueue.x-k8s.io/max-exec-time-seconds"
JOB_UID: Final = "kueue.x-k8s.io/job-uid"
PODSET_LABEL: Final = "kueue.x-k8s.io/podset"
LQ_LABEL: Final = "kueue.x-k8s.io/local-queue-name"
CQ_LABEL: Final = "kueue.x-k8s.io/cluster-queue-name"
RESOURCE_IN_USE: Final = "kueue.x-k8s.io/resource-in-use"
DEFAULT_QUEUE: Final = "default"
OPENSHIFT_MANAGED: Final = "kueue.openshift.io/managed"
PREBUILT_WORKLOAD: Final = "kueue.x-k8s.io/prebuilt-workload-name"  # label, or annotation
LABEL_VALUE_MAX: Final = 63  # a label value's longest
MULTIKUEUE_CONTROLLER: Final = "kueue.x-k8s.io/multikueue"
MULTIKUEUE_WORKER_POD: Final = "kueue.x-k8s.io/multikueue-worker-workload-pod"
PROVREQ_PREFIX: Final = "provreq.kueue.x-k8s.io/"  # passed on to ProvisioningRequests

_READY_MSG: Final = "All pods reached readiness and the workload is running"
_NOT_READY_MSG: Final = "Not all pods are ready or succeeded"
_RECOVERY_MSG: Final = "At least one pod has failed, waiting for recovery"
_JOB_COMPONENT: Final = "kueue-job-controller"  # the events' source
_J = TypeVar("_J")


@dataclass(frozen=True)
class PodSetInfo:
    """What admission adds to a podSet's pod template (podset.FromAssignment)."""

    name: str
    count: int
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: list[kc.Toleration] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    # From admission checks' podSetUpdates (the provisioning check's
    # consume-provisioning-request, for one) and TAS (the workload's name).
    annotations: dict[str, str] = field(default_factory=dict)
    scheduling_gates: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Finished:
    success: bool
    message: str


class JobAdapter(Protocol):
    """One job kind, as the generic reconciler needs to see it."""

    rtype: ResourceType
    kind: str  # for the Workload name and ownerReferences
    api_version: str

    def pod_sets(self, job: Any, partial_admission: bool) -> list[kt.PodSet]: ...
    def is_suspended(self, job: Any) -> bool: ...
    def is_active(self, job: Any) -> bool: ...
    def finished(self, job: Any) -> Finished | None: ...
    def pods_ready(self, job: Any, wl: kt.Workload) -> bool: ...
    def reclaimable_pods(self, job: Any) -> list[kt.ReclaimablePod] | None: ...
    def suspend_on_create(self, job: Any) -> Any:
        """The webhook's default for a managed job: created suspended."""
        ...

    def run(self, job: Any, infos: list[PodSetInfo]) -> Any:
        """A copy of the job started with the admission's podSet infos."""
        ...

    def stop(self, job: Any) -> Any | None:
        """The first write of a stop: a copy of the running job suspended (and
        marked as being stopped); None if it is suspended already."""
        ...

    def restore(self, job: Any, original: list[kt.PodSet]) -> Any | None:
        """The second: a copy of the suspended job with its templates restored
        to the Workload's (the originals); None if it needs no change."""
        ...

    def validate(self, job: Any, old: Any | None, elastic: bool) -> list[e.FieldError]:
        """The kind's own create rules of Kueue's validating webhook, for a
        job being created (``old`` None) or updated (``elastic``: the job is
        an elastic one, workloadslicing.Enabled)."""
        ...

    def update_errors(self, new: Any, old: Any) -> list[e.FieldError]:
        """The kind's own update rules (after jobframework's)."""
        ...


class OwnerRules(Protocol):
    """What every integration's webhooks and the job reconciler share:
    which objects are managed, their defaults, jobframework's validation
    (kuota.controllers.parentpolicy.ParentPolicy)."""

    tas: bool  # TopologyAwareScheduling: the webhooks check the TAS annotations
    tas_multi_layer: bool  # TASMultiLayerTopology
    ids: bool  # WorkloadIdentifierAnnotations: workload identifiers may be annotations

    def watched(self, obj: Any) -> bool:
        """Kueue's webhooks are called for this object's namespace."""
        ...

    def managed_ancestor(self, obj: Any) -> Any | None: ...
    def with_defaults(self, obj: Any, *, owner_kind: bool = False) -> dict[str, str]: ...
    def should_suspend(
        self, obj: Any, labels: Mapping[str, str] | None = None, *, tolerate_deleting: bool = True
    ) -> bool: ...
    def is_elastic(self, obj: Any) -> bool: ...
    def job_create_errors(self, obj: Any, gvk: str) -> list[e.FieldError]: ...
    def job_update_errors(
        self, new: Any, old: Any, gvk: str, suspended: bool, was_suspended: bool
    ) -> list[e.FieldError]: ...


def suspended_copy(job: _J, spec_of: Callable[[_J], Any]) -> _J:
    """Kueue's webhook default for a managed job (each kind's
    ``suspend_on_create``): a copy whose ``spec_of(copy).suspend`` is True,
    or the job itself when already suspended, so that nothing is written."""
    if spec_of(job).suspend:
        return job
    job = clone(job)
    spec_of(job).suspend = True
    return job


# ------------------------------------------------------------------ naming
def workload_name(adapter: JobAdapter, job_name: str, job_uid: str, extra: str = "") -> str:
    """Kueue's GetWorkloadNameForOwnerWithGVK: ``<kind>-<name>-<hash5>``;
    ``extra``: an elastic job's generation (newWorkloadName), so that each
    slice gets a name of its own."""
    return owner_workload_name(adapter.kind, adapter.api_version, job_name, job_uid, extra)


def owner_workload_name(
    kind: str, api_version: str, owner_name: str, owner_uid: str, extra: str = ""
) -> str:
    """The Workload name of an owner of any kind (a Job, a Pod):
    ``<kind>-<name>`` cut to 247 characters, ``-``, 5 hex of a sha1 of the
    kind, group, name and uid (and ``extra`` if any: GenerateWorkloadNameWithExtra)."""
    prefix = f"{kind.lower()}-{owner_name}"[: 253 - 6]
    parts = [kind, group_of(api_version), owner_name, owner_uid]
    if extra:
        parts.append(extra)
    h = hashlib.sha1("\n".join(parts).encode()).hexdigest()
    return f"{prefix}-{h[:5]}"


# ------------------------------------------------------------------ management policy
@dataclass(frozen=True)
class ManagePolicy:
    """Which jobs Kueue manages: upstream's rules, or OpenShift's when the
    world holds the operator's ``Kueue`` resource."""

    manage_without_queue_name: bool
    namespace_selector: Any  # LabelSelector | None (None: every namespace)
    openshift: bool = False

    @classmethod
    def from_config(cls, config: KueueConfig, openshift: bool = False) -> ManagePolicy:
        return cls(
            config.manage_jobs_without_queue_name,
            config.managed_jobs_namespace_selector,
            openshift,
        )

    def namespace_managed(self, ns: kc.Namespace | None, name: str) -> bool:
        labels = ns.metadata.labels if ns is not None else None
        if self.openshift:
            return (labels or {}).get(OPENSHIFT_MANAGED) == "true"
        if self.namespace_selector is None:
            return True
        # A namespace not (yet) in the store has only its implicit name label.
        labels = dict(labels or {})
        labels.setdefault("kubernetes.io/metadata.name", name)
        return selector_matches(self.namespace_selector, labels)

    def job_managed(self, labels: dict[str, str] | None) -> bool:
        return bool((labels or {}).get(QUEUE_NAME)) or self.manage_without_queue_name


# ------------------------------------------------------------------ webhook
class JobWebhook:
    """Kueue's job defaulting webhook for one kind (``mjob``, on create):
    ApplyDefaultLocalQueue, ApplyDefaultWorkloadPriorityClass, then
    ApplyDefaultForSuspend for the jobs Kueue manages (no Kueue-managed
    owner up the controller chain)."""

    operations = ("CREATE",)
    status_writes = False

    def __init__(self, adapter: JobAdapter, rules: OwnerRules) -> None:
        self.adapter = adapter
        self.rules = rules
        self.kinds = frozenset({adapter.rtype})  # the store calls it for these only

    def __call__(self, op: Operation, new: Any, old: Any | None) -> Any:
        if op != "CREATE" or resource_type(new) != self.adapter.rtype:
            return new
        if not self.rules.watched(new):
            return new
        labels = self.rules.with_defaults(new, owner_kind=True)
        if labels != (new.metadata.labels or {}):
            new = clone(new)
            new.metadata.labels = labels or None
        new = self._default_managed_by(new, labels)
        if self.rules.should_suspend(new, labels):
            new = self.adapter.suspend_on_create(new)
        gate = getattr(self.adapter, "gate_elastic", None)
        if gate is not None and self.rules.is_elastic(new):
            # applyWorkloadSliceSchedulingGate: an elastic job's pods wait
            # for the elastic ungater (the quota its admitted slice grants).
            new = gate(new)
        return new

    def _default_managed_by(self, job: Any, labels: Mapping[str, str]) -> Any:
        """ApplyDefaultForManagedBy: a job of a kind with managedBy (its
        adapter's ``managed_by_field``: JobWithManagedBy) that may default it
        (CanDefaultManagedBy: no managedBy, or the kind's own controller),
        queued where the ClusterQueue has a MultiKueue check, is managed by
        MultiKueue."""
        field = getattr(self.adapter, "managed_by_field", None)
        if field is None or getattr(job, "spec", None) is None or not field.can_default(job):
            return job
        lookup = getattr(self.rules, "lookup", None)
        queue = labels.get(QUEUE_NAME)
        if lookup is None or not queue:
            return job
        lq = lookup(LOCAL_QUEUE, job.metadata.namespace, queue)
        cq = lookup(CLUSTER_QUEUE, "", lq.spec.cluster_queue) if lq is not None else None
        strategy = cq.spec.admission_checks_strategy if cq is not None else None
        for rule in strategy.admission_checks if strategy is not None else ():
            ac = lookup(ADMISSION_CHECK, "", rule.name)
            if ac is not None and ac.spec.controller_name == MULTIKUEUE_CONTROLLER:
                job = clone(job)
                field.set(job, MULTIKUEUE_CONTROLLER)
                return job
        return job


class JobValidation:
    """Kueue's job validating webhook for one kind (``vjob``), for every job
    it is called for, managed or not: jobframework's ValidateJobOnCreate
    (on updates too), the kind's create rules, then on updates
    ValidateJobOnUpdate and the kind's update rules."""

    operations = ("CREATE", "UPDATE")
    validating = True
    # Kueue's webhook rules name the job resource, not its /status: status
    # writes (most of a job's writes) never reach it.
    status_writes = False

    def __init__(self, adapter: JobAdapter, rules: OwnerRules) -> None:
        self.adapter = adapter
        self.rules = rules
        self.kinds = frozenset({adapter.rtype})
        self.gvk = f"{adapter.api_version}, Kind={adapter.kind}"  # as Go prints it

    def __call__(self, op: Operation, new: Any, old: Any | None) -> Any:
        if resource_type(new) != self.adapter.rtype:
            return new
        if not self.rules.watched(new):
            return new
        a = self.adapter
        errs = self.rules.job_create_errors(new, self.gvk)
        if op == "UPDATE" and old is not None:
            errs += a.validate(new, old, self.rules.is_elastic(new))
            errs += self._topology_errors(new)
            suspended, was = a.is_suspended(new), a.is_suspended(old)
            errs += self.rules.job_update_errors(new, old, self.gvk, suspended, was)
            errs += a.update_errors(new, old)
        elif op == "CREATE":
            errs += a.validate(new, None, self.rules.is_elastic(new))
            errs += self._topology_errors(new)
        if errs:
            refuse(new, errs)
        return new

    def _topology_errors(self, job: Any) -> list[e.FieldError]:
        """The kind's validateTopologyRequest (its adapter's topology_errors,
        for the kinds that have one), under the TopologyAwareScheduling gate."""
        rule = getattr(self.adapter, "topology_errors", None)
        if rule is None or not self.rules.tas:
            return []
        errs: list[e.FieldError] = rule(job, self.rules.is_elastic(job), self.rules.tas_multi_layer)
        return errs


def refuse(obj: Any, errs: list[e.FieldError]) -> NoReturn:
    """The API server's answer to a webhook's errors; the same error twice
    (one rule run on create and on update) is said once, as ToAggregate does."""
    seen: set[str] = set()
    unique: list[e.FieldError] = []
    for err in errs:
        text = str(err)
        if text not in seen:
            seen.add(text)
            unique.append(err)
    group = group_of(obj.api_version)
    raise Invalid(f'{obj.kind}{"." + group if group else ""} "{obj.metadata.name}"', unique)


def go_atoi(text: str) -> int:
    """Go's strconv.Atoi, with its error message (no spaces, no underscores)."""
    if not text or not text.lstrip("+-").isascii() or not text.lstrip("+-").isdigit():
        raise ValueError(f'strconv.Atoi: parsing "{text}": invalid syntax')
    if text[0] in "+-" and text[1:2] in "+-":
        raise ValueError(f'strconv.Atoi: parsing "{text}": invalid syntax')
    v = int(text, 10)
    if not -(2**63) <= v < 2**63:
        raise ValueError(f'strconv.Atoi: parsing "{text}": value out of range')
    return v


_GO_BOOLS: Final = {
    **dict.fromkeys(("1", "t", "T", "TRUE", "true", "True"), True),
    **dict.fromkeys(("0", "f", "F", "FALSE", "false", "False"), False),
}


def go_parse_bool(text: str) -> bool:
    """Go's strconv.ParseBool, with its error message."""
    v = _GO_BOOLS.get(text)
    if v is None:
        raise ValueError(f'strconv.ParseBool: parsing "{text}": invalid syntax')
    return v


# ------------------------------------------------------------------ reconciler
class JobReconciler:
    """The generic job reconciler (jobframework.ReconcileGenericJob)."""

    def __init__(
        self, adapter: JobAdapter, config: KueueConfig, policy: ManagePolicy, rules: OwnerRules
    ) -> None:
        self.adapter = adapter
        self.config = config
        self.policy = policy
        self.rules = rules  # the owner-chain walk
        self.name = f"job:{adapter.rtype[0]}/{adapter.kind}"
        self.mgr: Manager | None = None
        self.partial = config.gate("PartialAdmission")
        self.wait_for_pods_ready = config.wait_for_pods_ready is not None
        self.label_keys = config.integrations.label_keys_to_copy

    def setup(self, mgr: Manager) -> None:
        self.mgr = mgr
        bind = getattr(self.adapter, "bind", None)
        if bind is not None:
            bind(mgr)  # a kind whose podSets read other objects (a TrainJob's runtime)
        jobs = mgr.informer(self.adapter.rtype)
        jobs.on_change(lambda t, o, old: mgr.enqueue(self.name, key_of(o)))
        wls = mgr.informer(WORKLOAD)
        wls.add_index("owner", _owner_uids)
        jobs.add_index("uid", lambda o: [o.metadata.uid])
        wls.on_change(self._workload_changed)
        for rt in getattr(self.adapter, "owned_kinds", ()):
            # Watches(..., EnqueueRequestForOwner): a kind whose podSets read
            # an object it owns (an elastic RayJob's autoscaled RayCluster).
            mgr.informer(rt).on_change(self._owned_changed)
        for rt in (NAMESPACE, LOCAL_QUEUE, WPC, PC, FLAVOR):
            mgr.informer(rt)
        retry_on_priority_class(mgr, self.adapter.rtype, self.name)

    def _workload_changed(self, etype: str, wl: Any, old: Any | None) -> None:
        if not wl.metadata.owner_references:
            return  # no Job of ours (every Workload event comes here)
        assert self.mgr is not None
        jobs = self.mgr.informer(self.adapter.rtype)
        for uid in _owner_uids(wl):
            for job in jobs.by_index("uid", uid):
                self.mgr.enqueue(self.name, key_of(job))

    def _owned_changed(self, etype: str, obj: Any, old: Any | None) -> None:
        assert self.mgr is not None
        for ref in obj.metadata.owner_references or ():
            if ref.controller and ref.kind == self.adapter.kind:
                self.mgr.enqueue(self.name, f"{obj.metadata.namespace}/{ref.name}")

    def _custom_annotations(self, job: Any) -> Any:
        """JobWithCustomAnnotations (an elastic job's slice path): the
        annotations the kind keeps on the job (a RayJob's cluster
        generation), written before its slice is made and named."""
        custom = getattr(self.adapter, "custom_annotations", None)
        if custom is None:
            return job
        want: dict[str, str] = custom(job)
        have = job.metadata.annotations or {}
        if all(k in have and have[k] == v for k, v in want.items()):
            return job
        new = clone(job)
        new.metadata.annotations = {**have, **want}
        try:
            return self._mgr().store.update(new)
        except (Conflict, NotFound):
            return None  # the newer job comes back through the watch

    # -------------------------------------------------------------- reconcile
    def reconcile(self, key: str) -> None:
        mgr = self._mgr()
        job = mgr.informer(self.adapter.rtype).get(key)
        if job is None or job.metadata.deletion_timestamp is not None:
            return None  # the store's garbage collection removes its Workload
        skip = getattr(self.adapter, "skip", None)
        if skip is not None and skip(job):
            return None  # JobWithSkip: the kind says Kueue leaves this one alone
        m = job.metadata
        ns = mgr.informer(NAMESPACE).get(m.namespace)
        if not self.policy.namespace_managed(ns, m.namespace):
            return None
        if m.owner_references:
            ancestor = self.rules.managed_ancestor(job)
            if ancestor is not None:
                self._hold_child(job, ancestor)
                return None
        if not self.policy.job_managed(m.labels):
            return None
        # ensureOneWorkload: an elastic job's slice path first (a podSet
        # renamed falls back to the ordinary one).
        sliced = False
        if not prebuilt_name(job, self.rules.ids) and self.rules.is_elastic(job):
            job = self._custom_annotations(job)
            if job is None:
                return None
            pod_sets = self.adapter.pod_sets(job, self.partial)
            wl, sliced = slicing.ensure_workload_slices(mgr, pod_sets, m.uid)
        if not sliced:
            wl = self._workload_of(job)
        pc = None
        if sliced or wl is not None:
            custom = getattr(self.adapter, "priority_class", None)
            pc = custom(job) if custom is not None else None
        if sliced:
            # syncWorkloadSlicePriority: the admitted slice a replacement waits
            # behind takes the job's priority too (both are ordered against
            # other Workloads in preemption).
            held = slicing.find_latest_active(mgr, m.uid)
            if held is not None and (wl is None or held.metadata.name != wl.metadata.name):
                sync_workload_priority(mgr, job, held, _JOB_COMPONENT, pc)
        if wl is not None:
            # ensureOneWorkload's last step, before anything else reads it.
            wl = sync_workload_priority(mgr, job, wl, _JOB_COMPONENT, pc)
        on_hold = getattr(self.adapter, "on_hold", None)
        if on_hold is not None and on_hold(job):
            # JobWithOnHold: the job cannot run as it is; its quota goes back.
            if wl is not None and has_quota_reservation(wl):
                obs = self.config.gate("UnadmittedWorkloadsObservability")
                unset_quota_reservation(mgr, wl, "OnHold", "Job is on hold", obs)
            return None
        fin = self.adapter.finished(job)
        if fin is not None:
            if wl is not None:
                self._finish_workload(wl, fin)
            return None
        if wl is None:
            if prebuilt_name(job, self.rules.ids):
                return None  # ensureOneWorkload: the prebuilt Workload is awaited
            if sliced:
                # A first slice, or a running job scaled up: a new slice
                # queues while the job (its admitted slice) keeps running.
                self._create_workload(job, sliced=True)
                return None
            if not self.adapter.is_suspended(job):
                self._stop(job, None, "Not admitted by cluster queue")
                return None
            self._create_workload(job)
            return None
        if is_finished(wl):
            return None
        admitted = is_admitted(wl) and not is_evicted(wl)
        if admitted:
            if self.adapter.is_suspended(job):
                self._start(job, wl)
                return None
            self._sync_running(job, wl)
        elif not self.adapter.is_suspended(job):
            if sliced and not is_evicted(wl):
                # A slice waiting for admission: the job runs on as the slice
                # it replaces allows (its extra pods stay gated).
                return None
            self._stop(job, wl, _stop_reason(wl))
        elif self.wait_for_pods_ready:
            self._set_pods_ready(wl, False, "WaitForStart", _NOT_READY_MSG)
        return None

    def _hold_child(self, job: Any, ancestor: Any) -> None:
        """shouldSuspendChildJob: a job admitted as part of a Kueue-managed
        ancestor waits, suspended, while the ancestor's Workload is missing or
        not admitted (its owner unsuspends it)."""
        if self.adapter.is_suspended(job) or self.adapter.finished(job) is not None:
            return
        wls = self._mgr().informer(WORKLOAD).by_index("owner", ancestor.metadata.uid)
        live = [w for w in wls if not is_finished(w)]
        if live and (self.rules.is_elastic(job) or self.rules.is_elastic(ancestor)):
            # A scale-up's new slice waits unadmitted while the old one is
            # finished (replaced): only an eviction stops the child.
            latest = max(live, key=lambda w: (w.metadata.creation_timestamp, w.metadata.uid))
            if not is_evicted(latest):
                return
        elif live and is_admitted(live[-1]):
            return
        self._mgr().store.update(self.adapter.suspend_on_create(job))
        self._event(job, "Normal", "Suspended", "Kueue managed child job suspended")

    def _workload_of(self, job: Any) -> kt.Workload | None:
        name = prebuilt_name(job, self.rules.ids)
        if name:
            return self._prebuilt_workload(job, name)
        mine = self._mgr().informer(WORKLOAD).by_index("owner", job.metadata.uid)
        return mine[0] if mine else None

    def _prebuilt_workload(self, job: Any, name: str) -> kt.Workload | None:
        """ensurePrebuiltWorkloadOwnership: the Workload the job's
        ``kueue.x-k8s.io/prebuilt-workload-name`` label names (MultiKueue's
        copy on a worker) is the job's, made so by a controller reference."""
        mgr = self._mgr()
        wl: kt.Workload | None = mgr.informer(WORKLOAD).get(f"{job.metadata.namespace}/{name}")
        if wl is None or job.metadata.uid in _owner_uids(wl):
            return wl
        new = clone(wl)
        new.metadata.owner_references = [
            *(r for r in wl.metadata.owner_references or () if not r.controller),
            OwnerReference(
                api_version=self.adapter.api_version,
                kind=self.adapter.kind,
                name=job.metadata.name,
                uid=job.metadata.uid,
                controller=True,
                block_owner_deletion=True,
            ),
        ]
        written: kt.Workload = mgr.store.update(new)
        return written

    def _create_workload(self, job: Any, sliced: bool = False) -> None:
        mgr = self._mgr()
        m = job.metadata
        pod_sets = self.adapter.pod_sets(job, self.partial)
        custom = getattr(self.adapter, "priority_class", None)
        ref, priority = extract_priority(
            mgr, job, pod_sets, _JOB_COMPONENT, custom(job) if custom is not None else None
        )
        if ref is False:
            return  # the named WorkloadPriorityClass does not exist (event recorded)
        labels = {k: v for k, v in (m.labels or {}).items() if k in self.label_keys}
        if m.uid and len(m.uid) <= 63:
            labels[JOB_UID] = m.uid
        extra = ""
        if sliced:
            # newWorkloadName: a slice's name takes the job's generation, or
            # what an ElasticWorkloadNameProvider says.
            name_extra = getattr(self.adapter, "workload_name_extra", None)
            extra = name_extra(job) if name_extra is not None else str(m.generation)
        wl = new_workload(
            workload_name(self.adapter, m.name, m.uid, extra),
            job,
            pod_sets,
            labels,
            [
                OwnerReference(
                    api_version=self.adapter.api_version,
                    kind=self.adapter.kind,
                    name=m.name,
                    uid=m.uid,
                    controller=True,
                    block_owner_deletion=True,
                )
            ],
            ref,
            priority,
            # NewWorkload: the job's provreq.kueue.x-k8s.io/ annotations, which
            # the provisioning check passes on as ProvisioningRequest parameters.
            annotations={
                k: v for k, v in (m.annotations or {}).items() if k.startswith(PROVREQ_PREFIX)
            },
        )
        if sliced and not slicing.prepare_slice(mgr, wl, m.uid):
            return
        mgr.store.create(wl)
        self._event(job, "Normal", "CreatedWorkload", f"Created Workload: {key_of(wl)}")

    def _start(self, job: Any, wl: kt.Workload) -> None:
        infos = pod_set_infos(self._mgr(), wl, self.config)
        started = self.adapter.run(job, infos)
        self._mgr().store.update(started)
        adm = wl.status.admission if wl.status else None
        cq = adm.cluster_queue if adm else ""
        self._event(job, "Normal", "Started", f"Admitted by clusterQueue {cq}")

    def _stop(self, job: Any, wl: kt.Workload | None, reason: str) -> None:
        """stopJob, in the Job's two writes: suspended first (the webhook
        refuses a running job's partial-admission parallelism change), then
        its templates restored."""
        store = self._mgr().store
        stopped = self.adapter.stop(job)
        if stopped is not None:
            job = store.update(stopped)
            self._event(job, "Normal", "Stopped", reason)
        restored = self.adapter.restore(job, wl.spec.pod_sets if wl is not None else [])
        if restored is not None:
            store.update(restored)
        if wl is not None and self.wait_for_pods_ready:
            set_workload_condition(
                self._mgr(), wl, "PodsReady", "False", "WaitForStart", _NOT_READY_MSG
            )

    def _sync_running(self, job: Any, wl: kt.Workload) -> None:
        """A running job: keep PodsReady and reclaimablePods current."""
        mgr = self._mgr()
        if self.wait_for_pods_ready:
            sync_pods_ready(mgr, wl, self.adapter.pods_ready(job, wl))
        rp = self.adapter.reclaimable_pods(job)
        current = wl.status.reclaimable_pods if wl.status else None
        if (rp or None) != (current or None):
            new = clone(wl)
            new.status = new.status or kt.WorkloadStatus()
            new.status.reclaimable_pods = rp or None
            write_workload_status(mgr, new)

    def _set_pods_ready(self, wl: kt.Workload, ok: bool, reason: str, message: str) -> None:
        status = "True" if ok else "False"
        set_workload_condition(self._mgr(), wl, "PodsReady", status, reason, message)

    def _finish_workload(self, wl: kt.Workload, fin: Finished) -> None:
        finish_workload(self._mgr(), wl, "Succeeded" if fin.success else "Failed", fin.message)

    def _event(self, job: Any, etype: Any, reason: str, message: str) -> None:
        self._mgr().recorder.event(job, etype, reason, message, _JOB_COMPONENT)

    def _mgr(self) -> Manager:
        assert self.mgr is not None, "setup() first"
        return self.mgr


# ------------------------------------------------------------------ shared by the integrations
# What every integration (the generic job reconciler, the pod integration)
# does the same way: the Workload it builds, the priority it gives it, what an
# admission adds to the pods, and the Workload conditions it writes.


def new_workload(
    name: str,
    owner: Any,
    pod_sets: list[kt.PodSet],
    labels: dict[str, str],
    owner_references: list[OwnerReference],
    priority_class_ref: kt.PriorityClassRef | None,
    priority: int | None,
    annotations: dict[str, str] | None = None,
) -> kt.Workload:
    """jobframework.NewWorkload + prepareWorkload: the Workload of ``owner``
    (the object whose labels say its queue and maximum execution time)."""
    m = owner.metadata
    with_topology_requests(pod_sets)
    return kt.Workload(
        api_version=kt.V1BETA2,
        metadata=ObjectMeta(
            name=name,
            namespace=m.namespace,
            labels=labels or None,
            annotations=annotations or None,
            finalizers=[RESOURCE_IN_USE],
            owner_references=owner_references,
        ),
        spec=kt.WorkloadSpec(
            pod_sets=pod_sets,
            queue_name=(m.labels or {}).get(QUEUE_NAME) or None,
            priority_class_ref=priority_class_ref,
            priority=priority,
            maximum_execution_time_seconds=max_exec_seconds(m.labels),
        ),
    )


def retry_on_priority_class(
    mgr: Manager, rtype: ResourceType, controller: str, key: Callable[[Any], str] = key_of
) -> None:
    """Kueue retries, with backoff, a job whose WorkloadPriorityClass does not
    exist yet (its reconcile returns the error), so the job gets its Workload,
    or its new priority, once the class is created. kuota requeues at that
    creation the jobs of ``rtype`` whose label names the class: the same end,
    without the wait."""
    index = f"{controller}:priority-class"
    owners = mgr.informer(rtype)
    owners.add_index(index, _priority_class_label)

    def created(etype: str, wpc: Any, old: Any | None) -> None:
        if etype == "ADDED":
            for owner in owners.by_index(index, wpc.metadata.name):
                mgr.enqueue(controller, key(owner))

    mgr.informer(WPC).on_change(created)


def _priority_class_label(obj: Any) -> list[str]:
    name = (obj.metadata.labels or {}).get(PRIORITY_CLASS)
    return [name] if name else []


def extract_priority(
    mgr: Manager,
    owner: Any,
    pod_sets: list[kt.PodSet],
    component: str,
    custom: str | None = None,
) -> tuple[Any, int | None]:
    """jobframework.ExtractPriority: the owner's WorkloadPriorityClass label,
    else the PriorityClass the kind names (``custom``: JobWithPriorityClass's
    PriorityClass(), e.g. a Kubeflow job's runPolicy), else the first podSet
    that names one (extractPriorityFromPodSets), else the global default
    PriorityClass. ``(False, None)`` when the named WorkloadPriorityClass
    does not exist (a Warning event on the owner: no Workload is made)."""
    name = (owner.metadata.labels or {}).get(PRIORITY_CLASS)
    if name:
        wpc = mgr.informer(WPC).get(name)
        if wpc is None:
            mgr.recorder.event(
                owner,
                "Warning",
                "WorkloadPriorityClassNotFound",
                f'WorkloadPriorityClass "{name}" not found',
                component,
            )
            return False, None
        ref = kt.PriorityClassRef(group="kueue.x-k8s.io", kind="WorkloadPriorityClass", name=name)
        return ref, wpc.value
    if custom is None:
        specs = (p.template.spec for p in pod_sets)
        custom = next((s.priority_class_name for s in specs if s and s.priority_class_name), "")
    pcs = mgr.informer(PC)
    if custom:
        pc = pcs.get(custom)
        if pc is not None:
            ref = kt.PriorityClassRef(
                group="scheduling.k8s.io", kind="PriorityClass", name=pc.metadata.name
            )
            return ref, pc.value
    defaults = [p for p in pcs.list() if p.global_default]
    if defaults:
        pc = min(defaults, key=lambda p: p.value)
        ref = kt.PriorityClassRef(
            group="scheduling.k8s.io", kind="PriorityClass", name=pc.metadata.name
        )
        return ref, pc.value
    return None, None


def sync_workload_priority(
    mgr: Manager, owner: Any, wl: kt.Workload, component: str, custom: str | None = None
) -> kt.Workload:
    """jobframework.UpdateWorkloadPriority (integrations.md §0, priority): a
    Workload that follows its owner's ``kueue.x-k8s.io/priority-class`` label
    takes the class the label now names, its ``priorityClassRef`` and
    ``priority`` both, pending or admitted (the Workload's rules let a
    WorkloadPriorityClass ref change name while it holds quota), and the
    owner gets an ``UpdatedWorkload`` event. Left alone: a Workload whose
    priority comes from a pod PriorityClass (it does not follow the label);
    one holding quota with no class (the API server refuses to add one); one
    already naming the label's class (its value is the WorkloadPriorityClass
    controller's to keep current, not re-read here). A label naming no
    WorkloadPriorityClass: the ``WorkloadPriorityClassNotFound`` Warning, the
    Workload unchanged (Kueue's reconcile fails there and retries). Returns
    the Workload as stored."""
    ref = wl.spec.priority_class_ref
    if ref is None and has_quota_reservation(wl):
        return wl
    if ref is not None and (ref.group, ref.kind) != (WPC[0], "WorkloadPriorityClass"):
        return wl
    want = (owner.metadata.labels or {}).get(PRIORITY_CLASS, "")
    if (ref.name if ref is not None else "") == want:
        return wl
    new_ref, priority = extract_priority(mgr, owner, wl.spec.pod_sets, component, custom)
    if new_ref is False:
        return wl
    if new_ref == ref and priority == wl.spec.priority:
        return wl
    new = clone(wl)
    new.spec.priority_class_ref = new_ref
    new.spec.priority = priority
    try:
        stored: kt.Workload = mgr.store.update(new)
    except NotFound:
        return wl
    message = f"Updated workload priority class: {key_of(wl)}"
    mgr.recorder.event(owner, "Normal", "UpdatedWorkload", message, component)
    return stored


def from_assignment(mgr: Manager, wl: kt.Workload) -> list[PodSetInfo]:
    """podset.FromAssignment for each podSet of the admission: the flavors'
    node labels and tolerations, the count, and a topology placement's gate
    (what a ProvisioningRequest's pod templates get)."""
    flavors = mgr.informer(FLAVOR)
    adm = wl.status.admission if wl.status else None
    out = []
    for psa in adm.pod_set_assignments if adm else ():
        selector: dict[str, str] = {}
        tolerations: list[kc.Toleration] = []
        for fname in dict.fromkeys((psa.flavors or {}).values()):
            rf = flavors.get(fname)
            if rf is None:
                continue
            selector.update(rf.spec.node_labels or {})
            for t in rf.spec.tolerations or ():
                if t not in tolerations:
                    tolerations.append(t)
        count = psa.count if psa.count is not None else _podset_count(wl, psa.name)
        annotations: dict[str, str] = {}
        gates: list[str] = []
        if psa.topology_assignment is not None:
            # Placed on a topology: gated until the ungater gives each pod its domain.
            gates.append(TOPOLOGY_GATE)
            if not explicit_tas(wl, psa.name):
                annotations[UNCONSTRAINED] = "true"
        out.append(PodSetInfo(psa.name, count, selector, tolerations, {}, annotations, gates))
    return out


def pod_set_infos(mgr: Manager, wl: kt.Workload, config: KueueConfig) -> list[PodSetInfo]:
    """getPodSetsInfoFromStatus: :func:`from_assignment`, the pod set's label,
    and the admission checks' podSetUpdates merged in. Under Kueue's
    TopologyAwareScheduling gate every pod set's pods carry the Workload's
    name (by which the TAS ungater finds them); under AssignQueueLabelsForPods
    the LocalQueue's and ClusterQueue's names as labels."""
    workload_annotation = config.gate("TopologyAwareScheduling")
    queue_labels = config.gate("AssignQueueLabelsForPods")
    adm = wl.status.admission if wl.status else None
    checks = (wl.status.admission_checks or ()) if wl.status else ()
    out = from_assignment(mgr, wl)
    for info in out:
        labels, annotations = info.labels, info.annotations
        if workload_annotation or info.scheduling_gates:
            annotations[WORKLOAD_ANNOTATION] = wl.metadata.name
        if slicing.is_elastic_workload(wl):
            # The chain's name, by which the elastic ungater finds the pods.
            annotations[slicing.SLICE_NAME] = slicing.slice_name(wl)
        labels[PODSET_LABEL] = info.name
        if ORIGIN_LABEL in (wl.metadata.labels or {}):  # a worker's copy
            labels[MULTIKUEUE_WORKER_POD] = "true"  # a MultiKueue worker runs it
        if queue_labels:
            labels[LQ_LABEL] = wl.spec.queue_name or ""
            # assignQueueLabels: only a name that is a valid label value.
            if adm is not None and not is_dns1123_label(adm.cluster_queue):
                labels[CQ_LABEL] = adm.cluster_queue
        for state in checks:
            for upd in state.pod_set_updates or ():
                if upd.name == info.name:
                    info.node_selector.update(upd.node_selector or {})
                    labels.update(upd.labels or {})
                    annotations.update(upd.annotations or {})
                    info.tolerations.extend(
                        [t for t in upd.tolerations or () if t not in info.tolerations]
                    )
                    break
    return out


def explicit_tas(wl: kt.Workload, podset: str) -> bool:
    """The pod set asks for a topology itself (else TAS was implied by its queue)."""
    for ps in wl.spec.pod_sets:
        tr = ps.topology_request
        if ps.name == podset and tr is not None:
            return (
                tr.required is not None or tr.preferred is not None or tr.unconstrained is not None
            )
    return False


def sync_pods_ready(mgr: Manager, wl: kt.Workload, ready: bool) -> bool:
    """The PodsReady condition of an admitted workload whose pods are (or are
    not) all ready (generatePodsReadyCondition); whether it was written."""
    prev = find_condition(wl, "PodsReady")
    if ready:
        recovered = prev is not None and prev.reason in ("WaitForRecovery", "Recovered")
        reason = "Recovered" if recovered else "Started"
        return set_workload_condition(mgr, wl, "PodsReady", "True", reason, _READY_MSG)
    if prev is not None and (prev.status == "True" or prev.reason == "WaitForRecovery"):
        return set_workload_condition(
            mgr, wl, "PodsReady", "False", "WaitForRecovery", _RECOVERY_MSG
        )
    return set_workload_condition(mgr, wl, "PodsReady", "False", "WaitForStart", _NOT_READY_MSG)


def wait_for_start(mgr: Manager, wl: kt.Workload) -> bool:
    """PodsReady of a workload not admitted (yet, or any more)."""
    return set_workload_condition(mgr, wl, "PodsReady", "False", "WaitForStart", _NOT_READY_MSG)


def finish_workload(mgr: Manager, wl: kt.Workload, reason: str, message: str) -> bool:
    """The Finished condition (once: a finished workload stays as it finished)."""
    if is_finished(wl):
        return False
    return set_workload_condition(mgr, wl, "Finished", "True", reason, message)


def set_workload_condition(
    mgr: Manager, wl: kt.Workload, ctype: str, status: str, reason: str, message: str
) -> bool:
    """Set the condition (as set_condition does); whether that was a write."""
    new = with_condition(wl, ctype, status, reason, message, mgr.clock.now())
    if new is None:
        return False
    write_workload_status(mgr, new)
    return True


def unset_quota_reservation(
    mgr: Manager, wl: kt.Workload, reason: str, message: str, observability: bool
) -> None:
    """UnsetQuotaReservationWithCondition: QuotaReserved=False with
    ``reason``, no admission, and Admitted as SyncAdmittedCondition has it
    (``observability``: the UnadmittedWorkloadsObservability gate)."""
    now = mgr.clock.now()
    new = clone(wl)
    was_admitted = is_admitted(new)
    adm = find_condition(new, "Admitted")
    since = adm.last_transition_time if adm is not None else None
    changed = set_condition(new, "QuotaReserved", "False", reason, message, now)
    st = new.status
    assert st is not None
    if st.admission is not None:
        st.admission = None
        changed = True
    checks_ready = all(c.state == "Ready" for c in st.admission_checks or ())
    if observability or was_admitted:
        if not observability and not checks_ready:
            a_reason = "NoReservationUnsatisfiedChecks"
            a_msg = "The workload has no reservation and not all checks ready"
        else:
            a_reason, a_msg = "NoReservation", "The workload has no reservation"
        if was_admitted and since is not None:
            ran = int((now - since).total_seconds())
            st.accumulated_past_execution_time_seconds = (
                st.accumulated_past_execution_time_seconds or 0
            ) + ran
        changed = set_condition(new, "Admitted", "False", a_reason, a_msg, now) or changed
    if changed:
        write_workload_status(mgr, new)


def write_workload_status(mgr: Manager, wl: kt.Workload) -> None:
    try:
        mgr.store.update_status(wl)
    except NotFound:
        return
    # A Conflict propagates: the manager retries the key with backoff.


# ------------------------------------------------------------------ workload helpers
def max_exec_seconds(labels: dict[str, str] | None) -> int | None:
    """The max-exec-time label as Kueue reads it: a positive int32, else none."""
    raw = (labels or {}).get(MAX_EXEC_TIME)
    if raw is None:
        return None
    try:
        v = int(raw, 10)
    except ValueError:
        return None
    return v if 0 < v < 2**31 else None


def prebuilt_name(obj: Any, annotations: bool = True) -> str:
    """PrebuiltWorkloadNameFor: under WorkloadIdentifierAnnotations
    (``annotations``) the annotation, else the label; without it the label,
    or an annotation too long to be a label's value."""
    m = obj.metadata
    ann = (m.annotations or {}).get(PREBUILT_WORKLOAD, "")
    label = (m.labels or {}).get(PREBUILT_WORKLOAD, "")
    if annotations:
        return ann or label
    return label or (ann if len(ann) > LABEL_VALUE_MAX else "")


def _owner_uids(wl: Any) -> list[str]:
    return [r.uid for r in wl.metadata.owner_references or () if r.controller]


def _stop_reason(wl: kt.Workload) -> str:
    ev = find_condition(wl, "Evicted")
    if ev is not None and ev.status == "True":
        return ev.message or ev.reason
    return "Not admitted by cluster queue"


def _podset_count(wl: kt.Workload, name: str) -> int:
    for ps in wl.spec.pod_sets:
        if ps.name == name:
            return ps.count
    return 0
