"""kube-apiserver's RBAC authorizer (plugin/pkg/auth/authorizer/rbac): the
rules of every binding whose subjects name the user, ClusterRoleBindings
cluster-wide, RoleBindings in the request's namespace; allow-only, default
deny. Roles are read from the store at each decision (they change by the
API like any object), ClusterRole aggregation applied as the
clusterrole-aggregation controller keeps it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from kuota.api.k8s import rbac
from kuota.api.meta import selector_matches
from kuota.server.auth.authn import MASTERS, Attributes, UserInfo

Rule = rbac.PolicyRule
# (kind, namespace) -> objects of that RBAC kind; namespace "" for cluster kinds.
Lister = Callable[[str, str], list[Any]]


def applies_to(subject: rbac.Subject, user: UserInfo, binding_ns: str) -> bool:
    """rbac.appliesTo: User by name, Group by membership, ServiceAccount by
    its user name ``system:serviceaccount:NS:NAME``."""
    if subject.kind == "User":
        return subject.name == user.name
    if subject.kind == "Group":
        return subject.name in user.groups
    if subject.kind == "ServiceAccount":
        ns = subject.namespace or binding_ns
        return user.name == f"system:serviceaccount:{ns}:{subject.name}"
    return False


def _has(values: Iterable[str] | None, want: str) -> bool:
    return any(v == "*" or v == want for v in values or ())


def _resource_matches(rule: Rule, resource: str, subresource: str) -> bool:
    combined = f"{resource}/{subresource}" if subresource else resource
    for r in rule.resources or ():
        if r == "*" or r == combined:
            return True
        if subresource and r == f"*/{subresource}":
            return True
    return False


def _url_matches(rule: Rule, path: str) -> bool:
    for u in rule.non_resource_urls or ():
        if u == "*" or u == path or (u.endswith("*") and path.startswith(u[:-1])):
            return True
    return False


def rule_allows(attrs: Attributes, rule: Rule) -> bool:
    """rbac.RuleAllows."""
    if not _has(rule.verbs, attrs.verb):
        return False
    if not attrs.resource_request:
        return _url_matches(rule, attrs.path)
    return (
        _has(rule.api_groups, attrs.api_group)
        and _resource_matches(rule, attrs.resource, attrs.subresource)
        and (not rule.resource_names or attrs.name in rule.resource_names)
    )


def cluster_role_rules(role: rbac.ClusterRole, all_roles: list[Any]) -> list[Rule]:
    """A ClusterRole's rules; an aggregated one's are the union of the rules of
    every ClusterRole its selectors match (the aggregation controller's result)."""
    agg = role.aggregation_rule
    if agg is None or not agg.cluster_role_selectors:
        return list(role.rules or ())
    out: list[Rule] = []
    for other in sorted(all_roles, key=lambda r: r.metadata.name):
        if other.metadata.name == role.metadata.name:
            continue
        labels = other.metadata.labels or {}
        if any(selector_matches(s, labels) for s in agg.cluster_role_selectors):
            for rule in other.rules or ():
                if rule not in out:
                    out.append(rule)
    return out


_CACHED = 4096  # decisions kept (all dropped when more are made)


class RBACAuthorizer:
    """``authorize`` over the RBAC objects ``list_kind`` returns. With
    ``version`` (a value that changes whenever an RBAC object does), each
    decision is kept until it changes: a user's requests after the first
    cost a lookup, not a walk of every binding and role."""

    def __init__(self, list_kind: Lister, version: Callable[[], Any] | None = None) -> None:
        self.list_kind = list_kind
        self.version = version
        self._decisions: dict[tuple[Any, ...], tuple[bool, str]] = {}
        self._version: Any = None
        self.evaluations = 0  # decisions made by walking the rules (a structural count)

    def _role_rules(self, ref: rbac.RoleRef, namespace: str) -> list[Rule]:
        if ref.kind == "ClusterRole":
            roles = self.list_kind("ClusterRole", "")
            for r in roles:
                if r.metadata.name == ref.name:
                    return cluster_role_rules(r, roles)
        elif ref.kind == "Role":
            for r in self.list_kind("Role", namespace):
                if r.metadata.name == ref.name:
                    return list(r.rules or ())
        return []

    def role_ref_rules(self, ref: rbac.RoleRef, namespace: str) -> list[Rule] | None:
        """The rules a binding's roleRef grants; None if the role does not exist."""
        kind, ns = ref.kind, namespace if ref.kind == "Role" else ""
        if not any(r.metadata.name == ref.name for r in self.list_kind(kind, ns)):
            return None
        return self._role_rules(ref, namespace)

    def rules_for(self, user: UserInfo, namespace: str) -> Iterator[tuple[str, Rule]]:
        """rbac.VisitRulesFor: (why, rule) for every rule granted to the user."""
        for b in self.list_kind("ClusterRoleBinding", ""):
            if any(applies_to(s, user, "") for s in b.subjects or ()):
                why = f'ClusterRoleBinding "{b.metadata.name}" of ClusterRole "{b.role_ref.name}"'
                for rule in self._role_rules(b.role_ref, ""):
                    yield why, rule
        if not namespace:
            return
        for b in self.list_kind("RoleBinding", namespace):
            if any(applies_to(s, user, namespace) for s in b.subjects or ()):
                why = (
                    f'RoleBinding "{b.metadata.name}/{namespace}" '
                    f'of {b.role_ref.kind} "{b.role_ref.name}"'
                )
                for rule in self._role_rules(b.role_ref, namespace):
                    yield why, rule

    def authorize(self, attrs: Attributes) -> tuple[bool, str]:
        if MASTERS in attrs.user.groups:  # the privileged-group authorizer before RBAC
            return True, ""
        if self.version is None:
            return self._authorize(attrs)
        version = self.version()
        if version != self._version or len(self._decisions) >= _CACHED:
            self._decisions.clear()
            self._version = version
        # A resource request's rules never read its path (one key per name).
        key = (
            attrs.user,
            attrs.verb,
            attrs.resource_request,
            "" if attrs.resource_request else attrs.path,
            attrs.api_group,
            attrs.resource,
            attrs.subresource,
            attrs.namespace,
            attrs.name,
        )
        hit = self._decisions.get(key)
        if hit is None:
            hit = self._decisions[key] = self._authorize(attrs)
        return hit

    def _authorize(self, attrs: Attributes) -> tuple[bool, str]:
        self.evaluations += 1
        for why, rule in self.rules_for(attrs.user, attrs.namespace):
            if rule_allows(attrs, rule):
                return True, f'RBAC: allowed by {why} to User "{attrs.user.name}"'
        return False, ""
