"""The Workloads of a trace's jobs, made as Kueue's Job integration makes them,
without the Jobs (the fast replay, ``kuota.sim.fastreplay``).

The first job of each shape (team, requests, pods, nodeSelector) goes the
integration's own way: its batch/v1 Job is decoded as the full replay makes
it and the Job adapter gives its podSets; the others of that shape share
that podSet but for the run-time annotation. Names, labels, owner and
priority are the integration's (``jobframework.new_workload``,
``extract_priority``); uids count up in creation order, as the store's do,
so ties in a queue break the same way.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

import msgspec

from kuota.api.kueue import types as kt
from kuota.api.meta import ObjectMeta, OwnerReference
from kuota.controllers.jobframework import JOB_UID, new_workload, owner_workload_name
from kuota.controllers.jobs.batchjob.job_adapter import BatchJobAdapter
from kuota.sim.mapping import gpu_request
from kuota.sim.trace import TraceRow

__all__ = ["WorkloadMaker"]

_replace = msgspec.structs.replace
_UID_ZEROS = "00000000-0000-0000-0000-"


def _uid(seq: int) -> str:
    return _UID_ZEROS + f"{seq:012x}"


class WorkloadMaker:
    """``make(row, ...)``: the Workload of one trace row. ``plan`` is the
    full replay's Plan (its teams, mapping and selectors)."""

    def __init__(self, plan: Any, priorities: dict[str, int]) -> None:
        self.plan = plan
        self.priorities = priorities  # WorkloadPriorityClass name -> value
        self.adapter = BatchJobAdapter()
        self._pod_sets: dict[tuple[Any, ...], kt.PodSet] = {}
        self._milli: dict[Decimal, int] = {}
        # Per team: what new_workload reads of its Job (namespace, labels) and
        # the priority class reference, the same for every job of the team
        # (shared, never changed in place, as the specs' parts).
        self._owners: dict[str, tuple[_Owner, kt.PriorityClassRef | None]] = {}
        self._seq = 0

    def gpu_milli(self, row: TraceRow) -> int:
        """Milli-GPUs one pod of the row holds, as the report counts them."""
        known = self._milli.get(row.gpus)  # (a trace has a few GPU counts)
        if known is not None:
            return known
        m = self.plan.mapping
        if "gpus" not in m.requests or row.gpus <= 0:
            milli = 0
        else:
            per = gpu_request(row.gpus, m)
            milli = per * 1000 if m.gpu_resource == "nvidia.com/gpu" else per
        self._milli[row.gpus] = milli
        return milli

    def _pod_set(self, row: TraceRow, name: str, duration: str) -> kt.PodSet:
        plan = self.plan
        tp = plan.teams[row.team]
        sel = plan.selectors.get(row.gpu_model) if row.gpus > 0 else None
        key = (
            row.team,
            row.gpus,
            row.cpus,
            row.memory_mib,
            row.pods,
            tuple(sorted(sel.items())) if sel else None,
        )
        base = self._pod_sets.get(key)
        if base is None:
            from kuota.sim.simulate import _job  # (once per shape, not per row)

            job = _job(row, name, tp.target, plan.mapping, sel, Decimal(0))
            base = self.adapter.pod_sets(job, False)[0]
            self._pod_sets[key] = base
        t = base.template
        meta = _replace(t.metadata, annotations={"kuota.dev/duration": duration})
        return _replace(base, template=_replace(t, metadata=meta))

    def make(self, row: TraceRow, name: str, created: datetime, duration: str) -> kt.Workload:
        tp = self.plan.teams[row.team]
        self._seq += 1
        job_uid = _uid(self._seq)  # (the Job's: its name's hash reads it)
        self._seq += 1
        uid = _uid(self._seq)
        pod_set = self._pod_set(row, name, duration)
        pc = tp.target.priority_class
        known = self._owners.get(row.team)
        if known is None:
            ref = (
                kt.PriorityClassRef(group="kueue.x-k8s.io", kind="WorkloadPriorityClass", name=pc)
                if pc
                else None
            )
            known = self._owners[row.team] = (_Owner(tp.target.namespace, tp.target.queue, pc), ref)
        owner, ref = known
        wl = new_workload(
            owner_workload_name("Job", "batch/v1", name, job_uid),
            owner,
            [pod_set],
            {JOB_UID: job_uid},
            [
                OwnerReference(
                    api_version="batch/v1",
                    kind="Job",
                    name=name,
                    uid=job_uid,
                    controller=True,
                    block_owner_deletion=True,
                )
            ],
            ref,
            self.priorities[pc] if pc else None,
        )
        wl.metadata.uid = uid
        wl.metadata.creation_timestamp = created
        wl.metadata.generation = 1
        return wl


class _Owner:
    """What ``new_workload`` reads of the Job: its namespace and labels."""

    __slots__ = ("metadata",)

    def __init__(self, namespace: str, queue: str, priority_class: str | None) -> None:
        labels = {"kueue.x-k8s.io/queue-name": queue}
        if priority_class:
            labels["kueue.x-k8s.io/priority-class"] = priority_class
        self.metadata = ObjectMeta(namespace=namespace, labels=labels)
