"""LeaderWorkerSet (``leaderworkerset.x-k8s.io/v1``): types, the CRD's defaults,
the LWS defaulting webhook and its validating webhook (integrations.md §5.1).

Types follow ``api/leaderworkerset/v1/leaderworkerset_types.go`` of
kubernetes-sigs/lws; the rules follow ``pkg/webhooks/leaderworkerset_webhook.go``.
CRD markers become struct defaults (``replicas`` 1, ``size`` 1, ``restartPolicy``
RecreateGroupOnPodRestart, ``startupPolicy`` LeaderCreated, the rolling-update
knobs); what the defaulting webhook adds (``Default`` restartPolicy rewritten to
``None``, a missing ``rollingUpdateConfiguration`` and ``networkConfig``) is
:func:`default_leader_worker_set`. The pod template contents are not validated
here: the CRD checks their schema only, as the API server does. Error paths
keep the webhook's own spelling (``spec.leaderWorkerTemplate.SubGroupPolicy.subGroupSize``),
so they read as ``kubectl`` prints them.

Pure: no I/O.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, Final, Literal

import msgspec

from kuota.api.base import LIST_ATOMIC, Meta, Object
from kuota.api.base import preserve_unknown as _pu
from kuota.api.errors import FieldError, invalid, required
from kuota.api.k8s.corev1 import PodTemplateSpec
from kuota.api.meta import Conditions, ObjectMeta

__all__ = [
    "API_VERSION",
    "GROUP",
    "KIND",
    "LeaderWorkerSet",
    "LeaderWorkerSetSpec",
    "LeaderWorkerSetStatus",
    "LeaderWorkerTemplate",
    "NetworkConfig",
    "RollingUpdateConfiguration",
    "RolloutStrategy",
    "SubGroupPolicy",
    "default_leader_worker_set",
    "rolling_update",
    "scaled_value",
    "subdomain_policy",
    "validate_leader_worker_set",
    "validate_leader_worker_set_update",
]

GROUP: Final = "leaderworkerset.x-k8s.io"
API_VERSION: Final = f"{GROUP}/v1"
KIND: Final = "LeaderWorkerSet"

# Labels and annotations the LWS controller and its pod webhook write (§5.2, §5.3).
_P = "leaderworkerset.sigs.k8s.io/"
SET_NAME_LABEL: Final = _P + "name"
GROUP_INDEX_LABEL: Final = _P + "group-index"
WORKER_INDEX_LABEL: Final = _P + "worker-index"
GROUP_KEY_LABEL: Final = _P + "group-key"
REVISION_LABEL: Final = _P + "template-revision-hash"
SUBGROUP_INDEX_LABEL: Final = _P + "subgroup-index"
SUBGROUP_KEY_LABEL: Final = _P + "subgroup-key"
SIZE_ANNOTATION: Final = _P + "size"
REPLICAS_ANNOTATION: Final = _P + "replicas"
LEADER_NAME_ANNOTATION: Final = _P + "leader-name"
EXCLUSIVE_TOPOLOGY_ANNOTATION: Final = _P + "exclusive-topology"
SUBGROUP_EXCLUSIVE_TOPOLOGY_ANNOTATION: Final = _P + "subgroup-exclusive-topology"
SUBGROUP_SIZE_ANNOTATION: Final = _P + "subgroup-size"
SUBGROUP_POLICY_TYPE_ANNOTATION: Final = _P + "subgroup-policy-type"
SUBDOMAIN_POLICY_ANNOTATION: Final = _P + "subdomainPolicy"
RECREATE_GROUP_AFTER_START_ANNOTATION: Final = _P + "experimental-recreate-group-after-start"

# Environment variables prepended to every container of a group's pods.
ENV_LEADER_ADDRESS: Final = "LWS_LEADER_ADDRESS"
ENV_GROUP_SIZE: Final = "LWS_GROUP_SIZE"
ENV_WORKER_INDEX: Final = "LWS_WORKER_INDEX"

RestartPolicy = Literal["Default", "RecreateGroupOnPodRestart", "RecreateGroupAfterStart", "None"]
StartupPolicy = Literal["LeaderCreated", "LeaderReady"]
SubdomainPolicy = Literal["Shared", "UniquePerReplica"]
SubGroupPolicyType = Literal["LeaderWorker", "LeaderExcluded"]
IntOrString = int | str

MAX_REPLICAS: Final = 1_000_000
MAX_INT32: Final = 2**31 - 1

AnyObject = Annotated[dict[str, Any], _pu()]


class SubGroupPolicy(Object):
    sub_group_policy_type: SubGroupPolicyType = "LeaderWorker"  # CRD default
    sub_group_size: int | None = None


class LeaderWorkerTemplate(Object):
    worker_template: PodTemplateSpec
    leader_template: PodTemplateSpec | None = None  # None: leaders use the worker template
    size: int = 1  # CRD default
    restart_policy: RestartPolicy = "RecreateGroupOnPodRestart"  # CRD default
    sub_group_policy: SubGroupPolicy | None = None
    # Passed to the StatefulSets, not interpreted (kuota models no volumes).
    volume_claim_templates: Annotated[list[AnyObject], LIST_ATOMIC] | None = None
    persistent_volume_claim_retention_policy: AnyObject | None = None


class RollingUpdateConfiguration(Object):
    # CRD defaults; maxUnavailable and maxSurge are ints or percents ("30%").
    partition: int = 0
    max_unavailable: IntOrString = 1
    max_surge: IntOrString = 0


class RolloutStrategy(Object):
    type: Literal["RollingUpdate"] = "RollingUpdate"
    rolling_update_configuration: RollingUpdateConfiguration | None = None


class NetworkConfig(Object):
    subdomain_policy: SubdomainPolicy  # required by the CRD


class LeaderWorkerSetSpec(Object):
    leader_worker_template: LeaderWorkerTemplate
    replicas: Annotated[int, Meta(ge=0, le=MAX_REPLICAS)] = 1
    rollout_strategy: RolloutStrategy = msgspec.field(default_factory=RolloutStrategy)
    startup_policy: StartupPolicy = "LeaderCreated"
    network_config: NetworkConfig | None = None


class LeaderWorkerSetStatus(Object):
    conditions: Conditions | None = None
    # Non-pointer int32 counters in Go: absent means 0.
    ready_replicas: int = 0
    updated_replicas: int = 0
    replicas: int = 0
    hpa_pod_selector: str = msgspec.field(default="", name="hpaPodSelector")
    observed_generation: int = 0


class LeaderWorkerSet(Object):
    api_version: str = API_VERSION
    kind: str = KIND
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: LeaderWorkerSetSpec | None = None
    status: LeaderWorkerSetStatus | None = None


# ------------------------------------------------------------------- defaulting
def default_leader_worker_set(lws: LeaderWorkerSet) -> LeaderWorkerSet:
    """The LWS defaulting webhook (create and update), in place; returns ``lws``."""
    spec = lws.spec
    if spec is None:
        return lws
    lwt = spec.leader_worker_template
    if lwt.restart_policy == "Default":  # deprecated name of None
        lwt.restart_policy = "None"
    if spec.rollout_strategy.rolling_update_configuration is None:
        spec.rollout_strategy.rolling_update_configuration = RollingUpdateConfiguration()
    if spec.network_config is None:
        spec.network_config = NetworkConfig(subdomain_policy="Shared")
    return lws


def rolling_update(spec: LeaderWorkerSetSpec) -> RollingUpdateConfiguration:
    """The rolling-update knobs, defaulted as the webhook does."""
    cfg = spec.rollout_strategy.rolling_update_configuration
    return cfg if cfg is not None else RollingUpdateConfiguration()


def subdomain_policy(spec: LeaderWorkerSetSpec) -> SubdomainPolicy:
    return spec.network_config.subdomain_policy if spec.network_config is not None else "Shared"


_PERCENT: Final = re.compile(r"[0-9]+%")
_PERCENT_MSG: Final = (
    "a valid percent string must be a numeric string followed by an ending '%' "
    "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
)


def scaled_value(value: IntOrString, total: int, round_up: bool) -> int:
    """``intstr.GetScaledValueFromIntOrPercent``: an int as is, a percent of
    ``total`` rounded up or down. Raises ValueError for any other string."""
    if isinstance(value, int):
        return value
    if not _PERCENT.fullmatch(value):
        raise ValueError(f"invalid value for IntOrString: invalid value for percent: {value!r}")
    pct = int(value[:-1])
    return math.ceil(pct * total / 100) if round_up else (pct * total) // 100


# ------------------------------------------------------------------- validation
_SPEC: Final = "spec"
_LWT: Final = "spec.leaderWorkerTemplate"
_RUC: Final = "spec.rolloutStrategy.rollingUpdateConfiguration"
_SUB_GROUP_SIZE: Final = "spec.leaderWorkerTemplate.SubGroupPolicy.subGroupSize"  # (sic)


def _int_or_percent(value: IntOrString, path: str) -> list[FieldError]:
    """``ValidatePositiveIntOrPercent`` and ``IsNotMoreThan100Percent``."""
    if isinstance(value, int):
        return [invalid(path, value, "must be greater than or equal to 0")] if value < 0 else []
    if not _PERCENT.fullmatch(value):
        return [invalid(path, value, _PERCENT_MSG)]
    if int(value[:-1]) > 100:
        return [invalid(path, value, "must not be greater than 100%")]
    return []


def validate_leader_worker_set(lws: LeaderWorkerSet) -> list[FieldError]:
    """The LWS validating webhook's rules on create (``generalValidate``), on
    a defaulted object. Metadata (a DNS-1035 name: it names the headless
    Service) is checked by the decoder's metadata pass."""
    spec = lws.spec
    if spec is None:
        return [required(_SPEC, "")]
    errs: list[FieldError] = []
    lwt = spec.leader_worker_template
    replicas, size = spec.replicas, lwt.size
    if replicas < 0:
        errs.append(invalid("spec.replicas", replicas, "replicas must be equal or greater than 0"))
    if replicas > MAX_REPLICAS:
        errs.append(
            invalid("spec.replicas", replicas, "replicas must be equal or less than 1000000")
        )
    if size < 1:
        errs.append(invalid(f"{_LWT}.size", size, "size must be equal or greater than 1"))
    if replicas * size > MAX_INT32:
        errs.append(
            invalid(
                "spec.replicas",
                replicas,
                f"the product of replicas and worker replicas must not exceed {MAX_INT32}",
            )
        )
    if lwt.worker_template.spec is None:
        # (kuota's own: the CRD accepts it, and every pod creation would fail)
        errs.append(required(f"{_LWT}.workerTemplate.spec", "pods need a spec"))
    ruc = rolling_update(spec)
    errs += _int_or_percent(ruc.max_unavailable, f"{_RUC}.maxUnavailable")
    errs += _int_or_percent(ruc.max_surge, f"{_RUC}.maxSurge")
    if ruc.partition < 0:
        errs.append(
            invalid(f"{_RUC}.partition", ruc.partition, "must be greater than or equal to 0")
        )
    try:
        unavailable = scaled_value(ruc.max_unavailable, replicas, round_up=False)
    except ValueError:
        unavailable = 0
        errs.append(invalid(f"{_RUC}.maxUnavailable", ruc.max_unavailable, "invalid value"))
    try:
        surge = scaled_value(ruc.max_surge, replicas, round_up=True)
    except ValueError:
        surge = 0
        errs.append(invalid(f"{_RUC}.maxSurge", ruc.max_surge, "invalid value"))
    if unavailable == 0 and surge == 0 and replicas != 0:
        errs.append(
            invalid(
                f"{_RUC}.maxUnavailable", ruc.max_unavailable, "must not be 0 when `maxSurge` is 0"
            )
        )
    if lwt.sub_group_policy is not None:
        errs += _validate_sub_group_policy(lwt.sub_group_policy, size)
    else:
        ann = lws.metadata.annotations or {}
        if SUBGROUP_EXCLUSIVE_TOPOLOGY_ANNOTATION in ann:
            errs.append(
                invalid(
                    f"metadata.annotations.{SUBGROUP_EXCLUSIVE_TOPOLOGY_ANNOTATION}",
                    ann[SUBGROUP_EXCLUSIVE_TOPOLOGY_ANNOTATION],
                    "cannot have subgroup-exclusive-topology without subGroupSize set",
                )
            )
    return errs


def _validate_sub_group_policy(sgp: SubGroupPolicy, size: int) -> list[FieldError]:
    sgs = sgp.sub_group_size
    if sgs is None:
        # The webhook dereferences it unchecked; say what is missing instead.
        return [required(_SUB_GROUP_SIZE, "subGroupPolicy needs a subGroupSize")]
    if sgs < 1:
        # Go goes on and divides by it; a size below 1 says enough.
        return [invalid(_SUB_GROUP_SIZE, sgs, "subGroupSize must be equal or greater than 1")]
    errs = []
    if size % sgs != 0 and (size - 1) % sgs != 0:
        errs.append(
            invalid(_SUB_GROUP_SIZE, sgs, "size or size - 1 must be divisible by subGroupSize")
        )
    if size < sgs:
        errs.append(invalid(_SUB_GROUP_SIZE, sgs, "subGroupSize cannot be larger than size"))
    if sgp.sub_group_policy_type == "LeaderExcluded" and (size - 1) % sgs != 0:
        errs.append(
            invalid(
                _SUB_GROUP_SIZE,
                sgs,
                "size-1 must be divisible by subGroupSize when using LeaderExcluded",
            )
        )
    return errs


def validate_leader_worker_set_update(
    new: LeaderWorkerSet, old: LeaderWorkerSet
) -> list[FieldError]:
    """``ValidateUpdate``: the create rules, and subGroupPolicy fixed at creation."""
    errs = validate_leader_worker_set(new)
    if new.spec is None or old.spec is None:
        return errs
    new_sgp = new.spec.leader_worker_template.sub_group_policy
    old_sgp = old.spec.leader_worker_template.sub_group_policy
    if new_sgp is not None and old_sgp is not None:
        if new_sgp.sub_group_size != old_sgp.sub_group_size:
            errs.append(invalid(_SUB_GROUP_SIZE, new_sgp.sub_group_size, "field is immutable"))
    elif new_sgp is not None:
        errs.append(
            invalid(
                _SUB_GROUP_SIZE,
                new_sgp.sub_group_size,
                "cannot enable subGroupSize after the lws is already created",
            )
        )
    elif old_sgp is not None:
        errs.append(
            invalid(
                _SUB_GROUP_SIZE, old_sgp.sub_group_size, "cannot remove subGroupSize after enabled"
            )
        )
    return errs
