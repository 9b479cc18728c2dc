"""Kueue's MultiKueue AdmissionCheck reconciler (``multikueue/admissioncheck.go``):
an AdmissionCheck of controller ``kueue.x-k8s.io/multikueue`` is Active when
its parameters name a MultiKueueConfig; partly so (``SomeActiveClusters``)
when some of the config's clusters are missing or inactive, and inactive
(``NoUsableClusters``) when none is usable."""

from __future__ import annotations

import contextlib
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from kuota.api.conditions import condition_true
from kuota.api.kueue import types as kt
from kuota.api.kueue.multikueue_types import CONFIG_KIND, CONTROLLER_NAME
from kuota.controllers.check_params import config_from_ref, with_active
from kuota.store import Conflict, NotFound
from kuota.store.protocol import EventType
from kuota.store.resources import ADMISSION_CHECK, MULTIKUEUE_CLUSTER, MULTIKUEUE_CONFIG

if TYPE_CHECKING:
    from kuota.runtime.informer import Informer
    from kuota.runtime.manager import Manager

__all__ = ["MultiKueueCheckActivity", "config_for"]


def config_for(ac: Any, configs: Informer) -> tuple[Any | None, str]:
    """``ConfigFromRef``: the check's MultiKueueConfig, or None and why."""
    return config_from_ref(ac.spec.parameters, CONFIG_KIND, "multikueueconfigs", configs)


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
        new = with_active(
            ac, kt.AdmissionCheckStatus, status, reason, message, mgr.clock.now(), status_only=False
        )
        if new is None:
            return None  # cmpConditionState
        with contextlib.suppress(Conflict, NotFound):
            mgr.store.update_status(new)
        return None
