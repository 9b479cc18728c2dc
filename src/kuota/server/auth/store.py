"""RBAC over the control plane's store: the authorizer reads the four RBAC
kinds from it, and the bootstrap roles are created at start when missing
(kube-apiserver's bootstrap-roles post-start hook: missing ones created,
ones a user changed kept)."""

from __future__ import annotations

from typing import Any

from kuota.api.k8s.rbac import GROUP
from kuota.server.auth.bootstrap import bootstrap_objects
from kuota.server.auth.rbac import RBACAuthorizer
from kuota.store.protocol import AlreadyExists

_PLURAL = {
    "Role": "roles",
    "ClusterRole": "clusterroles",
    "RoleBinding": "rolebindings",
    "ClusterRoleBinding": "clusterrolebindings",
}


def rbac_authorizer(store: Any) -> RBACAuthorizer:
    def list_kind(kind: str, namespace: str) -> list[Any]:
        rtype = (GROUP, "v1", _PLURAL[kind])
        return list(store.list(rtype, namespace or None).items)

    revision_of = getattr(store, "revision_of", None)
    if revision_of is None:  # (a store that cannot say: every decision walks the rules)
        return RBACAuthorizer(list_kind)
    rtypes = [(GROUP, "v1", p) for p in _PLURAL.values()]
    return RBACAuthorizer(list_kind, lambda: tuple(revision_of(r) for r in rtypes))


def reconcile_bootstrap(store: Any) -> int:
    """Create the bootstrap RBAC objects the store lacks; how many were made."""
    made = 0
    for obj in bootstrap_objects():
        try:
            store.create(obj)
            made += 1
        except AlreadyExists:
            pass
    return made
