"""Kueue's ValidateAdmissibility: whether a workload could ever be admitted in
a ClusterQueue as it is (its namespace exists and is selected, its requests
are valid), each answer kept while its inputs stay."""

from __future__ import annotations

from typing import Final

from kuota.api import k8s as kc
from kuota.api.kueue import types as kt
from kuota.api.meta import selector_matches
from kuota.queueing.queues import NAMESPACE_MISMATCH
from kuota.quota.dra import DraContext, workload_error
from kuota.quota.requests import validate_podset_resources
from kuota.quota.workload import WorkloadInfo
from kuota.scheduler.admission.infos import TEMPLATE_CACHE, InfoFactory
from kuota.scheduler.admission.state import CoreState

_NS_MATCHES: Final = 4096  # namespaces kept per ClusterQueue


class Admissibility:
    def __init__(self, state: CoreState, factory: InfoFactory) -> None:
        self.state = state
        self.factory = factory
        # resources_invalid's answer per workload, for the spec it was given
        # and the LimitRanges and RuntimeClasses of the time (ctx_gen counts
        # their changes): a head that keeps waiting is nominated every cycle,
        # and its podSets only change with a new info.
        self._invalid: dict[str, tuple[kt.WorkloadSpec, int, str | None]] = {}
        # The resource check's verdict per namespace, generation, pod template
        # and podSet index (which its message names).
        self._template_checks: dict[tuple[str, int, bytes, int], str | None] = {}
        self._ns_matches: dict[str, dict[str, tuple[kt.ClusterQueue, kc.Namespace, bool]]] = {}
        # dra_error's answer per podSets list and the DRA context it was
        # worked out against (a namespace's context is built anew whenever
        # what it reads changes: InfoFactory.ctx): a waiting workload is asked
        # at each requeue, and its podSets only change with a new spec.
        self._dra: dict[int, tuple[list[kt.PodSet], DraContext, str]] = {}

    def namespace_matches(self, cq_name: str, namespace: str, keep: bool = True) -> bool:
        """``keep``: remember the answer (not for a look at a workload the
        scheduler may never try: the backlog's memory stays its own)."""
        cq = self.state.cq_objs.get(cq_name)
        ns = self.state.namespaces.get(namespace)
        if cq is None or ns is None:
            return False
        if not keep:
            known_ns = self._ns_matches.get(cq_name, {}).get(namespace)
            if known_ns is not None and known_ns[0] is cq and known_ns[1] is ns:
                return known_ns[2]
            return selector_matches(cq.spec.namespace_selector, ns.metadata.labels or {})
        # Kept while both objects are the ones it was worked out for (an
        # update replaces the object): each workload filed or nominated asks.
        by_ns = self._ns_matches.get(cq_name)
        if by_ns is None:
            by_ns = self._ns_matches[cq_name] = {}
        known = by_ns.get(namespace)
        if known is not None and known[0] is cq and known[1] is ns:
            return known[2]
        matches = selector_matches(cq.spec.namespace_selector, ns.metadata.labels or {})
        if len(by_ns) >= _NS_MATCHES:
            by_ns.clear()
        by_ns[namespace] = (cq, ns, matches)
        return matches

    def resources_invalid(self, info: WorkloadInfo, keep: bool = True) -> str | None:
        """Why the workload's requests are invalid, or None; ``keep`` as for
        namespace_matches."""
        known = self._invalid.get(info.key)
        if known is not None and known[0] is info.obj.spec and known[1] == self.state.ctx_gen:
            return known[2]
        ctx = self.factory.ctx(info.namespace)
        found: str | None = None
        cache = self._template_checks
        spec = info.obj.spec
        kept = info.spec_cache
        encs: bytes | tuple[bytes, ...] | None = None
        if kept is not None and kept.spec is spec:
            encs = kept.encodings  # (computed as the workload was filed)
        for i, ps in enumerate(spec.pod_sets):
            if encs is None:
                enc = self.factory.encode_template(ps.template)
            else:
                enc = encs if isinstance(encs, bytes) else encs[i]
            key = (info.namespace, self.state.ctx_gen, enc, i)
            if key in cache:
                msg = cache[key]
            else:
                if len(cache) >= TEMPLATE_CACHE:
                    cache.clear()
                msg = cache[key] = validate_podset_resources(ps, ctx, index=i)
            if msg is not None:
                found = msg
                break
        if keep:
            self._invalid[info.key] = (info.obj.spec, self.state.ctx_gen, found)
        return found

    def dra_error(self, wl: kt.Workload) -> str:
        """Kueue's workload controller's DRA branch: why the workload's
        resource claims cannot be counted ("" when they can, or it has none)."""
        dra = self.factory.ctx(wl.metadata.namespace).dra
        if dra is None:
            return ""
        pod_sets = wl.spec.pod_sets
        known = self._dra.get(id(pod_sets))
        if known is not None and known[0] is pod_sets and known[1] is dra:
            return known[2]
        err = workload_error(enumerate(pod_sets), dra)
        if len(self._dra) >= TEMPLATE_CACHE:
            self._dra.clear()
        self._dra[id(pod_sets)] = (pod_sets, dra, err)
        return err

    def admissibility_error(
        self, info: WorkloadInfo, cq_name: str, keep: bool = True
    ) -> tuple[str, str] | None:
        """Kueue's ValidateAdmissibility against the workload's ClusterQueue:
        (message, requeue reason) when it can never be admitted there as it
        is (namespace missing or not selected, resources invalid). ``keep``:
        remember the answers (see namespace_matches)."""
        if info.namespace not in self.state.namespaces:
            return f'workload namespace "{info.namespace}" does not exist', ""
        if not self.namespace_matches(cq_name, info.namespace, keep):
            return "workload namespace doesn't match ClusterQueue selector", NAMESPACE_MISMATCH
        bad = self.resources_invalid(info, keep)
        if bad is not None:
            return bad, ""
        return None
