"""An AppWrapper as Kueue's jobframework sees it (``pkg/controller/jobs/
appwrapper/appwrapper_controller.go``): one podSet per pod template of its
components (declared or inferred), named ``<appwrapper>-<i>`` with the
podSet's replicas; started by writing the admission into the components'
``podSetInfos`` and unsuspending (the AppWrapper controller applies them when
it creates the components), stopped by suspending, restored by clearing the
infos; finished when its phase is Succeeded, or Failed once its resources are
gone; its pods ready with its PodsReady condition."""

from __future__ import annotations

from kuota.api import errors as e
from kuota.api.appwrapper import appwrapper_types as v
from kuota.api.kueue import types as kt
from kuota.controllers.jobframework import Finished, PodSetInfo, suspended_copy
from kuota.controllers.multikueue_adapter import ManagedBy
from kuota.store import clone
from kuota.store.protocol import ResourceType
from kuota.store.resources import APP_WRAPPER

__all__ = ["AppWrapperAdapter"]


def _true(aw: v.AppWrapper, ctype: str) -> bool:
    conds = aw.status.conditions if aw.status else None
    return any(c.type == ctype and c.status == "True" for c in conds or ())


class AppWrapperAdapter:
    rtype: ResourceType = APP_WRAPPER
    kind = v.KIND
    api_version = v.API_VERSION
    managed_by_field = ManagedBy(("spec", "managed_by"), v.CONTROLLER)

    def pod_sets(self, aw: v.AppWrapper, partial_admission: bool) -> list[kt.PodSet]:
        out: list[kt.PodSet] = []
        for c in aw.spec.components:
            for ps in v.component_pod_sets(c):
                try:
                    template = v.pod_template_at(c.template, ps.path)
                except v.PathError:
                    continue  # GetComponentPodSpecs skips what it cannot read
                out.append(
                    kt.PodSet(
                        name=f"{aw.metadata.name}-{len(out)}".lower(),
                        template=template,
                        count=v.replicas(ps),
                    )
                )
        return out

    def is_suspended(self, aw: v.AppWrapper) -> bool:
        return aw.spec.suspend

    def is_active(self, aw: v.AppWrapper) -> bool:
        return _true(aw, "QuotaReserved")

    def finished(self, aw: v.AppWrapper) -> Finished | None:
        phase = aw.status.phase if aw.status else None
        if phase == "Succeeded":
            return Finished(True, "AppWrapper finished successfully")
        if phase == "Failed" and not _true(aw, "ResourcesDeployed"):
            return Finished(False, "AppWrapper failed")
        return None

    def pods_ready(self, aw: v.AppWrapper, wl: kt.Workload) -> bool:
        return _true(aw, "PodsReady")

    def reclaimable_pods(self, aw: v.AppWrapper) -> list[kt.ReclaimablePod] | None:
        return None

    def suspend_on_create(self, aw: v.AppWrapper) -> v.AppWrapper:
        return suspended_copy(aw, lambda a: a.spec)

    def run(self, aw: v.AppWrapper, infos: list[PodSetInfo]) -> v.AppWrapper:
        """SetPodSetInfos: each component's podSets take the next infos."""
        aw = clone(aw)
        it = iter(infos)
        for c in aw.spec.components:
            mine = []
            for _ in v.component_pod_sets(c):
                info = next(it, None)
                if info is None:
                    return aw  # (count mismatch: the Workload no longer fits)
                mine.append(
                    v.AppWrapperPodSetInfo(
                        labels=dict(info.labels) or None,
                        node_selector=dict(info.node_selector) or None,
                        tolerations=list(info.tolerations) or None,
                    )
                )
            c.pod_set_infos = mine or None
        aw.spec.suspend = False
        return aw

    def validate(
        self, aw: v.AppWrapper, old: v.AppWrapper | None, elastic: bool
    ) -> list[e.FieldError]:
        return []  # Kueue's AppWrapper webhook is jobframework's base webhook

    def update_errors(self, new: v.AppWrapper, old: v.AppWrapper) -> list[e.FieldError]:
        return []

    def stop(self, aw: v.AppWrapper) -> v.AppWrapper | None:
        if aw.spec.suspend:
            return None
        aw = clone(aw)
        aw.spec.suspend = True
        return aw

    def restore(self, aw: v.AppWrapper, original: list[kt.PodSet]) -> v.AppWrapper | None:
        """ClearPodSetInfos."""
        if not any(c.pod_set_infos for c in aw.spec.components):
            return None
        aw = clone(aw)
        for c in aw.spec.components:
            c.pod_set_infos = None
        return aw
