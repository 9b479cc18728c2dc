"""Admission fair sharing: what each LocalQueue has recently used, kept as
Kueue keeps it (pkg/util/admissionfairsharing/admission_fair_sharing.go,
pkg/cache/queue/afs/usage_ledger.go and entry_penalties.go).

Kueue holds these amounts as ``resource.Quantity`` decimals: a decay is
``MulByFloat`` (the float's shortest decimal text times the quantity, truncated
to nano-units), sums are exact, and only the usage that orders LocalQueues is a
float (``AsApproximateFloat64``: the unscaled digits times a power of ten).
``Decimal`` does the same here, its exponent standing for the quantity's
scale, so amounts decay to exactly zero and LocalQueues tie exactly when they
do in Kueue.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import ROUND_DOWN, Context, Decimal
from functools import lru_cache
from typing import Final

from kuota.api.kueue.config import AdmissionFairSharing
from kuota.api.quantity import DECIMAL_SI, Quantity
from kuota.quota.requests import CPU, EPHEMERAL_STORAGE, HUGEPAGES_PREFIX, MEMORY, resource_quantity

# corev1.ResourceList as Kueue's ledger holds it: resource -> exact decimal.
Amounts = dict[str, Decimal]

# Exact for anything a quantity holds (inf.Dec is arbitrary precision).
_CTX: Final = Context(prec=400)
_NANO: Final = Decimal("1e-9")  # MulByFloat's fixed scale
_CANONICAL: Final = re.compile(r"(-?)([0-9]+)(?:e(-?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei)|([numkMGTPE]?))")
_SI_EXPONENT: Final = {
    "n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18,
}  # fmt: skip
_BINARY_POWER: Final = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}


# ============================================================================ arithmetic
def seconds(span: timedelta) -> float:
    """Go's ``Duration.Seconds()`` of a non-negative span: whole seconds plus
    the nanoseconds over 1e9, each converted on its own."""
    ns = (span.days * 86_400 + span.seconds) * 1_000_000_000 + span.microseconds * 1000
    whole, rest = divmod(ns, 1_000_000_000)
    return float(whole) + float(rest) / 1e9


def alpha(elapsed: float, half_life: float) -> float:
    """The weight of the newest sample (calculateAlphaRate); a zero half-life keeps none."""
    if half_life == 0:
        return 0.0
    return 1.0 - math.pow(0.5, elapsed / half_life)


def mul_by_float(amounts: Amounts, f: float) -> Amounts:
    """resource.MulByFloat: exact product with the float's shortest decimal form
    (strconv 'f', -1), truncated toward zero to nano-units."""
    factor = Decimal(repr(f))
    return {
        r: _CTX.multiply(v, factor).quantize(_NANO, rounding=ROUND_DOWN, context=_CTX)
        for r, v in amounts.items()
    }


def merge_sum(a: Amounts, b: Amounts | None) -> Amounts:
    """MergeResourceListKeepSum: every resource of either, summed exactly."""
    out = dict(a)
    for r, v in (b or {}).items():
        old = out.get(r)
        out[r] = v if old is None else _CTX.add(old, v)
    return out


def decayed(old: Amounts, new: Amounts, elapsed: float, half_life: float) -> Amounts:
    """CalculateDecayedConsumed: old x (1 - a) + new x a, a from the elapsed seconds."""
    a = alpha(elapsed, half_life)
    return merge_sum(mul_by_float(old, 1 - a), mul_by_float(new, a))


@lru_cache(maxsize=64)
def _pow10(exponent: int) -> float:
    return float(f"1e{exponent}")  # math.Pow10: the correctly rounded power


def approx_float(d: Decimal) -> float:
    """Quantity.AsApproximateFloat64: the unscaled integer as a float times 10^exponent."""
    exponent = d.as_tuple().exponent
    assert isinstance(exponent, int)
    unscaled = float(int(d.scaleb(-exponent, _CTX)))
    return unscaled if exponent == 0 else unscaled * _pow10(exponent)


def decimal_of(q: Quantity) -> Decimal:
    """The decimal Kubernetes holds once it has parsed ``q``'s canonical text:
    "1500m" is 1500 at scale 3, "1Gi" the integer 2^30, "8" the integer 8."""
    m = _CANONICAL.fullmatch(str(q))
    assert m is not None, str(q)
    sign, digits, exponent, binary, si = m.groups()
    if binary:
        return Decimal(int(sign + digits) << _BINARY_POWER[binary])
    e = int(exponent) if exponent is not None else _SI_EXPONENT[si]
    return Decimal(f"{sign}{digits}E{e}")


def from_units(resource: str, value: int) -> Decimal:
    """ResourceFormatter.ResourceQuantity of Kueue's integer units, as a decimal:
    cpu is milli-units at scale 3, byte-valued resources their canonical
    quantity, anything else the integer."""
    if resource == CPU:
        return Decimal(value).scaleb(-3, _CTX)
    if resource in (MEMORY, EPHEMERAL_STORAGE) or resource.startswith(HUGEPAGES_PREFIX):
        return decimal_of(resource_quantity(resource, value))
    return Decimal(value)


def to_quantity(d: Decimal) -> Quantity:
    """An amount as the DecimalSI quantity Kueue writes to the LocalQueue status."""
    return Quantity.from_nanos(int(d.scaleb(9, _CTX)), DECIMAL_SI)


def usage_value(
    consumed: Amounts, penalty: Amounts, lq_weight: float, weights: Mapping[str, float]
) -> float:
    """CalculateUsage: weighted sum of consumed + pending penalty, by resource
    name, over the LocalQueue's weight; a weight of zero or less is +inf."""
    total = merge_sum(consumed, penalty)
    usage = 0.0
    for r in sorted(total):
        usage += weights.get(r, 1.0) * approx_float(total[r])
    if lq_weight <= 0:
        return math.inf
    return usage / lq_weight


def quantity_weight(q: Quantity | None) -> float:
    """LQWeightAsFloat64: the LocalQueue's fairSharing.weight (default 1)."""
    return 1.0 if q is None else approx_float(decimal_of(q))


# ============================================================================ the ledger
@dataclass(slots=True)
class LedgerEntry:
    """Everything one LocalQueue's usage is computed from (UsageLedgerEntry)."""

    last_update: datetime  # when ``resources`` last decayed, or the entry was made
    resources: Amounts = field(default_factory=dict)  # the decayed consumed history
    pending: Amounts = field(default_factory=dict)  # the sum of ``penalties``
    penalties: dict[str, Amounts] = field(default_factory=dict)  # by workload key
    # Whether the LocalQueue's persisted status has been folded in.
    status_accounted: bool = False
    # What the LocalQueue's status was last written with: consumed and lastUpdate.
    status: tuple[Amounts, datetime] | None = None
    cached: tuple[float, float] | None = None  # (LocalQueue weight, usage)

    def has_pending_penalty(self) -> bool:
        return any(v != 0 for v in self.pending.values())

    def drop_penalty(self, wl_key: str) -> Amounts | None:
        """WithoutPenalty: forget the workload's record and take it off the sum,
        dropping the zeros that leaves."""
        recorded = self.penalties.pop(wl_key, None)
        if recorded is None:
            return None
        rest = merge_sum(self.pending, {r: -v for r, v in recorded.items()})
        self.pending = {r: v for r, v in rest.items() if v != 0}
        return recorded


class UsageLedger:
    """The per-LocalQueue fair-sharing accounts (AfsUsageLedger) and the
    operations Kueue's controllers and scheduler perform on them. Keys are
    ``namespace/name`` of the LocalQueue; time is passed in."""

    def __init__(self, cfg: AdmissionFairSharing) -> None:
        self.half_life = seconds(cfg.usage_half_life_time)  # seconds, as Kueue computes
        self.interval = cfg.usage_sampling_interval
        self.weights = cfg.resource_weights
        self.entries: dict[str, LedgerEntry] = {}
        # While frozen: (consumed, pending) of each entry as it was when frozen,
        # recorded before its first change.
        self._frozen: dict[str, tuple[Amounts, Amounts]] | None = None

    def get(self, lq: str) -> LedgerEntry | None:
        return self.entries.get(lq)

    def delete(self, lq: str) -> None:
        self._touch(lq)
        self.entries.pop(lq, None)

    def freeze(self) -> None:
        """Keep the usage as it is now readable (snapshot_usage) while the
        entries change: what a scheduling cycle's snapshot sees."""
        self._frozen = {}

    def thaw(self) -> None:
        self._frozen = None

    def _touch(self, lq: str) -> None:
        if self._frozen is not None and lq not in self._frozen:
            e = self.entries.get(lq)
            # Every change replaces these maps, so keeping them is a copy.
            self._frozen[lq] = (e.resources, e.pending) if e is not None else ({}, {})

    def _entry(self, lq: str, now: datetime) -> LedgerEntry:
        self._touch(lq)
        e = self.entries.get(lq)
        if e is None:
            e = self.entries[lq] = LedgerEntry(now)
        e.cached = None
        return e

    def entry_penalty(self, total_requests: Amounts) -> Amounts:
        """CalculateEntryPenalty: one sampling interval's share of the requests."""
        return mul_by_float(total_requests, alpha(seconds(self.interval), self.half_life))

    def push_penalty(self, lq: str, wl_key: str, penalty: Amounts, now: datetime) -> None:
        """PushPenalty: the workload's record replaces any earlier one."""
        e = self._entry(lq, now)
        e.drop_penalty(wl_key)
        e.penalties[wl_key] = dict(penalty)
        e.pending = merge_sum(e.pending, penalty)

    def sub_penalty(self, lq: str, wl_key: str) -> None:
        """SubPenalty: the workload will never settle; a no-op without a record."""
        e = self.entries.get(lq)
        if e is not None and wl_key in e.penalties:
            self._touch(lq)
            e.drop_penalty(wl_key)
            e.cached = None

    def settle(self, lq: str, wl_key: str, admitted: Amounts, now: datetime) -> None:
        """updateAfsConsumedUsage: on admission, decay the history with the
        live admitted usage and fold in exactly the workload's recorded penalty."""
        e = self._entry(lq, now)
        elapsed = seconds(max(timedelta(0), now - e.last_update))
        consumed = decayed(e.resources, admitted, elapsed, self.half_life)
        e.resources = merge_sum(consumed, e.drop_penalty(wl_key))
        e.last_update = max(e.last_update, now)

    def initialize(self, lq: str, seed: Amounts, now: datetime) -> tuple[bool, LedgerEntry]:
        """initializeAfsIfNeeded: seed a new entry from the persisted status (its
        clock starting now), or fold the status once into an entry a penalty
        created first. Returns whether the entry existed."""
        self._touch(lq)
        e = self.entries.get(lq)
        if e is None:
            e = self.entries[lq] = LedgerEntry(now, dict(seed), status_accounted=True)
            return False, e
        if not e.status_accounted:
            e.resources = merge_sum(e.resources, seed)
            e.status_accounted = True
            e.cached = None
        return True, e

    def sample(self, lq: str, admitted: Amounts, now: datetime) -> None:
        """reconcileConsumedUsage: one sampling tick, and the status it writes."""
        e = self._entry(lq, now)
        if self.half_life == 0:
            e.resources = {}
        else:
            elapsed = seconds(max(timedelta(0), now - e.last_update))
            e.resources = decayed(e.resources, admitted, elapsed, self.half_life)
        e.last_update = max(e.last_update, now)
        e.status = (e.resources, now)

    def usage(self, lq: str, lq_weight: float) -> float:
        """The LocalQueue's fair-sharing usage, cached until its entry changes."""
        e = self.entries.get(lq)
        if e is None:
            return usage_value({}, {}, lq_weight, self.weights)
        if e.cached is None or e.cached[0] != lq_weight:
            e.cached = (lq_weight, usage_value(e.resources, e.pending, lq_weight, self.weights))
        return e.cached[1]

    def snapshot_usage(self, lq: str, lq_weight: float) -> float:
        """The usage as it was when the ledger was frozen (the current one if not)."""
        was = self._frozen.get(lq) if self._frozen is not None else None
        if was is None:
            return self.usage(lq, lq_weight)
        return usage_value(was[0], was[1], lq_weight, self.weights)
