"""The embedded cluster's cluster-autoscaler, as far as ProvisioningRequests and
node groups go (``cluster-autoscaler/provisioningrequest``):

* ``check-capacity.autoscaling.x-k8s.io``: the request's pods are fitted on the
  nodes as they are (with the capacity other requests have booked): Provisioned
  (CapacityIsFound) if all fit, else Provisioned=False (CapacityIsNotFound,
  tried again when nodes or pods change) or Failed with the ``noRetry``
  parameter; a provisioned request's booking expires after 10 minutes
  (BookingExpired), an unprovisioned one fails after 7 days (Expired).
* ``best-effort-atomic-scale-up.autoscaling.x-k8s.io``: the pods that do not fit
  are fitted on new nodes of the :class:`~kuota.api.kuotadev.nodegroup.NodeGroup`
  objects (in name order, up to each group's ``maxSize``); all or nothing. When
  they all fit the scale-up is requested and the request is Provisioned at once
  (CapacityIsProvisioned), as cluster-autoscaler marks it; the nodes register
  ``provisioningDelay`` later, or never, for the scale-ups the group's
  ``failurePercent`` fails (a stock-out: its pods wait, as on a cloud).
* Scale-down: a group's node without pods is marked with cluster-autoscaler's
  ``DeletionCandidateOfClusterAutoscaler`` taint and removed
  ``scaleDownUnneededTime`` later, down to ``minSize``.

Every decision reads only stored objects and virtual time, so a run decides
the same each time and resumes from its state."""

from __future__ import annotations

import contextlib
import hashlib
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

import msgspec

from kuota.api.autoscaling import provisioningrequest as apr
from kuota.api.conditions import condition_true, find_condition
from kuota.api.k8s.corev1 import (
    Node,
    NodeCondition,
    NodeSpec,
    NodeStatus,
    Pod,
    PodSpec,
    Taint,
)
from kuota.api.kuotadev import nodegroup as ngapi
from kuota.api.meta import Condition, ObjectMeta
from kuota.cluster.controllers.controller_base import ClusterController
from kuota.cluster.kubescheduler.node_table import NodeTable
from kuota.cluster.kubescheduler.placement import filter_node
from kuota.cluster.nodeutil import pod_resource_requests
from kuota.cluster.podutil import is_terminal
from kuota.runtime.informer import key_of
from kuota.store import AlreadyExists, Conflict, NotFound, clone
from kuota.store.protocol import EventType
from kuota.store.resources import NODE, NODE_GROUP, POD, POD_TEMPLATE, PROVISIONING_REQUEST

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager

__all__ = ["DELETION_CANDIDATE", "NODE_GROUP_DETAIL", "ClusterAutoscaler"]

DELETION_CANDIDATE: Final = "DeletionCandidateOfClusterAutoscaler"
NODE_GROUP_DETAIL: Final = "NodeGroup"  # status.provisioningClassDetails key kuota writes
NO_RETRY: Final = "noRetry"
RESERVATION: Final = timedelta(minutes=10)  # defaultReservationTime
EXPIRATION: Final = timedelta(days=7)  # defaultExpirationTime
_NOT_FOUND_MSG: Final = "Capacity is not found, CA will try to find it later."
_FOUND_MSG: Final = "Capacity is found in the cluster"
_PR: Final = "pr:"
_NG: Final = "ng:"


def _fails(ng: ngapi.NodeGroup, request: str) -> bool:
    """Whether this scale-up is one of the group's failed share: decided by
    the request's name, so a run repeats."""
    pct = ng.spec.failure_percent
    if pct <= 0:
        return False
    h = int(hashlib.sha256(f"{ng.metadata.name}/{request}".encode()).hexdigest()[:8], 16)
    return h % 100 < pct


class ClusterAutoscaler(ClusterController):
    name = "cluster-autoscaler"
    component = "cluster-autoscaler"

    def __init__(self) -> None:
        super().__init__()
        self._waiting: set[str] = set()  # requests to try again when room may appear

    def setup(self, mgr: Manager) -> None:
        super().setup(mgr)
        self._requests = mgr.informer(PROVISIONING_REQUEST)
        self._templates = mgr.informer(POD_TEMPLATE)
        self._groups = mgr.informer(NODE_GROUP)
        self._nodes = mgr.informer(NODE)
        self._pods = mgr.informer(POD)
        self._requests.on_change(self._on_request)
        self._templates.on_change(self._on_template)
        self._groups.on_change(self._on_group)
        self._watching = False

    def _watch_cluster(self) -> None:
        """Follow nodes and pods once there is something to autoscale: a world
        without node groups or requests pays nothing per pod event."""
        if not self._watching:
            self._watching = True
            self._nodes.on_change(self._on_node)
            self._pods.on_change(self._on_pod)

    # ------------------------------------------------------------ events
    def _on_request(self, etype: EventType, pr: Any, old: Any | None) -> None:
        key = key_of(pr)
        self._watch_cluster()
        if etype == "DELETED":
            self._waiting.discard(key)
            # Its booking is gone: a waiting request may fit now (the
            # autoscaler's loop would see it on its next pass).
            self._retry_waiting()
            return
        self.mgr.enqueue(self.name, _PR + key)

    def _on_template(self, etype: EventType, pt: Any, old: Any | None) -> None:
        for r in pt.metadata.owner_references or ():
            if r.kind == apr.KIND:
                self.mgr.enqueue(self.name, f"{_PR}{pt.metadata.namespace}/{r.name}")

    def _on_group(self, etype: EventType, ng: Any, old: Any | None) -> None:
        self._watch_cluster()
        if etype != "DELETED":
            self.mgr.enqueue(self.name, _NG + ng.metadata.name)
            self._retry_waiting()

    def _on_node(self, etype: EventType, node: Any, old: Any | None) -> None:
        group = (node.metadata.labels or {}).get(ngapi.NODE_GROUP_LABEL)
        if group:
            self.mgr.enqueue(self.name, _NG + group)
        if etype != "DELETED":
            self._retry_waiting()

    def _on_pod(self, etype: EventType, pod: Any, old: Any | None) -> None:
        node = pod.spec.node_name if pod.spec is not None else None
        was = old.spec.node_name if old is not None and old.spec is not None else None
        freed = etype == "DELETED" or (is_terminal(pod) and not (old and is_terminal(old)))
        for name in {node, was} - {None}:
            n = self._nodes.get(name)  # type: ignore[arg-type]
            group = (n.metadata.labels or {}).get(ngapi.NODE_GROUP_LABEL) if n else None
            if group:
                self.mgr.enqueue(self.name, _NG + group)
        if freed and node:
            self._retry_waiting()

    def _retry_waiting(self) -> None:
        for key in self._waiting:
            self.mgr.enqueue(self.name, _PR + key)

    # ------------------------------------------------------------ reconcile
    def reconcile(self, key: str) -> timedelta | None:
        if key.startswith(_PR):
            self._request(key[len(_PR) :])
        elif key.startswith(_NG):
            self._group(key[len(_NG) :])
        return None

    # ------------------------------------------------------------ requests
    def _request(self, key: str) -> None:
        pr: apr.ProvisioningRequest | None = self._requests.get(key)
        self._waiting.discard(key)
        if pr is None or condition_true(pr, apr.FAILED) or condition_true(pr, apr.BOOKING_EXPIRED):
            return
        cls = pr.spec.provisioning_class_name
        if cls not in (apr.CHECK_CAPACITY, apr.BEST_EFFORT_ATOMIC):
            return  # not a class this autoscaler serves: left for another
        now = self.mgr.clock.now()
        if condition_true(pr, apr.PROVISIONED):
            if cls == apr.CHECK_CAPACITY:
                since = find_condition(pr, apr.PROVISIONED).last_transition_time or now  # type: ignore[union-attr]
                if since + RESERVATION < now:
                    self._set(
                        pr,
                        apr.BOOKING_EXPIRED,
                        "True",
                        "CapacityReservationTimeExpired",
                        "Capacity reservation time is expired",
                    )
                else:
                    self.mgr.enqueue_at(self.name, _PR + key, since + RESERVATION + _TICK)
            return
        created = pr.metadata.creation_timestamp or now
        if cls == apr.CHECK_CAPACITY and created + EXPIRATION < now:
            self._set(pr, apr.FAILED, "True", "Expired", "ProvisioningRequest is expired")
            return
        pods = self._pods_of(pr)
        if pods is None:
            return  # a template is not there yet: its event brings it back
        pr = self._set(
            pr,
            apr.ACCEPTED,
            "True",
            "Accepted",
            "ProvisioningRequest is accepted by ClusterAutoscaler",
        )
        if pr is None:
            return
        table = self._table(exclude=key)
        rest = _fit(pods, table)
        if not rest:
            self._set(pr, apr.PROVISIONED, "True", "CapacityIsFound", _FOUND_MSG)
            return
        if cls == apr.CHECK_CAPACITY and (pr.spec.parameters or {}).get(NO_RETRY) == "true":
            self._set(
                pr, apr.FAILED, "True", "CapacityIsNotFound", "CA could not find requested capacity"
            )
            return
        if cls == apr.BEST_EFFORT_ATOMIC:
            plan = self._scale_up_plan(rest)
            if plan is not None:
                self._scale_up(pr, plan, now)
                return
        self._set(pr, apr.PROVISIONED, "False", "CapacityIsNotFound", _NOT_FOUND_MSG)
        self._waiting.add(key)
        if cls == apr.CHECK_CAPACITY:
            self.mgr.enqueue_at(self.name, _PR + key, created + EXPIRATION + _TICK)

    def _pods_of(self, pr: apr.ProvisioningRequest) -> list[Pod] | None:
        ns = pr.metadata.namespace
        pods: list[Pod] = []
        for ps in pr.spec.pod_sets:
            pt = self._templates.get(f"{ns}/{ps.pod_template_ref.name}")
            if pt is None or pt.template is None:
                return None
            pod = Pod(api_version="v1", kind="Pod", metadata=ObjectMeta(), spec=pt.template.spec)
            pods += [pod] * ps.count
        return pods

    def _table(self, exclude: str) -> NodeTable:
        """The nodes with their pods, and the capacity other provisioned
        requests have booked and not yet used (cluster-autoscaler's booking)."""
        table = NodeTable()
        for n in self._nodes.list():
            table.set_node(n)
        consumed: dict[str, int] = {}
        for p in self._pods.list():
            if p.spec is not None and p.spec.node_name and not is_terminal(p):
                table.set_pod(key_of(p), p)
                req = (p.metadata.annotations or {}).get(apr.CONSUME_ANNOTATION)
                if req:
                    k = f"{p.metadata.namespace}/{req}"
                    consumed[k] = consumed.get(k, 0) + 1
        for other in self._requests.list():
            k = key_of(other)
            if k == exclude or not condition_true(other, apr.PROVISIONED):
                continue
            if condition_true(other, apr.BOOKING_EXPIRED) or condition_true(other, apr.FAILED):
                continue
            booked = self._pods_of(other) or []
            _fit(booked[consumed.get(k, 0) :], table, key=f"booked:{k}")
        return table

    def _scale_up_plan(self, pods: list[Pod]) -> dict[str, list[Node]] | None:
        """New nodes per group that take every pod (first fit: the new nodes
        opened so far, then a new node of the first group in name order whose
        template takes the pod and has room), or None."""
        groups = sorted(self._groups.list(), key=lambda g: g.metadata.name)
        room = {g.metadata.name: g.spec.max_size - self._size(g) for g in groups}
        plan: dict[str, list[Node]] = {}
        table = NodeTable()
        serial = 0
        for i, pod in enumerate(pods):
            requests = pod_resource_requests(pod)
            if any(not filter_node(pod, requests, st) for st in table.sorted()):
                _fit([pod], table, key=f"new:{i}")
                continue
            for g in groups:
                if room[g.metadata.name] <= 0:
                    continue
                node = self._template_node(g, f"~candidate-{serial}")
                probe = NodeTable()
                probe.set_node(node)
                if filter_node(pod, requests, probe.sorted()[0]):
                    continue
                serial += 1
                room[g.metadata.name] -= 1
                plan.setdefault(g.metadata.name, []).append(node)
                table.set_node(node)
                _fit([pod], table, key=f"new:{i}")
                break
            else:
                return None
        return plan

    def _scale_up(
        self, pr: apr.ProvisioningRequest, plan: dict[str, list[Node]], now: datetime
    ) -> None:
        request = key_of(pr)
        for group, nodes in sorted(plan.items()):
            ng = self._groups.get(group)
            if ng is None:
                continue
            names = self._new_names(ng, len(nodes))
            delay = timedelta(seconds=ngapi.duration_of(ng.spec.provisioning_delay))
            failed = _fails(ng, request)
            new = clone(ng)
            st = new.status if new.status is not None else ngapi.NodeGroupStatus()
            st.pending_scale_ups = [
                *(st.pending_scale_ups or ()),
                ngapi.PendingScaleUp(
                    nodes=names, ready_at=now + delay, request=request, failed=failed
                ),
            ]
            new.status = st
            with contextlib.suppress(Conflict, NotFound):
                self.mgr.store.update_status(new)
            self.event(
                ng,
                "Normal",
                "TriggeredScaleUp",
                f"scale-up of {len(names)} node(s) for ProvisioningRequest {request}: "
                f"{', '.join(names)}",
            )
            self.mgr.enqueue_at(self.name, _NG + group, now + delay)
        details = {NODE_GROUP_DETAIL: ",".join(sorted(plan))}
        self._set(pr, apr.PROVISIONED, "True", "CapacityIsProvisioned", _FOUND_MSG, details)

    def _set(
        self,
        pr: apr.ProvisioningRequest,
        ctype: str,
        status: str,
        reason: str,
        message: str,
        details: dict[str, str] | None = None,
    ) -> apr.ProvisioningRequest | None:
        """``AddOrUpdateCondition`` and a status write when it changes something."""
        c = find_condition(pr, ctype)
        same = c is not None and (c.status, c.reason, c.message) == (status, reason, message)
        if same and details is None:
            return pr
        new = clone(pr)
        st = new.status if new.status is not None else apr.ProvisioningRequestStatus()
        now = self.mgr.clock.now()
        cond = Condition(
            type=ctype,
            status=status,  # type: ignore[arg-type]
            reason=reason,
            message=message,
            last_transition_time=now,
            observed_generation=pr.metadata.generation or None,
        )
        conds = list(st.conditions or ())
        for i, old in enumerate(conds):
            if old.type == ctype:
                conds[i] = cond
                break
        else:
            conds.append(cond)
        st.conditions = conds
        if details is not None:
            st.provisioning_class_details = {**(st.provisioning_class_details or {}), **details}
        new.status = st
        try:
            written: apr.ProvisioningRequest = self.mgr.store.update_status(new)
        except Conflict:
            self.mgr.enqueue(self.name, _PR + key_of(pr))
            return None
        except NotFound:
            return None
        return written

    # ------------------------------------------------------------ node groups
    def _members(self, group: str) -> list[Node]:
        return [
            n
            for n in self._nodes.list()
            if (n.metadata.labels or {}).get(ngapi.NODE_GROUP_LABEL) == group
        ]

    def _size(self, ng: ngapi.NodeGroup) -> int:
        """Registered nodes and nodes on their way."""
        pending = ng.status.pending_scale_ups if ng.status is not None else None
        return len(self._members(ng.metadata.name)) + sum(
            len(p.nodes) for p in pending or () if not p.failed
        )

    def _new_names(self, ng: ngapi.NodeGroup, n: int) -> list[str]:
        taken = {x.metadata.name for x in self._nodes.list()}
        for p in (ng.status.pending_scale_ups if ng.status else None) or ():
            taken.update(p.nodes)
        names: list[str] = []
        i = 0
        while len(names) < n:
            name = f"{ng.metadata.name}-{i}"
            if name not in taken:
                names.append(name)
            i += 1
        return names

    def _template_node(self, ng: ngapi.NodeGroup, name: str) -> Node:
        t = ng.spec.template
        labels = {
            **(t.metadata.labels or {}),
            ngapi.NODE_GROUP_LABEL: ng.metadata.name,
            "kubernetes.io/hostname": name,
        }
        status = clone(t.status) if t.status is not None else NodeStatus()
        if not status.allocatable:
            status.allocatable = dict(status.capacity or {})
        status.conditions = [NodeCondition(type="Ready", status="True")]
        return Node(
            api_version="v1",
            kind="Node",
            metadata=ObjectMeta(name=name, labels=labels, annotations=t.metadata.annotations),
            spec=clone(t.spec) if t.spec is not None else NodeSpec(),
            status=status,
        )

    def _group(self, name: str) -> None:
        ng: ngapi.NodeGroup | None = self._groups.get(name)
        if ng is None:
            return
        now = self.mgr.clock.now()
        st = ng.status if ng.status is not None else ngapi.NodeGroupStatus()
        due = [p for p in st.pending_scale_ups or () if p.ready_at <= now]
        later = [p for p in st.pending_scale_ups or () if p.ready_at > now]
        for p in due:
            if p.failed:
                self.event(
                    ng,
                    "Warning",
                    "FailedToScaleUpGroup",
                    f"{len(p.nodes)} node(s) for ProvisioningRequest {p.request} did not come up "
                    f"(a stock-out: failurePercent {ng.spec.failure_percent})",
                )
                continue
            for n in p.nodes:
                with contextlib.suppress(AlreadyExists):
                    self.mgr.store.create(self._template_node(ng, n))
        next_check = min((p.ready_at for p in later), default=None)
        members = self._members(name)
        unneeded = timedelta(seconds=ngapi.duration_of(ng.spec.scale_down_unneeded_time))
        busy = self._busy_nodes()
        keep = len(members)
        for node in sorted(members, key=lambda n: n.metadata.name, reverse=True):
            since = _candidate_since(node)
            if node.metadata.name in busy:
                if since is not None:
                    self._mark(node, None)
                continue
            if since is None:
                self._mark(node, now)
                since = now
            if since + unneeded <= now and keep > ng.spec.min_size:
                with contextlib.suppress(NotFound):
                    self.mgr.store.delete(NODE, "", node.metadata.name)
                keep -= 1
                self.event(
                    ng,
                    "Normal",
                    "ScaleDown",
                    f"node {node.metadata.name} removed: unneeded since {since:%Y-%m-%dT%H:%M:%SZ}",
                )
            elif keep > ng.spec.min_size:
                at = since + unneeded
                next_check = at if next_check is None else min(next_check, at)
        if due or st.nodes != keep:
            new = clone(ng)
            new.status = ngapi.NodeGroupStatus(nodes=keep, pending_scale_ups=later or None)
            with contextlib.suppress(Conflict, NotFound):
                self.mgr.store.update_status(new)
        if next_check is not None:
            self.mgr.enqueue_at(self.name, _NG + name, next_check)

    def _busy_nodes(self) -> set[str]:
        """Nodes with a pod that is not a DaemonSet's and has not finished."""
        busy: set[str] = set()
        for p in self._pods.list():
            if p.spec is None or not p.spec.node_name or is_terminal(p):
                continue
            if any(r.kind == "DaemonSet" for r in p.metadata.owner_references or ()):
                continue
            busy.add(p.spec.node_name)
        return busy

    def _mark(self, node: Node, since: datetime | None) -> None:
        """cluster-autoscaler's soft taint on an unneeded node (its value the
        Unix time it became unneeded), or its removal."""
        new = clone(node)
        spec = new.spec if new.spec is not None else NodeSpec()
        taints = [t for t in spec.taints or () if t.key != DELETION_CANDIDATE]
        if since is not None:
            taints.append(
                Taint(
                    key=DELETION_CANDIDATE,
                    value=str(int(since.timestamp())),
                    effect="PreferNoSchedule",
                )
            )
        spec.taints = taints or None
        new.spec = spec
        with contextlib.suppress(Conflict, NotFound):
            self.mgr.store.update(new)


_TICK: Final = timedelta(microseconds=1)  # "after", as the autoscaler's Before(now) reads


def _candidate_since(node: Node) -> datetime | None:
    for t in (node.spec.taints if node.spec is not None else None) or ():
        if t.key == DELETION_CANDIDATE and t.value and t.value.isdigit():
            return datetime.fromtimestamp(int(t.value), UTC)
    return None


def _fit(pods: list[Pod], table: NodeTable, key: str = "fit") -> list[Pod]:
    """First fit of ``pods`` into ``table`` (each placed pod's requests
    counted on its node); returns the pods that did not fit."""
    rest: list[Pod] = []
    for i, pod in enumerate(pods):
        requests = pod_resource_requests(pod)
        for st in table.sorted():
            if not filter_node(pod, requests, st):
                placed = Pod(
                    api_version="v1",
                    kind="Pod",
                    metadata=ObjectMeta(),
                    spec=msgspec.structs.replace(
                        pod.spec or PodSpec(containers=[]), node_name=st.name
                    ),
                )
                table.set_pod(f"{key}/{i}", placed, requests)
                break
        else:
            rest.append(pod)
    return rest
