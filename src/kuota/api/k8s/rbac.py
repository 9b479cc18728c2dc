"""rbac.authorization.k8s.io/v1: Role, ClusterRole, RoleBinding and
ClusterRoleBinding, as the RBAC authorizer of ``kuota serve`` reads them."""

from __future__ import annotations

import msgspec

from kuota.api.base import Object
from kuota.api.meta import LabelSelector, ObjectMeta

__all__ = [
    "GROUP",
    "AggregationRule",
    "ClusterRole",
    "ClusterRoleBinding",
    "PolicyRule",
    "Role",
    "RoleBinding",
    "RoleRef",
    "Subject",
]

GROUP = "rbac.authorization.k8s.io"


class PolicyRule(Object, kw_only=True):
    verbs: list[str] = msgspec.field(default_factory=list)
    api_groups: list[str] | None = None
    resources: list[str] | None = None
    resource_names: list[str] | None = None
    # Go's JSON name keeps the acronym: "nonResourceURLs".
    non_resource_urls: list[str] | None = msgspec.field(default=None, name="nonResourceURLs")


class AggregationRule(Object, kw_only=True):
    cluster_role_selectors: list[LabelSelector] | None = None


class Subject(Object, kw_only=True):
    kind: str  # User, Group, ServiceAccount
    name: str
    api_group: str | None = None
    namespace: str | None = None


class RoleRef(Object, kw_only=True):
    api_group: str
    kind: str  # Role or ClusterRole
    name: str


class Role(Object, kw_only=True):
    api_version: str = f"{GROUP}/v1"
    kind: str = "Role"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    rules: list[PolicyRule] | None = None


class ClusterRole(Object, kw_only=True):
    api_version: str = f"{GROUP}/v1"
    kind: str = "ClusterRole"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    rules: list[PolicyRule] | None = None
    aggregation_rule: AggregationRule | None = None


class RoleBinding(Object, kw_only=True):
    api_version: str = f"{GROUP}/v1"
    kind: str = "RoleBinding"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    subjects: list[Subject] | None = None
    role_ref: RoleRef


class ClusterRoleBinding(Object, kw_only=True):
    api_version: str = f"{GROUP}/v1"
    kind: str = "ClusterRoleBinding"
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    subjects: list[Subject] | None = None
    role_ref: RoleRef
