"""Kueue's side of a control plane over any store: the Kueue controller
around the admission core, the workload retention policies and the job
integrations the Configuration enables (the same objects the embedded
control plane adds; the simulated cluster is not here: a real cluster
runs its own): topology-aware scheduling over the cluster's nodes and
pods, MultiKueue (its kubeconfig Secrets read in Kueue's namespace only)
and the ProvisioningRequest admission check where the API server serves
ProvisioningRequests, as Kueue sets them up."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kuota.api.kueue.config import KueueConfig, ObjectRetention
from kuota.api.kueue.config.defaults import DEFAULT_NAMESPACE
from kuota.controllers.integrationmanager import IntegrationManager
from kuota.controllers.jobframework import ManagePolicy
from kuota.controllers.jobs.integrations import INTEGRATIONS
from kuota.controllers.kueue import KueueController
from kuota.controllers.kueue_webhooks import KueueUpdateValidation
from kuota.controllers.kuotadev import KUOTA_CONTROLLERS
from kuota.controllers.multikueue import multikueue_controllers
from kuota.controllers.provisioning import provisioning_controllers
from kuota.controllers.tas.node_failure import NodeFailureController
from kuota.controllers.tas.ungater import TopologyUngater
from kuota.controllers.workload_retention import WorkloadRetention
from kuota.controllers.workloadslicing_ungater import ElasticJobUngater
from kuota.runtime.clock import Clock
from kuota.runtime.manager import Manager
from kuota.store.protocol import NotFound, ObjectStore, ResourceType
from kuota.store.resources import PROVISIONING_REQUEST


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
    tas = config.gate("TopologyAwareScheduling")
    # With TAS, the cluster's nodes and pods are read (the free capacity per
    # topology domain), as Kueue's TAS cache watches them.
    kueue = KueueController(config, tas_cluster=tas)
    mgr.add(kueue)
    if config.gate("ElasticJobsViaWorkloadSlices"):
        mgr.add(ElasticJobUngater())
    if tas:
        mgr.add(TopologyUngater())
        if config.gate("TASFailedNodeReplacement"):
            mgr.add(NodeFailureController(config))
    for c in multikueue_controllers(config):
        mgr.add(c)  # type: ignore[arg-type]
    if _served(store, PROVISIONING_REQUEST, config.namespace or DEFAULT_NAMESPACE):
        # Kueue sets the check up only when the API server serves
        # ProvisioningRequests (ServerSupportsProvisioningRequest).
        for c in provisioning_controllers():
            mgr.add(c)  # type: ignore[arg-type]
    if config.object_retention != ObjectRetention():
        mgr.add(WorkloadRetention(config.object_retention))
    for r in integrations.reconcilers():
        mgr.add(r)
    return KueueManager(mgr, kueue, integrations)


def _served(store: ObjectStore, rtype: ResourceType, namespace: str) -> bool:
    """The API server serves the kind (a cluster without the autoscaler's
    CRD answers 404 to its list; one namespace's is the cheapest to ask)."""
    try:
        store.list(rtype, namespace)
    except NotFound:
        return False
    return True
