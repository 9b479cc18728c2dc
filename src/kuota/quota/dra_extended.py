"""DRA-backed extended resources (gate KueueDRAIntegrationExtendedResource),
as Kueue computes them (kueue ``pkg/dra/extended_resources.go``
``ResolveExtendedResourceQuota``, ``resolveQuotaKey``,
``selectedDeviceClass``).

A container's non-zero extended-resource request (``example.com/gpu: 1``)
whose name a DeviceClass declares as ``spec.extendedResourceName`` is
allocated by the kube-scheduler from that class's devices, so Kueue charges
it to the class's quota key: the ``deviceClassMappings`` name of the class
when it is mapped, else the extended resource name itself. Per podSet each
name is aggregated as a pod runs (the largest init container, the sum of the
regular ones, the larger of the two). When several classes declare the same
name, the latest created wins, ties to the lexicographically first name (the
field's documented rule).

Refused, with Kueue's messages: a fractional request of a DRA-backed name,
and a name whose class is mapped with counter or capacity ``sources`` (those
need ResourceClaimTemplates).

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from kuota.api.k8s.resource import DeviceClass
from kuota.api.k8s.validation.resource_requirements import is_extended_resource_name
from kuota.api.kueue.types import PodSet
from kuota.api.quantity import Quantity
from kuota.quota.dra_slices import FieldErr, aggregate, invalid

__all__ = ["ExtendedCharge", "extended_charge", "extended_error", "selected_class"]

_NANO: Final = 1_000_000_000
_EPOCH: Final = datetime.min


@dataclass(frozen=True, slots=True)
class ExtendedCharge:
    """One pod's DRA-backed extended resources: what the containers asked
    (original name -> nano-units, taken out of the pod's requests) and what
    that is charged as (quota key -> devices)."""

    replaced: Mapping[str, int]
    charged: Mapping[str, int]


NONE: Final = ExtendedCharge({}, {})


def _created(dc: DeviceClass) -> datetime:
    ts = dc.metadata.creation_timestamp
    return ts.replace(tzinfo=None) if ts is not None else _EPOCH


def selected_class(classes: Iterable[DeviceClass], resource: str) -> DeviceClass | None:
    """The DeviceClass the scheduler allocates ``resource`` from: of those
    declaring it, the one created last, ties to the first name."""
    best: DeviceClass | None = None
    for dc in classes:
        if dc.spec.extended_resource_name != resource:
            continue
        if best is None:
            best = dc
            continue
        a, b = _created(dc), _created(best)
        if a > b or (a == b and dc.metadata.name < best.metadata.name):
            best = dc
    return best


def _entries(pod_set: PodSet, index: int) -> tuple[list[tuple[str, dict[str, int]]], ...]:
    """(path, {extended name: nanos}) per container with such requests,
    init containers first then regular ones."""
    spec = pod_set.template.spec
    base = f"spec.podSets[{index}].template.spec"
    out: tuple[list[tuple[str, dict[str, int]]], ...] = ([], [])
    if spec is None:
        return out
    for k, (seg, containers) in enumerate(
        (("initContainers", spec.init_containers or ()), ("containers", spec.containers))
    ):
        for j, c in enumerate(containers):
            reqs = c.resources.requests if c.resources is not None else None
            got = {
                n: q.nanos
                for n, q in (reqs or {}).items()
                if q.nanos != 0 and is_extended_resource_name(n)
            }
            if got:
                out[k].append((f"{base}.{seg}[{j}]", got))
    return out


def _resolve(
    pod_set: PodSet,
    index: int,
    classes: Mapping[str, DeviceClass],
    class_resources: Mapping[str, str],
    with_sources: Mapping[str, str],
) -> tuple[ExtendedCharge, list[FieldErr]]:
    inits, regular = _entries(pod_set, index)
    first: dict[str, str] = {}
    peak: dict[str, int] = {}
    total: dict[str, int] = {}
    for path, got in inits:
        for n, v in got.items():
            first.setdefault(n, path)
            peak[n] = max(peak.get(n, v), v)
    for path, got in regular:
        for n, v in got.items():
            first.setdefault(n, path)
            total[n] = total.get(n, 0) + v
    for n, v in peak.items():
        total[n] = max(total.get(n, v), v)
    replaced: dict[str, int] = {}
    charged: dict[str, int] = {}
    errs: list[FieldErr] = []
    for name in sorted(total):
        dc = selected_class(classes.values(), name)
        if dc is None:
            continue  # not DRA-backed: an ordinary extended resource
        key = class_resources.get(dc.metadata.name, name)
        kind = with_sources.get(dc.metadata.name)
        if kind is not None:
            hint = (
                "use ResourceClaimTemplates with CEL selectors for counter-based quota"
                if kind == "counters"
                else "use ResourceClaimTemplates with capacity.requests for capacity-based quota"
            )
            errs.append(
                invalid(
                    first[name],
                    name,
                    f"extended resource {name} resolves to DeviceClass {dc.metadata.name}"
                    f" with {kind} configured; {hint}",
                )
            )
            continue
        # The integer-only rule, per container: two 500m cannot hide each other.
        bad = [
            invalid(f"{path}.resources.requests.{name}", _shown(got[name]), _NOT_INT)
            for path, got in (*inits, *regular)
            if name in got and got[name] % _NANO
        ]
        if bad:
            errs.extend(bad)
            continue
        replaced[name] = total[name]
        charged[key] = charged.get(key, 0) + total[name] // _NANO
    return ExtendedCharge(replaced, charged), errs


_NOT_INT: Final = "extended resource quantity must be an integer"


def _shown(nanos: int) -> str:
    return str(Quantity.from_nanos(nanos))


def extended_charge(
    pod_set: PodSet,
    index: int,
    classes: Mapping[str, DeviceClass],
    class_resources: Mapping[str, str],
    with_sources: Mapping[str, str],
) -> tuple[ExtendedCharge, list[FieldErr]]:
    """One pod's DRA-backed extended resources of ``pod_set`` (at ``index``),
    or Kueue's field errors. ``with_sources``: DeviceClass -> "counters" or
    "capacity sources" for a class whose mapping Kueue charges by its
    sources (those gates on)."""
    if not any(dc.spec.extended_resource_name for dc in classes.values()):
        return NONE, []
    return _resolve(pod_set, index, classes, class_resources, with_sources)


def extended_error(
    pod_sets: Sequence[tuple[int, PodSet]],
    classes: Mapping[str, DeviceClass],
    class_resources: Mapping[str, str],
    with_sources: Mapping[str, str],
) -> str:
    """Kueue's QuotaReserved=False message for the workload's extended
    resources ("" when they resolve): every podSet's errors, aggregated."""
    errs: list[FieldErr] = []
    for i, ps in pod_sets:
        errs.extend(extended_charge(ps, i, classes, class_resources, with_sources)[1])
    return aggregate(errs) if errs else ""
