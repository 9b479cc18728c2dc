"""One job integration, declared once: Kueue's ``IntegrationCallbacks``
(``pkg/controller/jobframework/integrationmanager.go``) for kuota.

Each package under ``kuota.controllers.jobs`` exports one ``Integration``:
its framework name (as the Configuration's ``integrations.frameworks`` spells
it), a job kind's adapter for the generic job reconciler, its own admission
hooks and controllers, the frameworks it switches on with it, and what
``kuota describe`` shows of its objects. ``kuota.controllers.jobs.integrations``
lists them; ``kuota.controllers.integrationmanager`` enables those a
Configuration names, without naming any itself."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kuota.store.protocol import ResourceType

if TYPE_CHECKING:
    from kuota.api.kueue.config import KueueConfig
    from kuota.controllers.jobframework import JobAdapter, ManagePolicy
    from kuota.controllers.jobs.pod.podwebhook import Lookup
    from kuota.controllers.multikueue_adapter import MultiKueueAdapter
    from kuota.controllers.parentpolicy import ParentPolicy
    from kuota.store.protocol import ObjectStore


@dataclass(frozen=True, slots=True)
class Wiring:
    """What an integration's factories get from the control plane."""

    config: KueueConfig
    policy: ManagePolicy
    parents: ParentPolicy  # the rules every integration's webhooks share
    lookup: Lookup  # (rtype, namespace, name) -> object or None, from the store
    enabled: frozenset[str]  # the frameworks in force (listed and implicitly enabled)


Factory = Callable[[Wiring], Sequence[Any]]


def _nothing(wiring: Wiring) -> Sequence[Any]:
    return ()


@dataclass(frozen=True, slots=True)
class SetView:
    """What ``kuota describe <noun>`` reads of a kind whose pods Kueue admits
    (a Deployment, a StatefulSet, a LeaderWorkerSet)."""

    noun: str  # the describe command's kind name
    rtype: ResourceType
    resource: str  # as the API server names it in NotFound
    replicas: Callable[[Any], str]  # the ``Replicas:`` line, as ``oc describe`` counts them
    pods: Callable[[ObjectStore, Any, list[Any]], list[Any]]  # its pods among a namespace's
    # (label, Workload name) the set is expected to have, before its pods' own
    expected: Callable[[Any], list[tuple[str, str]]]
    extra: Callable[[Any], list[str]] = lambda o: []


def controlled_by(objs: list[Any], uids: set[str]) -> list[Any]:
    """The objects whose controller is one of ``uids`` (for a ``SetView``)."""
    return [
        o
        for o in objs
        if any(r.controller and r.uid in uids for r in o.metadata.owner_references or ())
    ]


@dataclass(frozen=True, slots=True)
class Integration:
    """A job integration (Kueue's ``RegisterIntegration`` arguments).

    ``adapter``: a job kind the generic reconciler runs (jobframework's
    ``JobWebhook``, ``JobValidation`` and ``JobReconciler`` for it come
    first); ``webhooks`` and ``reconcilers``: the integration's own store
    admission hooks and manager controllers, in the order they are added.
    ``after_api_server``: its webhooks see the pod the API server's own
    admission made (priority, LimitRanger), as mutating webhooks run last.
    ``multikueue``: the kind's MultiKueue adapter (the callbacks'
    ``MultiKueueAdapter``), for the kinds a MultiKueue manager dispatches."""

    name: str
    adapter: Callable[[], JobAdapter] | None = None
    webhooks: Factory = _nothing
    reconcilers: Factory = _nothing
    implicitly_enabled: tuple[str, ...] = ()  # ImplicitlyEnabledFrameworkNames
    after_api_server: bool = False
    view: SetView | None = None
    multikueue: Callable[[], MultiKueueAdapter] | None = None
