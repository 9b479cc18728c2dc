"""What an owning object uses, in a bizrq's keys: ResourceQuota's keys
(``requests.cpu``, ``limits.memory``, bare ``cpu``/``memory`` for requests,
``pods``) plus model keys (``limits.nvidia.com/gpu.A100``) for the models its
labels declare. A model key's use also counts into its prefix key: both are
charged, so a request fits only where both have room. Amounts are integers
in thousandths (milli-units), as quotas are compared exactly."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from kuota.api.quantity import Quantity

__all__ = [
    "CPU_TYPE_LABEL",
    "GPU_TYPE_LABEL",
    "MEMORY_TYPE_LABEL",
    "Usage",
    "add_into",
    "exceeded",
    "models_of",
    "pod_usage",
    "scaled",
    "subtract",
]

Usage = dict[str, int]  # key -> milli-units

CPU_TYPE_LABEL: Final = "biz.group.resource.quota/cpu-type"
GPU_TYPE_LABEL: Final = "biz.group.resource.quota/gpu-type"
MEMORY_TYPE_LABEL: Final = "biz.group.resource.quota/memory-type"
_BARE: Final = frozenset(("cpu", "memory"))  # ResourceQuota: ``cpu`` is requests.cpu


def models_of(labels: Mapping[str, str] | None) -> dict[str, str]:
    """Resource kind ("cpu", "gpu", "memory") -> the model the labels declare."""
    if not labels:
        return {}
    out = {}
    for kind, label in (
        ("cpu", CPU_TYPE_LABEL),
        ("gpu", GPU_TYPE_LABEL),
        ("memory", MEMORY_TYPE_LABEL),
    ):
        model = labels.get(label)
        if model:
            out[kind] = model
    return out


def _model_for(resource: str, models: Mapping[str, str]) -> str | None:
    if resource == "cpu" or resource == "memory":
        return models.get(resource)
    if resource.endswith("/gpu"):  # nvidia.com/gpu, amd.com/gpu, ...
        return models.get("gpu")
    return None


def _charge(out: Usage, k: str, milli: int, model: str | None) -> None:
    if milli:
        out[k] = out.get(k, 0) + milli
        if model is not None:
            mk = f"{k}.{model}"
            out[mk] = out.get(mk, 0) + milli


def _sum_containers(containers: Iterable[Any] | None) -> tuple[dict[str, int], dict[str, int]]:
    req: dict[str, int] = {}
    lim: dict[str, int] = {}
    for c in containers or ():
        r = c.resources
        limits = (r.limits if r is not None else None) or {}
        requests = (r.requests if r is not None else None) or {}
        for name, q in limits.items():
            lim[name] = lim.get(name, 0) + q.milli_value()
        for name, q in requests.items():
            req[name] = req.get(name, 0) + q.milli_value()
        for name, q in limits.items():  # a limit alone defaults the request to it
            if name not in requests:
                req[name] = req.get(name, 0) + q.milli_value()
    return req, lim


def pod_usage(pod_spec: Any, models: Mapping[str, str]) -> Usage:
    """One pod's use, as ResourceQuota counts it: containers summed, each
    init container's use if larger (they run one at a time), plus overhead."""
    req, lim = _sum_containers(pod_spec.containers)
    for ic in pod_spec.init_containers or ():
        ireq, ilim = _sum_containers((ic,))
        for name, v in ireq.items():
            req[name] = max(req.get(name, 0), v)
        for name, v in ilim.items():
            lim[name] = max(lim.get(name, 0), v)
    for name, q in (pod_spec.overhead or {}).items():
        req[name] = req.get(name, 0) + q.milli_value()
        if name in lim:
            lim[name] += q.milli_value()
    out: Usage = {"pods": 1000}
    for name, v in req.items():
        model = _model_for(name, models)
        _charge(out, f"requests.{name}", v, model)
        if name in _BARE:
            _charge(out, name, v, model)
    for name, v in lim.items():
        _charge(out, f"limits.{name}", v, _model_for(name, models))
    return out


def scaled(u: Mapping[str, int], n: int) -> Usage:
    return {k: v * n for k, v in u.items()} if n else {}


def add_into(total: Usage, u: Mapping[str, int], sign: int = 1) -> Usage:
    for k, v in u.items():
        nv = total.get(k, 0) + sign * v
        if nv:
            total[k] = nv
        else:
            total.pop(k, None)
    return total


def subtract(a: Mapping[str, int], b: Mapping[str, int]) -> Usage:
    """a - b, key by key (a delta: what an update asks for more or gives back)."""
    return add_into(dict(a), b, -1)


def exceeded(
    hard: Mapping[str, Quantity], used: Mapping[str, int], delta: Mapping[str, int]
) -> list[tuple[str, int, int, int]]:
    """The keys of ``hard`` an increase would overrun: (key, needed, left,
    hard) in milli-units, in key order. Only keys the delta raises are
    checked, as ResourceQuota admission checks only what a request adds
    (an object over a quota lowered beneath it may still shrink)."""
    out = []
    for k in sorted(delta):
        d = delta[k]
        if d <= 0:
            continue
        q = hard.get(k)
        if q is None:
            continue
        h = q.milli_value()
        left = h - used.get(k, 0)
        if d > left:
            out.append((k, d, left, h))
    return out
