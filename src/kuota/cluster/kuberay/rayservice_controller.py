"""KubeRay's RayService controller (``ray-operator/controllers/ray/
rayservice_controller.go``), as far as a queue needs it: per RayService one
RayCluster ``<service>-<5 chars>`` made from ``rayClusterConfig`` (owned by
the service, its spec kept equal to the service's, so that Kueue's suspend
and the node selectors of its admission reach the cluster), its name and
status in ``activeServiceStatus``, and the Ready condition True (reason
``NonZeroServeEndpoints``, ``serviceStatus: Running``) while the cluster is
ready, False (``ZeroServeEndpoints``) otherwise. A spec KubeRay's checks
refuse: a Warning event and Ready False (``ValidationFailed``).

Not modelled: Serve applications (``serveConfigV2`` is carried, never run),
the serve Service, zero-downtime upgrades through a pending cluster (a
changed cluster spec is applied to the one cluster)."""

from __future__ import annotations

import contextlib
import hashlib
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

import msgspec

from kuota.api.meta import Condition, ObjectMeta
from kuota.api.ray import kuberay_rules as rules
from kuota.api.ray import ray_types as r
from kuota.cluster.controllers.appsutil import safe_encode
from kuota.cluster.controllers.controller_base import ClusterController
from kuota.cluster.podutil import controller_ref, is_deleting, owner_reference
from kuota.runtime.informer import Informer, key_of
from kuota.store import AlreadyExists, Conflict, NotFound, clone
from kuota.store.protocol import EventType
from kuota.store.resources import RAY_CLUSTER, RAY_SERVICE

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager

__all__ = ["RayServiceController"]

COMPONENT: Final = "rayservice-controller"


class RayServiceController(ClusterController):
    """Reads RayServices and RayClusters; writes RayClusters and RayService status."""

    name = "kuberay-rayservice"
    component = COMPONENT

    def __init__(self) -> None:
        super().__init__()
        self._services: Informer | None = None
        self._clusters: Informer | None = None

    def setup(self, mgr: Manager) -> None:
        super().setup(mgr)
        self._services = mgr.informer(RAY_SERVICE)
        self._services.on_change(self._on_service)
        self._clusters = mgr.informer(RAY_CLUSTER)
        self._clusters.on_change(self._on_cluster)

    def _on_service(self, etype: EventType, svc: Any, old: Any | None) -> None:
        if etype != "DELETED":
            self.mgr.enqueue(self.name, key_of(svc))

    def _on_cluster(self, etype: EventType, rc: Any, old: Any | None) -> None:
        ref = controller_ref(rc)
        if ref is not None and ref.kind == "RayService":
            self.mgr.enqueue(self.name, f"{rc.metadata.namespace}/{ref.name}")

    def reconcile(self, key: str) -> timedelta | None:
        assert self._services is not None and self._clusters is not None
        svc: r.RayService | None = self._services.get(key)
        if svc is None or is_deleting(svc):
            return None
        if svc.spec.managed_by not in (None, r.OPERATOR):
            return None  # another controller's (MultiKueue)
        now = self.mgr.clock.now()
        st = clone(svc.status) if svc.status is not None else r.RayServiceStatuses()
        err = rules.rayservice_error(svc)
        if err:
            self.event(svc, "Warning", "InvalidRayServiceSpec", f"{key}: {err}")
            _ready(st, False, "ValidationFailed", err, now)
            self._write(svc, st)
            return None
        active = st.active_service_status or r.RayServiceStatus()
        name = active.ray_cluster_name or _cluster_name(svc)
        rc = self._clusters.get(f"{svc.metadata.namespace}/{name}")
        if rc is not None and (controller_ref(rc) or _NO_REF).uid != svc.metadata.uid:
            rc = None
        if rc is None:
            self._create(svc, name)
        elif rc.spec != (want := _wanted_spec(svc, rc)):
            updated = clone(rc)
            updated.spec = want
            with contextlib.suppress(NotFound, Conflict):
                self.mgr.store.update(updated)
        active.ray_cluster_name = name
        active.ray_cluster_status = clone(rc.status) if rc is not None and rc.status else None
        st.active_service_status = active
        ready = rc is not None and rc.status is not None and rc.status.state == "ready"
        if ready:
            assert rc is not None and rc.status is not None
            st.num_serve_endpoints = 1 + (rc.status.ready_worker_replicas or 0)
            st.service_status = "Running"
            _ready(st, True, "NonZeroServeEndpoints", "", now)
        else:
            st.num_serve_endpoints = None
            st.service_status = None
            _ready(st, False, "ZeroServeEndpoints" if rc is not None else "Initializing", "", now)
        self._write(svc, st)
        return None

    def _create(self, svc: r.RayService, name: str) -> None:
        rc = r.RayCluster(
            metadata=ObjectMeta(
                name=name,
                namespace=svc.metadata.namespace,
                labels={
                    **(svc.metadata.labels or {}),
                    r.ORIGINATED_FROM_NAME_LABEL: svc.metadata.name,
                    r.ORIGINATED_FROM_CR_LABEL: "RayService",
                },
                annotations=dict(svc.metadata.annotations) if svc.metadata.annotations else None,
                owner_references=[owner_reference(svc)],
            ),
            spec=clone(svc.spec.ray_cluster_config),
        )
        try:
            self.mgr.store.create(rc)
        except AlreadyExists:
            return
        except Exception as err:  # refused by an admission rule
            self.event(
                svc, "Warning", "FailedToCreateRayCluster", f"Failed to create RayCluster: {err}"
            )

    def _write(self, svc: r.RayService, st: r.RayServiceStatuses) -> None:
        st.observed_generation = svc.metadata.generation or None
        if st == (svc.status or r.RayServiceStatuses()):
            return
        st.last_update_time = self.mgr.clock.now()
        with contextlib.suppress(NotFound, Conflict):
            self.mgr.store.update_status(msgspec.structs.replace(svc, status=st))


class _NoRef:
    uid = ""


_NO_REF: Final = _NoRef()


def _wanted_spec(svc: r.RayService, rc: r.RayCluster) -> r.RayClusterSpec:
    """The service's cluster spec; with in-tree autoscaling, the worker
    groups' replicas are the autoscaler's, kept as the cluster has them
    (KubeRay hashes a cluster's spec without replicas)."""
    want = clone(svc.spec.ray_cluster_config)
    if want.enable_in_tree_autoscaling:
        have = {wg.group_name: wg.replicas for wg in rc.spec.worker_group_specs or ()}
        for wg in want.worker_group_specs or ():
            if wg.group_name in have:
                wg.replicas = have[wg.group_name]
    return want


def _cluster_name(svc: r.RayService) -> str:
    """GenerateRayClusterName, made deterministic from the service's uid."""
    digest = hashlib.sha256(f"{svc.metadata.uid}/cluster".encode()).hexdigest()[:5]
    return f"{svc.metadata.name}-{safe_encode(digest)}"


def _ready(st: r.RayServiceStatuses, ok: bool, reason: str, message: str, now: datetime) -> None:
    status = "True" if ok else "False"
    conds = list(st.conditions or ())
    old = next((c for c in conds if c.type == "Ready"), None)
    if old is not None and old.status == status and old.reason == reason:
        return
    new = Condition(
        type="Ready",
        status=status,  # type: ignore[arg-type]
        reason=reason,
        message=message,
        last_transition_time=now
        if old is None or old.status != status
        else old.last_transition_time,
    )
    st.conditions = [c for c in conds if c.type != "Ready"] + [new]
