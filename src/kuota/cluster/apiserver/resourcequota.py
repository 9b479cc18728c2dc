"""ResourceQuota in the embedded cluster: the API server's admission plugin
(``plugin/pkg/admission/resourcequota``) and kube-controller-manager's
resource quota controller (``pkg/controller/resourcequota``).

* Admission: a create in a namespace with quotas is refused (403) when it
  would take a quota's usage over ``spec.hard`` — ``exceeded quota: q,
  requested: pods=1, used: pods=2, limited: pods=2`` — or when a quota limits
  cpu or memory and a container of the pod names no request (or limit) of it
  — ``failed quota: q: must specify cpu for: c``. The usage it checks against
  is counted afresh at the create (the API server reads ``status.used``, which
  its own admissions keep current; kuota's count is that number without the
  wait for the controller).
* Controller: ``status.hard`` is ``spec.hard`` and ``status.used`` the namespace's
  usage of each of its resources (the pods it selects by its scopes, the
  object counts ``count/<resource>.<group>`` and the legacy names), written
  when a quota or a pod of its namespace changes, or the store writes a kind
  a quota counts.

What a pod uses and the scopes are ``kuota.api.k8s.resourcequota``'s.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

import msgspec

from kuota.api import registry
from kuota.api.base import Quantity
from kuota.api.k8s.resourcequota import (
    LEGACY_COUNTS,
    ResourceQuota,
    ResourceQuotaStatus,
    has_scopes,
    pod_usage,
    quota_selects_pod,
)
from kuota.cluster.apiserver.limitrange import Forbidden
from kuota.cluster.controllers.controller_base import ClusterController
from kuota.runtime.informer import Informer, key_of
from kuota.store.kinds import kind_named, resource_type
from kuota.store.protocol import Conflict, EventType, NotFound, ObjectStore, ResourceType
from kuota.store.resources import POD

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager

__all__ = ["RESOURCE_QUOTA", "ResourceQuotaAdmission", "ResourceQuotaController", "usage"]

RESOURCE_QUOTA: Final[ResourceType] = kind_named("", "ResourceQuota").rtype
# The pod evaluator's resources (beside count/pods): what a pod's usage names.
_POD_PREFIXES: Final = ("requests.", "limits.", "hugepages-")
_POD_NAMES: Final = frozenset({"pods", "count/pods", "cpu", "memory", "ephemeral-storage"})
# enforcePodContainerConstraints: a quota of these needs every container to say.
_CONSTRAINED: Final = {
    "cpu": ("requests", "cpu"),
    "requests.cpu": ("requests", "cpu"),
    "memory": ("requests", "memory"),
    "requests.memory": ("requests", "memory"),
    "limits.cpu": ("limits", "cpu"),
    "limits.memory": ("limits", "memory"),
}


def _is_pod_resource(name: str) -> bool:
    return name in _POD_NAMES or name.startswith(_POD_PREFIXES)


def counted_resource(name: str) -> ResourceType | None:
    """The resource an object count names: ``count/jobs.batch``, ``count/pods``,
    or a legacy name (``configmaps``); None when it counts no stored kind."""
    if name.startswith("count/"):
        resource, _, group = name.removeprefix("count/").partition(".")
    elif name in LEGACY_COUNTS:
        resource, group = LEGACY_COUNTS[name], ""
    else:
        return None
    spec = registry.by_group_resource(group, resource)
    if spec is None:
        return None
    try:
        return kind_named(spec.group, spec.kind).rtype
    except NotFound:
        return None


def _object_usage(obj: Any, rtype: ResourceType, now: datetime) -> dict[str, Quantity]:
    """What creating ``obj`` charges: a pod its pod usage, any object one of
    its count (and its legacy name's)."""
    if rtype == POD:
        return pod_usage(obj, now)
    group, _, resource = rtype
    one = Quantity.from_int(1)
    out = {f"count/{resource}.{group}" if group else f"count/{resource}": one}
    if not group and resource in LEGACY_COUNTS.values():
        out[resource] = one
    return out


def usage(
    rq: ResourceQuota, list_of: Callable[[ResourceType, str], list[Any]], now: datetime
) -> dict[str, Quantity]:
    """The namespace's usage of each resource ``rq`` limits."""
    ns = rq.metadata.namespace or ""
    hard = rq.spec.hard or {}
    out: dict[str, Quantity] = {}
    if any(_is_pod_resource(r) for r in hard):
        totals: dict[str, Quantity] = {}
        for pod in list_of(POD, ns):
            if has_scopes(rq) and not quota_selects_pod(rq, pod):
                continue
            for r, q in pod_usage(pod, now).items():
                if r in hard:
                    totals[r] = totals[r] + q if r in totals else q
        for r in hard:
            if _is_pod_resource(r):
                out[r] = totals.get(r, _zero(r))
    for r in hard:
        if r in out:
            continue
        rtype = counted_resource(r)
        if rtype is not None and not has_scopes(rq):
            out[r] = Quantity.from_int(len(list_of(rtype, ns)))
        else:
            out[r] = _zero(r)
    return out


def _zero(resource: str) -> Quantity:
    return Quantity.from_int(0)


def _pretty(rl: Mapping[str, Quantity], names: list[str]) -> str:
    """The plugin's prettyPrint of a masked resource list: ``a=1,b=2``."""
    return ",".join(f"{r}={rl.get(r, _zero(r))}" for r in names)


def _missing(pod: Any, required: list[str]) -> str | None:
    """``podEvaluator.Constraints``: "must specify cpu for: a,b; memory for: a"."""
    want: dict[str, set[str]] = {}
    spec = pod.spec
    for c in [*(spec.containers or ()), *(spec.init_containers or ())]:
        for r in required:
            field, name = _CONSTRAINED[r]
            res = c.resources
            have = getattr(res, field, None) if res is not None else None
            if not have or name not in have:
                want.setdefault(r, set()).add(c.name)
    if not want:
        return None
    return "must specify " + "; ".join(
        f"{r} for: {','.join(sorted(want[r]))}" for r in sorted(want)
    )


class ResourceQuotaAdmission:
    """The ResourceQuota admission plugin, as a validating store hook on
    creates of every kind (a namespace without quotas costs one dict read)."""

    validating = True
    operations = frozenset({"CREATE"})

    def __init__(self, store: Callable[[], ObjectStore], now: Callable[[], datetime]) -> None:
        self.store = store
        self.now = now
        self._rev = -1
        self._by_ns: dict[str, list[ResourceQuota]] = {}

    def _quotas(self, ns: str) -> list[ResourceQuota]:
        store = self.store()
        rev = store.revision_of(RESOURCE_QUOTA)
        if rev != self._rev:
            by_ns: dict[str, list[ResourceQuota]] = {}
            for rq in store.list(RESOURCE_QUOTA, None).items:
                by_ns.setdefault(rq.metadata.namespace or "", []).append(rq)
            self._by_ns, self._rev = by_ns, rev
        return self._by_ns.get(ns, [])

    def __call__(self, op: str, new: Any, old: Any | None) -> Any:
        ns = new.metadata.namespace
        if op != "CREATE" or not ns:
            return new
        quotas = self._quotas(ns)
        if not quotas:
            return new
        rtype = resource_type(new)
        now = self.now()
        delta = _object_usage(new, rtype, now)
        store = self.store()

        def list_of(rt: ResourceType, namespace: str) -> list[Any]:
            return list(store.list(rt, namespace).items)

        for rq in sorted(quotas, key=lambda q: q.metadata.name):
            hard = rq.spec.hard or {}
            if has_scopes(rq) and (rtype != POD or not quota_selects_pod(rq, new)):
                continue
            touched = sorted(r for r in hard if r in delta)
            if rtype == POD and new.spec is not None:
                required = sorted(r for r in hard if r in _CONSTRAINED)
                missing = _missing(new, required) if required else None
                if missing is not None:
                    raise Forbidden(
                        f"{self._what(new, rtype)} is forbidden: failed quota: "
                        f"{rq.metadata.name}: {missing}"
                    )
            if not touched:
                continue
            used = usage(rq, list_of, now)
            exceeded = [r for r in touched if used[r] + delta[r] > hard[r]]
            if exceeded:
                raise Forbidden(
                    f"{self._what(new, rtype)} is forbidden: exceeded quota: {rq.metadata.name}, "
                    f"requested: {_pretty(delta, exceeded)}, used: {_pretty(used, exceeded)}, "
                    f"limited: {_pretty(hard, exceeded)}"
                )
        return new

    @staticmethod
    def _what(obj: Any, rtype: ResourceType) -> str:
        group, _, resource = rtype
        gr = f"{resource}.{group}" if group else resource
        return f'{gr} "{obj.metadata.name}"'


class ResourceQuotaController(ClusterController):
    """Keeps each quota's ``status`` (hard and used) current: on a quota's
    change, on a change of a pod in a namespace that has quotas, and when the
    store wrote a kind a quota counts."""

    name = "resourcequota"

    def __init__(self) -> None:
        super().__init__()
        self._quotas: Informer | None = None
        self._keys_by_ns: dict[str, set[str]] = {}
        self._seen: dict[tuple[str, ResourceType], int] = {}  # (quota, counted kind) -> revision

    def setup(self, mgr: Manager) -> None:
        super().setup(mgr)
        self._quotas = mgr.informer(RESOURCE_QUOTA)
        self._quotas.on_change(self._on_quota)
        mgr.informer(POD).on_change(self._on_pod)
        mgr.on_idle(self._counts_moved)

    def _counts_moved(self) -> bool:
        """The object counts (``count/jobs.batch``, ``configmaps``) of kinds no
        informer here caches: a quota is recounted when the store wrote its
        kind since the last count (the store's revision of it; one integer
        read per counted kind). True if some quota was queued."""
        revision_of = getattr(self.mgr.store, "revision_of", None)
        if revision_of is None or self._quotas is None:
            return False
        queued = False
        for keys in self._keys_by_ns.values():
            for key in keys:
                rq = self._quotas.get(key)
                if rq is None:
                    continue
                for r in rq.spec.hard or ():
                    rtype = counted_resource(r)
                    if rtype is None or rtype == POD:
                        continue
                    rev = revision_of(rtype)
                    if self._seen.get((key, rtype)) != rev:
                        self._seen[(key, rtype)] = rev
                        self.mgr.enqueue(self.name, key)
                        queued = True
        return queued

    def _on_quota(self, etype: EventType, rq: Any, old: Any | None) -> None:
        key = key_of(rq)
        keys = self._keys_by_ns.setdefault(rq.metadata.namespace or "", set())
        if etype == "DELETED":
            keys.discard(key)
            return
        keys.add(key)
        self.mgr.enqueue(self.name, key)

    def _on_pod(self, etype: EventType, pod: Any, old: Any | None) -> None:
        keys = self._keys_by_ns.get(pod.metadata.namespace or "")
        if not keys:
            return
        if etype == "MODIFIED" and old is not None and _charge(old) == _charge(pod):
            return  # (what a quota counts of it did not change)
        for key in keys:
            self.mgr.enqueue(self.name, key)

    def reconcile(self, key: str) -> timedelta | None:
        assert self._quotas is not None
        rq: ResourceQuota | None = self._quotas.get(key)
        if rq is None or rq.metadata.deletion_timestamp is not None:
            return None
        store = self.mgr.store

        def list_of(rt: ResourceType, namespace: str) -> list[Any]:
            return list(store.list(rt, namespace).items)

        hard = dict(rq.spec.hard or {})
        used = usage(rq, list_of, self.mgr.clock.now())
        status = ResourceQuotaStatus(hard=hard or None, used=used or None)
        if rq.status is not None and _same(rq.status, status):
            return None
        with contextlib.suppress(NotFound, Conflict):
            store.update_status(msgspec.structs.replace(rq, status=status))
        return None


def _charge(pod: Any) -> tuple[Any, ...]:
    """What of a pod a quota reads and that changes after its create."""
    st = pod.status
    m = pod.metadata
    return (st.phase if st is not None else None, m.deletion_timestamp)


def _same(a: ResourceQuotaStatus, b: ResourceQuotaStatus) -> bool:
    return (a.hard or {}) == (b.hard or {}) and (a.used or {}) == (b.used or {})
