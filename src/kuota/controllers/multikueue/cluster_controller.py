"""Kueue's MultiKueueCluster reconciler (``multikueuecluster.go``): reads the
cluster's kubeconfig (the ``kubeconfig`` key of a Secret in Kueue's
namespace, or a file for ``locationType: Path``), connects to the worker
and keeps the ``Active`` condition: ``Active``/``Connected`` while the
worker answers, ``BadKubeConfig`` when the kubeconfig cannot be read or
parsed, ``InsecureKubeConfig`` for what Kueue refuses in one, and
``ClientConnectionFailed`` when the worker does not answer.

It also pumps the remote clusters: every half second (while any cluster
exists) the watches' news are drained and the Workloads they concern are
handed to the workload controller, as Kueue's remote watches enqueue
them."""

from __future__ import annotations

import base64
import contextlib
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from kuota.api.decode import YamlError, load_yaml_documents
from kuota.api.kueue.multikueue_types import SECRET_KEY, MultiKueueClusterStatus
from kuota.controllers.check_params import with_active
from kuota.store import Conflict, NotFound
from kuota.store.protocol import EventType
from kuota.store.resources import MULTIKUEUE_CLUSTER, SECRET

if TYPE_CHECKING:
    from kuota.controllers.multikueue.remote_cluster import RemoteCluster
    from kuota.controllers.multikueue.settings import MultiKueueSettings
    from kuota.runtime.manager import Manager

__all__ = ["ClusterController", "kubeconfig_error"]

PUMP: Final = "#pump"  # the key of the periodic drain of the remote clusters
PUMP_EVERY: Final = timedelta(milliseconds=500)
VIRTUAL_TIME: Final = "not connected in virtual time: run the manager with kuota serve"


class BadKubeConfig(Exception):
    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def kubeconfig_error(conf: Any) -> str | None:
    """``validateKubeconfig``: what Kueue refuses in a worker's kubeconfig."""
    if not isinstance(conf, dict):
        return "failed to parse kubeconfig(apiconfig): not a mapping"
    for u in conf.get("users") or ():
        if isinstance(u, dict) and (u.get("user") or {}).get("tokenFile"):
            return "tokenFile is not allowed"
    for c in conf.get("clusters") or ():
        if not isinstance(c, dict):
            continue
        name, cl = c.get("name", ""), c.get("cluster") or {}
        if cl.get("insecure-skip-tls-verify"):
            return f"insecure TLS verification is not allowed for cluster {name}"
        if cl.get("certificate-authority"):
            return (
                "certificate-authority file paths are not allowed, use "
                f"certificate-authority-data for cluster {name}"
            )
        if not cl.get("server"):
            return f"server URL is required for cluster {name}"
    return None


class ClusterController:
    name = "multikueue-cluster"

    def __init__(self, settings: MultiKueueSettings) -> None:
        self.settings = settings
        self.remotes: dict[str, RemoteCluster] = {}
        self._sources: dict[str, Any] = {}  # cluster -> the kubeconfig it connected with
        self._mgr: Manager | None = None
        self.on_news: list[Any] = []  # callbacks(keys: set[str], cluster: str | None)

    def setup(self, mgr: Manager) -> None:
        self._mgr = mgr
        self._clusters = mgr.informer(MULTIKUEUE_CLUSTER)
        # (Kueue reads Secrets in its own namespace only)
        self._secrets = mgr.scope(SECRET, self.settings.namespace)
        self._clusters.on_change(self._on_cluster)
        self._secrets.on_change(self._on_secret)

    @property
    def mgr(self) -> Manager:
        assert self._mgr is not None
        return self._mgr

    def _on_cluster(self, etype: EventType, mkc: Any, old: Any | None) -> None:
        self.mgr.enqueue(self.name, mkc.metadata.name)
        self.mgr.enqueue(self.name, PUMP)

    def _on_secret(self, etype: EventType, secret: Any, old: Any | None) -> None:
        if secret.metadata.namespace != self.settings.namespace:
            return
        for mkc in self._clusters.list():
            kc = mkc.spec.cluster_source.kube_config
            named = kc is not None and kc.location == secret.metadata.name
            if named and kc.location_type == "Secret":
                self.mgr.enqueue(self.name, mkc.metadata.name)

    # ------------------------------------------------------------ reconcile
    def reconcile(self, key: str) -> timedelta | None:
        if key == PUMP:
            return self._pump()
        mkc = self._clusters.get(key)
        if mkc is None or mkc.metadata.deletion_timestamp is not None:
            self._drop(key)
            return None
        try:
            conf = self._kubeconfig(mkc)
        except BadKubeConfig as err:
            self._drop(key)
            self._set_active(mkc, False, err.reason, f"load client config failed: {err}")
            return None
        if self.mgr.clock.virtual:
            # A simulated run's time is not the workers': kuota run and
            # simulate dispatch nowhere (a manager is served by kuota serve).
            self._set_active(mkc, False, "ClientConnectionFailed", VIRTUAL_TIME)
            return None
        if self._sources.get(key) != conf:
            # (imported here: lightkube is loaded only where MultiKueue is used)
            from kuota.controllers.multikueue.remote_cluster import RemoteCluster

            self._drop(key)
            kinds = {a.rtype: a.workload_keys for a in self.settings.adapters.values()}
            self.remotes[key] = RemoteCluster(key, conf, self.settings.origin, kinds)
            self._sources[key] = conf
        self.mgr.enqueue(self.name, PUMP)
        return None

    def _kubeconfig(self, mkc: Any) -> dict[str, Any]:
        src = mkc.spec.cluster_source
        kc = src.kube_config
        if kc is None:
            raise BadKubeConfig(
                "MultiKueueClusterProfileFeatureDisabled",
                "MultiKueueClusterProfile feature gate is disabled",
            )
        if kc.location_type == "Path":
            try:
                text = Path(kc.location).read_text()
            except OSError as err:
                raise BadKubeConfig(
                    "BadKubeConfig", f"open {kc.location}: {err.strerror}"
                ) from None
        else:
            secret = self._secrets.get(f"{self.settings.namespace}/{kc.location}")
            if secret is None:
                raise BadKubeConfig("BadKubeConfig", f'secrets "{kc.location}" not found') from None
            data = (secret.data or {}).get(SECRET_KEY)
            if data is None and (secret.string_data or {}).get(SECRET_KEY) is not None:
                data = base64.b64encode(secret.string_data[SECRET_KEY].encode()).decode()
            if data is None:
                raise BadKubeConfig(
                    "BadKubeConfig", f'key "{SECRET_KEY}" not found in secret "{kc.location}"'
                )
            text = _secret_text(data)
        try:
            docs = load_yaml_documents(text)
        except YamlError as err:
            raise BadKubeConfig("BadKubeConfig", f"failed to parse kubeconfig: {err}") from None
        conf = docs[0] if len(docs) == 1 else None
        bad = kubeconfig_error(conf)
        if bad is not None:
            raise BadKubeConfig("InsecureKubeConfig", bad)
        assert isinstance(conf, dict)
        return conf

    def _drop(self, name: str) -> None:
        rc = self.remotes.pop(name, None)
        self._sources.pop(name, None)
        if rc is not None:
            rc.close()
            for cb in self.on_news:
                cb(set(), name)

    def _pump(self) -> timedelta | None:
        now = self.mgr.clock.now()
        for name, rc in list(self.remotes.items()):
            flipped, keys = rc.sync(now)
            mkc = self._clusters.get(name)
            if mkc is not None and rc.probed:
                if rc.connected:
                    self._set_active(mkc, True, "Active", "Connected")
                else:
                    self._set_active(mkc, False, "ClientConnectionFailed", rc.error)
            if keys or flipped:
                for cb in self.on_news:
                    cb(keys, name if flipped else None)
        return PUMP_EVERY if self.remotes else None

    def _set_active(self, mkc: Any, active: bool, reason: str, message: str) -> None:
        status = "True" if active else "False"
        new = with_active(
            mkc,
            MultiKueueClusterStatus,
            status,
            reason,
            message,
            self.mgr.clock.now(),
            status_only=False,
        )
        if new is None:
            return
        with contextlib.suppress(Conflict, NotFound):
            self.mgr.store.update_status(new)

    def stop(self) -> None:
        for name in list(self.remotes):
            self._drop(name)


def _secret_text(data: Any) -> str:
    if isinstance(data, bytes | bytearray):
        return bytes(data).decode()
    try:
        return base64.b64decode(data, validate=True).decode()
    except ValueError:
        return str(data)
