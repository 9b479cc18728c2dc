"""kuota's default mode: everything a cluster with Kueue would run, in-process.

``ControlPlane`` wires the store (in memory, journaled with ``state_dir``),
the manager and its clock, Kueue's controllers (``KueueController`` around the
admission core), the job integrations with their defaulting webhooks, and
the embedded cluster (placement, kubelet, Job controller). ``kuota run``
drives it in virtual or real time; ``kuota check`` drives it step by step
through the same controllers (the ``Core`` protocol of ``kuota.sim.scenario``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import msgspec

from kuota.api import k8s as kc
from kuota.api.base import enc_hook
from kuota.api.conditions import with_condition
from kuota.api.kueue.config import KueueConfig, ObjectRetention
from kuota.api.meta import ObjectMeta
from kuota.api.openshift.scheduler_config import Scheduler, parse_node_selector, profile_of
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
from kuota.embedded.creation_order import NAME_LABEL, creation_rank
from kuota.embedded.repetition import RepetitionDetector, horizon_of
from kuota.embedded.state_meta import CLOCK_META, CONFIG_META
from kuota.runtime.clock import Clock, RealClock, VirtualClock
from kuota.runtime.manager import Manager, StopReason
from kuota.runtime.pacing import PacedClock
from kuota.scheduler.views import (
    ClusterQueueView,
    CycleResult,
    LocalQueueView,
    Preemption,
    WorkloadView,
)
from kuota.store import AlreadyExists, NotFound, StoreError, clone, open_store
from kuota.store.kinds import resource_named as _rtype_named
from kuota.store.kinds import rtype_of
from kuota.store.protocol import ResourceType
from kuota.store.resources import NAMESPACE, WORKLOAD
from kuota.webhooks import admission_notes

BUILTIN_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
_CONFIG_V1BETA2 = "config.kueue.x-k8s.io/v1beta2"


# Kueue's framework names of the job integrations the embedded control plane
# simulates (kuota.controllers.jobs.integrations).
JOB_INTEGRATIONS: tuple[str, ...] = tuple(i.name for i in INTEGRATIONS)


@dataclass(frozen=True)
class Refusal:
    """A world's object the API server refused to create (a webhook or an
    admission plugin said no): kept, so it is reported rather than lost."""

    obj: Any
    error: StoreError
    at: datetime


class ControlPlane:
    def __init__(
        self,
        config: KueueConfig,
        start: datetime,
        *,
        clock: Clock | None = None,
        state_dir: str | Path | None = None,
        openshift: bool = False,
        cluster: bool = True,
        raise_errors: bool = False,
        auto_schedule: bool = True,
        scheduler: Scheduler | None = None,
        kueue: bool = True,
    ) -> None:
        """``scheduler``: OpenShift's cluster scheduler config (the scoring
        profile pods are placed with, the default node selector); None runs
        kube-scheduler's default, LowNodeUtilization. ``kueue=False``: only
        what a cluster provides (``kuota serve --without-kueue``): no Kueue
        controller, job integration or webhook (nor kuota's own), so a
        Kueue in another process is the only one."""
        self.config = config
        self.clock: Clock = clock if clock is not None else VirtualClock(start)
        self.policy = ManagePolicy.from_config(config, openshift=openshift)
        # The job integrations the Configuration enables (integrations.frameworks)
        # and kuota simulates; any other enabled framework is left unmanaged.
        self.integrations = IntegrationManager(
            INTEGRATIONS if kueue else (),
            config,
            self.policy,
            self._lookup,
            always_on=KUOTA_CONTROLLERS if kueue else (),
        )
        self.unsimulated_frameworks = self.integrations.unsimulated
        self.adapters = list(self.integrations.adapters.values())  # the enabled job kinds
        hooks: list[Any] = [_namespace_name_label]
        if kueue:
            hooks.append(KueueUpdateValidation(config.feature_gates))
        hooks += self.integrations.webhooks()
        # Kueue's own webhooks (the others are the API server's admission):
        # what kuota.webhooks serves over HTTPS in cluster mode.
        self.kueue_webhooks: list[Any] = hooks[1:]
        if cluster:  # node registration, pod defaults, LimitRanger, QoS
            from kuota.cluster import api_server_hooks

            selector = (
                parse_node_selector(scheduler.spec.default_node_selector) if scheduler else None
            )
            hooks += api_server_hooks(
                lambda: self.store,
                openshift=openshift,
                default_node_selector=selector,
                now=self.clock.now,
            )
        # After the API server's own admission (priority, LimitRanger), as
        # webhooks run: the pod webhook's role hash covers what they set.
        late = self.integrations.webhooks(after_api_server=True)
        hooks += late
        self.kueue_webhooks += late
        if cluster:  # the pod registry's PrepareForCreate: after every webhook's gates
            from kuota.cluster import pod_strategy_hooks

            hooks += pod_strategy_hooks(self.clock.now)
        self.store = open_store(state_dir, self.clock.now, admission=hooks)
        saved = self.store.get_meta(CLOCK_META)
        if saved and isinstance(self.clock, VirtualClock):
            self.clock.wait_until(datetime.fromisoformat(saved))
        elif saved and isinstance(self.clock, RealClock | PacedClock):
            at = datetime.fromisoformat(saved)
            if at > self.clock.now():
                self.clock.resume_at(at)
        if state_dir is not None:
            wire = msgspec.to_builtins(config.source, enc_hook=enc_hook)
            self.store.set_meta(
                CONFIG_META, {**wire, "apiVersion": _CONFIG_V1BETA2, "kind": "Configuration"}
            )
        self.mgr = Manager(self.store, self.clock, raise_errors=raise_errors)
        self.kueue = KueueController(config)
        self.kueue.auto_schedule = auto_schedule
        if kueue:
            self.mgr.add(self.kueue)
            if config.gate("TopologyAwareScheduling"):
                self.mgr.add(TopologyUngater())
            if config.gate("ElasticJobsViaWorkloadSlices"):
                self.mgr.add(ElasticJobUngater())
            if config.gate("TASFailedNodeReplacement"):
                self.mgr.add(NodeFailureController(config))
        if kueue and config.object_retention != ObjectRetention():
            self.mgr.add(WorkloadRetention(config.object_retention))
        if kueue and cluster:
            # Kueue's ProvisioningRequest admission check: Kueue sets it up
            # only when the API server serves ProvisioningRequests
            # (ServerSupportsProvisioningRequest), which the embedded cluster's
            # autoscaler brings; scenarios without a cluster have neither.
            for c in provisioning_controllers():
                self.mgr.add(c)  # type: ignore[arg-type]
        if kueue and cluster:
            # MultiKueue's controllers, as the provisioning check's: with a
            # cluster (kuota run, serve); a scenario of the core alone runs
            # Kueue's cache as its unit tests do, without them.
            for c in multikueue_controllers(config):
                self.mgr.add(c)  # type: ignore[arg-type]
        for r in self.integrations.reconcilers():
            self.mgr.add(r)
        self.refused: list[Refusal] = []
        # The world's objects whose creation had admission warnings or audit
        # annotations (ValidatingAdmissionPolicies' Warn and Audit actions).
        self.noted: list[tuple[Any, admission_notes.AdmissionNotes]] = []
        self.repetition: RepetitionDetector | None = None
        self.arrivals = Arrivals(self)
        self.mgr.add(self.arrivals)
        if cluster:
            from kuota.cluster import install as install_cluster
            from kuota.cluster.kubescheduler import KubeScheduler

            install_cluster(self.mgr, KubeScheduler(profile_of(scheduler)))
            self.repetition = RepetitionDetector(
                self.mgr, horizon_of(config), lambda: bool(self.arrivals.waiting), self._pod_end
            )
        self.repeating: list[str] = []  # why the run stopped repeating itself (run())

    def _lookup(self, rtype: ResourceType, namespace: str, name: str) -> Any | None:
        try:
            return self.store.get(rtype, namespace, name)
        except NotFound:
            return None

    # ------------------------------------------------------------ objects
    def create(self, objs: Iterable[Any]) -> list[Any]:
        """Create objects (an existing one is updated, as ``kubectl apply``)."""
        out = []
        with self.store.batch():
            for obj in objs:
                out.append(self._put(obj))
        return out

    def submit(self, objs: Iterable[Any]) -> None:
        """Create objects when the clock reaches their creationTimestamp: a
        world's stream of Jobs arrives over (virtual) time. Objects stamped in
        the past or not at all are created at once. The manager watches
        before the first is created, so its controllers see the objects in
        the order they were created (kube-scheduler queues pods in the order
        they arrive), not in a listing's name order."""
        self.mgr.start()
        now = self.clock.now()
        objs = list(objs)
        due: list[Any] = self._implied_namespaces(objs)
        later: dict[str, tuple[datetime, list[Any]]] = {}
        for obj in sorted(objs, key=creation_rank):
            at = obj.metadata.creation_timestamp
            if at is not None and at > now:
                key = at.isoformat()
                group = later.get(key)
                if group is None:
                    later[key] = (at, [obj])
                else:
                    group[1].append(obj)
            else:
                due.append(obj)
        # One timer per instant, not per object (a world's arrivals come in
        # batches: Kueue's generator makes each batch at one instant).
        for key, (at, group) in later.items():
            self.arrivals.add_all(key, group, at)
        with self.store.batch():
            for obj in due:
                self._create_missing(obj)

    def _create_missing(self, obj: Any) -> None:
        """A world's object: created unless it exists (a resumed run keeps
        what the controllers made of it). One the API server refuses is
        recorded in ``refused``; the objects created with it still are."""
        with admission_notes.collect() as notes:
            try:
                # Through the manager's store: serve sends the arrivals of a world
                # through its admission webhooks as it does controllers' writes.
                self.mgr.store.create(obj)
            except AlreadyExists:
                pass
            except StoreError as err:
                if err.code >= 500:  # the store itself failed (a journal write): not a refusal
                    raise
                self.refused.append(Refusal(obj, err, self.clock.now()))
        if notes.warnings or notes.annotations:
            # (what kubectl would print, and what the audit log would keep)
            self.noted.append((obj, notes))

    def _implied_namespaces(self, objs: list[Any]) -> list[Any]:
        """A cluster's own namespaces, and those the world's objects live in
        but does not declare: an admin would have created them."""
        declared = {o.metadata.name for o in objs if o.kind == "Namespace"}
        wanted = set(BUILTIN_NAMESPACES)
        wanted.update(o.metadata.namespace for o in objs if o.metadata.namespace)
        out = []
        for name in sorted(wanted - declared):
            if self._lookup(NAMESPACE, "", name) is None:
                out.append(
                    kc.Namespace(api_version="v1", kind="Namespace", metadata=ObjectMeta(name=name))
                )
        return out

    def _put(self, obj: Any) -> Any:
        try:
            return self.store.create(obj)
        except AlreadyExists:
            m = obj.metadata
            cur = self.store.get(rtype_of(obj), m.namespace, m.name)
            new = clone(obj)
            new.metadata.resource_version = cur.metadata.resource_version
            new.metadata.uid = cur.metadata.uid
            new.metadata.creation_timestamp = cur.metadata.creation_timestamp
            return self.store.update(new)

    def run(
        self,
        until: datetime | None = None,
        *,
        on_round: Callable[[], None] | None = None,
        max_steps: int = 10_000_000,
        stop_repeating: bool = True,
    ) -> StopReason:
        """``stop_repeating``: stop a run that only repeats itself (else, as
        with an explicit ``--until``, it runs on; ``repeating`` then still
        says, at the end, which workloads cycle)."""
        # A journaled run keeps its virtual time before anything is written at
        # a new instant, so a restart after a crash resumes at the instant the
        # last acknowledged write was made.
        detector = self.repetition
        stopped = [False]

        def round_done() -> None:
            if on_round is not None:
                on_round()
            if stop_repeating and detector is not None and detector.repeating():
                # Nothing new for a long horizon but the same evictions: stop.
                self.repeating = detector.explain()
                stopped[0] = True
                self.mgr.stop()

        reason: StopReason = self.mgr.run(
            until, on_round=round_done, on_tick=self.save_clock, max_steps=max_steps
        )
        if stopped[0]:
            reason = "repeating"
        elif detector is not None and detector.repeating():
            self.repeating = detector.explain()  # ran on as asked, but it cycles
        self.save_clock()
        return reason

    def _pod_end(self, pod: Any) -> datetime | None:
        """When a running pod's run ends, as the kubelet runs it (None: never)."""
        kubelet = self.mgr.controllers.get("kubelet")
        started = pod.status.start_time if pod.status is not None else None
        if kubelet is None or started is None:
            return None
        try:
            duration = kubelet.runs(pod).duration  # type: ignore[attr-defined]
        except ValueError:
            return None
        return started + duration if duration is not None else None

    def save_clock(self) -> None:
        """Keep the time of the run (virtual or real) with its state: a
        restart resumes at it, not at the world's start."""
        now = self.clock.now().isoformat()
        if self.store.get_meta(CLOCK_META) != now:
            self.store.set_meta(CLOCK_META, now)

    def close(self) -> None:
        try:
            self.save_clock()
        finally:  # (a store stopped by a failed write still releases its state)
            self.store.close()

    # ------------------------------------------------------------ the scenario runner's Core
    @property
    def now(self) -> datetime:
        return self.clock.now()

    @property
    def preemptions(self) -> list[Preemption]:
        return self._core().preemptions

    def add(self, obj: Any) -> None:
        self._put(obj)
        self.mgr.run_until_idle()

    def apply(self, obj: Any) -> None:
        self._put(obj)
        self.mgr.run_until_idle()

    def delete(self, kind: str, namespace: str, name: str) -> bool:
        rtype = _rtype_named(kind)
        try:
            self.store.delete(rtype, namespace, name)
        except NotFound:
            return False
        self.mgr.run_until_idle()
        return True

    def finish(self, key: str) -> None:
        """The workload's job finished, as the job integration reports it."""
        ns, _, name = key.partition("/")
        now = self.clock.now()
        msg = "Job finished successfully"
        wl = with_condition(
            self.store.get(WORKLOAD, ns, name), "Finished", "True", "Succeeded", msg, now
        )
        if wl is not None:
            self.store.update_status(wl)
        self.mgr.run_until_idle()

    def advance(self, to: datetime) -> None:
        self.mgr.run(until=to)

    def complete_evictions(self) -> None:
        self.mgr.run_until_idle()
        self._core().complete_evictions()
        self.kueue.flush()
        self.mgr.run_until_idle()

    def cycle(self) -> CycleResult:
        self.mgr.run_until_idle()
        result = self.kueue.run_cycle()
        self.mgr.run_until_idle()
        return result

    def settle(self, max_cycles: int = 1000) -> list[CycleResult]:
        self.kueue.auto_schedule = True
        before = len(self.kueue.cycles)
        self.kueue.record_cycles = True
        try:
            self.kueue.wake()
            self.mgr.run_until_idle()
        finally:
            self.kueue.auto_schedule = False
            self.kueue.record_cycles = False
        return self.kueue.cycles[before:]

    def sync_status(self) -> None:
        """Queue statuses are written once an instant settles; scenario steps
        settle explicitly."""
        self.kueue.flush_queues()
        self.mgr.run_until_idle()

    def workload(self, key: str) -> WorkloadView | None:
        return self._core().workload(key)

    def cluster_queue(self, name: str) -> ClusterQueueView | None:
        return self._core().cluster_queue(name)

    def local_queue(self, key: str) -> LocalQueueView | None:
        return self._core().local_queue(key)

    def _core(self) -> Any:
        assert self.kueue.core is not None
        return self.kueue.core


class _NamespaceNameLabel:
    """The API server labels every Namespace with its own name."""

    kinds = frozenset({NAMESPACE})

    def __call__(self, op: str, new: Any, old: Any | None) -> Any:
        if (
            new.kind != "Namespace"
            or (new.metadata.labels or {}).get(NAME_LABEL) == new.metadata.name
        ):
            return new
        new = clone(new)
        new.metadata.labels = {**(new.metadata.labels or {}), NAME_LABEL: new.metadata.name}
        return new


_namespace_name_label = _NamespaceNameLabel()


class Arrivals:
    """Objects waiting for their creationTimestamp, created when it comes."""

    name = "arrivals"

    def __init__(self, cp: ControlPlane) -> None:
        self.cp = cp
        self.waiting: dict[str, list[Any]] = {}
        self._stream: Iterator[tuple[datetime, list[Any]]] | None = None
        self._streamed: dict[str, list[Any]] = {}

    def setup(self, mgr: Manager) -> None:
        self.mgr = mgr

    def add_all(self, key: str, objs: list[Any], at: datetime) -> None:
        """Objects to create at ``at`` (``key``: its isoformat), in this order."""
        self.waiting.setdefault(key, []).extend(objs)
        self.mgr.enqueue_at(self.name, key, at)

    def add_stream(self, groups: Iterator[tuple[datetime, list[Any]]]) -> None:
        """Objects made only one instant ahead of their creation (a long
        trace's Jobs are never all in memory): ``groups`` yields (instant,
        objects) in increasing time, after now."""
        self._stream = groups
        self._arm_next()

    def _arm_next(self) -> None:
        if self._stream is None:
            return
        for at, objs in self._stream:
            key = at.isoformat()
            self._streamed[key] = objs
            self.mgr.enqueue_at(self.name, key, at)
            return
        self._stream = None

    def reconcile(self, key: str) -> None:
        streamed = self._streamed.pop(key, None)
        objs = self.waiting.pop(key, [])
        if streamed:
            objs += streamed
        with self.cp.store.batch():
            for i, obj in enumerate(objs):
                try:
                    self.cp._create_missing(obj)
                except Exception:
                    # Not created (the store failed, or serve's admission
                    # webhooks are still deciding): it and the rest wait for
                    # the manager's retry of this instant.
                    self.waiting[key] = objs[i:]
                    if streamed is not None:
                        self._arm_next()
                    raise
        if streamed is not None:
            self._arm_next()
        return None


def scenario_control_plane(config: KueueConfig, start: datetime) -> ControlPlane:
    """The factory ``kuota check`` uses: scheduling only when a step says so,
    no simulated pods (scenarios say when workloads finish)."""
    return ControlPlane(config, start, cluster=False, auto_schedule=False, raise_errors=True)
