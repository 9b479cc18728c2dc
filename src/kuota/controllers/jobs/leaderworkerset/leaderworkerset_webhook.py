"""Kueue's LeaderWorkerSet webhooks (``leaderworkerset_webhook.go``):

* ``LeaderWorkerSetWebhook`` (mutating, create and update): the default
  LocalQueue and WorkloadPriorityClass labels; for a managed LWS, the
  queue-name and priority-class labels and the ``pod-suspending-parent`` and
  ``pod-group-serving`` annotations on both pod templates, so the pod webhook
  gates every pod the LWS operator creates.
* ``LeaderWorkerSetValidation`` (validating): Kueue's rules with its
  messages and field paths (queue name, replicas, elastic jobs, the queue
  name fixed once a group is ready, and while managed the pods' shape and
  the group size).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kuota.api import errors as e
from kuota.api import k8s as kc
from kuota.api.kueue import types as kt
from kuota.api.kueue.config import KueueConfig
from kuota.api.lws import v1 as lw
from kuota.controllers.jobframework import PRIORITY_CLASS, QUEUE_NAME
from kuota.controllers.jobs.pod import podmeta as pm
from kuota.controllers.parentpolicy import IMMUTABLE, ParentPolicy, refuse, spec_shape_errors
from kuota.controllers.tas_requests import validate_pod_sets
from kuota.store.protocol import Operation, ResourceType
from kuota.store.resources import LEADER_WORKER_SET

FRAMEWORK: Final = "leaderworkerset.x-k8s.io/leaderworkerset"
LWS: Final[ResourceType] = LEADER_WORKER_SET
GVK: Final = f"{lw.API_VERSION}, Kind={lw.KIND}"  # schema.GroupVersionKind.String()
POD_INDEX_OFFSET: Final = "kueue.x-k8s.io/pod-index-offset"
PODSET_GROUP_NAME: Final = "kueue.x-k8s.io/podset-group-name"
_LWT: Final = "spec.leaderWorkerTemplate"


class LeaderWorkerSetWebhook:
    """Kueue's LWS defaulting webhook (create and update)."""

    kinds = frozenset({LWS})
    operations = ("CREATE", "UPDATE")
    status_writes = False  # its rules name leaderworkersets, not their /status

    def __init__(self, parents: ParentPolicy, *, tas: bool = True) -> None:
        self.parents = parents
        self.tas = tas  # TopologyAwareScheduling

    def __call__(self, op: Operation, new: Any, old: Any | None) -> Any:
        if new.kind != lw.KIND or new.spec is None or not self.parents.watched(new):
            return new
        new, suspend = self.parents.defaulted(new)
        if not suspend:
            return new
        labels = new.metadata.labels or {}
        lwt = new.spec.leader_worker_template
        if lwt.leader_template is not None:
            self._default_template(lwt.leader_template, labels, after_leader=False)
        self._default_template(
            lwt.worker_template, labels, after_leader=lwt.leader_template is not None
        )
        return new

    def _default_template(
        self, t: kc.PodTemplateSpec, labels: Mapping[str, str], *, after_leader: bool
    ) -> None:
        """``after_leader``: the workers' template of an LWS with a leader template."""
        m = t.metadata
        tl = dict(m.labels or {})
        for key in (QUEUE_NAME, PRIORITY_CLASS):
            if labels.get(key):
                tl[key] = labels[key]
        m.labels = tl or None
        ann = dict(m.annotations or {})
        ann[pm.SUSPENDING_PARENT] = FRAMEWORK
        ann[pm.SERVING] = "true"
        if self.tas and after_leader and PODSET_GROUP_NAME not in ann:
            # The workers' pod indexes start after the leader's (TAS).
            ann[POD_INDEX_OFFSET] = "1"
        m.annotations = ann


class LeaderWorkerSetValidation:
    """Kueue's LWS validating webhook (create and update)."""

    kinds = frozenset({LWS})
    operations = ("CREATE", "UPDATE")
    validating = True
    status_writes = False

    def __init__(self, parents: ParentPolicy, *, immutable_size: bool = True) -> None:
        # also the elastic-job rule (ElasticJobsViaWorkloadSlices) and the TAS gates
        self.parents = parents
        self.immutable_size = immutable_size  # LWSImmutableGroupSize

    def __call__(self, op: Operation, new: Any, old: Any | None) -> Any:
        if new.kind != lw.KIND or new.spec is None or not self.parents.watched(new):
            return new
        errs = self.parents.create_errors(new) + self._own_create_errors(new)
        if op == "UPDATE" and old is not None and old.spec is not None:
            ready = old.status.ready_replicas if old.status is not None else 0
            errs += self.parents.update_errors(new, old, suspended=ready == 0)
            if self.parents.should_suspend(new):
                errs += self._managed_update_errors(new, old)
        errs = list({str(err): err for err in errs}.values())  # the create rules are in both
        if errs:
            refuse(new, errs)
        return new

    def _own_create_errors(self, lws: lw.LeaderWorkerSet) -> list[e.FieldError]:
        errs = self.parents.elastic_errors(lws, GVK)
        assert lws.spec is not None
        replicas = lws.spec.replicas
        if replicas < 0:
            msg = f"invalid LeaderWorkerSet replicas: must be >= 0, got {replicas}"
            errs.append(e.invalid("spec.replicas", replicas, msg))
        elif replicas > lw.MAX_REPLICAS:
            msg = f"invalid LeaderWorkerSet replicas: must be <= {lw.MAX_REPLICAS}, got {replicas}"
            errs.append(e.invalid("spec.replicas", replicas, msg))
        if self.parents.tas:
            errs += topology_errors(lws, self.parents.tas_multi_layer)
        return errs

    def _managed_update_errors(
        self, new: lw.LeaderWorkerSet, old: lw.LeaderWorkerSet
    ) -> list[e.FieldError]:
        """While managed, the Workloads' podSets cannot follow the templates
        (they are never rebuilt): what admission depends on stays as it was."""
        assert new.spec is not None and old.spec is not None
        a, b = new.spec.leader_worker_template, old.spec.leader_worker_template
        errs = _template_errors(a.leader_template, b.leader_template, f"{_LWT}.leaderTemplate")
        errs += _template_errors(a.worker_template, b.worker_template, f"{_LWT}.workerTemplate")
        if self.immutable_size and a.size != b.size:
            errs.append(e.invalid(f"{_LWT}.size", a.size, IMMUTABLE))
        return errs


def topology_errors(lws: lw.LeaderWorkerSet, multi_layer: bool = True) -> list[e.FieldError]:
    """validateTopologyRequest: the leader's and the workers' templates (the
    podSets ``leader`` and ``worker``, or ``main`` without a leader), then
    the pod-set groups."""
    assert lws.spec is not None
    lwt = lws.spec.leader_worker_template
    workers = f"{_LWT}.workerTemplate.metadata"
    if lwt.leader_template is None:
        entries = [(workers, kt.PodSet(name="main", count=lwt.size, template=lwt.worker_template))]
    else:
        leader = kt.PodSet(name="leader", count=1, template=lwt.leader_template)
        worker = kt.PodSet(name="worker", count=lwt.size - 1, template=lwt.worker_template)
        entries = [(f"{_LWT}.leaderTemplate.metadata", leader), (workers, worker)]
    groups = {ps.name: f"{p}.annotations" for p, ps in entries}
    return validate_pod_sets(entries, groups, multi_layer)


def _template_errors(
    new: kc.PodTemplateSpec | None, old: kc.PodTemplateSpec | None, path: str
) -> list[e.FieldError]:
    if new is None or old is None:
        if (new is None) != (old is None):
            return [e.invalid(path, None if new is None else {}, IMMUTABLE)]
        return []
    return spec_shape_errors(new.spec, old.spec, f"{path}.spec")


def lws_webhooks(config: KueueConfig, parents: ParentPolicy) -> list[Any]:
    """The integration's admission hooks, for the control plane's store."""
    return [
        LeaderWorkerSetWebhook(parents, tas=config.gate("TopologyAwareScheduling")),
        LeaderWorkerSetValidation(parents, immutable_size=config.gate("LWSImmutableGroupSize")),
    ]
