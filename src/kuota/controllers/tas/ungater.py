"""Kueue's topology ungater (pkg/controller/tas/topology_ungater.go): the pods
of a workload admitted with a topology assignment are created with the
``kueue.x-k8s.io/topology`` scheduling gate; once admitted, each gated pod
gets the node selector of its assigned domain and loses the gate, so the
scheduler can only place it there. Pods with an index label (a Job's
completion index) go to the domain of their rank; others fill the domains
in order, counting the pods already ungated in each."""

from __future__ import annotations

import contextlib
from typing import Any, Final

from kuota.api import k8s as kc
from kuota.api.kueue import types as kt
from kuota.api.kueue.topology import TOPOLOGY_GATE, WORKLOAD_ANNOTATION
from kuota.api.kueue.v1beta1 import domains_of
from kuota.runtime.informer import Informer, key_of
from kuota.runtime.manager import Manager
from kuota.store import Conflict, NotFound, clone
from kuota.store.resources import POD, WORKLOAD

__all__ = ["TopologyUngater"]

PODSET_LABEL: Final = "kueue.x-k8s.io/podset"
HOSTNAME: Final = "kubernetes.io/hostname"
_BY_WORKLOAD: Final = "tas-workload"


def _gated(pod: Any) -> bool:
    spec = pod.spec
    return spec is not None and any(g.name == TOPOLOGY_GATE for g in spec.scheduling_gates or ())


def _terminated(pod: Any) -> bool:
    st = pod.status
    return st is not None and st.phase in ("Succeeded", "Failed")


def _admitted_by_tas(wl: kt.Workload) -> bool:
    """workload.IsAdmittedByTAS: admitted, a pod set placed on a topology."""
    st = wl.status
    if st is None or st.admission is None:
        return False
    if not any(c.type == "Admitted" and c.status == "True" for c in st.conditions or ()):
        return False
    return any(p.topology_assignment is not None for p in st.admission.pod_set_assignments)


def _did(values: list[str]) -> str:
    return ",".join(values)


class TopologyUngater:
    name = "tas-topology-ungater"

    def __init__(self) -> None:
        self._mgr: Manager | None = None
        self._pods: Informer | None = None
        self._wls: Informer | None = None

    def setup(self, mgr: Manager) -> None:
        self._mgr = mgr
        self._wls = mgr.informer(WORKLOAD)
        self._pods = mgr.informer(POD)
        self._pods.add_index(_BY_WORKLOAD, self._pod_workload)
        self._wls.on_change(self._on_workload)
        self._pods.on_change(self._on_pod)

    @staticmethod
    def _pod_workload(pod: Any) -> list[str]:
        name = (pod.metadata.annotations or {}).get(WORKLOAD_ANNOTATION)
        return [f"{pod.metadata.namespace}/{name}"] if name else []

    def _on_workload(self, etype: str, wl: Any, old: Any | None) -> None:
        if etype != "DELETED" and self._mgr is not None and _admitted_by_tas(wl):
            self._mgr.enqueue(self.name, key_of(wl))

    def _on_pod(self, etype: str, pod: Any, old: Any | None) -> None:
        if etype == "DELETED" or self._mgr is None or not _gated(pod):
            return
        for key in self._pod_workload(pod):
            self._mgr.enqueue(self.name, key)

    def reconcile(self, key: str) -> None:
        assert self._mgr is not None and self._wls is not None and self._pods is not None
        wl = self._wls.get(key)
        if wl is None or not _admitted_by_tas(wl):
            return
        assert wl.status is not None and wl.status.admission is not None
        requests = {ps.name: ps.topology_request for ps in wl.spec.pod_sets}
        pods = [p for p in self._pods.by_index(_BY_WORKLOAD, key) if not _terminated(p)]
        unhealthy = {n.name for n in wl.status.unhealthy_nodes or ()}
        for psa in wl.status.admission.pod_set_assignments:
            ta = psa.topology_assignment
            if ta is None:
                continue
            mine = [p for p in pods if (p.metadata.labels or {}).get(PODSET_LABEL) == psa.name]
            domains = domains_of(ta)
            tr = requests.get(psa.name)
            index_label = tr.pod_index_label if tr is not None else None
            placed = _by_rank(mine, domains, index_label, ta.levels)
            if placed is None:
                placed = _greedy(mine, domains, ta.levels)
            if unhealthy and ta.levels and ta.levels[-1] == HOSTNAME:
                # A node awaiting its replacement: its pods stay gated until
                # the second pass gives them a healthy domain.
                placed = [(p, v) for p, v in placed if not v or v[-1] not in unhealthy]
            for pod, values in placed:
                self._ungate(pod, dict(zip(ta.levels, values, strict=True)))

    def _ungate(self, pod: Any, selector: dict[str, str]) -> None:
        assert self._mgr is not None
        new = clone(pod)
        spec: kc.PodSpec = new.spec
        gates = [g for g in spec.scheduling_gates or () if g.name != TOPOLOGY_GATE]
        spec.scheduling_gates = gates or None
        spec.node_selector = {**(spec.node_selector or {}), **selector}
        # A conflict: the newer pod comes back through the watch.
        with contextlib.suppress(Conflict, NotFound):
            self._mgr.store.update(new)


def _level_values(levels: list[str], selector: dict[str, str] | None) -> list[str]:
    sel = selector or {}
    return [sel.get(k, "") for k in levels]


def _greedy(
    pods: list[Any], domains: list[tuple[list[str], int]], levels: list[str]
) -> list[tuple[Any, list[str]]]:
    """assignGatedPodsToDomainsGreedy."""
    gated = [p for p in pods if _gated(p)]
    ungated: dict[str, int] = {}
    for p in pods:
        if not _gated(p):
            did = _did(_level_values(levels, p.spec.node_selector))
            ungated[did] = ungated.get(did, 0) + 1
    out: list[tuple[Any, list[str]]] = []
    for values, count in domains:
        want = max(count - ungated.get(_did(values), 0), 0)
        take = min(want, len(gated) - len(out))
        for p in gated[len(out) : len(out) + take]:
            out.append((p, values))
    return out


def _by_rank(
    pods: list[Any],
    domains: list[tuple[list[str], int]],
    index_label: str | None,
    levels: list[str],
) -> list[tuple[Any, list[str]]] | None:
    """readRanksIfAvailable + assignGatedPodsToDomainsByRanks: each pod to the
    domain of its rank, when every pod has a distinct rank in range and the
    ungated ones sit where their rank says; else None."""
    if index_label is None:
        return None
    rank_domain: list[list[str]] = []
    for values, count in domains:
        rank_domain += [values] * count
    ranks: dict[int, Any] = {}
    for p in pods:
        raw = (p.metadata.labels or {}).get(index_label)
        if raw is None or not raw.isdigit():
            return None
        r = int(raw)
        if r >= len(rank_domain) or r in ranks:
            return None
        ranks[r] = p
    out: list[tuple[Any, list[str]]] = []
    for r in sorted(ranks):
        p = ranks[r]
        if not _gated(p):
            if _level_values(levels, p.spec.node_selector) != rank_domain[r]:
                return None
            continue
        out.append((p, rank_domain[r]))
    return out
