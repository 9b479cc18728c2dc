"""What placement reads from a pod, parsed once: requests (as the filters and
as the scorers count them), host ports, priority, start time, and the
inter-pod affinity terms with their namespaces resolved (kube-scheduler's
``framework.PodInfo``).

Parsing is the expensive part of looking at a pod; the snapshot keeps one
:class:`PodInfo` per bound pod and the scheduler one per pod it places.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from kuota.api.k8s import Container, PodAffinityTerm, PodSpec, WeightedPodAffinityTerm
from kuota.api.meta import LabelSelector, LabelSelectorRequirement, selector_matches
from kuota.quota.requests import resource_value

__all__ = [
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "AffinityTerm",
    "HostPort",
    "PodInfo",
    "host_ports",
    "merge_label_keys",
    "nonzero_requests",
    "parse_pod",
    "pod_priority",
    "ports_conflict",
]

# schedutil.DefaultMilliCPURequest / DefaultMemoryRequest: what the scorers
# count for a container that requests no cpu or memory, so that many
# best-effort pods do not all land on one node.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

HostPort = tuple[str, str, int]  # (hostIP, protocol, port)
_ALL_IPS = "0.0.0.0"


def pod_priority(spec: PodSpec | None) -> int:
    """``corev1helpers.PodPriority``: spec.priority, 0 when unset."""
    return (spec.priority if spec is not None else None) or 0


# ------------------------------------------------------------------ affinity terms
def merge_label_keys(
    selector: LabelSelector | None,
    labels: Mapping[str, str],
    match_keys: Iterable[str] | None,
    mismatch_keys: Iterable[str] | None = None,
) -> LabelSelector | None:
    """``matchLabelKeys`` / ``mismatchLabelKeys``: the pod's own values for
    those keys ANDed into the selector (``key In (v)`` / ``key NotIn (v)``).
    A nil selector stays nil (the API refuses label keys without a selector)."""
    if selector is None or (not match_keys and not mismatch_keys):
        return selector
    extra: list[LabelSelectorRequirement] = []
    for key in match_keys or ():
        if key in labels:
            extra.append(LabelSelectorRequirement(key=key, operator="In", values=[labels[key]]))
    for key in mismatch_keys or ():
        if key in labels:
            extra.append(LabelSelectorRequirement(key=key, operator="NotIn", values=[labels[key]]))
    if not extra:
        return selector
    return LabelSelector(
        match_labels=selector.match_labels,
        match_expressions=[*(selector.match_expressions or ()), *extra],
    )


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """``framework.AffinityTerm``: a pod (anti-)affinity term of one pod, with
    the namespaces it names resolved against that pod's own namespace."""

    selector: LabelSelector | None
    namespaces: frozenset[str]
    namespace_selector: LabelSelector | None
    topology_key: str
    weight: int = 0

    def matches(
        self, namespace: str, labels: Mapping[str, str], ns_labels: Mapping[str, str] | None
    ) -> bool:
        """``AffinityTerm.Matches``: a pod in one of the term's namespaces (or a
        namespace its namespaceSelector selects) whose labels the selector selects."""
        if namespace in self.namespaces or selector_matches(self.namespace_selector, ns_labels):
            return selector_matches(self.selector, labels)
        return False


def _term(
    term: PodAffinityTerm, namespace: str, labels: Mapping[str, str], weight: int = 0
) -> AffinityTerm:
    # GetNamespacesFromPodAffinityTerm: no namespaces and no namespaceSelector
    # mean the pod's own namespace; a namespaceSelector {} means every one.
    if not term.namespaces and term.namespace_selector is None:
        names = frozenset((namespace,))
    else:
        names = frozenset(term.namespaces or ())
    selector = merge_label_keys(
        term.label_selector, labels, term.match_label_keys, term.mismatch_label_keys
    )
    return AffinityTerm(selector, names, term.namespace_selector, term.topology_key, weight)


def _terms(
    terms: Iterable[PodAffinityTerm] | None, namespace: str, labels: Mapping[str, str]
) -> tuple[AffinityTerm, ...]:
    return tuple(_term(t, namespace, labels) for t in terms or ())


def _weighted(
    terms: Iterable[WeightedPodAffinityTerm] | None, namespace: str, labels: Mapping[str, str]
) -> tuple[AffinityTerm, ...]:
    return tuple(_term(t.pod_affinity_term, namespace, labels, t.weight) for t in terms or ())


# ------------------------------------------------------------------ requests
def _requests_with_defaults(c: Container) -> tuple[int, int]:
    """A container's cpu (milli) and memory requests, the scorers' defaults
    for a missing one (``NonMissingContainerRequests``); an explicit 0 stays 0."""
    r = c.resources.requests if c.resources is not None else None
    cpu = resource_value("cpu", r["cpu"]) if r and "cpu" in r else DEFAULT_MILLI_CPU_REQUEST
    mem = resource_value("memory", r["memory"]) if r and "memory" in r else DEFAULT_MEMORY_REQUEST
    return cpu, mem


def nonzero_requests(spec: PodSpec | None) -> tuple[int, int]:
    """``PodRequests`` for cpu and memory with the scorers' defaults: the sum
    of containers and sidecars, the init-container peak, pod-level requests
    in their place when set, plus overhead (cpu in milli-units, memory in bytes)."""
    if spec is None:
        return DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST
    cpu = mem = 0
    for c in spec.containers:
        a, b = _requests_with_defaults(c)
        cpu, mem = cpu + a, mem + b
    side_cpu = side_mem = peak_cpu = peak_mem = 0
    for c in spec.init_containers or ():
        a, b = _requests_with_defaults(c)
        if c.restart_policy == "Always":  # a sidecar runs alongside what starts after it
            cpu, mem, side_cpu, side_mem = cpu + a, mem + b, side_cpu + a, side_mem + b
            during = (side_cpu, side_mem)
        else:
            during = (side_cpu + a, side_mem + b)
        peak_cpu, peak_mem = max(peak_cpu, during[0]), max(peak_mem, during[1])
    cpu, mem = max(cpu, peak_cpu), max(mem, peak_mem)
    pod_level = spec.resources.requests if spec.resources is not None else None
    if pod_level:
        if "cpu" in pod_level:
            cpu = resource_value("cpu", pod_level["cpu"])
        if "memory" in pod_level:
            mem = resource_value("memory", pod_level["memory"])
    over = spec.overhead or {}
    if "cpu" in over:
        cpu += resource_value("cpu", over["cpu"])
    if "memory" in over:
        mem += resource_value("memory", over["memory"])
    return cpu, mem


def host_ports(spec: PodSpec | None) -> tuple[HostPort, ...]:
    """The (hostIP, protocol, hostPort) triples the pod binds on its node: its
    containers' and sidecars' ports with a hostPort (with hostNetwork every
    containerPort is one, as the API server defaults it)."""
    if spec is None:
        return ()
    out: list[HostPort] = []
    sidecars = [c for c in spec.init_containers or () if c.restart_policy == "Always"]
    for c in [*spec.containers, *sidecars]:
        for p in c.ports or ():
            port = p.host_port or (p.container_port if spec.host_network else 0)
            if port and port > 0:
                out.append((p.host_ip or _ALL_IPS, p.protocol or "TCP", port))
    return tuple(out)


def ports_conflict(wanted: Iterable[HostPort], used: Iterable[HostPort]) -> bool:
    """``HostPortInfo.CheckConflict``: same protocol and port, and either
    address binds every IP (0.0.0.0) or both are the same IP."""
    used = list(used)
    for ip, proto, port in wanted:
        for uip, uproto, uport in used:
            if uport == port and uproto == proto and (ip == _ALL_IPS or uip in (ip, _ALL_IPS)):
                return True
    return False


# ------------------------------------------------------------------ the record
@dataclass(slots=True)
class PodInfo:
    """One pod as placement sees it."""

    key: str
    namespace: str
    labels: Mapping[str, str]
    priority: int
    node: str | None
    requests: Mapping[str, int]
    nonzero: tuple[int, int]
    ports: tuple[HostPort, ...]
    start: datetime | None  # status.startTime
    deleting: bool
    required_affinity: tuple[AffinityTerm, ...] = ()
    required_anti_affinity: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[AffinityTerm, ...] = ()
    preferred_anti_affinity: tuple[AffinityTerm, ...] = ()

    def bound_to(self, node: str) -> PodInfo:
        """A copy placed on ``node`` (``dataclasses.replace``, at half the cost)."""
        return PodInfo(
            self.key,
            self.namespace,
            self.labels,
            self.priority,
            node,
            self.requests,
            self.nonzero,
            self.ports,
            self.start,
            self.deleting,
            self.required_affinity,
            self.required_anti_affinity,
            self.preferred_affinity,
            self.preferred_anti_affinity,
        )

    @property
    def has_affinity(self) -> bool:
        """Whether another pod's placement may depend on this pod's terms
        (kube-scheduler's ``PodsWithAffinity`` / ``PodsWithRequiredAntiAffinity``)."""
        return bool(
            self.required_affinity
            or self.required_anti_affinity
            or self.preferred_affinity
            or self.preferred_anti_affinity
        )


def parse_pod(key: str, pod: object, requests: Mapping[str, int]) -> PodInfo:
    """A :class:`PodInfo` of ``pod`` (a ``kuota.api.k8s.Pod``)."""
    meta = pod.metadata  # type: ignore[attr-defined]
    spec: PodSpec | None = pod.spec  # type: ignore[attr-defined]
    status = pod.status  # type: ignore[attr-defined]
    ns = meta.namespace or ""
    labels = meta.labels or {}
    aff = spec.affinity if spec is not None else None
    pa = aff.pod_affinity if aff is not None else None
    paa = aff.pod_anti_affinity if aff is not None else None
    start = status.start_time if status is not None else None
    return PodInfo(
        key=key,
        namespace=ns,
        labels=labels,
        priority=pod_priority(spec),
        node=(spec.node_name if spec is not None else None) or None,
        requests=requests,
        nonzero=nonzero_requests(spec),
        ports=host_ports(spec),
        start=start,  # None: not started (GetPodStartTime then says "now")
        deleting=meta.deletion_timestamp is not None,
        required_affinity=_terms(
            pa.required_during_scheduling_ignored_during_execution if pa else None, ns, labels
        ),
        required_anti_affinity=_terms(
            paa.required_during_scheduling_ignored_during_execution if paa else None, ns, labels
        ),
        preferred_affinity=_weighted(
            pa.preferred_during_scheduling_ignored_during_execution if pa else None, ns, labels
        ),
        preferred_anti_affinity=_weighted(
            paa.preferred_during_scheduling_ignored_during_execution if paa else None, ns, labels
        ),
    )
