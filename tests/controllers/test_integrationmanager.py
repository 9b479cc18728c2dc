"""The job integrations' registry and manager: the frameworks in force are
those the Configuration enables (an integration built on pods switches on
``pod``), those kuota does not simulate are reported, and the integrations'
webhooks and controllers come in the registry's wiring order."""

from __future__ import annotations

import pytest

from embedded.world import config
from kuota.api.kueue.config import BUILTIN_FRAMEWORKS, KueueConfig
from kuota.controllers.integration import Integration
from kuota.controllers.integrationmanager import IntegrationManager
from kuota.controllers.jobframework import ManagePolicy
from kuota.controllers.jobs.integrations import INTEGRATIONS

LWS = "leaderworkerset.x-k8s.io/leaderworkerset"


def _manager(frameworks: list[str]) -> tuple[KueueConfig, IntegrationManager]:
    cfg = config(integrations={"frameworks": frameworks})
    policy = ManagePolicy.from_config(cfg)
    return cfg, IntegrationManager(INTEGRATIONS, cfg, policy, lambda rt, ns, name: None)


@pytest.mark.parametrize(
    "frameworks",
    [
        ["batch/job"],
        ["pod"],
        ["deployment"],
        ["statefulset", "batch/job"],
        [LWS],
        ["jobset.x-k8s.io/jobset", "deployment"],
    ],
)
def test_enabled_frameworks_are_the_configurations(frameworks: list[str]) -> None:
    cfg, m = _manager(frameworks)
    assert m.enabled == cfg.integrations.enabled_frameworks
    assert m.unsimulated == sorted(m.enabled - {i.name for i in INTEGRATIONS})
    assert [i.name for i in m.integrations] == [i.name for i in INTEGRATIONS if i.name in m.enabled]


def test_every_integration_is_one_kueue_framework() -> None:
    names = [i.name for i in INTEGRATIONS]
    assert len(set(names)) == len(names)
    assert set(names) <= BUILTIN_FRAMEWORKS.keys()
    for i in INTEGRATIONS:
        assert set(i.implicitly_enabled) <= set(names)


def test_webhooks_and_controllers_come_in_wiring_order() -> None:
    _, m = _manager(["batch/job", "deployment", "statefulset", LWS])
    assert [type(r).__name__ for r in m.reconcilers()] == [
        "JobReconciler",
        "PodReconciler",
        "StatefulSetReconciler",
        "StatefulSetPodReconciler",
        "LeaderWorkerSetReconciler",
    ]
    assert [type(h).__name__ for h in m.webhooks()] == [
        "JobWebhook",
        "JobValidation",
        "DeploymentWebhook",
        "DeploymentValidation",
        "StatefulSetWebhook",
        "StatefulSetValidation",
        "LeaderWorkerSetWebhook",
        "LeaderWorkerSetValidation",
    ]
    assert [type(h).__name__ for h in m.webhooks(after_api_server=True)] == [
        "PodWebhook",
        "PodValidation",
    ]


def test_controllers_of_kuotas_own_kinds_are_always_on() -> None:
    """A kuota.dev kind's controller joins whatever the Configuration enables,
    after the job integrations, with its webhooks and reconcilers."""

    class OwnHook:
        pass

    class OwnReconciler:
        pass

    own = Integration(
        "kuota.dev/example",
        webhooks=lambda w: [OwnHook()],
        reconcilers=lambda w: [OwnReconciler()],
    )
    cfg = config(integrations={"frameworks": ["batch/job"]})
    m = IntegrationManager(
        INTEGRATIONS, cfg, ManagePolicy.from_config(cfg), lambda rt, ns, name: None, always_on=[own]
    )
    assert [i.name for i in m.integrations] == ["batch/job", "kuota.dev/example"]
    assert m.unsimulated == []
    assert type(m.reconcilers()[-1]).__name__ == "OwnReconciler"
    assert type(m.webhooks()[-1]).__name__ == "OwnHook"
