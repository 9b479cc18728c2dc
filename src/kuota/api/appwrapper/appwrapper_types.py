"""CodeFlare's AppWrapper (``workload.codeflare.dev/v1beta2``, project-codeflare/
appwrapper ``api/v1beta2``): a list of components, each an arbitrary object
(``template``) whose pod templates are named by paths (``podSets``, declared
or inferred for the kinds the AppWrapper knows), and ``podSetInfos`` the
admission writes for the AppWrapper controller to apply when it creates the
components. Also ``pkg/utils``: paths into a template, the pod templates at
them, the podSets inferred per kind, and the AppWrapper webhook's create and
update rules.

Pure: no I/O.
"""

from __future__ import annotations

import copy
import re
from datetime import datetime
from typing import Any, Final, Literal

import msgspec

from kuota.api.base import Object, dec_hook
from kuota.api.errors import FieldError, forbidden, index, invalid, required
from kuota.api.k8s.corev1 import AnyList, AnyObject, PodSpec, PodTemplateSpec, Toleration
from kuota.api.meta import Conditions, ObjectMeta

__all__ = [
    "API_VERSION",
    "GROUP",
    "AppWrapper",
    "component_pod_sets",
    "get_at",
    "pod_template_at",
    "validate_appwrapper",
    "validate_appwrapper_update",
]

GROUP: Final = "workload.codeflare.dev"
API_VERSION: Final = f"{GROUP}/v1beta2"
KIND: Final = "AppWrapper"
CONTROLLER: Final = "workload.codeflare.dev/appwrapper-controller"
LABEL: Final = "workload.codeflare.dev/appwrapper"  # AppWrapperLabel, on what it creates
MAX_POD_SETS: Final = 8
_P = "workload.codeflare.dev.appwrapper/"
TAS_POD_INDEX: Final = _P + "tas-pod-index-label"
TAS_SUB_GROUP_INDEX: Final = _P + "tas-sub-group-index-label"
TAS_SUB_GROUP_COUNT: Final = _P + "tas-sub-group-count"


class AppWrapperPodSet(Object):
    path: str
    replicas: int | None = None
    annotations: dict[str, str] | None = None


class AppWrapperPodSetInfo(Object):
    annotations: dict[str, str] | None = None
    labels: dict[str, str] | None = None
    node_selector: dict[str, str] | None = None
    tolerations: list[Toleration] | None = None
    scheduling_gates: AnyList | None = None


class AppWrapperComponent(Object):
    template: AnyObject
    annotations: dict[str, str] | None = None
    pod_sets: list[AppWrapperPodSet] | None = None
    pod_set_infos: list[AppWrapperPodSetInfo] | None = None


class AppWrapperSpec(Object):
    components: list[AppWrapperComponent] = msgspec.field(default_factory=list)
    suspend: bool = False
    managed_by: str | None = None


class AppWrapperComponentStatus(Object):
    name: str
    kind: str
    api_version: str
    pod_sets: list[AppWrapperPodSet] = msgspec.field(default_factory=list)
    conditions: Conditions | None = None


Phase = Literal[
    "",
    "Suspended",
    "Resuming",
    "Running",
    "Resetting",
    "Suspending",
    "Succeeded",
    "Failed",
    "Terminating",
]


class AppWrapperStatus(Object):
    phase: Phase | None = None
    resetting_count: int | None = None
    conditions: Conditions | None = None
    component_status: list[AppWrapperComponentStatus] | None = None
    # (not in the CRD: kuota keeps none; listed so a status read back decodes)
    last_update_time: datetime | None = None


class AppWrapper(Object):
    api_version: str = API_VERSION
    kind: str = KIND
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: AppWrapperSpec = msgspec.field(default_factory=AppWrapperSpec)
    status: AppWrapperStatus | None = None


# ----------------------------------------------------------------------- paths
_STEP: Final = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


class PathError(ValueError):
    pass


def _steps(path: str) -> list[str | int]:
    """getValueAtPath's walk: ``template`` first, then ``.key`` and ``[i]``."""
    if not path.startswith("template"):
        raise PathError("first element of the path must be 'template'")
    rest, done, out = path[len("template") :], "template", []
    while rest:
        m = _STEP.match(rest)
        if m is None:
            raise PathError(f"at path position '{done}' invalid path element '{rest}'")
        out.append(m.group(1) if m.group(1) is not None else int(m.group(2)))
        done += m.group(0)
        rest = rest[m.end() :]
    return out


def get_at(template: dict[str, Any], path: str) -> Any:
    """The value at ``path`` (``template.spec.template``) of a component's
    template; PathError says where the walk stopped, as AppWrapper says it."""
    cursor: Any = template
    done = "template"
    for step in _steps(path):
        if isinstance(step, int):
            if not isinstance(cursor, list):
                raise PathError(f"at path position '{done}' found non-array value")
            if step >= len(cursor):
                raise PathError(f"at path position '{done}' out of bounds index '{step}'")
            cursor = cursor[step]
            done += f"[{step}]"
        else:
            done += "." + step
            if not isinstance(cursor, dict):
                raise PathError(f"at path position '{done}' non-map value")
            if step not in cursor:
                raise PathError(f"at path position '{done}' missing field '{step}'")
            cursor = cursor[step]
    return cursor


def pod_template_at(template: dict[str, Any], path: str) -> PodTemplateSpec:
    """GetPodTemplateSpec: the pod template at ``path``, with what AppWrapper
    keeps of it (labels, annotations and the scheduling-relevant spec)."""
    raw = get_at(template, path)
    if not isinstance(raw, dict):
        raise PathError(f"at path position '{path}' non-map value")
    spec = raw.get("spec")
    if not isinstance(spec, dict):
        raise PathError(f"content at {path} does not contain a spec")
    try:
        src = msgspec.convert(spec, PodSpec, dec_hook=dec_hook)
    except msgspec.ValidationError as err:
        raise PathError(f"content at {path}.spec not parseable as a v1.PodSpec: {err}") from None
    meta = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if isinstance(v, str)}
    ann = {k: v for k, v in (meta.get("annotations") or {}).items() if isinstance(v, str)}
    dst = PodSpec(
        containers=src.containers,
        init_containers=src.init_containers,
        restart_policy=src.restart_policy or "Always",
        node_selector=src.node_selector,
        node_name=src.node_name,
        affinity=src.affinity,
        scheduler_name=src.scheduler_name or "default-scheduler",
        tolerations=src.tolerations,
        priority_class_name=src.priority_class_name,
        overhead=src.overhead,
        topology_spread_constraints=src.topology_spread_constraints,
    )
    return PodTemplateSpec(
        metadata=ObjectMeta(labels=labels or None, annotations=ann or None), spec=dst
    )


# ------------------------------------------------------------------- inference
def _int_at(template: dict[str, Any], path: str) -> int | None:
    try:
        v = get_at(template, path)
    except PathError:
        return None
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _replicas(template: dict[str, Any], path: str) -> int:
    """inferReplicas: the int at ``path``, 1 when absent."""
    head, _, last = path.rpartition(".")
    parent = get_at(template, head)
    if not isinstance(parent, dict):
        raise PathError(f"at path position '{head}' non-map value")
    v = parent.get(last)
    if v is None:
        return 1
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    raise PathError(f"at path position '{path}' non-int value {v}")


def _has(template: dict[str, Any], path: str) -> bool:
    try:
        get_at(template, path)
    except PathError:
        return False
    return True


def _ray(template: dict[str, Any], prefix: str) -> list[AppWrapperPodSet]:
    out = [AppWrapperPodSet(path=prefix + "headGroupSpec.template", replicas=1)]
    try:
        groups = get_at(template, prefix + "workerGroupSpecs")
    except PathError:
        groups = None
    for i in range(len(groups) if isinstance(groups, list) else 0):
        p = f"{prefix}workerGroupSpecs[{i}]."
        if _has(template, p + "template"):
            out.append(
                AppWrapperPodSet(path=p + "template", replicas=_replicas(template, p + "replicas"))
            )
    return out


def _gvk(template: dict[str, Any]) -> tuple[str, str]:
    return str(template.get("apiVersion", "")), str(template.get("kind", ""))


def infer_pod_sets(template: dict[str, Any]) -> list[AppWrapperPodSet]:
    """InferPodSets: the podSets of the kinds AppWrapper knows (batch Job,
    JobSet, PyTorchJob, RayCluster, RayJob, Pod, Deployment, StatefulSet);
    none for others. Raises PathError as AppWrapper's inference fails."""
    root = template  # the paths' first element, "template", is the component's template
    gvk = _gvk(template)
    out: list[AppWrapperPodSet] = []
    if gvk == ("batch/v1", "Job"):
        n = _int_at(root, "template.spec.parallelism")
        n = 1 if n is None else n
        c = _int_at(root, "template.spec.completions")
        if c is not None and c < n:
            n = c
        out.append(
            AppWrapperPodSet(
                path="template.spec.template",
                replicas=n,
                annotations={TAS_POD_INDEX: "batch.kubernetes.io/job-completion-index"},
            )
        )
    elif gvk == ("jobset.x-k8s.io/v1alpha2", "JobSet"):
        try:
            jobs = get_at(root, "template.spec.replicatedJobs")
        except PathError:
            jobs = None
        for i in range(len(jobs) if isinstance(jobs, list) else 0):
            p = f"template.spec.replicatedJobs[{i}]."
            if not _has(root, p + "template"):
                continue
            pods = _int_at(root, p + "template.spec.parallelism")
            pods = 1 if pods is None else pods
            c = _int_at(root, p + "template.spec.completions")
            if c is not None and c < pods:
                pods = c
            r = _int_at(root, p + "replicas")
            r = 1 if r is None else r
            out.append(
                AppWrapperPodSet(
                    path=p + "template.spec.template",
                    replicas=r * pods,
                    annotations={
                        TAS_POD_INDEX: "batch.kubernetes.io/job-completion-index",
                        TAS_SUB_GROUP_INDEX: "jobset.sigs.k8s.io/job-index",
                        TAS_SUB_GROUP_COUNT: str(r),
                    },
                )
            )
    elif gvk == ("kubeflow.org/v1", "PyTorchJob"):
        for rtype in ("Master", "Worker"):
            p = f"template.spec.pytorchReplicaSpecs.{rtype}."
            if _has(root, p + "template"):
                out.append(
                    AppWrapperPodSet(
                        path=p + "template",
                        replicas=_replicas(root, p + "replicas"),
                        annotations={TAS_POD_INDEX: "training.kubeflow.org/replica-index"},
                    )
                )
    elif gvk == ("ray.io/v1", "RayCluster"):
        out = _ray(root, "template.spec.")
    elif gvk == ("ray.io/v1", "RayJob"):
        out = _ray(root, "template.spec.rayClusterSpec.")
    elif gvk == ("v1", "Pod"):
        out = [AppWrapperPodSet(path="template", replicas=1)]
    elif gvk in (("apps/v1", "Deployment"), ("apps/v1", "StatefulSet")) and _has(
        root, "template.spec.template"
    ):
        out = [
            AppWrapperPodSet(
                path="template.spec.template", replicas=_replicas(root, "template.spec.replicas")
            )
        ]
    for ps in out:
        try:
            pod_template_at(root, ps.path)
        except PathError as err:
            raise PathError(f"{ps.path} does not refer to a v1.PodSpecTemplate: {err}") from None
    return out


def component_pod_sets(c: AppWrapperComponent) -> list[AppWrapperPodSet]:
    """The component's podSets: declared, else inferred (EnsureComponentStatusInitialized)."""
    if c.pod_sets:
        return c.pod_sets
    try:
        return infer_pod_sets(c.template)
    except PathError:
        return []


def replicas(ps: AppWrapperPodSet) -> int:
    return 1 if ps.replicas is None else ps.replicas


# ------------------------------------------------------------------- the webhook
def _matches(declared: list[AppWrapperPodSet], inferred: list[AppWrapperPodSet]) -> str | None:
    """ValidatePodSets."""
    if not declared:
        return None
    paths: dict[str, AppWrapperPodSet] = {}
    for p in declared:
        if p.path in paths:
            return f"multiple DeclaredPodSets with path '{p.path}'"
        paths[p.path] = p
    if inferred:
        if len(inferred) != len(declared):
            return (
                f"DeclaredPodSet count {len(declared)} differs from inferred count {len(inferred)}"
            )
        for ips in inferred:
            dps = paths.get(ips.path)
            if dps is None:
                return f"PodSet with path '{ips.path}' is missing"
            if replicas(ips) != replicas(dps):
                return (
                    f"replica count {replicas(dps)} differs from inferred count {replicas(ips)} "
                    f"for PodSet at path position '{ips.path}'"
                )
    return None


def validate_appwrapper(aw: AppWrapper) -> list[FieldError]:
    """The AppWrapper webhook's ``validateAppWrapperCreate`` (no RBAC check:
    kuota has one user)."""
    errs: list[FieldError] = []
    base = "spec.components"
    count = 0
    for i, c in enumerate(aw.spec.components):
        path = index(base, i)
        api_version, kind = _gvk(c.template)
        if (api_version, kind) == (API_VERSION, KIND):
            errs.append(forbidden(f"{path}.template", "Nested AppWrappers are forbidden"))
        meta = c.template.get("metadata")
        ns = meta.get("namespace") if isinstance(meta, dict) else None
        if ns and ns != aw.metadata.namespace:
            errs.append(
                forbidden(
                    f"{path}.template.metadata.namespace",
                    "AppWrappers cannot create objects in other namespaces",
                )
            )
        root = c.template
        for j, ps in enumerate(c.pod_sets or ()):
            ppath = index(f"{path}.podSets", j)
            if not ps.path:
                errs.append(required(f"{ppath}.path", "podspec must specify path"))
            try:
                pod_template_at(root, ps.path)
            except PathError as err:
                errs.append(
                    invalid(
                        f"{ppath}.path",
                        ps.path,
                        f"path does not refer to a v1.PodSpecTemplate: {err}",
                    )
                )
        try:
            inferred = infer_pod_sets(c.template)
        except PathError as err:
            errs.append(invalid(f"{path}.template", "", f"error inferring PodSets: {err}"))
            continue
        count += max(len(c.pod_sets or ()), len(inferred))
        msg = _matches(list(c.pod_sets or ()), inferred)
        if msg:
            errs.append(invalid(f"{path}.podSets", "", msg))
    if count == 0:
        errs.append(invalid(base, "", "components contains no podspecs"))
    if count > MAX_POD_SETS:
        errs.append(
            invalid(
                base,
                "",
                f"components contains {count} podspecs; at most {MAX_POD_SETS} are allowed",
            )
        )
    return errs


def validate_appwrapper_update(new: AppWrapper, old: AppWrapper) -> list[FieldError]:
    """validateAppWrapperUpdate: the components are deeply immutable (their
    podSetInfos aside, which Kueue writes), and so is ``managedBy``."""
    base = "spec.components"
    msg = "field is immutable"
    if len(new.spec.components) != len(old.spec.components):
        return [forbidden(base, msg)]
    errs: list[FieldError] = []
    for i, (n, o) in enumerate(zip(new.spec.components, old.spec.components, strict=True)):
        path = index(base, i)
        if n.template != o.template:
            errs.append(forbidden(f"{path}.template.raw", msg))
        if len(n.pod_sets or ()) != len(o.pod_sets or ()):
            errs.append(forbidden(f"{path}.podsets", msg))
            continue
        for j, (np, op) in enumerate(zip(n.pod_sets or (), o.pod_sets or (), strict=True)):
            if replicas(np) != replicas(op):
                errs.append(forbidden(f"{index(f'{path}.podsets', j)}.replicas", msg))
            if np.path != op.path:
                errs.append(forbidden(f"{index(f'{path}.podsets', j)}.path", msg))
    if new.spec.managed_by != old.spec.managed_by:
        errs.append(forbidden("spec.managedBy", msg))
    return errs


def deep_copy(template: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = copy.deepcopy(template)
    return out
