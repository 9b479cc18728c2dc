"""Which replay a design runs on: the fast one (``kuota.sim.fastreplay``: the
admission core alone) when nothing but quota decides, else the full one
(the embedded control plane: Jobs, pods, placement, the kubelet).

The fast replay is exact only where a job's pods start the instant its
Workload is admitted and stop the instant it finishes or is evicted, as in
the full replay when every admitted pod fits a node at once. That holds when
the nodes are made from the quota (one node per flavor holding the flavor's
whole nominal quota, which no admission can exceed) and each flavor's pods
can land only on their flavor's node; and when no Kueue feature that watches
pods or jobs is on. :func:`decline_reason` names the first thing that keeps a
design on the full replay.
"""

from __future__ import annotations

from typing import Any

from kuota.controllers.jobframework import ManagePolicy
from kuota.quota.requests import resource_value

__all__ = ["FAST_KINDS", "decline_reason"]

# The kinds a design may hold for the fast replay: what the admission core
# reads and nothing placement or a controller acts on.
FAST_KINDS = frozenset(
    {"ResourceFlavor", "ClusterQueue", "LocalQueue", "Cohort", "WorkloadPriorityClass"}
)
# The generated nodes' CPU, memory (bytes) and pods (simulate._BIG_*).
_NODE_CPU_MILLI = 1_000_000 * 1000
_NODE_MEMORY = 1_000_000 * 2**30


def decline_reason(plan: Any) -> str | None:
    """Why ``plan`` (a :class:`kuota.sim.simulate.Plan`) needs the full
    replay, or None when the fast one decides the same."""
    design = plan.design
    cfg = design.config
    if not plan.nodes_from.startswith("the quota"):
        return f"its nodes come from {plan.nodes_from}: pods are placed on them"
    if design.openshift:
        return "it runs OpenShift's Kueue operator"
    for o in design.objects:
        if o.kind not in FAST_KINDS:
            return f"it holds a {o.kind} ({o.metadata.name})"
    if "batch/job" not in cfg.integrations.enabled_frameworks:
        return "the batch/job integration is off"
    if cfg.object_retention.workloads_after_finished is not None:
        return "objectRetentionPolicies.workloads is set"
    if "default" in {o.metadata.name for o in design.objects if o.kind == "WorkloadPriorityClass"}:
        return 'it has a WorkloadPriorityClass "default" (the Job webhook gives it to jobs)'
    policy = ManagePolicy.from_config(cfg, design.openshift)
    for tp in plan.teams.values():
        if not policy.namespace_managed(None, tp.target.namespace):
            return f"namespace {tp.target.namespace} is not one Kueue manages jobs in"
    flavors = {o.metadata.name: o for o in design.objects if o.kind == "ResourceFlavor"}
    labels: dict[str, set[tuple[str, str]]] = {}
    cpu: dict[str, int] = {}
    memory: dict[str, int] = {}
    for o in design.objects:
        if o.kind == "ClusterQueue":
            sel = o.spec.namespace_selector
            if sel is None or sel.match_labels or sel.match_expressions:
                return f"ClusterQueue {o.metadata.name} selects namespaces by label"
        if o.kind not in ("ClusterQueue", "Cohort"):
            continue
        for g in (o.spec.resource_groups if o.spec else None) or ():
            for f in g.flavors:
                fl = flavors.get(f.name)
                spec = fl.spec if fl is not None else None
                if spec is not None and (spec.node_taints or spec.topology_name):
                    return f"ResourceFlavor {f.name} has node taints or a topology"
                labels[f.name] = set(((spec.node_labels if spec else None) or {}).items())
                for r in f.resources:
                    if r.name == "cpu":
                        cpu[f.name] = cpu.get(f.name, 0) + resource_value("cpu", r.nominal_quota)
                    elif r.name == "memory":
                        v = resource_value("memory", r.nominal_quota)
                        memory[f.name] = memory.get(f.name, 0) + v
    for name, v in cpu.items():
        if v > _NODE_CPU_MILLI:
            return f"flavor {name}'s CPU quota is more than its generated node holds"
    for name, v in memory.items():
        if v > _NODE_MEMORY:
            return f"flavor {name}'s memory quota is more than its generated node holds"
    for a, la in labels.items():
        for b, lb in labels.items():
            if a != b and la <= lb:
                return (
                    f"the pods of flavor {a} could be placed on flavor {b}'s node "
                    "(its nodeLabels do not single its node out)"
                )
    return None
