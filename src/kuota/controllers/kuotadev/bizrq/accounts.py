"""A bizrq's status as numbers: used and selfUsed in milli-units over its
hard keys; charging a delta (an object's) or a grant (a child's hard)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Final

from kuota.api.kuotadev.bizrq import BizGroupResourceQuota, BizGroupStatus, is_cash
from kuota.api.quantity import Quantity
from kuota.controllers.kuotadev.bizrq.status_cas import milli_of
from kuota.quota.bizgroups.usage import Usage
from kuota.store.codec import EditedMap

__all__ = ["Ledger", "Ledgers", "charged_status", "spent_budgets", "used_of"]


def used_of(obj: BizGroupResourceQuota) -> tuple[Usage, Usage]:
    """(used, selfUsed) in milli-units."""
    st = obj.status
    if st is None:
        return {}, {}
    return milli_of(st.used), milli_of(st.self_used)


_ZERO: Final = Quantity.from_int(0)  # (immutable: one for every key new to hard)
_UNREAD: Final = -1  # (hard is never negative; were it -1, it would just be read again)


class Ledger:
    """A bizrq's numbers in milli-units, at one stored version of it (its uid
    and resourceVersion): each read from the version's Quantities once, when
    a check first needs it. A check reads a few of a node's 50 keys, and
    checks of one group follow each other: the webhook keeps the ledger of
    the version it wrote for the next check (``after``), so the keys a
    request touches are not read again from Quantities (a Python call each,
    compiled or not). Any other write moves the resourceVersion: the next
    check then starts a ledger of the new version. (By key name, not interned
    index vectors: a request's delta arrives keyed by name, and the index
    lookup would cost what the dict lookup does.)"""

    __slots__ = ("_hard", "_self_used", "_steady", "_used", "obj", "uid", "version")

    def __init__(
        self,
        obj: BizGroupResourceQuota,
        *,
        hard: dict[str, int | None] | None = None,
        used: dict[str, int] | None = None,
        self_used: dict[str, int] | None = None,
        steady: bool | None = None,
    ) -> None:
        self.obj = obj
        self.uid = obj.metadata.uid
        self.version = obj.metadata.resource_version
        # Memos of the version's values (filled, never changed: a ledger may
        # be read by concurrent checks of one version).
        self._hard: dict[str, int | None] = hard if hard is not None else {}
        self._used: dict[str, int] = used if used is not None else {}
        self._self_used: dict[str, int] = self_used if self_used is not None else {}
        self._steady = steady

    def of_version(self, obj: BizGroupResourceQuota) -> bool:
        m = obj.metadata
        return self.version == m.resource_version and self.uid == m.uid

    def hard(self, k: str) -> int | None:
        """``spec.hard[k]`` in milli-units; None: not a key of hard."""
        v = self._hard.get(k, _UNREAD)
        if v == _UNREAD:
            q = (self.obj.spec.hard or {}).get(k)
            # (A key hard lacks is remembered too: a request names several.)
            v = self._hard[k] = q.milli_value() if q is not None else None
        return v

    def used(self, k: str) -> int:
        """``status.used[k]`` in milli-units (0 when absent)."""
        v = self._used.get(k)
        if v is None:
            st = self.obj.status
            q = (st.used if st is not None else None) or {}
            v = self._used[k] = q[k].milli_value() if k in q else 0
        return v

    def _self(self, k: str) -> int:
        v = self._self_used.get(k)
        if v is None:
            st = self.obj.status
            q = (st.self_used if st is not None else None) or {}
            v = self._self_used[k] = q[k].milli_value() if k in q else 0
        return v

    def exceeded(self, delta: Mapping[str, int]) -> list[tuple[str, int, int, int]]:
        """As usage.exceeded over this version's hard and used: the keys of
        hard an increase would overrun, (key, needed, left, hard), in key order."""
        out = []
        # The memos read inline: a method call per key costs (interpreted)
        # what reading the Quantity did.
        hard_m, used_m = self._hard, self._used
        for k, d in delta.items():
            if d <= 0:
                continue
            h = hard_m.get(k, _UNREAD)
            if h == _UNREAD:
                h = self.hard(k)
            if h is None:
                continue
            u = used_m.get(k)
            left = h - (u if u is not None else self.used(k))
            if d > left:
                out.append((k, d, left, h))
        out.sort()  # (by key: keys are unique; most requests fit, nothing to sort)
        return out

    def _is_steady(self) -> bool:
        """The status is one this module wrote over the current hard: its
        maps hold hard's keys (sorted when written) and its hard is spec's."""
        steady = self._steady
        if steady is None:
            old = self.obj.status
            hard = self.obj.spec.hard or {}
            steady = self._steady = (
                old is not None
                and old.used is not None
                and old.self_used is not None
                and old.used.keys() == hard.keys() == old.self_used.keys()
                and old.hard == hard
            )
        return steady

    def charged(
        self, delta: Mapping[str, int], *, own: bool, now: datetime | None = None
    ) -> tuple[BizGroupStatus, Ledger]:
        """The status after charging ``delta`` (see charged_status), and the
        ledger of that status (``after``: valid once written, see
        written_as)."""
        obj = self.obj
        hard = obj.spec.hard or {}
        old = obj.status
        if old is None or not self._is_steady():
            changed = [k for k, v in delta.items() if v and k in hard]
            return self._rebuilt(delta, changed, own, now)
        assert old.used is not None and old.self_used is not None
        used_ints = dict(self._used)
        self_ints = dict(self._self_used) if own else self._self_used
        new_used: dict[str, Quantity] = {}
        new_self: dict[str, Quantity] = {}
        for k, v in delta.items():
            if not v or k not in hard:
                continue
            was = used_ints.get(k)
            u = used_ints[k] = (was if was is not None else self.used(k)) + v
            q = new_used[k] = Quantity.from_milli(u)
            if own:
                was = self_ints.get(k)
                s = self_ints[k] = (was if was is not None else self._self(k)) + v
                # (A leaf's used is its selfUsed: one immutable Quantity for both.)
                new_self[k] = q if s == u else Quantity.from_milli(s)
        # Only the touched entries: the status write copies just those.
        used: dict[str, Quantity] = EditedMap(old.used, new_used)
        self_used = EditedMap(old.self_used, new_self) if own else old.self_used
        status = BizGroupStatus(
            hard=old.hard,
            used=used,
            self_used=self_used,
            last_reconcile_time=old.last_reconcile_time,
            conditions=old.conditions,
        )
        after = Ledger(obj, hard=self._hard, used=used_ints, self_used=self_ints, steady=True)
        return status, after

    def _rebuilt(
        self, delta: Mapping[str, int], changed: list[str], own: bool, now: datetime | None
    ) -> tuple[BizGroupStatus, Ledger]:
        """A first status, or one over a changed hard: every map rebuilt over
        hard's keys in order (a key new to hard starts at 0)."""
        hard = self.obj.spec.hard or {}
        old = self.obj.status
        used = dict((old.used if old is not None else None) or {})
        self_used = dict((old.self_used if old is not None else None) or {})
        for k in hard:
            if k not in used:
                used[k] = _ZERO
            if k not in self_used:
                self_used[k] = _ZERO
        for k in changed:
            v = delta[k]
            u = used[k].milli_value() + v
            q = used[k] = Quantity.from_milli(u)
            if own:
                s = self_used[k].milli_value() + v
                self_used[k] = q if s == u else Quantity.from_milli(s)
        status = BizGroupStatus(
            hard=dict(hard),
            used={k: used[k] for k in sorted(hard)},
            self_used={k: self_used[k] for k in sorted(hard)},
            last_reconcile_time=old.last_reconcile_time if old is not None else now,
            conditions=old.conditions if old is not None else None,
        )
        return status, Ledger(self.obj, hard=self._hard)

    def written_as(self, status: BizGroupStatus, written: BizGroupResourceQuota) -> Ledger | None:
        """This ``after`` ledger, made the ledger of ``written`` (the version
        the store made of ``status``; not yet shared, it is repointed rather
        than copied), when the store kept the charged entries as they were
        given (no status hook rewrote them); else None."""
        st = written.status
        if st is None or st.used is None or status.used is None:
            return None
        if type(status.used) is not EditedMap or not self._steady:
            return None
        kept, given = st.used, status.used
        for k in status.used.changed:
            if kept.get(k) is not given[k]:
                return None
        if len(kept) != len(given):
            return None
        # (Its hard and key order are the written status's, when it kept hard.)
        self._steady = True if st.hard is status.hard else None
        self.obj = written
        self.uid = written.metadata.uid
        self.version = written.metadata.resource_version
        return self


class Ledgers:
    """The ledger of each group's newest version a writer knows (see Ledger)."""

    __slots__ = ("_by_name",)

    _KEPT: Final = 65536

    def __init__(self) -> None:
        self._by_name: dict[str, Ledger] = {}

    def of(self, obj: BizGroupResourceQuota) -> Ledger:
        known = self._by_name.get(obj.metadata.name)
        if known is not None and known.of_version(obj):
            return known
        return Ledger(obj)

    def keep(self, ledger: Ledger) -> None:
        if len(self._by_name) >= self._KEPT:
            self._by_name.clear()  # (names of deleted groups)
        self._by_name[ledger.obj.metadata.name] = ledger


def charged_status(
    obj: BizGroupResourceQuota,
    delta: Mapping[str, int],
    *,
    own: bool,
    now: datetime | None = None,
) -> BizGroupStatus:
    """The status after charging ``delta``: an object's (``own``: counts in
    selfUsed and used) or a child's grant (used only). Only the keys the
    delta touches are rebuilt: the others keep their (immutable) Quantities,
    as a request usually touches a few of a node's many keys."""
    return Ledger(obj).charged(delta, own=own, now=now)[0]


def spent_budgets(obj: BizGroupResourceQuota) -> list[tuple[str, int, int]]:
    """The ``cash/`` keys whose used reached hard: (key, used, hard)."""
    hard = obj.spec.hard or {}
    cash = _cash_keys(hard)
    if not cash:
        return []
    st = obj.status
    used = (st.used if st is not None else None) or {}
    out = []
    for k in cash:
        h = hard[k].milli_value()
        u = used[k].milli_value() if k in used else 0
        if u >= h:
            out.append((k, u, h))
    return out


# A group's spec is the same object from write to write (a status write keeps
# it), so its budget keys are found once, not on every request it checks.
_CASH: dict[int, tuple[Mapping[str, Quantity], tuple[str, ...]]] = {}
_CASH_KEPT = 4096


def _cash_keys(hard: Mapping[str, Quantity]) -> tuple[str, ...]:
    known = _CASH.get(id(hard))
    if known is not None and known[0] is hard:
        return known[1]
    keys = tuple(sorted(k for k in hard if is_cash(k)))
    if len(_CASH) >= _CASH_KEPT:
        _CASH.clear()
    _CASH[id(hard)] = (hard, keys)
    return keys
