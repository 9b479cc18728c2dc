"""A small fake admission core and scenario text, for the tests of the scenario
runner and of ``kuota check``.

The fake follows the core's interface (kuota.scheduler.admission.admission_core.AdmissionCore) with
a toy model driven by Workload annotations:

* ``fake/fits: "false"`` -- never admitted, parked inadmissible (WaitingForQuota);
* ``fake/preempts: ns/victim`` -- while the victim holds quota, a cycle preempts
  it (InClusterQueue, or ``fake/reason``) instead of admitting;
* ``fake/flavor: NAME`` -- the flavor of every resource (default ``default``).

Every other workload is admitted in the first cycle it is pending in.
"""

from __future__ import annotations

import dataclasses
import json
import textwrap
from datetime import datetime
from pathlib import Path
from typing import Any

import kuota.sim.scenario as sc
from kuota.api.kueue.config import KueueConfig
from kuota.scheduler.views import (
    ClusterQueueView,
    CycleResult,
    LocalQueueView,
    Preemption,
    WorkloadView,
)
from kuota.sim.scenario import Scenario, load_scenario, run_scenario

HOLDING = ("admitted", "reserved", "preempted", "evicted")


# ============================================================================ the fake core
class FakeCore:
    created: list[FakeCore] = []  # noqa: RUF012 -- every instance, for the tests to inspect

    def __init__(
        self,
        config: KueueConfig,
        now: datetime,
        *,
        patches: dict[str, dict[str, Any]] | None = None,
        cqs: dict[str, ClusterQueueView] | None = None,
        lqs: dict[str, LocalQueueView] | None = None,
        fail_on: str | None = None,
    ) -> None:
        self.config = config
        self.now = now
        self.calls: list[tuple[Any, ...]] = []
        self.objects: dict[tuple[str, str, str], Any] = {}
        self.wls: dict[str, dict[str, Any]] = {}
        self.preemptions: list[Preemption] = []
        self.evictions: list[tuple[str, str]] = []
        self.patches = patches or {}
        self.cqs = cqs or {}
        self.lqs = lqs or {}
        self.fail_on = fail_on
        FakeCore.created.append(self)

    def _maybe_fail(self, what: str) -> None:
        if self.fail_on == what:
            raise RuntimeError(f"boom in {what}\nsecond line")

    # -- objects
    def _put(self, obj: Any) -> None:
        meta = obj.metadata
        self.objects[(obj.kind, meta.namespace, meta.name)] = obj
        if obj.kind != "Workload":
            return
        key = f"{meta.namespace}/{meta.name}"
        wl = self.wls.setdefault(
            key, {"state": "pending", "reason": "", "flavors": None, "count": None}
        )
        wl["obj"] = obj
        wl["active"] = obj.spec.active
        adm = obj.status.admission if obj.status is not None else None
        if adm is not None and wl["flavors"] is None:
            wl["state"] = "admitted"
            wl["flavors"] = {a.name: dict(a.flavors or {}) for a in adm.pod_set_assignments}
            wl["count"] = {a.name: a.count for a in adm.pod_set_assignments}

    def add(self, obj: Any) -> None:
        self.calls.append(("add", obj))
        self._maybe_fail("add")
        self._put(obj)

    def apply(self, obj: Any) -> None:
        self.calls.append(("apply", obj))
        self._maybe_fail("apply")
        self._put(obj)

    def delete(self, kind: str, namespace: str, name: str) -> bool:
        self.calls.append(("delete", kind, namespace, name))
        if kind == "Workload":
            self.wls.pop(f"{namespace}/{name}", None)
        return self.objects.pop((kind, namespace, name), None) is not None

    def finish(self, key: str) -> None:
        self.calls.append(("finish", key))
        self.wls[key].update(state="finished", reason="", flavors=None, count=None)

    def advance(self, to: datetime) -> None:
        self.calls.append(("advance", to))
        self.now = to

    # -- scheduling
    def complete_evictions(self) -> None:
        self.calls.append(("complete_evictions",))
        for wl in self.wls.values():
            if wl["state"] in ("preempted", "evicted"):
                wl.update(state="inadmissible", reason="WaitingForQuota", flavors=None, count=None)

    def cycle(self) -> CycleResult:
        self.calls.append(("cycle",))
        self._maybe_fail("cycle")
        return self._cycle()

    def _cycle(self) -> CycleResult:
        res = CycleResult()
        pending = [(k, w) for k, w in self.wls.items() if w["state"] == "pending"]
        pending.sort(key=lambda kw: (kw[1]["obj"].metadata.creation_timestamp, kw[0]))
        for k, wl in pending:
            ann = wl["obj"].metadata.annotations or {}
            victim = ann.get("fake/preempts")
            if ann.get("fake/fits") == "false":
                wl.update(state="inadmissible", reason="WaitingForQuota")
                res.waiting[k] = "no quota"
            elif victim and self.wls.get(victim, {}).get("state") in HOLDING:
                v = self.wls[victim]
                if v["state"] in ("admitted", "reserved"):
                    reason = ann.get("fake/reason", "InClusterQueue")
                    v.update(state="preempted", reason=reason)
                    p = Preemption(victim, reason, k, "preempted by fake")
                    self.preemptions.append(p)
                    self.evictions.append((victim, "Preempted"))
                    res.preempted.append(p)
                wl["reason"] = "WaitingForPreemptedWorkloads"
                res.waiting[k] = "waiting for preempted workloads"
            else:
                flavor = ann.get("fake/flavor", "default")
                pod_sets = wl["obj"].spec.pod_sets
                wl.update(
                    state="admitted",
                    reason="",
                    flavors={ps.name: {"cpu": flavor} for ps in pod_sets},
                    count={ps.name: ps.count for ps in pod_sets},
                )
                res.admitted.append(k)
        return res

    def settle(self, max_cycles: int = 1000) -> list[CycleResult]:
        self.calls.append(("settle",))
        out = []
        for _ in range(max_cycles):
            self.complete_evictions()
            r = self._cycle()
            out.append(r)
            if not r.changed:
                break
        return out

    # -- views
    def workload(self, key: str) -> WorkloadView | None:
        wl = self.wls.get(key)
        if wl is None:
            return None
        view = WorkloadView(
            key=key,
            state=wl["state"],
            reason=wl["reason"],
            message="",
            flavors=wl["flavors"],
            count=wl["count"],
            active=wl["active"],
            requeue_count=None,
            has_requeue_at=False,
            requeue_state_set=False,
        )
        return dataclasses.replace(view, **self.patches.get(key, {}))

    def cluster_queue(self, name: str) -> ClusterQueueView | None:
        return self.cqs.get(name)

    def local_queue(self, key: str) -> LocalQueueView | None:
        return self.lqs.get(key)


def factory(**kw: Any) -> sc.CoreFactory:
    return lambda config, now: FakeCore(config, now, **kw)


def core_calls(core: FakeCore) -> list[str]:
    return [c[0] for c in core.calls if c[0] != "add"]


# ============================================================================ scenario text
HEAD = """\
name: {name}
objects:
  - apiVersion: v1
    kind: Namespace
    metadata: {{name: ns}}
  - apiVersion: kueue.x-k8s.io/v1beta1
    kind: ResourceFlavor
    metadata: {{name: default}}
  - apiVersion: kueue.x-k8s.io/v1beta1
    kind: ClusterQueue
    metadata: {{name: cq}}
    spec:
      namespaceSelector: {{}}
      resourceGroups:
        - coveredResources: [cpu]
          flavors: [{{name: default, resources: [{{name: cpu, nominalQuota: "4"}}]}}]
  - apiVersion: kueue.x-k8s.io/v1beta1
    kind: LocalQueue
    metadata: {{name: lq, namespace: ns}}
    spec: {{clusterQueue: cq}}
"""


def workload(name: str, cpu: str = "1", annotations: dict[str, str] | None = None) -> str:
    ann = f", annotations: {json.dumps(annotations)}" if annotations else ""
    return f"""\
  - apiVersion: kueue.x-k8s.io/v1beta1
    kind: Workload
    metadata: {{name: {name}, namespace: ns{ann}}}
    spec:
      queueName: lq
      podSets:
        - name: main
          count: 2
          template:
            spec:
              containers:
                - name: c
                  resources: {{requests: {{cpu: "{cpu}"}}}}
"""


def scenario_text(steps: str, *workloads: str, name: str = "fake-scenario", extra: str = "") -> str:
    return (
        HEAD.format(name=name)
        + "".join(workloads)
        + extra
        + "steps:\n"
        + textwrap.indent(textwrap.dedent(steps).strip("\n"), "  ")
        + "\n"
    )


def write(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def load(tmp_path: Path, steps: str, *workloads: str, **kw: Any) -> Scenario:
    return load_scenario(write(tmp_path, scenario_text(steps, *workloads, **kw)))


def run(
    tmp_path: Path, steps: str, *workloads: str, **core_kw: Any
) -> tuple[sc.ScenarioResult, FakeCore]:
    s = load(tmp_path, steps, *workloads)
    FakeCore.created.clear()
    result = run_scenario(s, factory(**core_kw))
    return result, FakeCore.created[-1]


A = workload("a")
B_PREEMPTS_A = workload("b", annotations={"fake/preempts": "ns/a"})
NEVER = workload("never", annotations={"fake/fits": "false"})
