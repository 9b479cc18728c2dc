"""How an owning object is charged as a whole: replicas x its pod templates,
by group/version/kind. Deployment, StatefulSet, batch/v1 Job (parallelism),
LeaderWorkerSet (replicas x (leader + size-1 workers)) and bare Pods are
built in; any other kind is registered with the JSON paths of its replica
counts and pod templates (``PathRegistration``), as the design plans for
Argo Rollouts and Kubeflow TFJobs (``EXAMPLE_REGISTRATIONS``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

import msgspec

from kuota.api.base import enc_hook
from kuota.api.k8s.corev1 import PodSpec
from kuota.quota.bizgroups.usage import Usage, add_into, models_of, pod_usage, scaled

__all__ = [
    "BUILTIN_KINDS",
    "EXAMPLE_REGISTRATIONS",
    "PathRegistration",
    "charge",
    "charged_kinds",
    "workload_parts",
]

# (apiVersion, kind) -> the (replicas, pod spec) parts of an object
Parts = Callable[[Any], Iterator[tuple[int, Any]]]


def _finished(job: Any) -> bool:
    """A Job that is Complete or Failed holds no quota (its hours stay spent)."""
    st = job.status
    return st is not None and any(
        c.type in ("Complete", "Failed") and c.status == "True" for c in st.conditions or ()
    )


def _deployment(obj: Any) -> Iterator[tuple[int, Any]]:
    yield obj.spec.replicas if obj.spec.replicas is not None else 1, obj.spec.template.spec


def _job(obj: Any) -> Iterator[tuple[int, Any]]:
    if not _finished(obj):
        yield obj.spec.parallelism, obj.spec.template.spec


def _lws(obj: Any) -> Iterator[tuple[int, Any]]:
    t = obj.spec.leader_worker_template
    groups = obj.spec.replicas if obj.spec.replicas is not None else 1
    leader = t.leader_template if t.leader_template is not None else t.worker_template
    yield groups, leader.spec
    yield groups * (t.size - 1), t.worker_template.spec


def _pod(obj: Any) -> Iterator[tuple[int, Any]]:
    # A pod with an owner is charged through its owner (its Deployment, Job, ...).
    if not obj.metadata.owner_references and (
        obj.status is None or obj.status.phase not in ("Succeeded", "Failed")
    ):
        yield 1, obj.spec


def workload_parts(obj: Any) -> Iterator[tuple[int, Any]]:
    """A Kueue Workload of its own (no job behind it): its pod sets. Not a
    charged kind (a job's Workload is charged through its job); the Queue
    mode's check charges a labelled standalone Workload by it."""
    for ps in obj.spec.pod_sets:
        yield ps.count, ps.template.spec


BUILTIN_KINDS: Final[dict[tuple[str, str], Parts]] = {
    ("apps/v1", "Deployment"): _deployment,
    ("apps/v1", "StatefulSet"): _deployment,
    ("batch/v1", "Job"): _job,
    ("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet"): _lws,
    ("v1", "Pod"): _pod,
}


@dataclass(frozen=True, slots=True)
class PathRegistration:
    """A kind charged by JSON paths over its wire form: each (replicas path,
    template path) pair is one set of pods. ``*`` steps over every value of a
    map or list (``spec.tfReplicaSpecs.*``); a missing replicas path counts 1."""

    api_version: str
    kind: str
    pod_sets: tuple[tuple[str, str], ...]  # (replicas, pod template), relative to ``base``
    base: str = ""  # a path whose every match is one pod set root, e.g. spec.tfReplicaSpecs.*

    def parts(self, obj: Any) -> Iterator[tuple[int, Any]]:
        wire = obj if isinstance(obj, dict) else msgspec.to_builtins(obj, enc_hook=enc_hook)
        roots = list(_walk(wire, self.base)) if self.base else [wire]
        for root in roots:
            for rpath, tpath in self.pod_sets:
                reps = list(_walk(root, rpath))
                n = int(reps[0]) if reps and reps[0] is not None else 1
                for tmpl in _walk(root, tpath):
                    if isinstance(tmpl, dict) and "spec" in tmpl:
                        spec = msgspec.convert(tmpl["spec"], PodSpec, dec_hook=_dec)
                        yield n, spec


def _dec(typ: type, obj: Any) -> Any:
    from kuota.api.base import dec_hook

    return dec_hook(typ, obj)


def _walk(node: Any, path: str) -> Iterator[Any]:
    if not path:
        yield node
        return
    head, _, rest = path.partition(".")
    if head == "*":
        values = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        for v in values:
            yield from _walk(v, rest)
    elif isinstance(node, dict) and head in node:
        yield from _walk(node[head], rest)


EXAMPLE_REGISTRATIONS: Final[tuple[PathRegistration, ...]] = (
    # Argo Rollouts: a Deployment's shape under its own group.
    PathRegistration("argoproj.io/v1alpha1", "Rollout", (("spec.replicas", "spec.template"),)),
    # Kubeflow TFJob: one pod set per replica type (Chief, PS, Worker, ...).
    PathRegistration(
        "kubeflow.org/v1", "TFJob", (("replicas", "template"),), base="spec.tfReplicaSpecs.*"
    ),
)


def charged_kinds(
    registrations: tuple[PathRegistration, ...] = EXAMPLE_REGISTRATIONS,
) -> dict[tuple[str, str], Parts]:
    """Every kind charged: the built-ins, then the registrations."""
    kinds = dict(BUILTIN_KINDS)
    for reg in registrations:
        kinds[(reg.api_version, reg.kind)] = reg.parts
    return kinds


def charge(
    obj: Any, parts: Parts, labels: Mapping[str, str] | None = None, scale_to: int = 0
) -> Usage:
    """The object's whole use: every part's replicas x its pod's use.
    ``scale_to``: what an HPA may scale it to (its maxReplicas), charged
    when above the replicas (a kind of one pod set: what an HPA scales)."""
    models = models_of(labels if labels is not None else obj.metadata.labels)
    total: Usage = {}
    sets = list(parts(obj))
    for n, spec in sets:
        if scale_to and len(sets) == 1:
            n = max(n, scale_to)
        if n > 0:
            add_into(total, scaled(pod_usage(spec, models), n))
    return total
