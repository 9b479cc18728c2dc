"""A SparkApplication as Kueue's jobframework sees it (``pkg/controller/jobs/
sparkapplication/sparkapplication_controller.go``): two podSets, ``driver``
(1) and ``executor`` (``spec.executor.instances``), built from the spec as
``sparkapplication_podset.go`` does (kuota.api.spark.spark_pods); started by
merging the admission into the driver's and the executors' labels,
annotations, node selector, tolerations and their template's scheduling
gates (a global ``spec.nodeSelector`` moved into both) and unsuspending;
stopped by suspending; restored from the Workload's podSets (the executors'
``instances`` too); active while ``RUNNING``; finished ``COMPLETED``
(succeeded), ``FAILED`` or ``SUBMISSION_FAILED``; its pods ready once it
runs and every requested executor reports RUNNING or COMPLETED."""

from __future__ import annotations

from typing import Final

from kuota.api import errors as e
from kuota.api.k8s.corev1 import Container, PodSchedulingGate, PodSpec, PodTemplateSpec, Toleration
from kuota.api.kueue import types as kt
from kuota.api.spark import spark_pods as sp
from kuota.api.spark import spark_types as s
from kuota.controllers.jobframework import Finished, PodSetInfo, suspended_copy
from kuota.controllers.tas_requests import validate_pod_sets
from kuota.store import clone
from kuota.store.protocol import ResourceType
from kuota.store.resources import SPARK_APPLICATION

__all__ = ["SparkApplicationAdapter"]

DRIVER_PATH: Final = "spec.driver"
EXECUTOR_PATH: Final = "spec.executor"


def _empty_template(role: str) -> PodTemplateSpec:
    name = sp.DRIVER_CONTAINER if role == sp.DRIVER else sp.EXECUTOR_CONTAINER
    return PodTemplateSpec(spec=PodSpec(containers=[Container(name=name)]))


def _roles(app: s.SparkApplication) -> tuple[tuple[str, s.SparkPodSpec], ...]:
    return ((sp.DRIVER, app.spec.driver), (sp.EXECUTOR, app.spec.executor))


def _same_map(a: dict[str, str] | None, b: dict[str, str] | None) -> bool:
    return (a or {}) == (b or {})  # maps.Equal: nil and empty alike


class SparkApplicationAdapter:
    rtype: ResourceType = SPARK_APPLICATION
    kind = s.KIND
    api_version = s.API_VERSION

    def pod_sets(self, app: s.SparkApplication, partial_admission: bool) -> list[kt.PodSet]:
        """PodSets; a CPU or memory that does not parse gives none (Kueue's
        PodSets error: the reconciler makes no Workload)."""
        try:
            driver = sp.template_for(app, sp.DRIVER)
            executor = sp.template_for(app, sp.EXECUTOR)
        except ValueError:
            return []
        return [
            kt.PodSet(name=sp.DRIVER, template=driver, count=1),
            kt.PodSet(name=sp.EXECUTOR, template=executor, count=app.spec.executor.instances or 0),
        ]

    def on_hold(self, app: s.SparkApplication) -> bool:
        """Its pod sets cannot be built: Kueue's reconciler errs (and retries)
        before it makes a Workload, so the application stays suspended."""
        return not self.pod_sets(app, False)

    def is_suspended(self, app: s.SparkApplication) -> bool:
        return bool(app.spec.suspend)

    def is_active(self, app: s.SparkApplication) -> bool:
        return s.state_of(app) == "RUNNING"

    def finished(self, app: s.SparkApplication) -> Finished | None:
        state = s.state_of(app)
        if state not in ("COMPLETED", "FAILED", "SUBMISSION_FAILED"):
            return None
        st = app.status
        msg = st.application_state.error_message if st and st.application_state else None
        return Finished(state == "COMPLETED", msg or "")

    def pods_ready(self, app: s.SparkApplication, wl: kt.Workload) -> bool:
        """The driver runs and every requested executor runs or completed
        (the application is RUNNING as soon as its driver is)."""
        if s.state_of(app) != "RUNNING":
            return False
        expected = app.spec.executor.instances or 0
        if expected == 0:
            return True
        states = (app.status.executor_state if app.status else None) or {}
        return sum(1 for x in states.values() if x in ("RUNNING", "COMPLETED")) >= expected

    def reclaimable_pods(self, app: s.SparkApplication) -> list[kt.ReclaimablePod] | None:
        return None

    def suspend_on_create(self, app: s.SparkApplication) -> s.SparkApplication:
        return suspended_copy(app, lambda a: a.spec)

    def run(self, app: s.SparkApplication, infos: list[PodSetInfo]) -> s.SparkApplication:
        """RunWithPodSetsInfo."""
        app = clone(app)
        if len(infos) != 2:
            return app  # BadPodSetsInfoLenError: the Workload no longer fits
        app.spec.suspend = False
        global_selector = (
            dict(app.spec.node_selector) if app.spec.node_selector is not None else None
        )
        for (role, r), info in zip(_roles(app), infos, strict=True):
            if r.template is None:
                r.template = _empty_template(role)
            # spec.nodeSelector and the role's nodeSelector are mutually exclusive
            selector = dict(global_selector) if global_selector is not None else r.node_selector
            r.annotations = {**(r.annotations or {}), **info.annotations} or None
            r.labels = {**(r.labels or {}), **info.labels} or None
            r.node_selector = {**(selector or {}), **info.node_selector} or None
            tolerations = list(r.tolerations or ())
            tolerations += [t for t in info.tolerations if t not in tolerations]
            r.tolerations = tolerations or None
            spec = r.template.spec or PodSpec(containers=[])
            gates = list(spec.scheduling_gates or ())
            have = {g.name for g in gates}
            gates += [PodSchedulingGate(name=g) for g in info.scheduling_gates if g not in have]
            spec.scheduling_gates = gates or None
            r.template.spec = spec
        if global_selector is not None:
            app.spec.node_selector = None
        return app

    def validate(
        self, app: s.SparkApplication, old: s.SparkApplication | None, elastic: bool
    ) -> list[e.FieldError]:
        return []  # the Spark rules need the manage policy: spark_rules

    def topology_errors(
        self, app: s.SparkApplication, elastic: bool = False, multi_layer: bool = True
    ) -> list[e.FieldError]:
        """validateTopologyRequest: each podSet's TAS annotations (at
        ``spec.driver`` and ``spec.executor``); the pod sets' own error when
        they cannot be built."""
        try:
            driver = sp.template_for(app, sp.DRIVER)
            executor = sp.template_for(app, sp.EXECUTOR)
        except ValueError as err:
            return [e.invalid("spec", "", str(err))]
        entries = (
            (DRIVER_PATH, kt.PodSet(name=sp.DRIVER, template=driver, count=1)),
            (
                EXECUTOR_PATH,
                kt.PodSet(
                    name=sp.EXECUTOR, template=executor, count=app.spec.executor.instances or 0
                ),
            ),
        )
        return validate_pod_sets(entries, multi_layer=multi_layer)

    def update_errors(self, new: s.SparkApplication, old: s.SparkApplication) -> list[e.FieldError]:
        return []

    def stop(self, app: s.SparkApplication) -> s.SparkApplication | None:
        if app.spec.suspend:
            return None
        app = clone(app)
        app.spec.suspend = True
        return app

    def restore(
        self, app: s.SparkApplication, original: list[kt.PodSet]
    ) -> s.SparkApplication | None:
        """RestorePodSetsInfo: the roles' metadata, node selector, tolerations
        and scheduling gates back to the Workload's podSets, and the
        executors' instances to its count."""
        if len(original) != 2:
            return None  # the pod set count does not match the admitted workload
        new = clone(app)
        had_global = new.spec.node_selector is not None
        changed = False
        for (role, r), ps in zip(_roles(new), original, strict=True):
            t = ps.template
            ann, labels = t.metadata.annotations, t.metadata.labels
            selector = t.spec.node_selector if t.spec else None
            tolerations: list[Toleration] = list(t.spec.tolerations or ()) if t.spec else []
            gates = [g.name for g in (t.spec.scheduling_gates or ())] if t.spec else []
            if not _same_map(r.annotations, ann):
                r.annotations, changed = clone(ann), True
            if not _same_map(r.labels, labels):
                r.labels, changed = clone(labels), True
            if not _same_map(r.node_selector, selector):
                r.node_selector, changed = clone(selector), True
            if list(r.tolerations or ()) != tolerations:
                r.tolerations, changed = clone(tolerations) or None, True
            if r.template is None:
                r.template = _empty_template(role)
            spec = r.template.spec or PodSpec(containers=[])
            if [g.name for g in spec.scheduling_gates or ()] != gates:
                spec.scheduling_gates = [PodSchedulingGate(name=g) for g in gates] or None
                changed = True
            r.template.spec = spec
            if isinstance(r, s.ExecutorSpec) and r.instances != ps.count:
                r.instances = ps.count
                changed = True
        if had_global and new.spec.node_selector is not None:
            new.spec.node_selector = None  # (defensive, as Kueue: Run cleared it)
            changed = True
        return new if changed else None
