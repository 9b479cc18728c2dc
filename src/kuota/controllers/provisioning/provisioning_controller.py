"""The provisioning check's workload reconciler (Kueue's ``provisioning/controller.go``).

For a workload holding quota whose ClusterQueue requires a check of controller
``kueue.x-k8s.io/provisioning-request``:

* a ProvisioningRequest ``<workload>-<check>-<attempt>`` is created, with one
  PodTemplate ``ppt-<request>-<podSet>`` per pod set that uses a managed
  resource (merged by ``podSetMergePolicy``), owned by the Workload (the
  templates handed over to the request);
* the check's state follows the autoscaler's answer: Provisioned -> Ready with
  podSetUpdates, Failed or BookingExpired before admission -> Retry with
  Kueue's backoff while attempts remain, else Rejected; CapacityRevoked ->
  Rejected; Accepted -> Pending with the autoscaler's message;
* a finished or evicted workload's requests are deleted.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Final

from kuota.api.autoscaling import provisioningrequest as apr
from kuota.api.conditions import condition_true, find_condition
from kuota.api.k8s.corev1 import PodTemplate
from kuota.api.kueue import types as kt
from kuota.api.kueue.provisioning_config import CONTROLLER_NAME
from kuota.api.meta import ObjectMeta, owner_reference
from kuota.controllers.jobframework import PROVREQ_PREFIX, from_assignment
from kuota.controllers.podset_templates import merge_into
from kuota.controllers.provisioning.check_activity import config_error
from kuota.controllers.provisioning.request_names import (
    attempt_of,
    pod_template_name,
    request_name,
)
from kuota.quota.workload import has_quota_reservation, is_admitted, is_evicted, is_finished
from kuota.runtime.informer import key_of
from kuota.store import AlreadyExists, Conflict, NotFound, clone
from kuota.store.protocol import EventType
from kuota.store.resources import (
    ADMISSION_CHECK,
    POD_TEMPLATE,
    PROVISIONING_REQUEST,
    PROVISIONING_REQUEST_CONFIG,
    WORKLOAD,
)

if TYPE_CHECKING:
    from kuota.api.kueue.provisioning_config import ProvisioningRequestConfig
    from kuota.runtime.manager import Manager

__all__ = ["ProvisioningController", "backoff_seconds"]

COMPONENT: Final = "kueue-admission"
CHECK_INACTIVE: Final = "the check is not active"
NO_REQUEST_NEEDED: Final = "the provisioning request is not needed"
_BY_WORKLOAD: Final = "provisioning:workload"  # requests by owning Workload's key


def backoff_seconds(retry_count: int, base: int, cap: int) -> int:
    """``UpdateAdmissionCheckRequeueState``: base·2^(n-1) capped, n the attempt
    about to be retried (Kueue's 0.01 % jitter left out, as kuota does for
    every backoff, so runs repeat)."""
    n = retry_count + 1
    if base <= 0:
        return 0
    return min(base * 2 ** (n - 1), cap) if cap > 0 else base * 2 ** (n - 1)


def _message(pr: apr.ProvisioningRequest, ctype: str) -> str:
    c = find_condition(pr, ctype)
    return c.message if c is not None else ""


def _uses(spec: Any, managed: set[str]) -> bool:
    for c in (*(spec.init_containers or ()), *(spec.containers or ())):
        r = c.resources
        if r is not None and (managed & set(r.requests or ()) or managed & set(r.limits or ())):
            return True
    return False


def _needs_request(wl: kt.Workload, prc: ProvisioningRequestConfig) -> bool:
    """``reqIsNeeded``: some admitted pod set uses a managed resource."""
    assert wl.status is not None and wl.status.admission is not None
    counts = {a.name: a.count for a in wl.status.admission.pod_set_assignments}
    managed = set(prc.spec.managed_resources or ())
    for ps in wl.spec.pod_sets:
        spec = ps.template.spec
        if ps.count <= 0 or (managed and (spec is None or not _uses(spec, managed))):
            continue
        if ps.name not in counts:
            return False  # inconsistent assignments: Kueue errors and retries
        n = counts[ps.name]
        if (ps.count if n is None else n) > 0:
            return True
    return False


@dataclass(slots=True)
class _Merged:
    name: str
    pod_set: kt.PodSet
    count: int


def _scheduling_shape(ps: kt.PodSet) -> Any:
    """What ``IdenticalWorkloadSchedulingRequirements`` compares."""
    spec = ps.template.spec
    if spec is None:
        return None

    def requests(cs: Any) -> list[Any]:
        return [c.resources.requests if c.resources is not None else None for c in cs or ()]

    return (
        requests(spec.containers),
        requests(spec.init_containers),
        spec.resources,
        spec.node_selector,
        spec.tolerations,
        spec.affinity,
        spec.resource_claims,
    )


def _merged_pod_sets(wl: kt.Workload, prc: ProvisioningRequestConfig) -> list[_Merged]:
    """``mergePodSets``: the pod sets needing capacity, merged by policy."""
    assert wl.status is not None and wl.status.admission is not None
    counts = {a.name: a.count for a in wl.status.admission.pod_set_assignments}
    managed = set(prc.spec.managed_resources or ())
    policy = prc.spec.pod_set_merge_policy
    out: list[_Merged] = []
    for ps in wl.spec.pod_sets:
        spec = ps.template.spec
        if ps.count <= 0 or (managed and (spec is None or not _uses(spec, managed))):
            continue
        n = counts.get(ps.name, ps.count)
        count = ps.count if n is None else n
        if count <= 0:
            continue
        for m in out if policy else ():
            same = (
                m.pod_set.template == ps.template
                if policy == "IdenticalPodTemplates"
                else _scheduling_shape(m.pod_set) == _scheduling_shape(ps)
            )
            if same:
                m.count += count
                break
        else:
            out.append(_Merged(ps.name, ps, count))
    return out


def _limits_as_requests(tmpl: Any) -> None:
    """``UseLimitsAsMissingRequestsInPod``."""
    spec = tmpl.spec
    for c in (*(spec.init_containers or ()), *(spec.containers or ())) if spec else ():
        r = c.resources
        if r is None or not r.limits:
            continue
        r.requests = {**r.limits, **(r.requests or {})}


class ProvisioningController:
    name = "provisioning-workload"

    def __init__(self) -> None:
        self._mgr: Manager | None = None

    # ------------------------------------------------------------ wiring
    def setup(self, mgr: Manager) -> None:
        self._mgr = mgr
        self._wls = mgr.informer(WORKLOAD)
        self._checks = mgr.informer(ADMISSION_CHECK)
        self._configs = mgr.informer(PROVISIONING_REQUEST_CONFIG)
        self._requests = mgr.informer(PROVISIONING_REQUEST)
        self._templates = mgr.informer(POD_TEMPLATE)
        self._requests.add_index(_BY_WORKLOAD, _owning_workload)
        self._wls.on_change(self._on_workload)
        self._requests.on_change(self._on_request)
        self._checks.on_change(self._on_check)
        self._configs.on_change(self._on_config)

    def _on_workload(self, etype: EventType, wl: Any, old: Any | None) -> None:
        if etype == "DELETED" or self._mgr is None:
            return
        st = wl.status
        if st is not None and st.admission_checks:
            self._mgr.enqueue(self.name, key_of(wl))

    def _on_request(self, etype: EventType, pr: Any, old: Any | None) -> None:
        for key in _owning_workload(pr):
            assert self._mgr is not None
            self._mgr.enqueue(self.name, key)

    def _on_check(self, etype: EventType, ac: Any, old: Any | None) -> None:
        was = old is not None and old.spec.controller_name == CONTROLLER_NAME
        if ac.spec.controller_name == CONTROLLER_NAME or was:
            self._workloads_using(ac.metadata.name)

    def _on_config(self, etype: EventType, prc: Any, old: Any | None) -> None:
        for ac in self._checks.list():
            p = ac.spec.parameters
            if p is not None and p.name == prc.metadata.name:
                self._workloads_using(ac.metadata.name)

    def _workloads_using(self, check: str) -> None:
        assert self._mgr is not None
        for wl in self._wls.list():
            # (a Workload given without status has none yet)
            states = (wl.status.admission_checks if wl.status else None) or ()
            if any(s.name == check for s in states):
                self._mgr.enqueue(self.name, key_of(wl))

    @property
    def mgr(self) -> Manager:
        assert self._mgr is not None
        return self._mgr

    # ------------------------------------------------------------ reconcile
    def reconcile(self, key: str) -> timedelta | None:
        wl: kt.Workload | None = self._wls.get(key)
        if wl is None:
            return None
        finished, evicted = is_finished(wl), is_evicted(wl)
        if not has_quota_reservation(wl) and not finished and not evicted:
            return None
        owned = self._requests.by_index(_BY_WORKLOAD, key)
        if finished or evicted:
            # CleanupProvisioningRequestsOnEviction (Beta, on).
            self._delete_unused(owned, set())
            return None
        configs: dict[str, ProvisioningRequestConfig | None] = {}
        for s in wl.status.admission_checks or () if wl.status else ():
            ac = self._checks.get(s.name)
            if ac is None or ac.spec.controller_name != CONTROLLER_NAME:
                continue
            ref = ac.spec.parameters
            ok = config_error(ref, self._configs) is None
            configs[s.name] = self._configs.get(ref.name) if ok else None
        active = self._active_or_last(wl, configs, owned)
        try:
            wl = self._sync_check_states(wl, configs, active)
        except Conflict:
            return timedelta(0)
        if wl is None:
            return None
        self._delete_unused(owned, {r.metadata.name for r in active.values()})
        self._sync_owned_requests(wl, configs, active)
        return None

    def _active_or_last(
        self,
        wl: kt.Workload,
        configs: dict[str, ProvisioningRequestConfig | None],
        owned: list[apr.ProvisioningRequest],
    ) -> dict[str, apr.ProvisioningRequest]:
        out: dict[str, apr.ProvisioningRequest] = {}
        name = wl.metadata.name
        for check, prc in configs.items():
            if prc is None or not _needs_request(wl, prc):
                continue
            for pr in owned:
                attempt = attempt_of(pr.metadata.name, name, check)
                if attempt is None or not _synced_with_config(pr, prc):
                    continue
                cur = out.get(check)
                if cur is None or (attempt_of(cur.metadata.name, name, check) or 0) < attempt:
                    out[check] = pr
        return out

    def _delete_unused(self, owned: list[apr.ProvisioningRequest], keep: set[str]) -> None:
        for pr in owned:
            if pr.metadata.name in keep:
                continue
            with contextlib.suppress(NotFound):
                self.mgr.store.delete(PROVISIONING_REQUEST, pr.metadata.namespace, pr.metadata.name)

    # ------------------------------------------------------------ check states
    def _sync_check_states(
        self,
        wl: kt.Workload,
        configs: dict[str, ProvisioningRequestConfig | None],
        active: dict[str, apr.ProvisioningRequest],
    ) -> kt.Workload | None:
        """The check states from the requests (PatchStatus); returns the
        Workload as it now is, or None when it is gone."""
        now = self.mgr.clock.now()
        assert wl.status is not None
        states = {s.name: s for s in wl.status.admission_checks or ()}
        updated = False
        events: list[str] = []
        new_states = dict(states)
        for check, prc in configs.items():
            s = clone(states[check])
            before = (s.state, s.message)
            if prc is None:
                s.state, s.message = "Pending", CHECK_INACTIVE
            elif not _needs_request(wl, prc):
                if s.state != "Ready":
                    s.state, s.message, s.pod_set_updates = "Ready", NO_REQUEST_NEEDED, None
            else:
                pr = active.get(check)
                if pr is None:
                    return wl  # Kueue leaves every check as it is until the request exists
                self._state_from_request(wl, s, pr, prc, now)
            if (s.state, s.message) != before or s != states[check]:
                updated = True
                if s.state != states[check].state:
                    s.last_transition_time = now
                    msg = f"Admission check {check} updated state from {before[0]} to {s.state}"
                    if s.message:
                        msg += f" with message: {s.message}"
                    events.append(msg)
                new_states[check] = s
        if not updated:
            return wl
        new = clone(wl)
        assert new.status is not None
        new.status.admission_checks = [new_states[n] for n in sorted(new_states)]
        try:
            written: kt.Workload = self.mgr.store.update_status(new)
        except NotFound:
            return None
        for msg in events:
            self.mgr.recorder.event(written, "Normal", "AdmissionCheckUpdated", msg, COMPONENT)
        return written

    def _state_from_request(
        self,
        wl: kt.Workload,
        s: kt.AdmissionCheckState,
        pr: apr.ProvisioningRequest,
        prc: ProvisioningRequestConfig,
        now: Any,
    ) -> None:
        rs = prc.spec.retry_strategy
        limit = rs.backoff_limit_count if rs is not None else 3
        base = rs.backoff_base_seconds if rs is not None else 60
        cap = rs.backoff_max_seconds if rs is not None else 1800
        attempt = attempt_of(pr.metadata.name, wl.metadata.name, s.name) or 1

        def retry_or_reject(ctype: str, prefix: str) -> None:
            if attempt <= limit:
                s.message = f"{prefix}: {_message(pr, ctype)}"
                if attempt > (s.retry_count or 0):
                    s.state = "Retry"
                    s.requeue_after_seconds = backoff_seconds(s.retry_count or 0, base, cap)
            else:
                s.state, s.message = "Rejected", _message(pr, ctype)

        if condition_true(pr, apr.FAILED):
            retry_or_reject(apr.FAILED, "Retrying after failure")
        elif condition_true(pr, apr.CAPACITY_REVOKED):
            if wl.spec.active and not is_finished(wl):
                s.state, s.message = "Rejected", _message(pr, apr.CAPACITY_REVOKED)
        elif condition_true(pr, apr.BOOKING_EXPIRED):
            if not is_admitted(wl):
                retry_or_reject(apr.BOOKING_EXPIRED, "Retrying after booking expired")
        elif condition_true(pr, apr.PROVISIONED):
            if s.state != "Ready":
                s.state = "Ready"
                s.pod_set_updates = _pod_set_updates(wl, pr, prc)
                s.message = _message(pr, apr.PROVISIONED)
        elif condition_true(pr, apr.ACCEPTED):
            c = find_condition(pr, apr.PROVISIONED)
            if c is not None:
                s.state, s.message = "Pending", c.message
        else:
            s.state, s.message = "Pending", ""

    # ------------------------------------------------------------ requests
    def _sync_owned_requests(
        self,
        wl: kt.Workload,
        configs: dict[str, ProvisioningRequestConfig | None],
        active: dict[str, apr.ProvisioningRequest],
    ) -> None:
        assert wl.status is not None
        states = {s.name: s for s in wl.status.admission_checks or ()}
        for check, prc in configs.items():
            if prc is None or not _needs_request(wl, prc):
                continue
            s = states.get(check)
            if s is not None and s.state == "Ready":
                continue
            pr = active.get(check)
            attempt = (s.retry_count or 0) + 1 if s is not None else 1
            create = pr is None
            if pr is not None and (
                (
                    condition_true(pr, apr.FAILED)
                    or (condition_true(pr, apr.BOOKING_EXPIRED) and not is_admitted(wl))
                )
                and s is not None
                and s.state == "Pending"
            ):
                attempt = (attempt_of(pr.metadata.name, wl.metadata.name, check) or 1) + 1
                create = True
            if create:
                pr = self._create_request(wl, check, attempt, prc)
                if pr is None:
                    continue
            assert pr is not None
            self._hand_over_templates(wl, pr)

    def _create_request(
        self, wl: kt.Workload, check: str, attempt: int, prc: ProvisioningRequestConfig
    ) -> apr.ProvisioningRequest | None:
        store = self.mgr.store
        ns = wl.metadata.namespace
        name = request_name(wl.metadata.name, check, attempt)
        params = dict(prc.spec.parameters or {})
        for k, v in (wl.metadata.annotations or {}).items():
            if k.startswith(PROVREQ_PREFIX):
                params[k[len(PROVREQ_PREFIX) :]] = v
        infos = {i.name: i for i in from_assignment(self.mgr, wl)}
        pod_sets: list[apr.PodSet] = []
        for m in _merged_pod_sets(wl, prc):
            pt_name = pod_template_name(name, m.name)
            if self._templates.get(f"{ns}/{pt_name}") is None:
                tmpl = clone(m.pod_set.template)
                if m.name in infos:
                    merge_into(tmpl, infos[m.name])
                _limits_as_requests(tmpl)
                pt = PodTemplate(
                    api_version="v1",
                    kind="PodTemplate",
                    metadata=ObjectMeta(
                        name=pt_name,
                        namespace=ns,
                        labels={"kueue.x-k8s.io/managed": "true"},
                        owner_references=[owner_reference(wl)],
                    ),
                    template=tmpl,
                )
                with contextlib.suppress(AlreadyExists):
                    store.create(pt)
            pod_sets.append(apr.PodSet(pod_template_ref=apr.Reference(name=pt_name), count=m.count))
        req = apr.ProvisioningRequest(
            api_version=apr.API_VERSION,
            kind=apr.KIND,
            metadata=ObjectMeta(
                name=name,
                namespace=ns,
                labels={"kueue.x-k8s.io/managed": "true"},
                owner_references=[owner_reference(wl)],
            ),
            spec=apr.ProvisioningRequestSpec(
                pod_sets=pod_sets,
                provisioning_class_name=prc.spec.provisioning_class_name,
                parameters=params,
            ),
        )
        try:
            created: apr.ProvisioningRequest = store.create(req)
        except AlreadyExists:
            return None  # an earlier reconcile made it: its event brings us back
        self.mgr.recorder.event(
            wl,
            "Normal",
            "ProvisioningRequestCreated",
            f'Created ProvisioningRequest: "{name}"',
            COMPONENT,
        )
        return created

    def _hand_over_templates(self, wl: kt.Workload, pr: apr.ProvisioningRequest) -> None:
        """``syncProvisionRequestsPodTemplates``: the templates' controller
        becomes the request (they go when it goes)."""
        ns = pr.metadata.namespace
        for ps in pr.spec.pod_sets:
            try:  # read through: a template made this instant is not in the cache yet
                pt = self.mgr.store.get(POD_TEMPLATE, ns, ps.pod_template_ref.name or "")
            except NotFound:
                continue
            refs = pt.metadata.owner_references or []
            if any(r.controller and r.uid == pr.metadata.uid for r in refs):
                continue
            new = clone(pt)
            new.metadata.owner_references = [
                r for r in refs if not (r.controller and r.uid == wl.metadata.uid)
            ] + [owner_reference(pr)]
            try:
                self.mgr.store.update(new)
            except (Conflict, NotFound):
                self.mgr.enqueue(self.name, key_of(wl))


def _owning_workload(pr: Any) -> list[str]:
    for r in pr.metadata.owner_references or ():
        if r.controller and r.kind == "Workload" and r.api_version.startswith(kt.GROUP):
            return [f"{pr.metadata.namespace}/{r.name}"]
    return []


def _synced_with_config(pr: apr.ProvisioningRequest, prc: ProvisioningRequestConfig) -> bool:
    """``provReqSyncedWithConfig``."""
    if pr.spec.provisioning_class_name != prc.spec.provisioning_class_name:
        return False
    params = pr.spec.parameters or {}
    return all(params.get(k) == v for k, v in (prc.spec.parameters or {}).items())


def _pod_set_updates(
    wl: kt.Workload, pr: apr.ProvisioningRequest, prc: ProvisioningRequestConfig
) -> list[kt.PodSetUpdate]:
    """``podSetUpdates``: the request's annotations on each of its pod sets'
    pods, and the node selectors the config takes from the class details."""
    by_template = {pod_template_name(pr.metadata.name, ps.name): ps.name for ps in wl.spec.pod_sets}
    details = (pr.status.provisioning_class_details if pr.status else None) or {}
    out: list[kt.PodSetUpdate] = []
    for ps in pr.spec.pod_sets:
        upd = kt.PodSetUpdate(
            name=by_template.get(ps.pod_template_ref.name or "", ""),
            annotations={
                apr.CONSUME_ANNOTATION: pr.metadata.name,
                apr.CLASS_ANNOTATION: pr.spec.provisioning_class_name,
            },
        )
        psu = prc.spec.pod_set_updates
        if psu is not None:
            upd.node_selector = {
                ns.key: details[ns.value_from_provisioning_class_detail]
                for ns in psu.node_selector or ()
                if ns.value_from_provisioning_class_detail in details
            } or None  # a detail the class did not give is skipped, as Kueue logs it
        out.append(upd)
    return out
