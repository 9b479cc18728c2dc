"""What the LeaderWorkerSet operator writes (integrations.md §5.2): its
ControllerRevisions, the leader StatefulSet of a set, the worker StatefulSet
of a group, the headless Services, its Events' reasons; and the label and
revision readers its controllers and webhooks share.

A revision is an ``apps/v1`` ControllerRevision owned by the LWS, labelled
``leaderworkerset.sigs.k8s.io/name`` and ``.../template-revision-hash`` (its
key), holding the patch that restores ``spec.leaderWorkerTemplate`` and
``spec.networkConfig`` (``pkg/utils/revision``). The key is FNV-1 of that
patch, as LWS hashes it, over kuota's own JSON encoding (sorted keys, defaults
omitted): its value differs from a real cluster's, its meaning does not.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from dataclasses import dataclass
from typing import Any, Final

import msgspec

from kuota.api import lws as lw
from kuota.api.apps import (
    ControllerRevision,
    RollingUpdateStatefulSetStrategy,
    StatefulSet,
    StatefulSetOrdinals,
    StatefulSetPersistentVolumeClaimRetentionPolicy,
    StatefulSetSpec,
    StatefulSetUpdateStrategy,
)
from kuota.api.base import dec_hook, enc_hook
from kuota.api.core import Pod, PodTemplateSpec
from kuota.api.lws import (
    EXCLUSIVE_TOPOLOGY_ANNOTATION,
    GROUP_INDEX_LABEL,
    GROUP_KEY_LABEL,
    LEADER_NAME_ANNOTATION,
    REPLICAS_ANNOTATION,
    REVISION_LABEL,
    SET_NAME_LABEL,
    SIZE_ANNOTATION,
    SUBDOMAIN_POLICY_ANNOTATION,
    SUBGROUP_EXCLUSIVE_TOPOLOGY_ANNOTATION,
    SUBGROUP_POLICY_TYPE_ANNOTATION,
    SUBGROUP_SIZE_ANNOTATION,
    WORKER_INDEX_LABEL,
    LeaderWorkerSet,
    LeaderWorkerSetSpec,
    LeaderWorkerTemplate,
    NetworkConfig,
)
from kuota.api.meta import LabelSelector, ObjectMeta
from kuota.api.service import Service, ServiceSpec
from kuota.cluster.controllers.appsutil import (
    canonical_json,
    controller_index,
    fnv32,
    safe_encode,
)
from kuota.cluster.podutil import controller_ref, is_pod_ready, owner_reference, pod_phase
from kuota.store import NotFound, clone
from kuota.store.protocol import AlreadyExists, ObjectStore, ResourceType

__all__ = [
    "BY_LWS",
    "COMPONENT",
    "CONTROLLER_REVISION",
    "CREATING_REVISION",
    "FAILED_CREATE",
    "FAILED_UPDATE",
    "GROUPS_PROGRESSING",
    "GROUPS_UPDATING",
    "LWS",
    "RECREATE_GROUP",
    "SERVICE",
    "STATEFULSET",
    "Revision",
    "create_service_if_missing",
    "find_revision",
    "group_key",
    "headless_service",
    "is_leader",
    "labels_of",
    "leader_statefulset",
    "lws_owner",
    "new_revision",
    "owned_by",
    "parent_and_ordinal",
    "revision_data",
    "revision_key",
    "revision_of",
    "running_and_ready",
    "statefulset_ready",
    "worker_statefulset",
]

LWS: ResourceType = (lw.GROUP, lw.KIND)
STATEFULSET: ResourceType = ("apps", "StatefulSet")
CONTROLLER_REVISION: ResourceType = ("apps", "ControllerRevision")
SERVICE: ResourceType = ("", "Service")

BY_LWS: Final = "lws:owner"  # an informer index of ControllerRevisions: their LWS's uid
lws_owner = controller_index(lw.KIND, lw.API_VERSION)

COMPONENT: Final = "leaderworkerset"  # the LWS operator's event recorder

# Event reasons (pkg/controllers).
GROUPS_PROGRESSING: Final = "GroupsProgressing"
GROUPS_UPDATING: Final = "GroupsUpdating"
CREATING_REVISION: Final = "CreatingRevision"
FAILED_CREATE: Final = "FailedCreate"
FAILED_UPDATE: Final = "FailedUpdate"
RECREATE_GROUP: Final = "RecreateGroup"

_ORDINAL: Final = re.compile(r"(.*)-([0-9]+)")


# ---------------------------------------------------------------- label readers
def labels_of(obj: Any) -> dict[str, str]:
    return obj.metadata.labels or {}


def revision_of(obj: Any) -> str:
    """The LWS revision key an object (StatefulSet, pod, revision) carries."""
    return labels_of(obj).get(REVISION_LABEL, "")


def is_leader(pod: Pod) -> bool:
    return labels_of(pod).get(WORKER_INDEX_LABEL) == "0"


def parent_and_ordinal(name: str) -> tuple[str, int]:
    """``GetParentNameAndOrdinal``: a StatefulSet pod's set and ordinal (-1: none)."""
    m = _ORDINAL.fullmatch(name)
    if m is None:
        return "", -1
    return m.group(1), int(m.group(2))


def group_key(*parts: str) -> str:
    """The sha1 key of a group (``<namespace>/<leader>``) or a subgroup
    (``<leader>/<index>``), as LWS hashes them."""
    return hashlib.sha1("/".join(parts).encode()).hexdigest()


def running_and_ready(pod: Pod) -> bool:
    return pod_phase(pod) == "Running" and is_pod_ready(pod)


def statefulset_ready(sts: StatefulSet) -> bool:
    """``StatefulsetReady``: every replica available, one revision."""
    st = sts.status
    want = sts.spec.replicas if sts.spec is not None else 0
    if st is None:
        return want == 0
    return want == (st.available_replicas or 0) and st.current_revision == st.update_revision


def owned_by(obj: Any, owner: Any) -> bool:
    ref = controller_ref(obj)
    return ref is not None and ref.uid == owner.metadata.uid


# -------------------------------------------------------------------- revisions
def revision_data(spec: LeaderWorkerSetSpec) -> dict[str, Any]:
    """``getPatch``: the patch that puts the template and the network config back."""
    lwt = msgspec.to_builtins(spec.leader_worker_template, enc_hook=enc_hook)
    network = {"subdomainPolicy": lw.subdomain_policy(spec)}
    return {
        "spec": {
            "leaderWorkerTemplate": {**lwt, "$patch": "replace"},
            "networkConfig": {**network, "$patch": "replace"},
        }
    }


def _hash(data: dict[str, Any]) -> str:
    # hashRevision: FNV-1 of the patch, rand.SafeEncodeString of its decimal.
    return safe_encode(str(fnv32(canonical_json(data))))


def revision_key(spec: LeaderWorkerSetSpec) -> str:
    """The key of the revision a spec makes: only the leader-worker template
    and the network config count (changing replicas is no new revision)."""
    return _hash(revision_data(spec))


def new_revision(lws: LeaderWorkerSet, number: int, key: str = "") -> ControllerRevision:
    """``NewRevision``: the LWS's current spec as revision ``number``, keyed
    ``key`` (default: its hash), named ``<lws>-<hash>-<number>``."""
    assert lws.spec is not None
    data = revision_data(lws.spec)
    h = _hash(data)
    return ControllerRevision(
        api_version="apps/v1",
        kind="ControllerRevision",
        metadata=ObjectMeta(
            name=f"{lws.metadata.name[:220]}-{h}-{number}",
            namespace=lws.metadata.namespace,
            labels={SET_NAME_LABEL: lws.metadata.name, REVISION_LABEL: key or h},
            owner_references=[owner_reference(lws)],
        ),
        data=data,
        revision=number,
    )


@dataclass(frozen=True, slots=True)
class Revision:
    """What a revision restores (``ApplyRevision``)."""

    key: str
    template: LeaderWorkerTemplate
    network: NetworkConfig | None

    @classmethod
    def of(cls, cr: ControllerRevision) -> Revision:
        spec = (cr.data or {}).get("spec") or {}
        lwt = {k: v for k, v in (spec.get("leaderWorkerTemplate") or {}).items() if k != "$patch"}
        net = {k: v for k, v in (spec.get("networkConfig") or {}).items() if k != "$patch"}
        return cls(
            revision_of(cr),
            msgspec.convert(lwt, LeaderWorkerTemplate, dec_hook=dec_hook),
            msgspec.convert(net, NetworkConfig) if net else None,
        )


def find_revision(revisions: list[ControllerRevision], key: str) -> ControllerRevision | None:
    """``GetRevision``: the revision with that key (the newest, should there be two)."""
    found = [r for r in revisions if revision_of(r) == key]
    return max(found, key=lambda r: r.revision) if found else None


# ---------------------------------------------------------------- StatefulSets
def _template(
    tmpl: PodTemplateSpec, labels: dict[str, str], annotations: dict[str, str]
) -> PodTemplateSpec:
    out = clone(tmpl)
    m = out.metadata
    m.labels = {**(m.labels or {}), **labels}
    m.annotations = {**(m.annotations or {}), **annotations}
    return out


def _group_annotations(lws: LeaderWorkerSet, lwt: LeaderWorkerTemplate) -> dict[str, str]:
    """The pod annotations leaders and workers share: size, exclusive
    topology, subgroup policy."""
    ann = lws.metadata.annotations or {}
    out = {SIZE_ANNOTATION: str(lwt.size)}
    if ann.get(EXCLUSIVE_TOPOLOGY_ANNOTATION):
        out[EXCLUSIVE_TOPOLOGY_ANNOTATION] = ann[EXCLUSIVE_TOPOLOGY_ANNOTATION]
    sgp = lwt.sub_group_policy
    if sgp is not None:
        out[SUBGROUP_POLICY_TYPE_ANNOTATION] = sgp.sub_group_policy_type
        out[SUBGROUP_SIZE_ANNOTATION] = str(sgp.sub_group_size)
        if ann.get(SUBGROUP_EXCLUSIVE_TOPOLOGY_ANNOTATION):
            out[SUBGROUP_EXCLUSIVE_TOPOLOGY_ANNOTATION] = ann[
                SUBGROUP_EXCLUSIVE_TOPOLOGY_ANNOTATION
            ]
    return out


def _volume_fields(lwt: LeaderWorkerTemplate) -> dict[str, Any]:
    """The volume claim templates and retention policy, passed through."""
    out: dict[str, Any] = {}
    if lwt.volume_claim_templates:
        out["volume_claim_templates"] = list(lwt.volume_claim_templates)
    policy = lwt.persistent_volume_claim_retention_policy
    if policy:
        out["persistent_volume_claim_retention_policy"] = (
            StatefulSetPersistentVolumeClaimRetentionPolicy(
                when_deleted=policy.get("whenDeleted", "Retain"),
                when_scaled=policy.get("whenScaled", "Retain"),
            )
        )
    return out


def leader_statefulset(
    lws: LeaderWorkerSet, partition: int, replicas: int, key: str
) -> StatefulSet:
    """The leader StatefulSet ``<lws>`` as LWS applies it: Parallel, one
    leader pod per group, the rolling update's partition."""
    spec = lws.spec
    assert spec is not None
    lwt = spec.leader_worker_template
    name = lws.metadata.name
    base = lwt.leader_template if lwt.leader_template is not None else lwt.worker_template
    pod_ann = _group_annotations(lws, lwt)
    if lw.subdomain_policy(spec) == "UniquePerReplica":
        pod_ann[SUBDOMAIN_POLICY_ANNOTATION] = "UniquePerReplica"
    template = _template(
        base, {WORKER_INDEX_LABEL: "0", SET_NAME_LABEL: name, REVISION_LABEL: key}, pod_ann
    )
    ruc = lw.rolling_update(spec)
    unavailable = lw.scaled_value(ruc.max_unavailable, spec.replicas, round_up=False)
    surge = min(lw.scaled_value(ruc.max_surge, spec.replicas, round_up=True), spec.replicas)
    return StatefulSet(
        api_version="apps/v1",
        kind="StatefulSet",
        metadata=ObjectMeta(
            name=name,
            namespace=lws.metadata.namespace,
            labels={**(lws.metadata.labels or {}), SET_NAME_LABEL: name, REVISION_LABEL: key},
            annotations={
                **(lws.metadata.annotations or {}),
                REPLICAS_ANNOTATION: str(spec.replicas),
            },
            owner_references=[owner_reference(lws)],
        ),
        spec=StatefulSetSpec(
            selector=LabelSelector(match_labels={SET_NAME_LABEL: name, WORKER_INDEX_LABEL: "0"}),
            template=template,
            replicas=replicas,
            service_name=name,
            pod_management_policy="Parallel",
            update_strategy=StatefulSetUpdateStrategy(
                type=spec.rollout_strategy.type,
                rolling_update=RollingUpdateStatefulSetStrategy(
                    # (0 and 0 is refused by the webhook; 0 replicas still need 1)
                    partition=partition,
                    max_unavailable=max(1, unavailable + surge),
                ),
            ),
            **_volume_fields(lwt),
        ),
    )


def worker_statefulset(
    leader: Pod, lws: LeaderWorkerSet, rev: Revision, node_selector: dict[str, str] | None
) -> StatefulSet:
    """The worker StatefulSet ``<lws>-<i>`` of a leader's group, from the
    leader's revision: ordinals 1..size-1, owned by the leader pod."""
    name = lws.metadata.name
    lwt = rev.template
    leader_labels = labels_of(leader)
    selector = {
        GROUP_INDEX_LABEL: leader_labels.get(GROUP_INDEX_LABEL, ""),
        SET_NAME_LABEL: name,
        GROUP_KEY_LABEL: leader_labels.get(GROUP_KEY_LABEL, ""),
    }
    labels = {**selector, REVISION_LABEL: revision_of(leader)}
    ann = {**_group_annotations(lws, lwt), LEADER_NAME_ANNOTATION: leader.metadata.name}
    template = _template(lwt.worker_template, labels, ann)
    if node_selector and template.spec is not None:
        template.spec.node_selector = {**(template.spec.node_selector or {}), **node_selector}
    unique = rev.network is not None and rev.network.subdomain_policy == "UniquePerReplica"
    return StatefulSet(
        api_version="apps/v1",
        kind="StatefulSet",
        metadata=ObjectMeta(
            name=leader.metadata.name,
            namespace=leader.metadata.namespace,
            labels={**(lws.metadata.labels or {}), **labels},
            annotations=dict(lws.metadata.annotations) if lws.metadata.annotations else None,
            owner_references=[owner_reference(leader)],
        ),
        spec=StatefulSetSpec(
            selector=LabelSelector(match_labels=selector),
            template=template,
            replicas=lwt.size - 1,
            service_name=leader.metadata.name if unique else name,
            pod_management_policy="Parallel",
            ordinals=StatefulSetOrdinals(start=1),
            **_volume_fields(lwt),
        ),
    )


def headless_service(
    lws: LeaderWorkerSet, name: str, selector: dict[str, str], owner: Any
) -> Service:
    """``CreateHeadlessServiceIfNotExists``'s Service: DNS names for the
    group's pods, ready or not."""
    return Service(
        metadata=ObjectMeta(
            name=name,
            namespace=lws.metadata.namespace,
            labels={SET_NAME_LABEL: lws.metadata.name},
            owner_references=[owner_reference(owner)],
        ),
        spec=ServiceSpec(cluster_ip="None", selector=selector, publish_not_ready_addresses=True),
    )


def create_service_if_missing(
    store: ObjectStore, lws: LeaderWorkerSet, name: str, selector: dict[str, str], owner: Any
) -> None:
    """``CreateHeadlessServiceIfNotExists``."""
    try:
        store.get(SERVICE, lws.metadata.namespace, name)
        return
    except NotFound:
        pass
    with contextlib.suppress(AlreadyExists):
        store.create(headless_service(lws, name, selector, owner))
