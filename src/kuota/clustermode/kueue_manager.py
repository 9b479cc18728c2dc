"""Kueue's side of a control plane over any store: the Kueue controller
around the admission core, the workload retention policies and the job
integrations the Configuration enables (the same objects the embedded
control plane adds; the simulated cluster is not here: a real cluster
runs its own)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kuota.api.kueue.config import KueueConfig, ObjectRetention
from kuota.controllers.integrationmanager import IntegrationManager
from kuota.controllers.jobframework import ManagePolicy
from kuota.controllers.jobs.integrations import INTEGRATIONS
from kuota.controllers.kueue import KueueController
from kuota.controllers.kueue_webhooks import KueueUpdateValidation
from kuota.controllers.kuotadev import KUOTA_CONTROLLERS
from kuota.controllers.workload_retention import WorkloadRetention
from kuota.runtime.clock import Clock
from kuota.runtime.manager import Manager
from kuota.store.protocol import NotFound, ObjectStore, ResourceType


@dataclass
class KueueManager:
    mgr: Manager
    kueue: KueueController
    integrations: IntegrationManager

    def admission_hooks(self) -> list[Any]:
        """What Kueue's webhook server serves: its update validation and the
        enabled integrations' defaulting and validating webhooks, the
        functions the embedded store calls as admission hooks."""
        hooks: list[Any] = [KueueUpdateValidation(self.kueue.config.feature_gates)]
        hooks += self.integrations.webhooks()
        hooks += self.integrations.webhooks(after_api_server=True)
        return hooks


def build(
    config: KueueConfig, store: ObjectStore, clock: Clock, *, openshift: bool = False
) -> KueueManager:
    def lookup(rtype: ResourceType, namespace: str, name: str) -> Any | None:
        try:
            return store.get(rtype, namespace, name)
        except NotFound:
            return None

    policy = ManagePolicy.from_config(config, openshift=openshift)
    integrations = IntegrationManager(
        INTEGRATIONS, config, policy, lookup, always_on=KUOTA_CONTROLLERS
    )
    mgr = Manager(store, clock)
    # TAS reads every node and pod: not yet over a real API server.
    kueue = KueueController(config, tas_cluster=False)
    mgr.add(kueue)
    if config.object_retention != ObjectRetention():
        mgr.add(WorkloadRetention(config.object_retention))
    for r in integrations.reconcilers():
        mgr.add(r)
    return KueueManager(mgr, kueue, integrations)
