"""The provisioning check's AdmissionCheck reconciler (``admissioncheck_reconciler.go``):
an AdmissionCheck of controller ``kueue.x-k8s.io/provisioning-request`` is
Active when its parameters name an existing ProvisioningRequestConfig."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from kuota.api.kueue import types as kt
from kuota.api.kueue.provisioning_config import CONTROLLER_NAME, KIND
from kuota.controllers.check_params import config_from_ref, with_active
from kuota.store import Conflict, NotFound
from kuota.store.protocol import EventType
from kuota.store.resources import ADMISSION_CHECK, PROVISIONING_REQUEST_CONFIG

if TYPE_CHECKING:
    from kuota.runtime.informer import Informer
    from kuota.runtime.manager import Manager

__all__ = ["ProvisioningCheckActivity", "config_error"]


def config_error(ref: Any, configs: Informer) -> str | None:
    """``ConfigFromRef``'s error for an AdmissionCheck's parameters, or None."""
    cfg, err = config_from_ref(ref, KIND, "provisioningrequestconfigs", configs)
    return None if cfg is not None else err


class ProvisioningCheckActivity:
    name = "provisioning-admissioncheck"

    def __init__(self) -> None:
        self._mgr: Manager | None = None

    def setup(self, mgr: Manager) -> None:
        self._mgr = mgr
        self._checks = mgr.informer(ADMISSION_CHECK)
        self._configs = mgr.informer(PROVISIONING_REQUEST_CONFIG)
        self._checks.on_change(self._on_check)
        self._configs.on_change(self._on_config)

    def _on_check(self, etype: EventType, ac: Any, old: Any | None) -> None:
        if etype != "DELETED" and ac.spec.controller_name == CONTROLLER_NAME:
            assert self._mgr is not None
            self._mgr.enqueue(self.name, ac.metadata.name)

    def _on_config(self, etype: EventType, prc: Any, old: Any | None) -> None:
        for ac in self._checks.list():
            p = ac.spec.parameters
            if p is not None and p.kind == KIND and p.name == prc.metadata.name:
                self._on_check("MODIFIED", ac, None)

    def reconcile(self, key: str) -> timedelta | None:
        mgr = self._mgr
        assert mgr is not None
        ac = self._checks.get(key)
        if ac is None or ac.spec.controller_name != CONTROLLER_NAME:
            return None
        err = config_error(ac.spec.parameters, self._configs)
        status, reason, message = (
            ("True", "Active", "The admission check is active")
            if err is None
            else ("False", "BadParametersRef", err)
        )
        new = with_active(
            ac, kt.AdmissionCheckStatus, status, reason, message, mgr.clock.now(), status_only=True
        )
        if new is None:
            return None  # Kueue rewrites it only when the status changes
        try:
            mgr.store.update_status(new)
        except (Conflict, NotFound):
            return timedelta(0) if self._checks.get(key) is not None else None
        return None
