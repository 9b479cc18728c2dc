"""Reject enforcement: the validating webhook on owning objects (Deployment,
StatefulSet, Job, LeaderWorkerSet, bare Pods, registered kinds). An object
labelled ``biz.group.resource.quota`` is charged whole (replicas x template);
an update by its delta; the group's status is written first with
compare-and-set, and only then is the request allowed: all or nothing, never
overspent. Lowering use (a finished Job, a scale-down) is never refused."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from kuota.api.errors import FieldError, invalid, key
from kuota.api.kuotadev.bizrq import GROUP_LABEL, BizGroupResourceQuota, BizGroupStatus
from kuota.controllers.kuotadev.bizrq.accounts import Ledger, Ledgers, spent_budgets
from kuota.controllers.kuotadev.bizrq.status_cas import update_status_cas
from kuota.quota.bizgroups.owners import Parts, charge, charged_kinds
from kuota.quota.bizgroups.tree import shown
from kuota.quota.bizgroups.usage import Usage, subtract
from kuota.store import Invalid, NotFound
from kuota.store.kinds import resource_for, resource_type
from kuota.store.protocol import ObjectStore, ResourceType
from kuota.store.resources import HPA

__all__ = ["ObjectQuotaWebhook", "group_of", "refusal_text", "targets"]

_LABEL_PATH: Final = key("metadata.labels", GROUP_LABEL)
_NOT_SCALED: Final = frozenset(("Job", "Pod"))  # no scale an HPA could drive


def targets(hpa: Any, obj: Any) -> bool:
    """The HPA scales ``obj`` (its scaleTargetRef: kind, name, group)."""
    ref = hpa.spec.scale_target_ref
    if ref.kind != obj.kind or ref.name != obj.metadata.name:
        return False
    return not ref.api_version or ref.api_version.split("/")[0] == obj.api_version.split("/")[0]


def group_of(obj: Any | None) -> str:
    if obj is None:
        return ""
    labels = obj.metadata.labels
    return labels.get(GROUP_LABEL, "") if labels else ""


def refusal_text(group: str, k: str, need: int, left: int, hard: int) -> str:
    """``bizrq ml-research: limits.nvidia.com/gpu.A100 needs 8, 3 of 16 left``"""
    return f"bizrq {group}: {k} needs {shown(need)}, {shown(max(left, 0))} of {shown(hard)} left"


def _stored_kinds(kinds: dict[tuple[str, str], Parts]) -> dict[ResourceType, Parts]:
    out: dict[ResourceType, Parts] = {}
    for (api_version, kind), parts in kinds.items():
        try:
            out[resource_for(api_version, kind)] = parts
        except (KeyError, ValueError, NotFound):
            continue  # a registered kind this store does not serve (Argo Rollout)
    return out


class ObjectQuotaWebhook:
    validating: Final = True
    operations: Final = frozenset(("CREATE", "UPDATE"))

    def __init__(self, store: Callable[[], ObjectStore]) -> None:
        self._store = store
        kinds = charged_kinds()
        self._parts = _stored_kinds(kinds)
        self._owner_kinds = frozenset(kinds)
        self.owner_kinds = self._owner_kinds
        self.kinds = frozenset(self._parts)
        # Told of each refusal (the group, the request, why): the control plane
        # records it as an Event of the group ("recent refusals").
        self.on_refusal: Callable[[BizGroupResourceQuota, str], None] | None = None
        # Each group's numbers as this webhook last wrote them (accounts.Ledger).
        self._ledgers = Ledgers()

    def usage(self, obj: Any, hpa: tuple[str, Any | None] | None = None) -> Usage:
        """The object's charge; an HPA targeting it raises its replicas to the
        HPA's maxReplicas. ``hpa``: (name, HPA or None) stands in for the
        stored HPA of that name (the HPA webhook's before and after)."""
        # An object a charged kind controls (an LWS's StatefulSets, a JobSet's
        # Jobs) is charged through its owner, never twice.
        for ref in obj.metadata.owner_references or ():
            if ref.controller and (ref.api_version, ref.kind) in self._owner_kinds:
                return {}
        return charge(obj, self._parts[resource_type(obj)], scale_to=self._hpa_max(obj, hpa))

    def _hpa_max(self, obj: Any, hpa: tuple[str, Any | None] | None) -> int:
        if obj.kind in _NOT_SCALED:
            return 0
        ns = obj.metadata.namespace
        try:
            found = {h.metadata.name: h for h in self._store().list(HPA, ns).items}
        except (KeyError, NotFound):
            return 0
        if hpa is not None:
            found.pop(hpa[0], None)
            if hpa[1] is not None:
                found[hpa[0]] = hpa[1]
        return max(
            (h.spec.max_replicas for h in found.values() if targets(h, obj)),
            default=0,
        )

    def __call__(self, op: str, new: Any, old: Any | None) -> Any:
        g_new, g_old = group_of(new), group_of(old)
        if not g_new and not g_old:
            return new
        new_use = self.usage(new) if g_new else {}
        old_use = self.usage(old) if g_old and old is not None else {}
        if g_new == g_old:
            if new_use != old_use:
                self._charge(new, g_new, subtract(new_use, old_use), op == "CREATE")
            return new
        if g_new:
            self._charge(new, g_new, new_use, True)
        if g_old and old_use:
            self._charge(new, g_old, {k: -v for k, v in old_use.items()}, False)
        return new

    def store(self) -> ObjectStore:
        return self._store()

    def charge_delta(self, obj: Any, group: str, delta: Usage, path: str) -> None:
        """Charge a change made through another object (an HPA's maxReplicas)."""
        self._charge(obj, group, delta, False, path)

    def _charge(
        self, obj: Any, group: str, delta: Usage, new_request: bool, path: str = _LABEL_PATH
    ) -> None:
        grows = any(v > 0 for v in delta.values())
        change = _Charge(self, obj, delta, grows or new_request, new_request, path)
        try:
            written = update_status_cas(self._store(), group, change)
        except NotFound:
            if grows or new_request:
                err = invalid(path, group, f"BizGroupResourceQuota {group} does not exist")
                raise Invalid(_ref(obj), [err]) from None
            return
        made = change.made
        if made is not None and written is not None:
            kept = made[1].written_as(made[0], written)
            if kept is not None:
                self._ledgers.keep(kept)

    def _refused(self, bizrq: BizGroupResourceQuota, obj: Any, errs: list[FieldError]) -> None:
        if self.on_refusal is not None:
            why = "; ".join(dict.fromkeys(e.detail for e in errs))
            self.on_refusal(bizrq, f"{_ref(obj)} refused: {why}")
        raise Invalid(_ref(obj), errs)

    @staticmethod
    def _errors(
        bizrq: BizGroupResourceQuota,
        delta: Usage,
        new_request: bool,
        path: str = _LABEL_PATH,
        ledger: Ledger | None = None,
    ) -> list[FieldError]:
        group = bizrq.metadata.name
        if ledger is None:
            ledger = Ledger(bizrq)
        errs = [
            invalid(path, group, refusal_text(group, k, need, left, hard))
            for k, need, left, hard in ledger.exceeded(delta)
        ]
        for k, u, h in spent_budgets(bizrq):
            errs.append(
                invalid(
                    path,
                    group,
                    f"bizrq {group}: budget {k} is spent ({shown(u)} of {shown(h)} used): "
                    "no new requests until it is raised",
                )
            )
        return errs


class _Charge:
    """One request's charge of its group: update_status_cas's ``change``,
    called again on each conflict. A class, not a closure: compiled, a
    closure and its environment hold each other, and each request's would
    wait for the garbage collector, with the group's old status it holds."""

    __slots__ = ("checked", "delta", "hook", "made", "new_request", "obj", "path")

    def __init__(
        self,
        hook: ObjectQuotaWebhook,
        obj: Any,
        delta: Usage,
        checked: bool,
        new_request: bool,
        path: str,
    ) -> None:
        self.hook = hook
        self.obj = obj
        self.delta = delta
        self.checked = checked  # the request adds use (or is new): checked first
        self.new_request = new_request
        self.path = path
        # What the last call computed: the written version's ledger, once written.
        self.made: tuple[BizGroupStatus, Ledger] | None = None

    def __call__(self, bizrq: BizGroupResourceQuota) -> BizGroupStatus | None:
        if bizrq.spec.enforcement == "Queue":
            return None  # held at admission instead (the Workload's check)
        hook = self.hook
        ledger = hook._ledgers.of(bizrq)
        if self.checked:
            errs = hook._errors(bizrq, self.delta, self.new_request, self.path, ledger)
            if errs:
                hook._refused(bizrq, self.obj, errs)
        status, after = ledger.charged(self.delta, own=True)
        self.made = (status, after)
        return status


def _ref(obj: Any) -> str:
    m = obj.metadata
    name = f"{m.namespace}/{m.name}" if m.namespace else m.name
    return f'{obj.kind} "{name}"'
