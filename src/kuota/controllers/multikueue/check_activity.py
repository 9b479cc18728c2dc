"""Kueue's MultiKueue AdmissionCheck reconciler (``multikueue/admissioncheck.go``):
an AdmissionCheck of controller ``kueue.x-k8s.io/multikueue`` is Active when
its parameters name a MultiKueueConfig; partly so (``SomeActiveClusters``)
when some of the config's clusters are missing or inactive, and inactive
(``NoUsableClusters``) when none is usable."""

from __future__ import annotations

import contextlib
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from kuota.api.conditions import condition_true, find
from kuota.api.kueue import types as kt
from kuota.api.kueue.multikueue_types import CONFIG_KIND, CONTROLLER_NAME
from kuota.api.meta import Condition
from kuota.store import Conflict, NotFound, clone
from kuota.store.protocol import EventType
from kuota.store.resources import ADMISSION_CHECK, MULTIKUEUE_CLUSTER, MULTIKUEUE_CONFIG

if TYPE_CHECKING:
    from kuota.runtime.informer import Informer
    from kuota.runtime.manager import Manager

__all__ = ["MultiKueueCheckActivity", "config_for"]


def config_for(ac: Any, configs: Informer) -> tuple[Any | None, str]:
    """``ConfigFromRef``: the check's MultiKueueConfig, or None and why."""
    ref = ac.spec.parameters
    if ref is None:
        return None, "missing parameters reference"
    if not ref.name:
        return None, "empty name: bad parameters reference"
    if ref.api_group != kt.GROUP:
        return (
            None,
            f'wrong group "{ref.api_group}", expecting "{kt.GROUP}": bad parameters reference',
        )
    if ref.kind != CONFIG_KIND:
        return None, f'wrong kind "{ref.kind}", expecting "{CONFIG_KIND}": bad parameters reference'
    cfg = configs.get(ref.name)
    if cfg is None:
        return None, f'multikueueconfigs.kueue.x-k8s.io "{ref.name}" not found'
    return cfg, ""


def _go_list(names: list[str]) -> str:
    return "[" + " ".join(names) + "]"


class MultiKueueCheckActivity:
    name = "multikueue-admissioncheck"

    def __init__(self) -> None:
        self._mgr: Manager | None = None

    def setup(self, mgr: Manager) -> None:
        self._mgr = mgr
        self._checks = mgr.informer(ADMISSION_CHECK)
        self._configs = mgr.informer(MULTIKUEUE_CONFIG)
        self._clusters = mgr.informer(MULTIKUEUE_CLUSTER)
        self._checks.on_change(self._on_check)
        self._configs.on_change(lambda t, o, old: self._all())
        self._clusters.on_change(self._on_cluster)

    def _on_check(self, etype: EventType, ac: Any, old: Any | None) -> None:
        if etype != "DELETED" and ac.spec.controller_name == CONTROLLER_NAME:
            assert self._mgr is not None
            self._mgr.enqueue(self.name, ac.metadata.name)

    def _on_cluster(self, etype: EventType, mkc: Any, old: Any | None) -> None:
        was = old is not None and condition_true(old, "Active")
        if etype in ("ADDED", "DELETED") or was != condition_true(mkc, "Active"):
            self._all()

    def _all(self) -> None:
        for ac in self._checks.list():
            self._on_check("MODIFIED", ac, None)

    def reconcile(self, key: str) -> timedelta | None:
        mgr = self._mgr
        assert mgr is not None
        ac = self._checks.get(key)
        if ac is None or ac.spec.controller_name != CONTROLLER_NAME:
            return None
        cfg, err = config_for(ac, self._configs)
        status, reason, message = "True", "Active", "The admission check is active"
        if cfg is None:
            status, reason = "False", "BadConfig"
            message = f"Cannot load the AdmissionChecks parameters: {err}"
        else:
            missing: list[str] = []
            inactive: list[str] = []
            for name in cfg.spec.clusters:
                mkc = self._clusters.get(name)
                if mkc is None:
                    missing.append(name)
                elif not condition_true(mkc, "Active"):
                    inactive.append(name)
            if missing or inactive:
                if len(missing) + len(inactive) < len(cfg.spec.clusters):
                    reason = "SomeActiveClusters"  # kept partly active
                else:
                    status, reason = "False", "NoUsableClusters"
                parts = [f"Missing clusters: {_go_list(missing)}"] if missing else []
                if inactive:
                    parts.append(f"Inactive clusters: {_go_list(inactive)}")
                message = ", ".join(parts)
        conds = ac.status.conditions if ac.status is not None else None
        cur = find(conds, "Active")
        if cur is not None and (cur.status, cur.reason, cur.message) == (status, reason, message):
            return None  # cmpConditionState
        new = clone(ac)
        new.status = new.status or kt.AdmissionCheckStatus()
        keep = [c for c in new.status.conditions or () if c.type != "Active"]
        moved = cur is None or cur.status != status
        new.status.conditions = [
            *keep,
            Condition(
                type="Active",
                status=status,  # type: ignore[arg-type]
                reason=reason,
                message=message,
                last_transition_time=(
                    cur.last_transition_time if cur is not None and not moved else mgr.clock.now()
                ),
                observed_generation=ac.metadata.generation or None,
            ),
        ]
        with contextlib.suppress(Conflict, NotFound):
            mgr.store.update_status(new)
        return None
