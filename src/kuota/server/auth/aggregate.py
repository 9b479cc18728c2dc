"""The clusterrole-aggregation controller (pkg/controller/clusterroleaggregation):
an aggregated ClusterRole's ``rules`` are rewritten to the union of the rules
of the ClusterRoles its selectors match, so ``kubectl get clusterrole edit``
shows what ``edit`` grants. Runs after each client write; a write that
changed no ClusterRole costs one look at the ClusterRoles' revision."""

from __future__ import annotations

from typing import Any

import msgspec

from kuota.api.k8s.rbac import GROUP
from kuota.server.auth.rbac import cluster_role_rules

_CLUSTER_ROLES = (GROUP, "v1", "clusterroles")


class Aggregator:
    def __init__(self, store: Any) -> None:
        self.store = store
        self._seen: tuple[tuple[str, str], ...] = ()
        # The ClusterRoles' revision after the last round: a write that
        # touched none (nearly every client write) costs one lookup, not a
        # listing.
        self._revision = -1
        self.rounds = 0  # listings of the ClusterRoles (a structural count)

    def __call__(self) -> int:
        """Bring every aggregated ClusterRole's rules up to date; how many changed."""
        revision_of = getattr(self.store, "revision_of", None)
        if revision_of is not None and revision_of(_CLUSTER_ROLES) == self._revision:
            return 0
        changed = self._round()
        if revision_of is not None:
            self._revision = revision_of(_CLUSTER_ROLES)
        return changed

    def _round(self) -> int:
        self.rounds += 1
        roles = list(self.store.list(_CLUSTER_ROLES).items)
        seen = tuple((r.metadata.name, r.metadata.resource_version) for r in roles)
        if seen == self._seen:
            return 0
        changed = 0
        for role in roles:
            agg = role.aggregation_rule
            if agg is None or not agg.cluster_role_selectors:
                continue
            rules = cluster_role_rules(role, roles)
            if rules != list(role.rules or ()):
                self.store.update(msgspec.structs.replace(role, rules=rules))
                changed += 1
        # Aggregated roles may select each other: a change goes round again.
        self._seen = seen if not changed else ()
        return changed + (self._round() if changed else 0)
