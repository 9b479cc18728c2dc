"""A simulated node's kubelet configuration, given as annotations on the Node,
and the capacity and allocatable the kubelet would report from it.

A real kubelet computes ``status.allocatable`` from its configuration
(OpenShift sets it with a ``KubeletConfig``); a world's Node carries that
configuration as annotations in the kubelet's own flag syntax:

* ``kuota.dev/system-reserved: "cpu=500m,memory=1Gi"`` (``--system-reserved``)
* ``kuota.dev/kube-reserved: "cpu=250m,memory=1Gi"`` (``--kube-reserved``)
* ``kuota.dev/eviction-hard: "memory.available<100Mi,nodefs.available<10%"``
  (``--eviction-hard``; the kubelet's default is not assumed)
* ``kuota.dev/max-pods: "250"`` (``--max-pods``; default 110, OpenShift's 250)
* ``kuota.dev/pods-per-core: "10"`` (``--pods-per-core``; 0: no limit)

Allocatable is, per resource of the capacity, capacity minus system-reserved,
kube-reserved and the hard eviction threshold, never below zero (the
kubelet's ``MachineInfo`` setter); the pod capacity is ``maxPods``, or
``min(podsPerCore × cores, maxPods)``. A Node that states its own
``status.allocatable`` (as a real cluster's do) is taken as it is.
Pure: the errors name the annotation, for validation to report.
"""

from __future__ import annotations

from collections.abc import Mapping

from kuota.api.quantity import Quantity, QuantityError

__all__ = [
    "EVICTION_HARD",
    "KUBELET_ANNOTATIONS",
    "KUBE_RESERVED",
    "MAX_PODS",
    "PODS_PER_CORE",
    "SYSTEM_RESERVED",
    "KubeletConfig",
    "kubelet_config",
    "node_status_resources",
]

SYSTEM_RESERVED = "kuota.dev/system-reserved"
KUBE_RESERVED = "kuota.dev/kube-reserved"
EVICTION_HARD = "kuota.dev/eviction-hard"
MAX_PODS = "kuota.dev/max-pods"
PODS_PER_CORE = "kuota.dev/pods-per-core"
KUBELET_ANNOTATIONS = (SYSTEM_RESERVED, KUBE_RESERVED, EVICTION_HARD, MAX_PODS, PODS_PER_CORE)

# What --system-reserved / --kube-reserved accept (pid is the kubelet's own).
_RESERVABLE = ("cpu", "memory", "ephemeral-storage", "pid")
# Eviction signals that reserve a node resource, and which.
_SIGNALS = {"memory.available": "memory", "nodefs.available": "ephemeral-storage"}


class KubeletConfig:
    """The parsed annotations (all optional)."""

    __slots__ = ("eviction_hard", "kube_reserved", "max_pods", "pods_per_core", "system_reserved")

    def __init__(self) -> None:
        self.system_reserved: dict[str, Quantity] = {}
        self.kube_reserved: dict[str, Quantity] = {}
        # signal resource -> absolute amount, or a percentage of capacity
        self.eviction_hard: dict[str, Quantity | float] = {}
        self.max_pods: int | None = None
        self.pods_per_core: int | None = None


def _reserved(text: str) -> dict[str, Quantity]:
    """``cpu=500m,memory=1Gi`` (the kubelet's ``ConfigurationMap``)."""
    out: dict[str, Quantity] = {}
    for item in text.split(","):
        name, eq, raw = item.strip().partition("=")
        if not eq or not name:
            raise ValueError(f'"{item}": want resource=quantity, e.g. cpu=500m,memory=1Gi')
        if name not in _RESERVABLE:
            raise ValueError(f'"{name}": must be one of {", ".join(_RESERVABLE)}')
        try:
            q = Quantity.parse(raw.strip())
        except QuantityError as err:
            raise ValueError(f'"{item}": {err}') from None
        if q.sign() < 0:
            raise ValueError(f'"{item}": must not be negative')
        out[name] = q
    return out


def _eviction(text: str) -> dict[str, Quantity | float]:
    """``memory.available<100Mi,nodefs.available<10%``."""
    out: dict[str, Quantity | float] = {}
    for item in text.split(","):
        signal, lt, raw = item.strip().partition("<")
        if not lt:
            raise ValueError(f'"{item}": want signal<quantity or signal<percent%')
        if signal not in _SIGNALS:
            raise ValueError(f'"{signal}": must be one of {", ".join(_SIGNALS)}')
        raw = raw.strip()
        if raw.endswith("%"):
            try:
                pct = float(raw[:-1])
            except ValueError:
                raise ValueError(f'"{item}": not a percentage') from None
            if not 0 <= pct <= 100:
                raise ValueError(f'"{item}": a percentage must be between 0 and 100')
            out[_SIGNALS[signal]] = pct
            continue
        try:
            q = Quantity.parse(raw)
        except QuantityError as err:
            raise ValueError(f'"{item}": {err}') from None
        if q.sign() < 0:
            raise ValueError(f'"{item}": must not be negative')
        out[_SIGNALS[signal]] = q
    return out


def _count(text: str) -> int:
    if not text.isascii() or not text.isdigit():
        raise ValueError("must be a non-negative integer")
    return int(text)


def kubelet_config(annotations: Mapping[str, str] | None) -> tuple[KubeletConfig, dict[str, str]]:
    """The configuration and, per annotation key, what is wrong with it."""
    cfg = KubeletConfig()
    errors: dict[str, str] = {}
    ann = annotations or {}
    for key, parse, attr in (
        (SYSTEM_RESERVED, _reserved, "system_reserved"),
        (KUBE_RESERVED, _reserved, "kube_reserved"),
        (EVICTION_HARD, _eviction, "eviction_hard"),
        (MAX_PODS, _count, "max_pods"),
        (PODS_PER_CORE, _count, "pods_per_core"),
    ):
        raw = ann.get(key)
        if raw is None:
            continue
        try:
            setattr(cfg, attr, parse(raw))
        except ValueError as err:
            errors[key] = str(err)
    return cfg, errors


def node_status_resources(
    capacity: Mapping[str, Quantity] | None,
    allocatable: Mapping[str, Quantity] | None,
    annotations: Mapping[str, str] | None,
    default_max_pods: int,
) -> tuple[dict[str, Quantity], dict[str, Quantity]]:
    """(capacity, allocatable) as the node's kubelet reports them; invalid
    annotations count as absent (validation reports them)."""
    cfg, _ = kubelet_config(annotations)
    cap = dict(capacity or allocatable or {})
    if "pods" not in cap:
        max_pods = cfg.max_pods if cfg.max_pods is not None else default_max_pods
        pods = max_pods
        cpu = cap.get("cpu")
        if cfg.pods_per_core and cpu is not None:
            # NumCores: whole logical CPUs.
            pods = min(cfg.pods_per_core * (cpu.nanos // 10**9), max_pods)
        cap["pods"] = Quantity.from_int(pods)
    if allocatable is not None:
        alloc = dict(allocatable)
        alloc.setdefault("pods", cap["pods"])
        return cap, alloc
    alloc = {}
    for name, q in cap.items():
        nanos = q.nanos
        for reserved in (cfg.system_reserved, cfg.kube_reserved):
            r = reserved.get(name)
            if r is not None:
                nanos -= r.nanos
        ev = cfg.eviction_hard.get(name)
        if isinstance(ev, Quantity):
            nanos -= ev.nanos
        elif ev is not None:  # GetThresholdQuantity: whole units of the capacity
            nanos -= int(q.value() * ev / 100) * 10**9
        alloc[name] = q if nanos == q.nanos else Quantity.from_nanos(max(nanos, 0), q.format)
    return cap, alloc
