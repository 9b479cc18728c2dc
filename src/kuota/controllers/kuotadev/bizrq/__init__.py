"""The business-group quota tree's controllers (kuota.dev
BizGroupResourceQuota): the tree webhook (its rules and the grants), the
Reject webhook on owning objects, the Queue mode's admission check on
Workloads, and the controller that refreshes and resyncs status (and accrues
budgets). One ``Integration``, always on."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kuota.controllers.integration import Integration, Wiring
from kuota.controllers.kuotadev.bizrq.admission_check import BizrqAdmissionCheck
from kuota.controllers.kuotadev.bizrq.hpa_webhook import HpaQuotaWebhook
from kuota.controllers.kuotadev.bizrq.object_webhook import ObjectQuotaWebhook
from kuota.controllers.kuotadev.bizrq.resync import BizrqController
from kuota.controllers.kuotadev.bizrq.tree_webhook import BizrqTreeWebhook
from kuota.store.protocol import ObjectStore

__all__ = ["INTEGRATION"]


class _StoreRef:
    """The store the webhooks write grants and charges to: the control plane
    makes its hooks before its store, so the controller's setup binds it."""

    def __init__(self) -> None:
        self.store: ObjectStore | None = None

    def __call__(self) -> ObjectStore:
        assert self.store is not None, "bizrq webhooks called before the manager was set up"
        return self.store


class _BoundController(BizrqController):
    def __init__(
        self, webhook: ObjectQuotaWebhook, ref: _StoreRef, check: BizrqAdmissionCheck
    ) -> None:
        super().__init__(webhook, check)
        self._ref = ref

    def setup(self, mgr: Any) -> None:
        self._ref.store = mgr.store
        recorder = mgr.recorder
        self._webhook.on_refusal = lambda node, why: recorder.event(
            node, "Warning", "Refused", why, self.component
        )
        super().setup(mgr)


# One pair of (store ref, object webhook) per control plane, found again by
# the reconcilers' factory from the same Wiring.
_PAIRS: list[tuple[Wiring, _StoreRef, ObjectQuotaWebhook]] = []


def _pair(wiring: Wiring) -> tuple[_StoreRef, ObjectQuotaWebhook]:
    for w, ref, hook in _PAIRS:
        if w is wiring:
            return ref, hook
    ref = _StoreRef()
    hook = ObjectQuotaWebhook(ref)
    _PAIRS.append((wiring, ref, hook))
    del _PAIRS[:-8]  # (only the newest control planes are live)
    return ref, hook


def _webhooks(wiring: Wiring) -> Sequence[Any]:
    ref, hook = _pair(wiring)
    return (BizrqTreeWebhook(ref), hook, HpaQuotaWebhook(hook))


def _reconcilers(wiring: Wiring) -> Sequence[Any]:
    ref, hook = _pair(wiring)
    check = BizrqAdmissionCheck(hook)
    return (check, _BoundController(hook, ref, check))


INTEGRATION = Integration(
    "kuota.dev/bizgroupresourcequota",
    webhooks=_webhooks,
    reconcilers=_reconcilers,
    after_api_server=True,  # last: a charge made for a request another webhook refuses leaks
)
