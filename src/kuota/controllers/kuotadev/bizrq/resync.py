"""The bizrq controller: refreshes a group's status when the group or one of
its objects changes (an object deleted or relabelled gives its use back), and
resyncs every group periodically (``spec.resyncPeriod``, ResourceQuota's 5
minutes by default): ``selfUsed`` recomputed from the objects themselves,
``used`` = selfUsed + the children's grants, drift repaired and logged with
the numbers before and after (a webhook-approved object whose creation then
failed, a write lost). Budgets (``cash/`` keys) accrue, they are not
recomputed from objects: each refresh adds what the group's pods burnt since
``lastReconcileTime`` (``pod_runs``, ``kuota.quota.bizgroups.budget``), a
pod's start or end refreshes its group at that instant, and a timer wakes it
when a budget runs out at the current burn, so a spent budget is seen at the
instant it is spent: a ``BudgetExhausted`` condition and Event say so (what
runs is never stopped)."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Final

from kuota.api.kueue.config.durations import parse_duration
from kuota.api.kuotadev.bizrq import BizGroupResourceQuota, BizGroupStatus, is_cash
from kuota.controllers.kuotadev.bizrq.accounts import used_of
from kuota.controllers.kuotadev.bizrq.admission_check import (
    BizrqAdmissionCheck,
    check_holds,
    owner_of,
)
from kuota.controllers.kuotadev.bizrq.budget_status import budget_condition
from kuota.controllers.kuotadev.bizrq.hpa_webhook import hpa_target
from kuota.controllers.kuotadev.bizrq.object_webhook import ObjectQuotaWebhook, group_of
from kuota.controllers.kuotadev.bizrq.pod_runs import PodRunTracker
from kuota.controllers.kuotadev.bizrq.status_cas import resource_list, update_status_cas
from kuota.quota.bizgroups.budget import BudgetLedger, run_out_at
from kuota.quota.bizgroups.owners import charge, workload_parts
from kuota.quota.bizgroups.tree import hard_milli, shown
from kuota.quota.bizgroups.usage import Usage, add_into
from kuota.runtime.clock import VirtualClock
from kuota.runtime.informer import Informer
from kuota.store import NotFound
from kuota.store.protocol import EventType
from kuota.store.resources import BIZRQ, HPA, POD, WORKLOAD

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager

__all__ = ["BizrqController", "recompute"]

log = logging.getLogger("kuota.bizrq")
_BY_GROUP: Final = "bizrq-group"
_BY_OWNER: Final = "bizrq-owner"


def _standalone_group(wl: Any) -> list[str]:
    """A Workload with no job behind it, labelled into a group (Queue mode)."""
    if any(r.controller for r in wl.metadata.owner_references or ()):
        return []
    return _group_index(wl)


def _owner_index(wl: Any) -> list[str]:
    return [r.uid for r in wl.metadata.owner_references or () if r.controller and r.uid]


def _group_index(obj: Any) -> list[str]:
    g = group_of(obj)
    return [g] if g else []


def _first(values: list[str]) -> str:
    return values[0] if values else ""


def recompute(
    node: BizGroupResourceQuota,
    objects_use: Usage,
    children: list[BizGroupResourceQuota],
    accrued: Usage | None = None,
) -> tuple[Usage, Usage]:
    """(used, selfUsed) over the node's hard keys, from its objects' use and
    its children's grants; budgets keep their accrued use plus ``accrued``."""
    hard = node.spec.hard or {}
    _, old_self = used_of(node)
    self_used = {k: v for k, v in objects_use.items() if k in hard and not is_cash(k)}
    for k in hard:
        if is_cash(k):
            v = old_self.get(k, 0) + (accrued.get(k, 0) if accrued else 0)
            if v:
                self_used[k] = v
    used = dict(self_used)
    for c in children:
        add_into(used, {k: v for k, v in hard_milli(c).items() if k in hard})
    return used, self_used


class BizrqController:
    name = "bizrq"
    component = "kuota-bizrq"

    def __init__(
        self,
        webhook: ObjectQuotaWebhook,
        check: BizrqAdmissionCheck,
        ledger: BudgetLedger | None = None,
    ) -> None:
        self._webhook = webhook
        self._check = check
        self._workloads: Informer | None = None
        self._mgr: Manager | None = None
        self._groups: Informer | None = None
        self._objects: list[Informer] = []
        self.ledger = ledger if ledger is not None else BudgetLedger()

    def setup(self, mgr: Manager) -> None:
        self._mgr = mgr
        self._groups = mgr.informer(BIZRQ)
        self._groups.on_change(self._on_group)
        for rtype in sorted(self._webhook.kinds):
            inf = mgr.informer(rtype)
            inf.add_index(_BY_GROUP, _group_index)
            inf.on_change(self._on_object)
            self._objects.append(inf)
        groups = self._groups
        tracker = PodRunTracker(
            lambda: mgr.store,
            self.ledger,
            mgr.clock.now,
            lambda g: mgr.enqueue(self.name, g),
            lambda: bool(groups.objects),
        )
        mgr.informer(POD).on_change(tracker.on_pod)
        self._tracker = tracker
        self._pods_seen = False  # the pods met while no group existed, replayed once
        self._workloads = mgr.informer(WORKLOAD)
        self._workloads.add_index(_BY_OWNER, _owner_index)
        self._workloads.add_index(_BY_GROUP, _standalone_group)
        self._workloads.on_change(self._on_workload)
        mgr.informer(HPA).on_change(self._on_hpa)

    def _no_tree(self) -> bool:
        """No group at all (most runs): nothing to charge, watch or accrue."""
        return self._mgr is None or self._groups is None or not self._groups.objects

    def _on_hpa(self, etype: EventType, hpa: Any, old: Any | None) -> None:
        # An HPA deleted or lowered gives back what its maxReplicas charged.
        if self._no_tree() or self._mgr is None:
            return
        target = hpa_target(self._mgr.store, hpa)
        group = group_of(target)
        if group:
            self._mgr.enqueue(self.name, group)

    def _on_workload(self, etype: EventType, wl: Any, old: Any | None) -> None:
        # Queue mode: a workload whose check passed holds its job's charge
        # until it finishes, is evicted (its checks reset) or goes.
        if self._no_tree() or self._mgr is None:
            return
        ours = self._check.ours()
        was = old is not None and check_holds(old, ours)
        now = etype != "DELETED" and check_holds(wl, ours)
        if was and not now:
            owner = owner_of(self._mgr.store, wl)
            group = group_of(owner) if owner is not None else _first(_standalone_group(wl))
            if group:
                self._mgr.enqueue(self.name, group)

    def _holds(self, obj: Any, ours: set[str]) -> bool:
        """Queue mode: an object counts while a workload of it holds our check."""
        assert self._workloads is not None
        uid = obj.metadata.uid
        return bool(uid) and any(
            check_holds(wl, ours) for wl in self._workloads.by_index(_BY_OWNER, uid)
        )

    def _on_group(self, etype: EventType, obj: Any, old: Any | None) -> None:
        if self._mgr is None:
            return
        if not self._pods_seen and etype != "DELETED":
            # The tracker ignores pods while no group exists; on a resumed
            # state the pods may be listed before the groups (informers
            # start in the order controllers asked for them): go over them
            # once now that there is a group (started/ended are idempotent).
            self._pods_seen = True
            for pod in self._mgr.informer(POD).list():
                self._tracker.on_pod("ADDED", pod, None)
        if etype != "DELETED" and (old is None or old.spec != obj.spec):
            self._mgr.enqueue(self.name, obj.metadata.name)
        parent = obj.spec.parent_biz_group
        if parent and (etype == "DELETED" or old is None or old.spec.hard != obj.spec.hard):
            self._mgr.enqueue(self.name, parent)

    def _on_object(self, etype: EventType, obj: Any, old: Any | None) -> None:
        # Creations and updates are charged by the webhook; what it never sees
        # (a deletion, a label removed by a controller) the refresh repairs.
        if self._no_tree() or self._mgr is None:
            return
        g_new = group_of(obj) if etype != "DELETED" else ""
        g_old = group_of(old) if old is not None else (group_of(obj) if etype == "DELETED" else "")
        if g_old and g_old != g_new:
            self._mgr.enqueue(self.name, g_old)

    def reconcile(self, key: str) -> timedelta | None:
        assert self._mgr is not None and self._groups is not None
        node: BizGroupResourceQuota | None = self._groups.get(key)
        if node is None or node.metadata.deletion_timestamp is not None:
            return None
        mgr = self._mgr
        now = mgr.clock.now()
        objects_use: Usage = {}
        queue = node.spec.enforcement == "Queue"
        ours = self._check.ours() if queue else set()
        for inf in self._objects:
            for obj in inf.by_index(_BY_GROUP, key):
                if obj.metadata.deletion_timestamp is None and (
                    not queue or self._holds(obj, ours)
                ):
                    add_into(objects_use, self._webhook.usage(obj))
        if queue and self._workloads is not None:
            for wl in self._workloads.by_index(_BY_GROUP, key):
                if check_holds(wl, ours):
                    add_into(objects_use, charge(wl, workload_parts))
        children = [c for c in self._groups.list() if c.spec.parent_biz_group == key]
        cash = [k for k in node.spec.hard or {} if is_cash(k)]
        # Accrued once, outside the compare-and-set (a retry must not count twice).
        since = node.status.last_reconcile_time if node.status is not None else None
        accrued = self.ledger.accrue(key, cash, since, now) if cash else None
        spent_now: list[str] = []

        def change(cur: BizGroupResourceQuota) -> BizGroupStatus | None:
            used, self_used = recompute(cur, objects_use, children, accrued)
            hard = cur.spec.hard or {}
            before_used, _ = used_of(cur)
            st = cur.status
            conditions, newly = budget_condition(cur, used, now)
            spent_now[:] = newly
            status = BizGroupStatus(
                hard=dict(hard),
                used=resource_list(used, hard),
                self_used=resource_list(self_used, hard),
                last_reconcile_time=now,
                conditions=conditions,
            )
            if (
                accrued is None
                and st is not None
                and st.conditions == status.conditions
                and st.hard == status.hard
                and st.used == status.used
                and st.self_used == status.self_used
            ):
                return None  # nothing drifted: no write
            drift = {
                k: (before_used.get(k, 0), used.get(k, 0))
                for k in hard
                if before_used.get(k, 0) != used.get(k, 0)
            }
            if drift and st is not None and st.used is not None:
                log.info(
                    "bizrq %s: resync repaired used: %s",
                    key,
                    ", ".join(
                        f"{k} {shown(a)} -> {shown(b)}" for k, (a, b) in sorted(drift.items())
                    ),
                )
            return status

        try:
            written = update_status_cas(mgr.store, key, change)
        except NotFound:
            return None
        if written is not None and spent_now:
            mgr.recorder.event(written, "Warning", "BudgetExhausted", spent_now[0], self.component)
        if written is not None and cash:
            used_now, _ = used_of(written)
            at = run_out_at(now, used_now, hard_milli(written), self.ledger.burn(key, cash))
            # The burn changed: an older run-out instant no longer holds (and
            # must not keep a virtual-time run going).
            mgr.cancel_timer(self.name, key)
            if at is not None:  # refreshed at the instant a budget is spent
                mgr.enqueue_at(self.name, key, at)
        if isinstance(mgr.clock, VirtualClock):
            # A virtual-time run ends when nothing is left to do: a timer of
            # its own would keep it alive for ever. Every change is refreshed
            # as it happens there; the periodic resync is for real time.
            return None
        period = node.spec.resync_period or "5m"
        return parse_duration(period)
