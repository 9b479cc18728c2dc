"""Spark Operator's SparkApplication controller (kubeflow/spark-operator
``internal/controller/sparkapplication``, v2.4) and the spark-submit it runs,
in the embedded cluster.

New -> submitted: the driver pod made (``<app>-driver`` or
``spec.driver.podName``, owned by the application) -> ``SUBMITTED``; its
driver running -> ``RUNNING``, and the driver asks for its executors:
``spec.executor.instances`` pods ``<app>-<id>-exec-<n>``, owned by the
driver pod; the driver succeeded -> ``COMPLETED``, failed -> ``FAILED``
(``driver container failed with ExitCode: …``), gone -> ``FAILED``; then
its executors are deleted. ``executorState`` holds each executor pod's
state (PENDING, RUNNING, COMPLETED, FAILED), those still running when the
driver ends taken as ended with it. A spec spark-submit refuses (a memory
it cannot read) -> ``SUBMISSION_FAILED``.

Suspended (``spec.suspend``, as Kueue suspends it): a new application is
not submitted (``SUSPENDED``); a submitted one -> ``SUSPENDING``, its pods
deleted, then ``SUSPENDED``; resumed, it is submitted again.

The pods are what spark-submit makes and the operator's pod webhook
mutates: the application's and the role's labels (``spark-role``,
``spark-app-selector``, ``sparkoperator.k8s.io/app-name``,
``sparkoperator.k8s.io/submission-id``) and annotations, its template's
scheduling gates, the volumes, init and sidecar containers, priority class,
node selector, affinity and tolerations Kueue's podSets also read, and
Spark's resources (kuota.api.spark.spark_pods.spark_resources): the memory
with its overhead, which Kueue's quota does not count. The driver runs for
the application's ``kuota.dev/duration`` (none: until stopped; the role's
own annotations may say otherwise) and fails with ``kuota.dev/fail``.

Not modelled: restart policies (OnFailure, Always: the application ends
at its first end), ``timeToLiveSeconds``, the UI service and ingress,
``deleteOnTermination: false`` (the executors are deleted), dynamic
allocation's scaling, client mode."""

from __future__ import annotations

import contextlib
import hashlib
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

import msgspec

from kuota.api.k8s import Pod
from kuota.api.k8s.corev1 import PodSpec, PodTemplateSpec
from kuota.api.spark import spark_pods as sp
from kuota.api.spark import spark_types as s
from kuota.cluster.controllers.appsutil import pod_from_template
from kuota.cluster.controllers.controller_base import ClusterController
from kuota.cluster.controllers.run_keys import DURATION_ANNOTATION, FAIL_ANNOTATION
from kuota.cluster.podutil import POD, is_deleting, pod_phase
from kuota.runtime.informer import Informer, key_of
from kuota.store import AlreadyExists, Conflict, NotFound, clone
from kuota.store.protocol import EventType
from kuota.store.resources import SPARK_APPLICATION

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager

__all__ = ["SparkOperator"]

COMPONENT: Final = "spark-operator"
_BY_APP: Final = "spark:app"
APP_NAME_LABEL: Final = "sparkoperator.k8s.io/app-name"
SUBMISSION_LABEL: Final = "sparkoperator.k8s.io/submission-id"
LAUNCHED_LABEL: Final = "sparkoperator.k8s.io/launched-by-spark-operator"
ROLE_LABEL: Final = "spark-role"
APP_SELECTOR_LABEL: Final = "spark-app-selector"
VERSION_LABEL: Final = "spark-version"
EXEC_ID_LABEL: Final = "spark-exec-id"
_RUNS: Final = frozenset({"SUBMITTED", "RUNNING", "PENDING_RERUN", "UNKNOWN"})
_ENDED: Final = frozenset({"COMPLETED", "FAILED", "SUBMISSION_FAILED"})
_POD_STATE: Final = {
    "Pending": "PENDING",
    "Running": "RUNNING",
    "Succeeded": "COMPLETED",
    "Failed": "FAILED",
}


def _app_key(pod: Any) -> list[str]:
    name = (pod.metadata.labels or {}).get(APP_NAME_LABEL)
    return [f"{pod.metadata.namespace}/{name}"] if name else []


def _hex(*parts: str, n: int = 16) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()[:n]


def driver_pod_name(app: s.SparkApplication) -> str:
    return app.spec.driver.pod_name or f"{app.metadata.name}-driver"


def executor_count(app: s.SparkApplication) -> int:
    """spark.executor.instances: the spec's, else sparkConf's, else 1 (with
    dynamic allocation its initial executors)."""
    spec = app.spec
    if spec.executor.instances is not None:
        return spec.executor.instances
    conf = (spec.spark_conf or {}).get("spark.executor.instances")
    if conf and conf.isdigit():
        return int(conf)
    da = spec.dynamic_allocation
    if da is not None and da.enabled:
        return da.initial_executors or da.min_executors or 0
    return 1


def _exit_message(pod: Any) -> str:
    for cs in (pod.status.container_statuses if pod.status else None) or ():
        term = (cs.get("state") or {}).get("terminated") if isinstance(cs, dict) else None
        if term:
            return (
                f"driver container failed with ExitCode: {term.get('exitCode', 0)}, "
                f"Reason: {term.get('reason', 'Error')}"
            )
    reason = pod.status.reason if pod.status else None
    return f"driver pod failed{': ' + reason if reason else ''}"


class SparkOperator(ClusterController):
    """Reads SparkApplications and their pods; writes the pods and the
    applications' status."""

    name = "spark-operator"
    component = COMPONENT

    def __init__(self) -> None:
        super().__init__()
        self._apps: Informer | None = None
        self._pods: Informer | None = None

    def setup(self, mgr: Manager) -> None:
        super().setup(mgr)
        self._apps = mgr.informer(SPARK_APPLICATION)
        self._apps.on_change(self._on_app)
        self._pods = mgr.informer(POD)
        self._pods.add_index(_BY_APP, _app_key)
        self._pods.on_change(self._on_pod)

    def _on_app(self, etype: EventType, app: Any, old: Any | None) -> None:
        if etype != "DELETED":
            self.mgr.enqueue(self.name, key_of(app))

    def _on_pod(self, etype: EventType, pod: Any, old: Any | None) -> None:
        for key in _app_key(pod):
            self.mgr.enqueue(self.name, key)

    # ------------------------------------------------------------ reconcile
    def reconcile(self, key: str) -> timedelta | None:
        assert self._apps is not None and self._pods is not None
        app: s.SparkApplication | None = self._apps.get(key)
        if app is None or is_deleting(app):
            return None
        now = self.mgr.clock.now().replace(microsecond=0)  # (metav1.Time: seconds)
        st = clone(app.status) if app.status is not None else s.SparkApplicationStatus()
        state = s.state_of(app)
        pods = self._pods.by_index(_BY_APP, key)
        if state in _ENDED:
            return None
        if app.spec.suspend:
            if state in ("", "SUSPENDED"):
                self._state(st, "SUSPENDED")
            else:
                self._delete(pods)  # (gone from the store: SUSPENDED)
                self._state(st, "SUSPENDING" if pods else "SUSPENDED")
        elif state in ("", "SUSPENDED", "RESUMING", "SUSPENDING"):
            if pods:  # the last run's pods still going
                self._delete(pods)
                self._state(st, "RESUMING" if state != "" else state)
            else:
                self._submit(app, st, now)
        else:
            self._running(app, st, pods, now)
        self._write(app, st)
        return None

    @staticmethod
    def _state(st: s.SparkApplicationStatus, state: str, message: str | None = None) -> None:
        st.application_state = s.ApplicationState(state=state, error_message=message)  # type: ignore[arg-type]

    def _submit(self, app: s.SparkApplication, st: s.SparkApplicationStatus, now: datetime) -> None:
        """spark-submit: the driver pod."""
        attempts = (st.submission_attempts or 0) + 1
        submission = _hex(app.metadata.uid or app.metadata.name, str(attempts), n=32)
        st.submission_attempts = attempts
        st.last_submission_attempt_time = now
        st.termination_time = None
        st.executor_state = None
        st.spark_application_id = f"spark-{_hex(submission, n=32)}"
        st.submission_id = (
            f"{submission[:8]}-{submission[8:12]}-{submission[12:16]}-"
            f"{submission[16:20]}-{submission[20:32]}"
        )
        try:
            pod = self._pod(app, sp.DRIVER, driver_pod_name(app), st, app)
        except ValueError as err:
            st.driver_info = s.DriverInfo()
            self._state(st, "SUBMISSION_FAILED", f"failed to run spark-submit: {err}")
            st.termination_time = now
            self.event(app, "Warning", "SparkApplicationSubmissionFailed", str(err))
            return
        st.driver_info = s.DriverInfo(pod_name=pod.metadata.name)
        try:
            self.mgr.store.create(pod)
        except AlreadyExists:
            return  # (the last run's driver is going)
        except Exception as err:  # refused by an admission rule
            self._state(st, "SUBMISSION_FAILED", f"failed to run spark-submit: {err}")
            st.termination_time = now
            return
        self._state(st, "SUBMITTED")
        self.event(
            app,
            "Normal",
            "SparkApplicationSubmitted",
            f"SparkApplication {app.metadata.name} was submitted successfully",
        )

    def _running(
        self, app: s.SparkApplication, st: s.SparkApplicationStatus, pods: list[Any], now: datetime
    ) -> None:
        sub = st.submission_id or ""
        mine = [p for p in pods if (p.metadata.labels or {}).get(SUBMISSION_LABEL) == sub]
        driver = next(
            (p for p in mine if (p.metadata.labels or {}).get(ROLE_LABEL) == sp.DRIVER), None
        )
        executors = [p for p in mine if (p.metadata.labels or {}).get(ROLE_LABEL) == sp.EXECUTOR]
        states: dict[str, str] = dict(st.executor_state or {})
        for p in executors:
            if not is_deleting(p):
                states[p.metadata.name] = _POD_STATE.get(pod_phase(p), "UNKNOWN")
        phase = pod_phase(driver) if driver is not None and not is_deleting(driver) else None
        if phase is None:
            self._end(app, st, states, pods, "FAILED", "driver pod not found", now)
        elif phase == "Succeeded":
            self._end(app, st, states, pods, "COMPLETED", None, now)
        elif phase == "Failed":
            self._end(app, st, states, pods, "FAILED", _exit_message(driver), now)
        elif phase == "Running":
            if s.state_of(app) != "RUNNING":
                st.execution_attempts = (st.execution_attempts or 0) + 1
            self._state(st, "RUNNING")
            if not executors:
                self._executors(app, st, driver)
        else:
            self._state(st, "SUBMITTED")
        st.executor_state = states or None  # type: ignore[assignment]

    def _end(
        self,
        app: s.SparkApplication,
        st: s.SparkApplicationStatus,
        states: dict[str, str],
        pods: list[Any],
        state: str,
        message: str | None,
        now: datetime,
    ) -> None:
        ended = "COMPLETED" if state == "COMPLETED" else "FAILED"
        for name, x in states.items():
            if x in ("PENDING", "RUNNING", "UNKNOWN"):
                states[name] = ended  # (stopped with the driver)
        self._state(st, state, message)
        st.termination_time = now
        self._delete([p for p in pods if (p.metadata.labels or {}).get(ROLE_LABEL) == sp.EXECUTOR])
        reason = "SparkApplicationCompleted" if state == "COMPLETED" else "SparkApplicationFailed"
        self.event(
            app,
            "Normal" if state == "COMPLETED" else "Warning",
            reason,
            message or f"SparkApplication {app.metadata.name} completed",
        )

    def _executors(
        self, app: s.SparkApplication, st: s.SparkApplicationStatus, driver: Any
    ) -> None:
        """The driver's executor requests: one pod each, owned by the driver."""
        prefix = f"{app.metadata.name}-{_hex(st.submission_id or '', n=16)}"[:47]
        for i in range(1, executor_count(app) + 1):
            try:
                pod = self._pod(app, sp.EXECUTOR, f"{prefix}-exec-{i}", st, driver)
            except ValueError:
                return  # (spark-submit read the same spec)
            pod.metadata.labels = {**(pod.metadata.labels or {}), EXEC_ID_LABEL: str(i)}
            try:
                self.mgr.store.create(pod)
            except AlreadyExists:
                continue
            except Exception as err:  # refused by an admission rule
                self.event(driver, "Warning", "FailedCreate", f"executor pod: {err}")

    def _pod(
        self,
        app: s.SparkApplication,
        role: str,
        name: str,
        st: s.SparkApplicationStatus,
        owner: Any,
    ) -> Pod:
        """What spark-submit and the operator's pod webhook make of a role."""
        r = app.spec.driver if role == sp.DRIVER else app.spec.executor
        template = sp.template_for(app, role)
        spec = template.spec or PodSpec(containers=[])
        main = spec.containers[0]
        main.image = r.image or app.spec.image
        main.image_pull_policy = app.spec.image_pull_policy
        main.resources = sp.spark_resources(app, role)
        spec.restart_policy = "Never"
        spec.service_account_name = r.service_account
        if r.scheduler_name:
            spec.scheduler_name = r.scheduler_name
        if r.template is not None and r.template.spec is not None:
            spec.scheduling_gates = clone(r.template.spec.scheduling_gates)
        labels = {
            **(app.metadata.labels or {}),
            **(template.metadata.labels or {}),
            ROLE_LABEL: role,
            APP_SELECTOR_LABEL: st.spark_application_id or "",
            APP_NAME_LABEL: app.metadata.name,
            LAUNCHED_LABEL: "true",
            SUBMISSION_LABEL: st.submission_id or "",
            VERSION_LABEL: app.spec.spark_version,
        }
        annotations = dict(template.metadata.annotations or {})
        if role == sp.DRIVER:
            # the application's run (kuota's own keys), unless the driver says otherwise
            own = app.metadata.annotations or {}
            for k in (DURATION_ANNOTATION, FAIL_ANNOTATION):
                if k in own and k not in annotations:
                    annotations[k] = own[k]
        meta = clone(template.metadata)
        meta.labels = labels
        meta.annotations = annotations or None
        pod = pod_from_template(PodTemplateSpec(metadata=meta, spec=spec), owner, name=name)
        return pod

    def _delete(self, pods: list[Any]) -> None:
        for p in pods:
            if not is_deleting(p):
                with contextlib.suppress(NotFound, Conflict):
                    self.mgr.store.delete(POD, p.metadata.namespace, p.metadata.name)

    def _write(self, app: s.SparkApplication, st: s.SparkApplicationStatus) -> None:
        if st == (app.status or s.SparkApplicationStatus()):
            return
        with contextlib.suppress(NotFound, Conflict):
            self.mgr.store.update_status(msgspec.structs.replace(app, status=st))
