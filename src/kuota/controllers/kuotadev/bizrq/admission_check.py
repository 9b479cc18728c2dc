"""Queue enforcement: the tree as a Kueue admission check (controller name
``kuota.dev/bizrq``). A ClusterQueue lists an AdmissionCheck of this
controller; a Workload reserving quota there whose job is labelled into a
Queue-mode group is checked as its job would be at creation in Reject mode
(replicas x template against every key and its prefix, and the budgets).
With room, the group is charged (status first, compare-and-set) and the check
turns Ready: the workload is admitted. Without, the check stays Pending with
the reason (``bizrq ml-research: limits.nvidia.com/gpu.A100 needs 8, 3 of 16
left``) and the workload waits, holding its reservation as Kueue's checks
do; it is checked again when its group's status changes (room appears).
Cohorts, borrowing, preemption and fair sharing decide underneath, unchanged.
Workloads of groups in Reject mode, or of no group, pass at once."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any, Final

import msgspec

from kuota.api.conditions import condition_true
from kuota.api.kueue import types as kt
from kuota.api.kuotadev.bizrq import BizGroupResourceQuota
from kuota.api.meta import Condition
from kuota.controllers.kuotadev.bizrq.accounts import charged_status, spent_budgets, used_of
from kuota.controllers.kuotadev.bizrq.budget_status import spent_message
from kuota.controllers.kuotadev.bizrq.object_webhook import (
    ObjectQuotaWebhook,
    group_of,
    refusal_text,
)
from kuota.controllers.kuotadev.bizrq.status_cas import update_status_cas
from kuota.quota.bizgroups.owners import charge, workload_parts
from kuota.quota.bizgroups.usage import exceeded
from kuota.runtime.informer import Informer, key_of
from kuota.store import Conflict, NotFound
from kuota.store.kinds import resource_for
from kuota.store.protocol import EventType
from kuota.store.resources import ADMISSION_CHECK, BIZRQ, WORKLOAD

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager

__all__ = ["CONTROLLER_NAME", "BizrqAdmissionCheck", "check_holds", "owner_of"]

CONTROLLER_NAME: Final = "kuota.dev/bizrq"


class _Held(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def owner_of(store: Any, wl: Any) -> Any | None:
    """The object a Workload stands for (its controller owner)."""
    ref = next((r for r in wl.metadata.owner_references or () if r.controller), None)
    if ref is None:
        return None
    try:
        return store.get(resource_for(ref.api_version, ref.kind), wl.metadata.namespace, ref.name)
    except (KeyError, ValueError, NotFound):
        return None


def check_holds(wl: Any, ours: frozenset[str] | set[str]) -> bool:
    """A workload whose check of ours passed and that has not finished: its
    job's use is charged to its group."""
    st = wl.status
    if st is None or condition_true(wl, "Finished"):
        return False
    return any(s.name in ours and s.state == "Ready" for s in st.admission_checks or ())


class BizrqAdmissionCheck:
    name = "bizrq-admission-check"
    component = "kuota-bizrq"

    def __init__(self, webhook: ObjectQuotaWebhook) -> None:
        self._webhook = webhook
        self._mgr: Manager | None = None
        self._checks: Informer | None = None
        self._workloads: Informer | None = None
        self._waiting: dict[str, set[str]] = {}  # group -> workloads held on it

    def ours(self) -> set[str]:
        assert self._checks is not None
        return {
            key_of(ac) for ac in self._checks.list() if ac.spec.controller_name == CONTROLLER_NAME
        }

    def setup(self, mgr: Manager) -> None:
        self._mgr = mgr
        self._checks = mgr.informer(ADMISSION_CHECK)
        self._checks.on_change(self._on_check)
        self._workloads = mgr.informer(WORKLOAD)
        self._workloads.on_change(self._on_workload)
        mgr.informer(BIZRQ).on_change(self._on_group)

    def _on_check(self, etype: EventType, ac: Any, old: Any | None) -> None:
        if (
            self._mgr is not None
            and etype != "DELETED"
            and ac.spec.controller_name == CONTROLLER_NAME
        ):
            self._mgr.enqueue(self.name, "ac:" + ac.metadata.name)

    def _on_workload(self, etype: EventType, wl: Any, old: Any | None) -> None:
        if self._mgr is None or etype == "DELETED" or self._checks is None:
            return
        if not self._checks.objects:  # no AdmissionCheck at all: none of ours
            return
        st = wl.status
        if st is not None and st.admission_checks and condition_true(wl, "QuotaReserved"):
            ours = self.ours()
            if any(s.name in ours and s.state == "Pending" for s in st.admission_checks):
                self._mgr.enqueue(self.name, key_of(wl))

    def _on_group(self, etype: EventType, obj: Any, old: Any | None) -> None:
        # Room may have appeared (use given back, hard raised): look again.
        waiting = self._waiting.pop(obj.metadata.name, None)
        if waiting and self._mgr is not None:
            for k in sorted(waiting):
                self._mgr.enqueue(self.name, k)

    def reconcile(self, key: str) -> timedelta | None:
        assert self._mgr is not None and self._workloads is not None
        if key.startswith("ac:"):
            self._activate(key[3:])
            return None
        wl = self._workloads.get(key)
        if wl is None or wl.status is None or not condition_true(wl, "QuotaReserved"):
            return None
        if condition_true(wl, "Finished"):
            return None
        ours = self.ours()
        pending = [
            s for s in wl.status.admission_checks or () if s.name in ours and s.state == "Pending"
        ]
        if not pending:
            return None
        store = self._mgr.store
        owner = owner_of(store, wl)
        # A job's Workload is its job's group; a standalone one, its own label's.
        group = group_of(owner) if owner is not None else group_of(wl)
        if not group:
            self._write(wl, pending, "Ready", "not in a business group")
            return None
        try:
            bizrq: BizGroupResourceQuota = store.get(BIZRQ, "", group)
        except NotFound:
            self._hold(group, key, wl, pending, f"BizGroupResourceQuota {group} does not exist")
            return None
        if bizrq.spec.enforcement != "Queue":
            self._write(wl, pending, "Ready", f"bizrq {group}: Reject mode, charged at creation")
            return None
        use = self._webhook.usage(owner) if owner is not None else charge(wl, workload_parts)

        def change(cur: BizGroupResourceQuota) -> Any:
            used, _ = used_of(cur)
            why = [
                refusal_text(group, k, need, left, hard)
                for k, need, left, hard in exceeded(cur.spec.hard or {}, used, use)
            ]
            why += [spent_message(group, k, u, h, "Queue") for k, u, h in spent_budgets(cur)]
            if why:
                raise _Held("; ".join(why))
            return charged_status(cur, use, own=True)

        try:
            update_status_cas(store, group, change)
        except _Held as held:
            self._hold(group, key, wl, pending, held.message)
            return None
        except NotFound:
            self._hold(group, key, wl, pending, f"BizGroupResourceQuota {group} does not exist")
            return None
        self._waiting.get(group, set()).discard(key)
        self._write(wl, pending, "Ready", f"bizrq {group}: charged")
        return None

    def _hold(self, group: str, key: str, wl: Any, pending: list[Any], message: str) -> None:
        self._waiting.setdefault(group, set()).add(key)
        if self._mgr is not None and any(c.message != message for c in pending):
            try:  # an Event of the group: its recent holds, as Reject's refusals
                node = self._mgr.store.get(BIZRQ, "", group)
                why = f"Workload {key} held: {message}"
                self._mgr.recorder.event(node, "Warning", "Held", why, self.component)
            except NotFound:
                pass
        self._write(wl, pending, "Pending", message)

    def _write(self, wl: Any, checks: list[Any], state: str, message: str) -> None:
        """Set our checks' state; on conflict re-read and set it again (a
        charge already made must not be decided, and made, twice)."""
        assert self._mgr is not None
        names = {c.name for c in checks}
        store = self._mgr.store
        for _ in range(100):
            st = wl.status
            mine = [c for c in (st.admission_checks if st else None) or () if c.name in names]
            if not mine or all(c.state == state and c.message == message for c in mine):
                return
            now = self._mgr.clock.now()
            new_checks = [
                msgspec.structs.replace(
                    c,
                    state=state,
                    message=message,
                    last_transition_time=now if c.state != state else c.last_transition_time,
                )
                if c.name in names
                else c
                for c in st.admission_checks or ()
            ]
            new = msgspec.structs.replace(
                wl, status=msgspec.structs.replace(st, admission_checks=new_checks)
            )
            try:
                store.update_status(new)
                return
            except Conflict:
                try:
                    wl = store.get(WORKLOAD, wl.metadata.namespace, wl.metadata.name)
                except NotFound:
                    return
            except NotFound:
                return

    def _activate(self, name: str) -> None:
        """An AdmissionCheck of this controller is Active (Kueue's check
        controllers say so; a ClusterQueue with an inactive check admits nothing)."""
        assert self._mgr is not None and self._checks is not None
        ac = self._checks.get(name)
        if ac is None or condition_true(ac, "Active"):
            return
        cond = Condition(
            type="Active",
            status="True",
            reason="Active",
            message="kuota's business-group quota trees check workloads",
            last_transition_time=self._mgr.clock.now(),
        )
        conds = [
            c for c in (ac.status.conditions if ac.status else None) or () if c.type != "Active"
        ]
        new = msgspec.structs.replace(ac, status=kt.AdmissionCheckStatus(conditions=[*conds, cond]))
        try:
            self._mgr.store.update_status(new)
        except Conflict:
            self._mgr.enqueue(self.name, "ac:" + name)
        except NotFound:
            pass
