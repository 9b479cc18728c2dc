"""The devices ResourceSlices publish, as Kueue's DRA quota reads them
(``pkg/dra/counters.go``, ``capacity.go`` and the CEL half of ``claims.go``,
at kueue ``ff69552e``): the pools a driver's slices form, the devices that
match a source's ``deviceSelector``, the DeviceClass's and the request's CEL
selectors, and the charge a counter or a capacity dimension makes of them.

CEL runs in the environment Kubernetes gives device selectors (``device``:
``driver``, ``attributes`` and ``capacity`` by domain, an unqualified name
under the driver's domain, ``allowMultipleAllocations``); a ``version``
attribute is its text, not a semver value.

Errors are Go ``field.Error`` strings, as Kueue writes them into the
workload's condition. Pure: no I/O.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from kuota.api.cel import CelError, Compiled, compile_expr
from kuota.api.k8s.resource import Device, DeviceClass, ResourceSlice
from kuota.api.quantity import Quantity, QuantityError

__all__ = [
    "INT64_MAX",
    "FieldErr",
    "Slices",
    "aggregate",
    "capacity_charge",
    "cel_device",
    "compile_selectors",
    "count_matching",
    "counter_charge",
    "explicit_capacity",
    "internal",
    "invalid",
    "match_devices",
    "safe_charge",
]

INT64_MAX: Final = 2**63 - 1
_Q: Final = "@kubernetes.Quantity"  # how kuota's CEL library holds a quantity
_DOMAINS: Final = re.compile(r"""\b(?:attributes|capacity)\s*\[\s*(?:'([^']*)'|"([^"]*)")\s*\]""")


@dataclass(frozen=True)
class FieldErr:
    """A Go ``field.Error`` of the kinds Kueue's DRA code returns; str() is
    its ``Error()``."""

    path: str
    kind: str  # "Invalid", "NotFound" or "Internal"
    detail: str
    value: Any = None

    def __str__(self) -> str:
        if self.kind == "Invalid":
            return f"{self.path}: Invalid value: {_go_value(self.value)}: {self.detail}"
        if self.kind == "NotFound":
            return f"{self.path}: Not found: {json.dumps(self.detail)}"
        return f"{self.path}: Internal error: {self.detail}"

    def prefixed(self, path: str, detail: str) -> FieldErr:
        """The error re-rooted as claims.go re-roots a claim's errors."""
        return FieldErr(path, self.kind, detail, self.value)


def internal(path: str, detail: str) -> FieldErr:
    return FieldErr(path, "Internal", detail)


def invalid(path: str, value: Any, detail: str) -> FieldErr:
    return FieldErr(path, "Invalid", detail, value)


def aggregate(errs: Sequence[FieldErr]) -> str:
    """``ErrorList.ToAggregate().Error()``: duplicates dropped, one bare,
    several as ``[a, b]``."""
    msgs = list(dict.fromkeys(str(e) for e in errs))
    return msgs[0] if len(msgs) == 1 else "[" + ", ".join(msgs) + "]"


def _go_value(v: Any) -> str:
    """A field error's bad value as apimachinery prints it (nil as "null")."""
    if v is None:
        return '"null"'
    return json.dumps(v) if isinstance(v, str) else str(v)


@dataclass(frozen=True)
class Slices:
    """What the quota reads of the cluster's devices: every ResourceSlice and
    the DeviceClasses by name."""

    slices: Sequence[ResourceSlice] = ()
    classes: Mapping[str, DeviceClass] = field(default_factory=dict)


def _selector_exprs(selectors: Any) -> list[str | None]:
    """The CEL expressions of a ``selectors`` list (None: a non-CEL selector)."""
    out: list[str | None] = []
    for sel in selectors or ():
        cel = sel.get("cel") if isinstance(sel, dict) else None
        expr = cel.get("expression") if isinstance(cel, dict) else None
        out.append(expr if isinstance(expr, str) else None)
    return out


def compile_selectors(
    selectors: Any, path: str, context: str
) -> tuple[list[Compiled], list[FieldErr]]:
    """compileCELSelectors: the compiled CEL selectors, and an Invalid error
    at ``path[i].cel.expression`` for each that does not compile."""
    compiled: list[Compiled] = []
    errs: list[FieldErr] = []
    for i, expr in enumerate(_selector_exprs(selectors)):
        if expr is None:
            continue
        try:
            compiled.append(compile_expr(expr, ("device",)))
        except CelError as err:
            # (the compiler's detail starts "compilation failed: ", as dracel's)
            errs.append(invalid(f"{path}[{i}].cel.expression", expr, f"{context}: {err}"))
    return compiled, errs


def _attr_value(a: Any) -> Any:
    for v in (a.int_, a.bool_, a.string, a.version):
        if v is not None:
            return v
    raise CelError("unsupported attribute value")


def _split(name: str, driver: str) -> tuple[str, str]:
    domain, _, ident = name.rpartition("/")
    return (domain or driver), ident


@functools.lru_cache(maxsize=1024)
def _domains_of(source: str) -> tuple[str, ...]:
    """The attribute / capacity domains an expression looks up by literal."""
    return tuple(
        m.group(1) if m.group(1) is not None else m.group(2) for m in _DOMAINS.finditer(source)
    )


def domains(*selector_sets: Sequence[Compiled]) -> frozenset[str]:
    return frozenset(d for sels in selector_sets for c in sels for d in _domains_of(c.source))


def cel_device(driver: str, dev: Device, looked_up: frozenset[str]) -> dict[str, Any]:
    """The ``device`` variable of Kubernetes' DRA CEL environment. A domain
    an expression looks up (``looked_up``) but the device lacks is an empty
    map (a lookup of an unknown domain is empty there); CelError for an
    attribute without a value."""
    attrs: dict[str, dict[str, Any]] = {d: {} for d in looked_up}
    caps: dict[str, dict[str, Any]] = {d: {} for d in looked_up}
    for name, a in (dev.attributes or {}).items():
        d, ident = _split(name, driver)
        attrs.setdefault(d, {})[ident] = _attr_value(a)
    for name, cap in (dev.capacity or {}).items():
        d, ident = _split(name, driver)
        caps.setdefault(d, {})[ident] = {_Q: str(cap.value)}
    return {
        "driver": driver,
        "attributes": attrs,
        "capacity": caps,
        "allowMultipleAllocations": bool(dev.allow_multiple_allocations),
    }


class _Device:
    """One device as the selectors see it: its CEL variable, made once (on
    the first selector that reads it) for every selector set."""

    __slots__ = ("dev", "driver", "looked_up", "var")

    def __init__(self, driver: str, dev: Device, looked_up: frozenset[str]) -> None:
        self.driver = driver
        self.dev = dev
        self.looked_up = looked_up
        self.var: dict[str, Any] | None = None

    def matches(self, selectors: Sequence[Compiled]) -> bool:
        """evaluateSelectorsOnDevice: every selector true (CelError when one
        fails to evaluate)."""
        if not selectors:
            return True
        if self.var is None:
            self.var = {"device": cel_device(self.driver, self.dev, self.looked_up)}
        for c in selectors:
            got = c.eval(self.var)
            if not isinstance(got, bool):
                raise CelError(
                    f"CEL result of type {type(got).__name__} could not be converted to bool"
                )
            if not got:
                return False
        return True


def count_matching(
    devices: Sequence[tuple[str, Device]],
    cls: Sequence[Compiled],
    request: Sequence[Compiled],
    taken: set[int],
    needed: int,
) -> int:
    """countMatchingDevices: how many devices (up to ``needed``) not yet
    ``taken`` both the class's and the request's selectors accept, marking
    them taken; CelError when a selector fails to evaluate."""
    n = 0
    looked_up = domains(cls, request)
    for i, (driver, dev) in enumerate(devices):
        d = _Device(driver, dev, looked_up)
        if i in taken or not d.matches(cls):
            continue
        if d.matches(request):
            taken.add(i)
            n += 1
            if n >= needed:
                break
    return n


def _complete_pool_devices(slices: Sequence[ResourceSlice], driver: str) -> list[Device]:
    """groupSlicesByPool then collectDevices of the complete pools: per pool
    the slices of its highest generation, complete when there are as many as
    resourceSliceCount."""
    pools: dict[str, tuple[int, int, list[ResourceSlice]]] = {}
    for s in slices:
        if s.spec.driver != driver:
            continue
        p = s.spec.pool
        known = pools.get(p.name)
        if known is None or p.generation > known[0]:
            pools[p.name] = (p.generation, p.resource_slice_count, [s])
        elif p.generation == known[0]:
            known[2].append(s)
    out: list[Device] = []
    for gen_count_slices in pools.values():
        _, count, members = gen_count_slices
        if len(members) != count:
            continue
        for s in members:
            out.extend(s.spec.devices or ())
    return out


def match_devices(
    slices: Sequence[ResourceSlice],
    driver: str,
    source: Sequence[Compiled],
    cls: Sequence[Compiled],
    request: Sequence[Compiled],
    path: str,
) -> tuple[list[Device], FieldErr | None]:
    """matchDevicesWithSelectors over the driver's complete pools: the devices
    the source's, the class's and the request's selectors all accept, or an
    Internal error at ``path`` when one fails to evaluate."""
    matched: list[Device] = []
    looked_up = domains(source, cls, request)
    for dev in _complete_pool_devices(slices, driver):
        d = _Device(driver, dev, looked_up)
        for sels, what in ((source, "deviceSelector"), (cls, "DeviceClass selector")):
            try:
                ok = d.matches(sels)
            except CelError as err:
                return [], internal(
                    path, f"CEL evaluation error in {what} for device {dev.name}: {err}"
                )
            if not ok:
                break
        else:
            try:
                if d.matches(request):
                    matched.append(dev)
            except CelError as err:
                return [], internal(
                    path, f"CEL evaluation error in request selector for device {dev.name}: {err}"
                )
    return matched, None


def safe_charge(value: Quantity, count: int) -> int:
    """safeChargeValue: the value in whole units (rounded up, saturated to
    int64), a negative one as 0, times ``count`` saturating."""
    v = 0 if value.sign() < 0 else value.int64_value()
    if count > 1:
        v = min(v * count, INT64_MAX)
    return v


def counter_charge(matched: Sequence[Device], counter: str, count: int) -> int | None:
    """computeCounterCharges: the largest value any matched device consumes
    of the counter (across its counter sets), times ``count``; None when no
    device consumes it."""
    best: Quantity | None = None
    for dev in matched:
        for cons in dev.consumes_counters or ():
            c = cons.counters.get(counter)
            if c is not None and (best is None or c.value > best):
                best = c.value
    return None if best is None else safe_charge(best, count)


def _round(base: Quantity, policy: Any) -> Quantity | None:
    """roundToPolicy: None when the policy cannot take the request."""
    if policy is None:
        return base
    if policy.valid_values:
        for v in policy.valid_values:
            if v >= base:
                return v
        return None
    vr = policy.valid_range
    if vr is None:
        return base
    val = base.int64_value()
    if vr.min is not None:
        val = max(val, vr.min.int64_value())
    if vr.step is not None and vr.min is not None:
        step = vr.step.int64_value()
        if step > 0:
            lo = vr.min.int64_value()
            offset = val - lo
            if offset % step != 0:
                val = min(lo + (offset // step + 1) * step, INT64_MAX)
    if vr.max is not None and val > vr.max.int64_value():
        return None
    return Quantity.from_int(val, base.format)


def explicit_capacity(capacity: Any, name: str) -> Quantity | None:
    """The request's ``capacity.requests[name]``, if any."""
    reqs = capacity.get("requests") if isinstance(capacity, dict) else None
    raw = reqs.get(name) if isinstance(reqs, dict) else None
    if raw is None:
        return None
    try:
        return Quantity.from_value(raw)
    except QuantityError:
        return None


def capacity_charge(
    matched: Sequence[Device],
    dimension: str,
    count: int,
    explicit: Quantity | None,
    path: str,
) -> tuple[int, FieldErr | None]:
    """computeCapacityCharge: per matched device with the dimension, the
    explicit request (else the policy's default, else the whole capacity)
    rounded to its request policy; the largest, times ``count``. Or Kueue's
    error: no device has the dimension, or no policy takes the request."""
    best: Quantity | None = None
    has_dimension = False
    for dev in matched:
        cap = (dev.capacity or {}).get(dimension)
        if cap is None:
            continue
        has_dimension = True
        policy = cap.request_policy
        if explicit is not None:
            base = explicit
        elif policy is not None and policy.default is not None:
            base = policy.default
        else:
            base = cap.value
        rounded = _round(base, policy)
        if rounded is not None and (best is None or rounded > best):
            best = rounded
    if not has_dimension:
        return 0, internal(
            path, f"matched devices have no capacity dimension {json.dumps(dimension)}"
        )
    if best is None:
        return 0, invalid(
            path,
            None,
            "capacity request cannot be satisfied by any matched device's RequestPolicy"
            f" for dimension {json.dumps(dimension)}",
        )
    return safe_charge(best, count), None
