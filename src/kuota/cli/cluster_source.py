"""The state of a cluster, read from its API server (``--kubeconfig K``) in
the shape a kept state has, for the commands that read state (``kuota
predict``, ``kuota must-gather``): every kind kuota knows that the server
serves and the reader may list, the Kueue Configuration of the installed
manager (ConfigMap ``kueue-system/kueue-manager-config``, as ``kuota
manifests`` installs it) and the cluster's time (the wall clock, or a
``kuota serve``'s simulated one: ``--sim-clock STATE/sim-clock.json``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from kuota.cli.files import CannotRead

if TYPE_CHECKING:
    from kuota.store.kube import KubeStore

CONFIG_MAP = ("kueue-system", "kueue-manager-config", "controller_manager_config.yaml")


@dataclass
class ClusterState:
    recovered: Any  # store.journal_replay.Recovered
    now: datetime
    skipped: list[str] = field(default_factory=list)  # kinds not listed, and why
    # "namespace/pod/container" -> the last lines of the manager's logs
    logs: dict[str, str] = field(default_factory=dict)


MANAGER_SELECTOR = ("control-plane", "controller-manager")  # Kueue's (and kuota's) pods
LOG_LINES = 2000


def _manager_logs(
    store: KubeStore, pods: dict[Any, Any], namespace: str, out: ClusterState
) -> None:
    """The recent logs of every container of the manager's pods (Kueue's or
    kuota's, by their label in the Configuration's namespace), as
    must-gather collects them; what cannot be read is said in ``skipped``."""
    from kuota.store.protocol import StoreError

    key, value = MANAGER_SELECTOR
    for (ns, name), pod in sorted(pods.items()):
        if ns != namespace or (pod.metadata.labels or {}).get(key) != value:
            continue
        for c in pod.spec.containers if pod.spec is not None else []:
            try:
                out.logs[f"{ns}/{name}/{c.name}"] = store.pod_log(ns, name, c.name, LOG_LINES)
            except StoreError as err:  # (not started, forbidden: the server's answer)
                out.skipped.append(f"logs of {ns}/{name} container {c.name}: {err}")


def _now(sim_clock: str | None) -> datetime:
    if sim_clock is None:
        return datetime.now(UTC)
    from kuota.runtime.simclock import SimClockError, read_sim_clock

    try:
        return read_sim_clock(Path(sim_clock)).now()
    except SimClockError as err:
        raise CannotRead(f"--sim-clock {err}") from None


def _configuration(store: Any) -> dict[str, Any] | None:
    from kuota.store.protocol import StoreError
    from kuota.store.resources import CONFIG_MAP as CM

    ns, name, key = CONFIG_MAP
    try:
        cm = store.get(CM, ns, name)
    except StoreError:
        return None
    text = (cm.data or {}).get(key)
    try:
        raw = yaml.safe_load(text) if text else None
    except yaml.YAMLError:
        return None
    return raw if isinstance(raw, dict) else None


def read_cluster(kubeconfig: str, sim_clock: str | None = None) -> ClusterState:
    """Every object the API server at ``kubeconfig`` serves and lets us list.
    Raises CannotRead naming the kubeconfig when it cannot be reached."""
    from lightkube import ConfigError

    from kuota.embedded.state_meta import CLOCK_META, CONFIG_META
    from kuota.store.journal_replay import Recovered
    from kuota.store.kinds import kind_info, registered_kinds
    from kuota.store.kube import KubeStore, load_kubeconfig
    from kuota.store.kube.kubewire import Unavailable
    from kuota.store.protocol import NotFound, StoreError
    from kuota.store.resources import POD

    now = _now(sim_clock)
    try:
        config = load_kubeconfig(kubeconfig)
    except (ConfigError, OSError, ValueError, KeyError) as err:
        raise CannotRead(f"--kubeconfig {kubeconfig}: {err}") from None
    store = KubeStore(config, retry_for=5.0, request_timeout=15.0)
    out = ClusterState(Recovered(), now)
    try:
        for rtype in registered_kinds():
            info = kind_info(rtype)
            try:
                items = store.list(rtype).items
            except NotFound:
                continue  # not served by this cluster (a CRD not installed)
            except Unavailable as err:
                raise CannotRead(f"--kubeconfig {kubeconfig}: {err}") from None
            except StoreError as err:  # e.g. 403: RBAC does not let the reader list it
                out.skipped.append(f"{info.kind}: {err}")
                continue
            if items:
                out.recovered.objects[info.rtype] = {
                    (o.metadata.namespace or "", o.metadata.name): o for o in items
                }
        cfg = _configuration(store)
        _manager_logs(
            store,
            out.recovered.objects.get(POD, {}),
            str((cfg or {}).get("namespace") or CONFIG_MAP[0]),
            out,
        )
    finally:
        store.close()
    out.recovered.meta[CLOCK_META] = now.isoformat()
    if cfg is not None:
        out.recovered.meta[CONFIG_META] = cfg
    out.recovered.rv = sum(len(v) for v in out.recovered.objects.values())
    return out


def memory_store(state: ClusterState) -> Any:
    """A store (read like a kept state) holding what was read."""
    from kuota.runtime.clock import VirtualClock
    from kuota.store import MemoryStore

    store = MemoryStore(VirtualClock(state.now))
    store.adopt(state.recovered)
    return store
