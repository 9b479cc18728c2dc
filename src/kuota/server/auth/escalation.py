"""RBAC's escalation prevention (pkg/registry/rbac/*/policybased and
rbac/validation): a user may write a Role or ClusterRole only with every
permission it grants (or the ``escalate`` verb on it), and a binding only to
a role whose permissions they hold (or with the ``bind`` verb on it);
system:masters may do both. A ClusterRole's aggregationRule can gather
anything: setting one takes cluster-admin's rights."""

from __future__ import annotations

from typing import Any

import msgspec

from kuota.api.k8s import rbac
from kuota.server import status as st
from kuota.server.auth.authn import MASTERS, Attributes, UserInfo
from kuota.server.auth.rbac import RBACAuthorizer, Rule

GROUP = "rbac.authorization.k8s.io"
ROLE_KINDS = {"Role": "roles", "ClusterRole": "clusterroles"}
BINDING_KINDS = {"RoleBinding": "rolebindings", "ClusterRoleBinding": "clusterrolebindings"}
KINDS = frozenset(ROLE_KINDS) | frozenset(BINDING_KINDS)
_FULL_AUTHORITY = [
    rbac.PolicyRule(verbs=["*"], api_groups=["*"], resources=["*"]),
    rbac.PolicyRule(verbs=["*"], non_resource_urls=["*"]),
]


def breakdown(rule: Rule) -> list[Rule]:
    """validation.BreakdownRule: one verb, group, resource and name each."""
    out = [
        rbac.PolicyRule(
            verbs=[verb],
            api_groups=[group],
            resources=[resource],
            resource_names=[name] if name is not None else None,
        )
        for group in rule.api_groups or ()
        for resource in rule.resources or ()
        for verb in rule.verbs or ()
        for name in (rule.resource_names or [None])
    ]
    out += [
        rbac.PolicyRule(verbs=[verb], non_resource_urls=[url])
        for url in rule.non_resource_urls or ()
        for verb in rule.verbs or ()
    ]
    return out


def _has_all(owner: list[str] | None, wanted: list[str] | None) -> bool:
    return set(wanted or ()) <= set(owner or ())


def _resources_cover(owner: list[str] | None, wanted: list[str] | None) -> bool:
    if _has_all(owner, wanted) or "*" in (owner or ()):
        return True
    for r in wanted or ():
        if "/" not in r or f"*/{r.split('/', 1)[1]}" not in (owner or ()):
            return False
    return True


def _url_covers(owner: str, path: str) -> bool:
    return owner == path or (owner.endswith("*") and path.startswith(owner.rstrip("*")))


def rule_covers(owner: Rule, sub: Rule) -> bool:
    """validation.ruleCovers."""
    names_ok = not owner.resource_names or (
        bool(sub.resource_names) and _has_all(owner.resource_names, sub.resource_names)
    )
    return (
        ("*" in (owner.verbs or ()) or _has_all(owner.verbs, sub.verbs))
        and ("*" in (owner.api_groups or ()) or _has_all(owner.api_groups, sub.api_groups))
        and _resources_cover(owner.resources, sub.resources)
        and names_ok
        and all(
            any(_url_covers(o, p) for o in owner.non_resource_urls or ())
            for p in sub.non_resource_urls or ()
        )
    )


def uncovered(owner: list[Rule], rules: list[Rule]) -> list[Rule]:
    """validation.Covers: the parts of ``rules`` no owner rule covers."""
    return [
        sub
        for rule in rules
        for sub in breakdown(rule)
        if not any(rule_covers(o, sub) for o in owner)
    ]


def _go_quote(s: str) -> str:
    """Go's %q of a string (the names RBAC allows need no other escapes)."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _go_strings(values: list[str]) -> str:
    """Go's %q of a []string: ["a" "b"]."""
    return "[" + " ".join(_go_quote(v) for v in values) + "]"


def compact_string(rule: Rule) -> str:
    """rbacv1helpers.CompactString."""
    parts = [
        f"{label}:{_go_strings(values)}"
        for label, values in (
            ("APIGroups", rule.api_groups),
            ("Resources", rule.resources),
            ("NonResourceURLs", rule.non_resource_urls),
            ("ResourceNames", rule.resource_names),
            ("Verbs", rule.verbs),
        )
        if values
    ]
    return "{" + ", ".join(parts) + "}"


def compact(rules: list[Rule]) -> list[Rule]:
    """validation.CompactRules: the verbs of rules on one resource (and name) together."""
    out: list[Rule] = []
    simple: dict[tuple[str, str, str], Rule] = {}
    for r in rules:
        groups, resources, names = r.api_groups or [], r.resources or [], r.resource_names or []
        if len(groups) == 1 and len(resources) == 1 and len(names) <= 1 and not r.non_resource_urls:
            key = (groups[0], resources[0], names[0] if names else "")
            if key in simple:
                simple[key].verbs = [*(simple[key].verbs or ()), *(r.verbs or ())]
            else:
                simple[key] = rbac.PolicyRule(
                    verbs=list(r.verbs or ()),
                    api_groups=list(groups),
                    resources=list(resources),
                    resource_names=list(names) or None,
                )
        else:
            out.append(r)
    return [*out, *simple.values()]


def _forbidden(plural: str, name: str, message: str) -> st.ApiError:
    return st.ApiError(
        403,
        "Forbidden",
        f'{plural}.{GROUP} "{name}" is forbidden: {message}',
        details={"name": name, "group": GROUP, "kind": plural},
    )


def _confirm_no_escalation(
    authz: RBACAuthorizer, user: UserInfo, namespace: str, rules: list[Rule]
) -> str | None:
    """validation.ConfirmNoEscalation: None, or why not."""
    owner = [rule for _, rule in authz.rules_for(user, namespace)]
    missing = uncovered(owner, rules)
    if not missing:
        return None
    lines = sorted({compact_string(r) for r in compact(missing)})
    return (
        f"user {_go_quote(user.name)} (groups={_go_strings(list(user.groups))}) is attempting "
        "to grant RBAC permissions not currently held:\n" + "\n".join(lines)
    )


def _allowed(
    authz: RBACAuthorizer, user: UserInfo, verb: str, plural: str, ns: str, name: str
) -> bool:
    attrs = Attributes(
        user,
        verb,
        True,
        api_group=GROUP,
        api_version="*",
        resource=plural,
        namespace=ns,
        name=name,
    )
    return authz.authorize(attrs)[0]


def _only_gc_fields(new: Any, old: Any | None) -> bool:
    """rbacregistry.IsOnlyMutatingGCFields: ownerReferences and finalizers only."""
    if old is None:
        return False
    m = msgspec.structs.replace(
        new.metadata,
        owner_references=old.metadata.owner_references,
        finalizers=old.metadata.finalizers,
        resource_version=old.metadata.resource_version,
    )
    return msgspec.structs.replace(new, metadata=m) == old


def check_write(
    authz: Any, user: UserInfo, kind: str, namespace: str, new: Any, old: Any | None
) -> None:
    """Raise the API server's refusal if writing ``new`` (over ``old``) would
    grant ``user`` more than they hold."""
    if MASTERS in user.groups or not isinstance(authz, RBACAuthorizer):
        return
    name = new.metadata.name
    if kind in ROLE_KINDS:
        plural = ROLE_KINDS[kind]
        if _allowed(authz, user, "escalate", plural, namespace, name) or _only_gc_fields(new, old):
            return
        why = _confirm_no_escalation(authz, user, namespace, list(new.rules or ()))
        if why is not None:
            raise _forbidden(plural, name, why)
        agg = getattr(new, "aggregation_rule", None)
        if (
            agg is not None
            and agg.cluster_role_selectors
            and _confirm_no_escalation(authz, user, namespace, _FULL_AUTHORITY)
        ):
            raise _forbidden(
                plural, name, "must have cluster-admin privileges to use the aggregationRule"
            )
    elif kind in BINDING_KINDS:
        plural, ref = BINDING_KINDS[kind], new.role_ref
        if _only_gc_fields(new, old):
            return
        target = ROLE_KINDS.get(ref.kind, ref.kind.lower() + "s")
        if _allowed(authz, user, "bind", target, namespace, ref.name):
            return
        rules = authz.role_ref_rules(ref, namespace)
        if rules is None:
            raise st.bad_request(f'{target}.{GROUP} "{ref.name}" not found')
        why = _confirm_no_escalation(authz, user, namespace, rules)
        if why is not None:
            raise _forbidden(plural, name, why)
