"""The bizrq's own validating webhook: the tree's rules on create, update and
delete (``kuota.quota.bizgroups.tree``), and the grant itself: a child's hard
is carved from its parent's remainder by writing the parent's status first,
with compare-and-set; only when that write succeeds is the child admitted."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from kuota.api.errors import FieldError
from kuota.api.kuotadev.bizrq import BizGroupResourceQuota
from kuota.controllers.kuotadev.bizrq.accounts import charged_status, used_of
from kuota.controllers.kuotadev.bizrq.status_cas import update_status_cas
from kuota.quota.bizgroups.tree import (
    delete_errors,
    grant_delta,
    parent_errors,
    remainder_errors,
    update_errors,
)
from kuota.store import Invalid, NotFound
from kuota.store.protocol import ObjectStore
from kuota.store.resources import BIZRQ

__all__ = ["BizrqTreeWebhook", "children_of"]


def children_of(store: ObjectStore, name: str) -> list[BizGroupResourceQuota]:
    return [
        o
        for o in store.list(BIZRQ, "").items
        if o.spec.parent_biz_group == name and o.metadata.deletion_timestamp is None
    ]


def _ref(name: str) -> str:
    return f'BizGroupResourceQuota.kuota.dev "{name}"'


class BizrqTreeWebhook:
    """Validating, on BizGroupResourceQuota create / update / delete (not on
    its status: the controller and the grants write that)."""

    kinds: Final = frozenset((BIZRQ,))
    operations: Final = frozenset(("CREATE", "UPDATE", "DELETE"))
    validating: Final = True
    status_writes: Final = False

    def __init__(self, store: Callable[[], ObjectStore]) -> None:
        self._store = store

    def _lookup(self, name: str) -> BizGroupResourceQuota | None:
        try:
            obj: BizGroupResourceQuota = self._store().get(BIZRQ, "", name)
            return obj
        except NotFound:
            return None

    def __call__(self, op: str, new: Any, old: Any | None) -> Any:
        store = self._store()
        name = new.metadata.name
        if op == "DELETE":
            self._refuse(name, delete_errors(new, children_of(store, name)))
            self._grant(None, new)  # the parent takes the grant back
            return new
        errs: list[FieldError] = []
        if old is not None:
            errs += update_errors(new, old, children_of(store, name))
        if not errs:
            errs += parent_errors(new, self._lookup)
        self._refuse(name, errs)
        self._grant(new, old)
        return new

    def _refuse(self, name: str, errs: list[FieldError]) -> None:
        if errs:
            raise Invalid(_ref(name), errs)

    def _grant(self, new: BizGroupResourceQuota | None, old: BizGroupResourceQuota | None) -> None:
        node = new if new is not None else old
        assert node is not None
        pname = node.spec.parent_biz_group
        if not pname:
            return

        def change(parent: BizGroupResourceQuota) -> Any:
            delta = grant_delta(new, old, parent)
            if not delta:
                return None
            used, _ = used_of(parent)
            self._refuse(node.metadata.name, remainder_errors(parent, used, delta))
            return charged_status(parent, delta, own=False)

        try:
            update_status_cas(self._store(), pname, change)
        except NotFound:
            if new is not None:  # (a deleted leaf whose parent is gone has nothing to give back)
                raise
