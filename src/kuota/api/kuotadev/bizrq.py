"""kuota's own ``kuota.dev/v1alpha1`` BizGroupResourceQuota ("bizrq"): a node of
a business-group quota tree (../shared/specs/bizrq.md): its struct, defaults
and the checks of one object alone (the tree's rules need the other nodes:
``kuota.quota.bizgroups.tree``)."""

from __future__ import annotations

import re
from datetime import datetime

import msgspec

from kuota.api import names
from kuota.api.base import Object
from kuota.api.errors import invalid, key, not_supported
from kuota.api.k8s.corev1 import ResourceList
from kuota.api.k8s.validation.objectmeta import Errors, name_errors, validate_object_meta
from kuota.api.meta import Conditions, ObjectMeta

__all__ = [
    "ENFORCEMENTS",
    "GROUP_LABEL",
    "KIND",
    "BizGroupResourceQuota",
    "BizGroupSpec",
    "BizGroupStatus",
    "default_bizrq",
    "validate_bizrq",
]

GROUP = "kuota.dev"
API_VERSION = f"{GROUP}/v1alpha1"
KIND = "BizGroupResourceQuota"
GROUP_LABEL = "biz.group.resource.quota"  # on an owning object: its group's name
ENFORCEMENTS = ("Reject", "Queue")
DEFAULT_RESYNC = "5m"  # ResourceQuota's controller resyncs every 5 minutes
CASH = "cash/"  # a budget key: resource-hours

_DURATION = re.compile(r"^(\d+(\.\d+)?(h|m|s|ms))+$")


class BizGroupSpec(Object):
    parent_biz_group: str = ""  # "" for a root; never changes
    hard: ResourceList | None = None
    enforcement: str | None = None  # Reject (default) or Queue; checked in code
    resync_period: str | None = None  # a Go duration; default 5m


class BizGroupStatus(Object):
    hard: ResourceList | None = None
    used: ResourceList | None = None
    self_used: ResourceList | None = None  # used minus what children were granted
    last_reconcile_time: datetime | None = None
    conditions: Conditions | None = None


class BizGroupResourceQuota(Object):
    api_version: str
    kind: str
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: BizGroupSpec = msgspec.field(default_factory=BizGroupSpec)
    status: BizGroupStatus | None = None


def default_bizrq(obj: BizGroupResourceQuota, gates: object = None) -> None:
    spec = obj.spec
    if spec.enforcement is None:
        spec.enforcement = "Reject"
    if spec.resync_period is None:
        spec.resync_period = DEFAULT_RESYNC


def is_cash(k: str) -> bool:
    return k.startswith(CASH)


def _key_errors(k: str, path: str) -> Errors:
    """A ResourceQuota key (``requests.cpu``, ``limits.nvidia.com/gpu.A100``,
    ``pods``), optionally a ``cash/`` budget of one."""
    base = k[len(CASH) :] if is_cash(k) else k
    if not base or any(c.isspace() for c in base) or base.startswith(".") or base.endswith("."):
        return [
            invalid(path, k, "must be a ResourceQuota key, optionally a model suffix and cash/")
        ]
    if is_cash(k) and base.count("/") > 1:
        return [invalid(path, k, "a budget is cash/ followed by a ResourceQuota key")]
    return []


def validate_bizrq(obj: BizGroupResourceQuota) -> Errors:
    errs = validate_object_meta(obj.metadata, False, names.is_dns1123_subdomain)
    spec = obj.spec
    if spec.parent_biz_group:
        errs += name_errors(
            names.is_dns1123_subdomain, spec.parent_biz_group, "spec.parentBizGroup"
        )
        if spec.parent_biz_group == obj.metadata.name:
            errs.append(
                invalid(
                    "spec.parentBizGroup",
                    spec.parent_biz_group,
                    "a group cannot be its own parent (a cycle)",
                )
            )
    for k, q in sorted((spec.hard or {}).items()):
        path = key("spec.hard", k)
        errs += _key_errors(k, path)
        if q.sign() < 0:
            errs.append(invalid(path, str(q), "must be greater than or equal to 0"))
    if spec.enforcement is not None and spec.enforcement not in ENFORCEMENTS:
        errs.append(not_supported("spec.enforcement", spec.enforcement, ENFORCEMENTS))
    rp = spec.resync_period
    if rp is not None and (not _DURATION.match(rp) or not any(ch in "123456789" for ch in rp)):
        errs.append(
            invalid("spec.resyncPeriod", rp, "must be a positive duration such as 5m or 30s")
        )
    return errs
