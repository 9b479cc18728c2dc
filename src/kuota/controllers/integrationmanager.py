"""The job integrations a Configuration enables (Kueue's
``IntegrationManager``): those its ``integrations.frameworks`` list, with the
frameworks they switch on implicitly (deployment, statefulset and
LeaderWorkerSet switch on ``pod``), in the registry's order; their webhooks
and controllers, built once for the control plane; then those of the
controllers of kuota's own kinds, which are always on."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kuota.api.kueue.config import KueueConfig
from kuota.controllers.integration import Integration, Wiring
from kuota.controllers.jobframework import (
    JobAdapter,
    JobReconciler,
    JobValidation,
    JobWebhook,
    ManagePolicy,
)
from kuota.controllers.jobs.pod.podwebhook import Lookup
from kuota.controllers.parentpolicy import parent_policy


def enabled_frameworks(registry: Sequence[Integration], listed: Sequence[str]) -> frozenset[str]:
    """The frameworks in force: those listed, and those a listed one
    implicitly enables (ImplicitlyEnabledFrameworkNames)."""
    implied = {i.name: i.implicitly_enabled for i in registry}
    out = set(listed)
    for name in listed:
        out.update(implied.get(name, ()))
    return frozenset(out)


class IntegrationManager:
    """The enabled integrations of one control plane, and what they add to it."""

    def __init__(
        self,
        registry: Sequence[Integration],
        config: KueueConfig,
        policy: ManagePolicy,
        lookup: Lookup,
        *,
        always_on: Sequence[Integration] = (),
    ) -> None:
        enabled = enabled_frameworks(registry, config.integrations.frameworks)
        self.enabled = enabled
        # Frameworks Kueue knows that kuota does not simulate: left unmanaged.
        self.unsimulated = sorted(enabled - {i.name for i in registry})
        # The enabled job integrations, then the controllers of kuota's own
        # kinds (always on; kuota.controllers.kuotadev).
        self.integrations = [i for i in registry if i.name in enabled] + list(always_on)
        # One adapter per job kind, shared by its webhooks and its reconciler.
        self.adapters: dict[str, JobAdapter] = {
            i.name: i.adapter() for i in self.integrations if i.adapter is not None
        }
        parents = parent_policy(config, policy, lookup, enabled)
        self.wiring = Wiring(config, policy, parents, lookup, enabled)

    def webhooks(self, *, after_api_server: bool = False) -> list[Any]:
        """The store admission hooks of the enabled integrations, those that
        run before the API server's own admission or (``after_api_server``)
        after it."""
        w = self.wiring
        hooks: list[Any] = []
        for i in self.integrations:
            if i.after_api_server != after_api_server:
                continue
            adapter = self.adapters.get(i.name)
            if adapter is not None:
                hooks += [JobWebhook(adapter, w.parents), JobValidation(adapter, w.parents)]
            hooks += i.webhooks(w)
        return hooks

    def reconcilers(self) -> list[Any]:
        """The manager controllers of the enabled integrations."""
        w = self.wiring
        out: list[Any] = []
        for i in self.integrations:
            adapter = self.adapters.get(i.name)
            if adapter is not None:
                out.append(JobReconciler(adapter, w.config, w.policy, w.parents))
            out += i.reconcilers(w)
        return out
