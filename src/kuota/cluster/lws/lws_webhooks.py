"""The LeaderWorkerSet operator's webhooks, as store admission hooks
(integrations.md §5.1, §5.3):

* :class:`LeaderWorkerSetDefaulting` and :class:`LeaderWorkerSetValidation`,
  the LWS webhooks on create and update (``kuota.api.lws`` holds the rules);
* :class:`LeaderWorkerSetPodWebhook`, the pod defaulting webhook: a group's
  pods (those labelled ``leaderworkerset.sigs.k8s.io/name``) get their group
  index, worker index, group key and subgroup labels, the leader's subdomain
  under UniquePerReplica, the exclusive-topology affinities, and the
  ``LWS_LEADER_ADDRESS`` / ``LWS_GROUP_SIZE`` / ``LWS_WORKER_INDEX`` env vars
  before every container's own (``pkg/webhooks/pod_webhook.go``).
"""

from __future__ import annotations

from typing import Any

from kuota.api import errors as e
from kuota.api import lws as lw
from kuota.api.core import (
    Affinity,
    Container,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodAntiAffinity,
)
from kuota.api.lws import (
    EXCLUSIVE_TOPOLOGY_ANNOTATION,
    GROUP_INDEX_LABEL,
    GROUP_KEY_LABEL,
    LEADER_NAME_ANNOTATION,
    SET_NAME_LABEL,
    SIZE_ANNOTATION,
    SUBDOMAIN_POLICY_ANNOTATION,
    SUBGROUP_EXCLUSIVE_TOPOLOGY_ANNOTATION,
    SUBGROUP_INDEX_LABEL,
    SUBGROUP_KEY_LABEL,
    SUBGROUP_POLICY_TYPE_ANNOTATION,
    SUBGROUP_SIZE_ANNOTATION,
    WORKER_INDEX_LABEL,
)
from kuota.api.meta import LabelSelector, LabelSelectorRequirement
from kuota.api.names import is_dns1035_label
from kuota.cluster.lws.lws_objects import LWS, group_key, is_leader, parent_and_ordinal
from kuota.cluster.podutil import POD
from kuota.store import Invalid, clone
from kuota.store.protocol import Operation

__all__ = [
    "LeaderWorkerSetDefaulting",
    "LeaderWorkerSetPodWebhook",
    "LeaderWorkerSetValidation",
]


def _lws_ref(obj: Any) -> str:
    return f'{lw.KIND}.{lw.GROUP} "{obj.metadata.name}"'


class LeaderWorkerSetDefaulting:
    """The LWS defaulting webhook (create and update)."""

    kinds = frozenset({LWS})
    operations = frozenset({"CREATE", "UPDATE"})
    status_writes = False

    def __call__(self, op: Operation, new: Any, old: Any | None) -> Any:
        if new.spec is None:
            return new
        return lw.default_leader_worker_set(clone(new))


class LeaderWorkerSetValidation:
    """The LWS validating webhook (create and update), with the name check
    the decoder otherwise makes (the name is the headless Service's)."""

    kinds = frozenset({LWS})
    operations = frozenset({"CREATE", "UPDATE"})
    validating = True
    status_writes = False

    def __call__(self, op: Operation, new: Any, old: Any | None) -> Any:
        errs = [
            e.invalid("metadata.name", new.metadata.name, msg)
            for msg in (is_dns1035_label(new.metadata.name) if new.metadata.name else [])
        ]
        if op == "UPDATE" and old is not None:
            errs += lw.validate_leader_worker_set_update(new, old)
        else:
            errs += lw.validate_leader_worker_set(new)
        if errs:
            raise Invalid(_lws_ref(new), errs)
        return new


def _exclusive_applied(spec: Any, topology_key: str) -> bool:
    aff = spec.affinity
    if aff is None or aff.pod_affinity is None or aff.pod_anti_affinity is None:
        return False
    terms = aff.pod_affinity.required_during_scheduling_ignored_during_execution or ()
    anti = aff.pod_anti_affinity.required_during_scheduling_ignored_during_execution or ()
    return any(t.topology_key == topology_key for t in terms) and any(
        t.topology_key == topology_key for t in anti
    )


def _set_exclusive_affinities(spec: Any, key: str, topology_key: str, label: str) -> None:
    """``SetExclusiveAffinities``: the pods with this key share a topology
    domain, and no pod with another key of the same label lands in it."""
    if _exclusive_applied(spec, topology_key):
        return
    aff = spec.affinity if spec.affinity is not None else Affinity()
    pa = aff.pod_affinity if aff.pod_affinity is not None else PodAffinity()
    paa = aff.pod_anti_affinity if aff.pod_anti_affinity is not None else PodAntiAffinity()
    pa.required_during_scheduling_ignored_during_execution = [
        *(pa.required_during_scheduling_ignored_during_execution or ()),
        PodAffinityTerm(
            topology_key=topology_key,
            label_selector=LabelSelector(
                match_expressions=[LabelSelectorRequirement(key=label, operator="In", values=[key])]
            ),
        ),
    ]
    paa.required_during_scheduling_ignored_during_execution = [
        *(paa.required_during_scheduling_ignored_during_execution or ()),
        PodAffinityTerm(
            topology_key=topology_key,
            label_selector=LabelSelector(
                match_expressions=[
                    LabelSelectorRequirement(key=label, operator="Exists"),
                    LabelSelectorRequirement(key=label, operator="NotIn", values=[key]),
                ]
            ),
        ),
    ]
    aff.pod_affinity, aff.pod_anti_affinity = pa, paa
    spec.affinity = aff


def _subgroup_index(size: int, subgroup_size: int, worker_index: int) -> str:
    if (size - 1) % subgroup_size == 0 and size % subgroup_size != 0:
        # The leader is the extra pod: it belongs to the first subgroup.
        return str((worker_index - 1) // subgroup_size)
    return str(worker_index // subgroup_size)


def _prepend_env(c: Container, env: list[dict[str, str]]) -> None:
    """``addEnvVarsIfNotExists``: LWS's variables first, then the container's
    own that do not repeat them."""
    names = {v["name"] for v in env}
    c.env = [
        *env,
        *(v for v in c.env or () if not (isinstance(v, dict) and v.get("name") in names)),
    ]


class LeaderWorkerSetPodWebhook:
    """The LWS pod defaulting webhook (pods carrying ``leaderworkerset.sigs.k8s.io/name``,
    on creation): §5.3."""

    kinds = frozenset({POD})
    operations = frozenset({"CREATE"})

    def __call__(self, op: Operation, new: Any, old: Any | None) -> Any:
        labels = new.metadata.labels or {}
        if op != "CREATE" or SET_NAME_LABEL not in labels or new.spec is None:
            return new
        pod: Pod = clone(new)
        m = pod.metadata
        name = m.name
        labels = m.labels = dict(m.labels or {})
        ann = m.annotations or {}
        size_text = ann.get(SIZE_ANNOTATION)
        if size_text is None or not size_text.isdigit():
            path = f"metadata.annotations[{SIZE_ANNOTATION}]"
            err = (
                e.required(path, "the LWS size annotation of a group's pod")
                if size_text is None
                else e.invalid(path, size_text, "must be an integer")
            )
            raise Invalid(f'pods "{name}"', [err])
        size = int(size_text)
        _, ordinal = parent_and_ordinal(name)
        if ordinal < 0:
            raise Invalid(
                f'pods "{name}"',
                [
                    e.invalid(
                        "metadata.name", name, "a LeaderWorkerSet pod's name ends in its ordinal"
                    )
                ],
            )
        spec = pod.spec
        assert spec is not None
        sg_size = ann.get(SUBGROUP_SIZE_ANNOTATION)
        if is_leader(pod):
            labels.setdefault(GROUP_INDEX_LABEL, str(ordinal))
            if ann.get(SUBDOMAIN_POLICY_ANNOTATION) == "UniquePerReplica":
                spec.subdomain = name
            key = labels.setdefault(GROUP_KEY_LABEL, group_key(m.namespace, name))
            if EXCLUSIVE_TOPOLOGY_ANNOTATION in ann:
                _set_exclusive_affinities(
                    spec, key, ann[EXCLUSIVE_TOPOLOGY_ANNOTATION], GROUP_KEY_LABEL
                )
            excluded = ann.get(SUBGROUP_POLICY_TYPE_ANNOTATION) == "LeaderExcluded"
            if sg_size is not None and not labels.get(SUBGROUP_INDEX_LABEL) and not excluded:
                labels[SUBGROUP_INDEX_LABEL] = "0"  # the leader is in subgroup 0
                sub_key = labels[SUBGROUP_KEY_LABEL] = group_key(name, "0")
                if SUBGROUP_EXCLUSIVE_TOPOLOGY_ANNOTATION in ann:
                    _set_exclusive_affinities(
                        spec,
                        sub_key,
                        ann[SUBGROUP_EXCLUSIVE_TOPOLOGY_ANNOTATION],
                        SUBGROUP_KEY_LABEL,
                    )
        else:
            labels[WORKER_INDEX_LABEL] = str(ordinal)
            if sg_size is not None and not labels.get(SUBGROUP_INDEX_LABEL):
                if not sg_size.isdigit() or int(sg_size) < 1:
                    raise Invalid(
                        f'pods "{name}"',
                        [
                            e.invalid(
                                f"metadata.annotations[{SUBGROUP_SIZE_ANNOTATION}]",
                                sg_size,
                                "must be a positive integer",
                            )
                        ],
                    )
                idx = labels[SUBGROUP_INDEX_LABEL] = _subgroup_index(size, int(sg_size), ordinal)
                sub_key = labels[SUBGROUP_KEY_LABEL] = group_key(
                    ann.get(LEADER_NAME_ANNOTATION, ""), idx
                )
                if SUBGROUP_EXCLUSIVE_TOPOLOGY_ANNOTATION in ann:
                    _set_exclusive_affinities(
                        spec,
                        sub_key,
                        ann[SUBGROUP_EXCLUSIVE_TOPOLOGY_ANNOTATION],
                        SUBGROUP_KEY_LABEL,
                    )
        if GROUP_INDEX_LABEL not in labels:
            raise Invalid(
                f'pods "{name}"',
                [e.required(f"metadata.labels[{GROUP_INDEX_LABEL}]", "a worker's group index")],
            )
        lws_name = labels[SET_NAME_LABEL]
        address = f"{lws_name}-{labels[GROUP_INDEX_LABEL]}.{spec.subdomain or ''}.{m.namespace}"
        env = [
            {"name": lw.ENV_LEADER_ADDRESS, "value": address},
            {"name": lw.ENV_GROUP_SIZE, "value": size_text},
            {"name": lw.ENV_WORKER_INDEX, "value": labels[WORKER_INDEX_LABEL]},
        ]
        for c in spec.containers:
            _prepend_env(c, env)
        for c in spec.init_containers or ():
            _prepend_env(c, env)
        return pod
