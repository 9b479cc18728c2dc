"""A workload's info as the core keeps it (Kueue's workload.Info): what each
podSet requests under its namespace's LimitRanges and the RuntimeClasses,
its priority, and the caches that keep a refiled workload cheap (per pod
template, per namespace, per spec object)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import msgspec

from kuota.api.hooks import enc_hook
from kuota.api.kueue import types as kt
from kuota.api.kueue.webhooks import parse_int32
from kuota.quota.dra import DraContext, Slices
from kuota.quota.requests import RequestContext, podset_requests
from kuota.quota.workload import (
    NO_RECLAIMABLE,
    PodSetResources,
    SpecPodSets,
    WorkloadInfo,
    has_quota_reservation,
    podsets_from_admission,
    podsets_from_spec,
    reclaimable_counts,
)
from kuota.scheduler.admission.state import CoreState

# Distinct pod templates whose requests and checks are kept (then forgotten at once).
TEMPLATE_CACHE: Final = 10_000


class InfoFactory:
    def __init__(self, state: CoreState) -> None:
        self.state = state
        # Per namespace, LimitRange/RuntimeClass generation and pod template
        # (its msgpack bytes): one pod's requests.
        self._per_pod_requests: dict[tuple[str, int, bytes], dict[str, int]] = {}
        self._encodings: dict[bytes, bytes] = {}
        self._by_spec: dict[int, tuple[object, bytes]] = {}
        self._ctxs: dict[str, tuple[int, RequestContext]] = {}

    def ctx(self, namespace: str) -> RequestContext:
        # Kept per namespace until a LimitRange or RuntimeClass changes: every
        # workload filed or nominated needs one, and a kept one also keeps its
        # derived views (the LimitRange summary).
        known = self._ctxs.get(namespace)
        if known is not None and known[0] == self.state.ctx_gen:
            return known[1]
        lrs = [
            self.state.limit_ranges[namespace][n]
            for n in sorted(self.state.limit_ranges.get(namespace, {}))
        ]
        ctx = RequestContext.from_config(
            self.state.config.resources,
            limit_ranges=lrs,
            runtime_classes=self.state.runtime_classes,
            dra=DraContext(
                self.state.claim_templates.get(namespace, {}),
                self.state.device_classes,
                self.state.gate("KueueDRAIntegration"),
                self.state.gate("KueueDRARejectWorkloadsWhenDRADisabled"),
                counters=self.state.device_counters,
                capacities=self.state.device_capacities,
                partitionable=self.state.gate("KueueDRAIntegrationPartitionableDevices"),
                consumable=self.state.gate("KueueDRAIntegrationConsumableCapacity"),
                extended=self.state.gate("KueueDRAIntegrationExtendedResource"),
                slices=Slices(
                    tuple(
                        self.state.resource_slices[n] for n in sorted(self.state.resource_slices)
                    ),
                    self.state.device_class_objs,
                ),
            ),
        )
        self._ctxs[namespace] = (self.state.ctx_gen, ctx)
        return ctx

    def priority(self, wl: kt.Workload) -> int:
        if wl.spec.priority is not None:
            p = wl.spec.priority
        else:
            p = 0
            ref = wl.spec.priority_class_ref
            if ref is not None:
                if ref.kind == "WorkloadPriorityClass" and ref.name in self.state.wpcs:
                    p = self.state.wpcs[ref.name].value
                elif ref.kind == "PriorityClass" and ref.name in self.state.pcs:
                    p = self.state.pcs[ref.name].value
        if self.state.gate("PriorityBoost"):
            boost = (wl.metadata.annotations or {}).get("kueue.x-k8s.io/priority-boost")
            if boost:
                p += parse_int32(boost) or 0  # (unparsable: no boost, as Kueue)
        return p

    def build_info(self, key: str, wl: kt.Workload) -> WorkloadInfo:
        # The requests computed from the spec are kept on the info while its
        # spec object, reclaimable pods and the LimitRanges/RuntimeClasses stay
        # (the store keeps the spec object across status writes, and every
        # status write files the workload again); an admitted info carries
        # them along for the workload's next time in a queue.
        prev = self.state.infos.get(key)
        known = prev.spec_cache if prev is not None else None
        st = wl.status
        if has_quota_reservation(wl) and st is not None and st.admission is not None:
            info = self.admitted_info(key, wl, self._held_podsets(wl, prev), known)
            if prev is not None and prev.podsets is info.podsets:
                info._usage = prev._usage  # (worked out of the podSets alone)
                info._flavored = prev._flavored
            return info
        rec = self.reclaimable(wl)
        if (
            known is not None
            and known.spec is wl.spec
            and known.gen == self.state.ctx_gen
            and known.reclaimable == rec
        ):
            # Shared: neither the list nor its PodSetResources change once made.
            podsets = known.podsets
        else:
            ns = wl.metadata.namespace
            pod_sets = wl.spec.pod_sets
            encs: list[bytes] = []
            per_pod: list[dict[str, int]] = []
            for ps in pod_sets:
                enc = self.encode_template(ps.template)
                encs.append(enc)
                per_pod.append(self.per_pod(ns, ps, enc))
            podsets = podsets_from_spec(wl, self.ctx(ns), rec, per_pod=per_pod)
            kept = encs[0] if len(encs) == 1 else tuple(encs)  # (one podSet: no tuple)
            known = SpecPodSets(wl.spec, self.state.ctx_gen, rec, podsets, kept)
        info = WorkloadInfo(wl, podsets, self.priority(wl), None, key)
        info.spec_cache = known
        return info

    def _held_podsets(self, wl: kt.Workload, prev: WorkloadInfo | None) -> list[PodSetResources]:
        """podsets_from_admission, or the previous info's when it was worked
        out of these very admission, spec and reclaimable pods objects (none
        is changed in place: each change is a new object, as the spec
        cache's rule): an admitted workload is filed again at each status
        write (PodsReady) with the same ones."""
        st = wl.status
        assert st is not None and st.admission is not None
        src = prev.held_from if prev is not None else None
        if (
            src is not None
            and src[0] is st.admission
            and src[1] is wl.spec
            and src[2] is st.reclaimable_pods
        ):
            assert prev is not None
            return prev.podsets
        return podsets_from_admission(wl, self.reclaimable(wl))

    def reclaimable(self, wl: kt.Workload) -> Mapping[str, int]:
        """The reclaimable pods that count: none with the ReclaimablePods gate
        off (Kueue's podSetsCountsAfterReclaim)."""
        return reclaimable_counts(wl) if self.state.reclaim_gate else NO_RECLAIMABLE

    def admitted_info(
        self, key: str, wl: kt.Workload, podsets: list[PodSetResources], known: SpecPodSets | None
    ) -> WorkloadInfo:
        assert wl.status is not None and wl.status.admission is not None
        info = WorkloadInfo(wl, podsets, self.priority(wl), wl.status.admission.cluster_queue, key)
        info.spec_cache = known
        info.held_from = (wl.status.admission, wl.spec, wl.status.reclaimable_pods)
        return info

    def encode_template(self, template: kt.PodTemplateSpec) -> bytes:
        """The encoding of the template's pod spec, the key of what is kept
        per distinct template (requests, checks, scheduling hash): one bytes
        object per distinct encoding, shared by the workloads that keep it.
        The spec only: none of those reads the template's metadata, and
        jobs that differ only in their annotations or labels (a trace's
        run-time annotation) share them."""
        spec = template.spec
        # One spec object is encoded once: a trace's jobs of one shape share
        # theirs, and specs are not changed in place (the spec cache's rule).
        known = self._by_spec.get(id(spec))
        if known is not None and known[0] is spec:
            return known[1]
        enc = msgspec.msgpack.encode(spec, enc_hook=enc_hook)
        shared = self._encodings.get(enc)
        if shared is None:
            if len(self._encodings) >= TEMPLATE_CACHE:
                self._encodings.clear()
            self._encodings[enc] = shared = enc
        if len(self._by_spec) >= TEMPLATE_CACHE:
            self._by_spec.clear()
        self._by_spec[id(spec)] = (spec, shared)  # (held alive: the id stays its own)
        return shared

    def per_pod(self, namespace: str, ps: kt.PodSet, enc: bytes) -> dict[str, int]:
        """One pod's requests, shared by the podSets of one namespace with the
        same template (a job's copies, a trace's repeated shapes)."""
        key = (namespace, self.state.ctx_gen, enc)
        cache = self._per_pod_requests
        v = cache.get(key)
        if v is None:
            if len(cache) >= TEMPLATE_CACHE:
                cache.clear()
            v = cache[key] = podset_requests(ps, self.ctx(namespace))
        return v
