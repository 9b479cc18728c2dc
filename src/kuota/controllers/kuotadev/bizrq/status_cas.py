"""Writing a bizrq's status with compare-and-set, retried on conflict: the
model is ResourceQuota admission's ``checkQuotas`` loop (read with the
resourceVersion, compute, write; a 409 means another writer won: re-read and
recompute), so concurrent requests never overspend and a stale read never
lets one through."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

import msgspec

from kuota.api.kuotadev.bizrq import BizGroupResourceQuota, BizGroupStatus
from kuota.api.quantity import Quantity
from kuota.quota.bizgroups.usage import Usage
from kuota.store import Conflict
from kuota.store.protocol import ObjectStore
from kuota.store.resources import BIZRQ

__all__ = ["MAX_ATTEMPTS", "milli_of", "resource_list", "update_status_cas"]

MAX_ATTEMPTS: Final = 1000  # each conflict means another writer succeeded


def milli_of(rl: Mapping[str, Quantity] | None) -> Usage:
    return {k: q.milli_value() for k, q in (rl or {}).items()}


def resource_list(u: Mapping[str, int], keys: Mapping[str, Any]) -> dict[str, Quantity]:
    """Status maps hold the hard keys only, as ResourceQuota's status does."""
    return {k: Quantity.from_milli(u.get(k, 0)) for k in sorted(keys)}


def update_status_cas(
    store: ObjectStore,
    name: str,
    change: Callable[[BizGroupResourceQuota], BizGroupStatus | None],
    *,
    on_conflict: Callable[[], None] | None = None,
) -> BizGroupResourceQuota | None:
    """Read the bizrq, let ``change`` compute its new status (it may raise to
    refuse; None writes nothing), write it at the read's resourceVersion;
    on Conflict re-read and retry."""
    for _ in range(MAX_ATTEMPTS):
        cur = store.get(BIZRQ, "", name)
        status = change(cur)
        if status is None:
            return cur
        # A new object sharing the read's (immutable) spec and metadata: the
        # store copies what it keeps; cloning the whole node cost most of a check.
        new = msgspec.structs.replace(cur, status=status)
        try:
            written: BizGroupResourceQuota = store.update_status(new)
            return written
        except Conflict:
            if on_conflict is not None:
                on_conflict()
    raise Conflict(f'BizGroupResourceQuota "{name}": too many conflicting status writes')
