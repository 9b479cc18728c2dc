"""CodeFlare's AppWrapper controller (project-codeflare/appwrapper
``internal/controller/appwrapper``) in the embedded cluster: its phases.
New -> Suspended (the components' podSets recorded in
``status.componentStatus``); unsuspended (Kueue admitted it) -> Resuming: each
component created from its template in the AppWrapper's namespace, owned by
it and labelled ``workload.codeflare.dev/appwrapper``, its pod templates
given the ``podSetInfos`` Kueue wrote (labels, node selector, tolerations)
-> Running: PodsReady once the pods running or succeeded reach the podSets'
replicas; Succeeded when they all succeeded; Failed (its components deleted)
when a component cannot be made or a pod failed; suspended again (Kueue
evicted it) -> Suspending: its components deleted -> Suspended.

Its fault tolerance (``FaultToleranceConfig`` defaults, each overridden by
the AppWrapper's ``workload.codeflare.dev.appwrapper/*`` annotations, capped
at ``GracePeriodMaximum``): failed pods are given ``failureGracePeriod``
(1m) to recover; pods not all ready by ``admissionGracePeriod`` (1m; pods
missing) or ``warmupGracePeriod`` (5m; all there) count as a failure; a
component whose own controller failed it (a Job's or PyTorchJob's Failed
condition) fails at once; a component deleted by someone else fails the
AppWrapper. A failure resets the AppWrapper (Resetting: its components
deleted, a ``retryPausePeriod`` of 90s, Resuming again, ``resettingCount``
one more) while fewer than ``retryLimit`` (3) resets were made, else fails
it. A failed pod whose container exited with one of the
``terminalExitCodes`` (or, when ``retryableExitCodes`` are given, with any
other non-zero code) makes that failure terminal: Failed whatever the
retries left (getPodStatus's terminalFailure; the simulated kubelet writes
an exit code for a pod annotated ``kuota.dev/exit-code``).

Not modelled: the deletion-on-failure delay, the success TTL, forceful
deletion, Autopilot, the user-name labels of its webhook."""

from __future__ import annotations

import contextlib
import re
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

import msgspec

from kuota.api.appwrapper import appwrapper_types as v
from kuota.api.decode import decode_object
from kuota.api.kueue.config.durations import parse_duration
from kuota.api.meta import Condition
from kuota.cluster.controllers.controller_base import ClusterController
from kuota.cluster.podutil import POD, is_deleting, owner_reference, pod_phase
from kuota.runtime.informer import Informer, key_of
from kuota.store import AlreadyExists, Conflict, NotFound, clone
from kuota.store.kinds import resource_for
from kuota.store.protocol import EventType
from kuota.store.resources import APP_WRAPPER

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager

__all__ = ["AppWrapperController"]

COMPONENT: Final = "appwrapper-controller"
_BY_AW: Final = "appwrapper:name"

# FaultToleranceConfig's defaults (project-codeflare/appwrapper pkg/config)
# and the annotations that override them per AppWrapper.
_ANN: Final = "workload.codeflare.dev.appwrapper/"
ADMISSION_GRACE: Final = timedelta(minutes=1)
WARMUP_GRACE: Final = timedelta(minutes=5)
FAILURE_GRACE: Final = timedelta(minutes=1)
RETRY_PAUSE: Final = timedelta(seconds=90)
RETRY_LIMIT: Final = 3
GRACE_MAXIMUM: Final = timedelta(hours=24)
_FAILED_KINDS: Final = ("batch/v1:Job", "kubeflow.org/v1:PyTorchJob")


def _aw_label(pod: Any) -> list[str]:
    name = (pod.metadata.labels or {}).get(v.LABEL)
    return [f"{pod.metadata.namespace}/{name}"] if name else []


class _Conflict(ValueError):
    pass


def _merge(existing: Any, add: dict[str, str], what: str) -> dict[str, str]:
    """MergeKeepFirst after HaveConflict: a key already set otherwise is an error."""
    have = {k: str(x) for k, x in (existing or {}).items()}
    for k, x in add.items():
        if k in have and have[k] != x:
            raise _Conflict(
                f"conflict updating {what}: key {k} has conflicting values {have[k]} and {x}"
            )
    return {**add, **have}


def component_object(aw: v.AppWrapper, idx: int) -> dict[str, Any]:
    """createComponent's object: the template in the AppWrapper's namespace
    with its label, each podSet's template given its podSetInfo."""
    c = aw.spec.components[idx]
    obj = v.deep_copy(c.template)
    meta = obj.setdefault("metadata", {})
    ns = meta.get("namespace") or aw.metadata.namespace
    if ns != aw.metadata.namespace:
        raise _Conflict(
            f'component namespace "{ns}" is different from appwrapper namespace '
            f'"{aw.metadata.namespace}"'
        )
    meta["namespace"] = ns
    mark = {v.LABEL: aw.metadata.name}
    meta["labels"] = _merge(meta.get("labels"), mark, "labels")
    infos = c.pod_set_infos or []
    for i, ps in enumerate(v.component_pod_sets(c)):
        info = infos[i] if i < len(infos) else v.AppWrapperPodSetInfo()
        p = v.get_at(obj, ps.path)
        pmeta = p.setdefault("metadata", None) or {}
        p["metadata"] = pmeta
        spec = p["spec"]
        if info.annotations:
            pmeta["annotations"] = _merge(pmeta.get("annotations"), info.annotations, "annotations")
        pmeta["labels"] = _merge(pmeta.get("labels"), {**(info.labels or {}), **mark}, "labels")
        if info.node_selector:
            spec["nodeSelector"] = _merge(
                spec.get("nodeSelector"), info.node_selector, "nodeSelector"
            )
        if info.tolerations:
            spec["tolerations"] = list(spec.get("tolerations") or []) + [
                msgspec.to_builtins(t) for t in info.tolerations
            ]
    return obj


class AppWrapperController(ClusterController):
    """Reads AppWrappers and Pods; writes the wrapped objects and AppWrapper status."""

    name = "appwrapper-controller"
    component = COMPONENT

    def __init__(self) -> None:
        super().__init__()
        self._aws: Informer | None = None
        self._pods: Informer | None = None

    def setup(self, mgr: Manager) -> None:
        super().setup(mgr)
        self._aws = mgr.informer(APP_WRAPPER)
        self._aws.on_change(self._on_aw)
        self._pods = mgr.informer(POD)
        self._pods.add_index(_BY_AW, _aw_label)
        self._pods.on_change(self._on_pod)

    def _on_aw(self, etype: EventType, aw: Any, old: Any | None) -> None:
        if etype != "DELETED":
            self.mgr.enqueue(self.name, key_of(aw))

    def _on_pod(self, etype: EventType, pod: Any, old: Any | None) -> None:
        for key in _aw_label(pod):
            self.mgr.enqueue(self.name, key)

    # ------------------------------------------------------------ reconcile
    def reconcile(self, key: str) -> timedelta | None:
        assert self._aws is not None
        aw: v.AppWrapper | None = self._aws.get(key)
        if aw is None or is_deleting(aw):
            return None
        if aw.spec.managed_by not in (None, v.CONTROLLER):
            return None  # another controller's (MultiKueue)
        now = self.mgr.clock.now()
        st = clone(aw.status) if aw.status is not None else v.AppWrapperStatus()
        phase = st.phase or ""
        if phase == "":
            st.component_status = [
                self._component_status(aw, i) for i in range(len(aw.spec.components))
            ]
            st.phase = "Suspended"
        elif phase == "Suspended":
            if not aw.spec.suspend:
                for ctype in ("QuotaReserved", "ResourcesDeployed"):
                    _set(st, ctype, "True", "Resuming", "Suspend is false", now)
                for ctype in ("PodsReady", "Unhealthy"):
                    _set(st, ctype, "False", "Resuming", "Suspend is false", now)
                st.phase = "Resuming"
        elif phase == "Resuming":
            if aw.spec.suspend:
                self.event(
                    aw, "Normal", "Suspending", "Externally suspended while in the Resuming phase"
                )
                st.phase = "Suspending"
            else:
                err = self._create(aw)
                if err:
                    msg = f"error creating components: {err}"
                    _set(st, "Unhealthy", "True", "CreateFailed", msg, now)
                    self.event(aw, "Normal", "Unhealthy", "CreateFailed: " + msg)
                    st.phase = "Failed"
                else:
                    st.phase = "Running"
        elif phase == "Running":
            after = self._running(aw, st, now)
            if after is not None:
                self._write(aw, st)
                return after
        elif phase == "Resetting":
            after = self._resetting(aw, st, now)
            if after is not None:
                self._write(aw, st)
                return after
        elif phase in ("Suspending", "Failed"):
            if _true(st, "ResourcesDeployed"):
                if not self._delete(aw):
                    self._write(aw, st)
                    return timedelta(seconds=5)
                reason = "Suspended" if phase == "Suspending" else "Failed"
                msg = (
                    "Suspend is true"
                    if phase == "Suspending"
                    else "Resources deleted for failed AppWrapper"
                )
                _set(st, "ResourcesDeployed", "False", reason, msg, now)
            if phase == "Suspending":
                _set(st, "QuotaReserved", "False", "Suspended", "Suspend is true", now)
                _clear(st, "PodsReady", "Suspended", now)
                _clear(st, "Unhealthy", "Suspended", now)
                st.phase = "Suspended"
            else:
                _set(st, "QuotaReserved", "False", "Failed", "No resources deployed", now)
        self._write(aw, st)
        return None

    def _running(self, aw: v.AppWrapper, st: v.AppWrapperStatus, now: datetime) -> timedelta | None:
        """The Running phase; when to look again (None: at the next event)."""
        if aw.spec.suspend:
            self.event(
                aw, "Normal", "Suspending", "Externally suspended while in the Running phase"
            )
            st.phase = "Suspending"
            return None
        expected_components = len(st.component_status or ())
        assert self._pods is not None
        pods = [p for p in self._pods.by_index(_BY_AW, key_of(aw)) if not is_deleting(p)]
        terminal = _terminal_failure(aw, pods)
        deployed, failed = self._components(aw, st)
        if deployed != expected_components:
            # Deleted by someone else: no grace period, no retry.
            msg = f"Only found {deployed} deployed components, but was expecting {expected_components}"
            _set(st, "Unhealthy", "True", "MissingComponent", msg, now)
            self.event(aw, "Normal", "Unhealthy", "MissingComponent: " + msg)
            st.phase = "Failed"
            return None
        if failed:
            # Its own controller failed it: that will not correct itself.
            msg = f"Found {failed} failed components"
            _set(st, "Unhealthy", "True", "FailedComponent", msg, now)
            self.event(aw, "Normal", "Unhealthy", "FailedComponent: " + msg)
            _reset_or_fail(aw, st, terminal)
            return None
        counts = {"Pending": 0, "Running": 0, "Succeeded": 0, "Failed": 0}
        for p in pods:
            phase = pod_phase(p)
            counts[phase if phase in counts else "Pending"] += 1
        expected = sum(v.replicas(ps) for cs in st.component_status or () for ps in cs.pod_sets)
        if counts["Succeeded"] >= expected and not (
            counts["Pending"] + counts["Running"] + counts["Failed"]
        ):
            msg = f"{counts['Succeeded']} pods succeeded and no running, pending, or failed pods"
            _set(st, "QuotaReserved", "False", "Succeeded", msg, now)
            _set(st, "ResourcesDeployed", "True", "Succeeded", msg, now)
            st.phase = "Succeeded"
            return None
        if counts["Failed"]:
            # (no count in the message: a new message would restart the grace period)
            _set(st, "Unhealthy", "True", "FoundFailedPods", "", now)
            deadline = _since(st, "Unhealthy", now) + _grace(
                aw, "failureGracePeriodDuration", FAILURE_GRACE
            )
            if now < deadline:
                return deadline - now  # the pods' controller may yet recover
            self.event(
                aw, "Normal", "Unhealthy", f"FoundFailedPods: {counts['Failed']} failed pods"
            )
            _reset_or_fail(aw, st, terminal)
            return None
        _clear(st, "Unhealthy", "FoundNoFailedPods", now)
        if counts["Running"] + counts["Succeeded"] >= expected:
            _set(
                st,
                "PodsReady",
                "True",
                "SufficientPodsReady",
                f"{counts['Running']} pods running; {counts['Succeeded']} pods succeeded",
                now,
            )
            return None
        detail = (
            f"{counts['Pending']} pods pending; {counts['Running']} pods running; "
            f"{counts['Succeeded']} pods succeeded"
        )
        _clear(st, "PodsReady", "InsufficientPodsReady", now, detail)
        if counts["Pending"] + counts["Running"] + counts["Succeeded"] >= expected:
            grace = _grace(aw, "warmupGracePeriodDuration", WARMUP_GRACE)
        else:
            grace = _grace(aw, "admissionGracePeriodDuration", ADMISSION_GRACE)
        deadline = _since(st, "ResourcesDeployed", now) + grace
        if now < deadline:
            return min(deadline - now, timedelta(seconds=5))
        _set(st, "Unhealthy", "True", "InsufficientPodsReady", detail, now)
        self.event(aw, "Normal", "Unhealthy", "InsufficientPodsReady: " + detail)
        _reset_or_fail(aw, st, terminal)
        return None

    def _resetting(
        self, aw: v.AppWrapper, st: v.AppWrapperStatus, now: datetime
    ) -> timedelta | None:
        """Its components deleted, a pause, then Resuming again."""
        if aw.spec.suspend:
            st.phase = "Suspending"  # (suspending trumps resetting)
            return None
        _clear(st, "PodsReady", "Resetting", now)
        if _true(st, "ResourcesDeployed"):
            if not self._delete(aw):
                return timedelta(seconds=5)
            _set(
                st,
                "ResourcesDeployed",
                "False",
                "Resetting",
                "Resources deleted for resetting AppWrapper",
                now,
            )
        deadline = _since(st, "Unhealthy", now) + _grace(
            aw, "retryPausePeriodDuration", RETRY_PAUSE
        )
        if now < deadline:
            return deadline - now
        _set(st, "ResourcesDeployed", "True", "Resuming", "Reset complete; resuming", now)
        st.phase = "Resuming"
        return None

    def _components(self, aw: v.AppWrapper, st: v.AppWrapperStatus) -> tuple[int, int]:
        """getComponentStatus: the components there, and those their own
        controller has failed (a Job's or PyTorchJob's Failed condition)."""
        deployed = failed = 0
        for cs in st.component_status or ():
            try:
                rtype = resource_for(cs.api_version, cs.kind)
            except (KeyError, ValueError):
                continue
            try:
                obj = self.mgr.store.get(rtype, aw.metadata.namespace, cs.name)
            except NotFound:
                continue
            if is_deleting(obj):
                continue
            deployed += 1
            if f"{cs.api_version}:{cs.kind}" in _FAILED_KINDS:
                conds = getattr(getattr(obj, "status", None), "conditions", None) or ()
                if any(c.type == "Failed" and c.status == "True" for c in conds):
                    failed += 1
        return deployed, failed

    # ------------------------------------------------------------ writes
    @staticmethod
    def _component_status(aw: v.AppWrapper, idx: int) -> v.AppWrapperComponentStatus:
        c = aw.spec.components[idx]
        meta = c.template.get("metadata") or {}
        return v.AppWrapperComponentStatus(
            name=str(meta.get("name", "")) if isinstance(meta, dict) else "",
            kind=str(c.template.get("kind", "")),
            api_version=str(c.template.get("apiVersion", "")),
            pod_sets=v.component_pod_sets(c),
        )

    def _create(self, aw: v.AppWrapper) -> str:
        """createComponents: each component made; the first error, or ""."""
        for idx in range(len(aw.spec.components)):
            try:
                raw = component_object(aw, idx)
            except (_Conflict, v.PathError) as err:
                return str(err)
            doc = decode_object(raw, source=f"{key_of(aw)} component {idx}")
            if doc.errors or doc.obj is None:
                return "; ".join(str(e) for e in doc.errors)
            obj = doc.obj
            obj.metadata.owner_references = [owner_reference(aw)]
            try:
                self.mgr.store.create(obj)
            except AlreadyExists:
                continue
            except Exception as err:  # refused by an admission rule
                return str(err)
        return ""

    def _delete(self, aw: v.AppWrapper) -> bool:
        """deleteComponents: whether they are all gone."""
        gone = True
        for c in aw.spec.components:
            meta = c.template.get("metadata") or {}
            name = meta.get("name") if isinstance(meta, dict) else None
            kind, api_version = c.template.get("kind"), c.template.get("apiVersion")
            if not (
                isinstance(name, str) and isinstance(kind, str) and isinstance(api_version, str)
            ):
                continue
            try:
                rtype = resource_for(api_version, kind)
            except (KeyError, ValueError):
                continue
            try:
                self.mgr.store.delete(rtype, aw.metadata.namespace, name)
                gone = False
            except NotFound:
                pass
        return gone

    def _write(self, aw: v.AppWrapper, st: v.AppWrapperStatus) -> None:
        if st == (aw.status or v.AppWrapperStatus()):
            return
        with contextlib.suppress(NotFound, Conflict):
            self.mgr.store.update_status(msgspec.structs.replace(aw, status=st))


def _reset_or_fail(aw: v.AppWrapper, st: v.AppWrapperStatus, terminal: bool) -> None:
    """resetOrFail: another try while the retry limit allows and the failure
    is not terminal."""
    if not terminal and (st.resetting_count or 0) < _retry_limit(aw):
        st.resetting_count = (st.resetting_count or 0) + 1
        st.phase = "Resetting"
    else:
        st.phase = "Failed"


_ATOI: Final = re.compile(r"[+-]?[0-9]+")


def exit_codes(aw: v.AppWrapper, name: str) -> list[int]:
    """terminalExitCodes / retryableExitCodes: the annotation's
    comma-separated codes, those strconv.Atoi reads (others skipped)."""
    raw = (aw.metadata.annotations or {}).get(_ANN + name)
    if raw is None:
        return []
    return [int(part) for part in raw.split(",") if _ATOI.fullmatch(part)]


def _container_exit_codes(pod: Any) -> list[int]:
    """The non-zero exit codes of the pod's terminated containers."""
    out: list[int] = []
    st = pod.status
    for cs in (st.container_statuses if st is not None else None) or ():
        state = cs.get("state") if isinstance(cs, dict) else None
        term = state.get("terminated") if isinstance(state, dict) else None
        code = term.get("exitCode") if isinstance(term, dict) else None
        if isinstance(code, int) and code != 0:
            out.append(code)
    return out


def _terminal_failure(aw: v.AppWrapper, pods: list[Any]) -> bool:
    """getPodStatus's terminalFailure: a failed pod's container exited with a
    terminal code, or, retryable codes being given, with any code not among
    them."""
    terminal = exit_codes(aw, "terminalExitCodes")
    retryable = exit_codes(aw, "retryableExitCodes")
    if not terminal and not retryable:
        return False
    for pod in pods:
        if pod_phase(pod) != "Failed":
            continue
        for code in _container_exit_codes(pod):
            if code in terminal or (retryable and code not in retryable):
                return True
    return False


def _retry_limit(aw: v.AppWrapper) -> int:
    raw = (aw.metadata.annotations or {}).get(_ANN + "retryLimit")
    if raw is not None:
        with contextlib.suppress(ValueError):
            return int(raw)
    return RETRY_LIMIT


def _grace(aw: v.AppWrapper, name: str, default: timedelta) -> timedelta:
    """A grace period: the annotation's (a Go duration) or the default,
    within [0, GracePeriodMaximum]; a malformed one is the default."""
    raw = (aw.metadata.annotations or {}).get(_ANN + name)
    got = default
    if raw is not None:
        with contextlib.suppress(ValueError):
            got = parse_duration(raw)
    return max(timedelta(0), min(got, GRACE_MAXIMUM))


def _since(st: v.AppWrapperStatus, ctype: str, now: datetime) -> datetime:
    """When the condition last changed status."""
    for c in st.conditions or ():
        if c.type == ctype and c.last_transition_time is not None:
            return c.last_transition_time  # type: ignore[no-any-return]
    return now


def _true(st: v.AppWrapperStatus, ctype: str) -> bool:
    return any(c.type == ctype and c.status == "True" for c in st.conditions or ())


def _set(
    st: v.AppWrapperStatus, ctype: str, status: str, reason: str, message: str, now: datetime
) -> None:
    """meta.SetStatusCondition."""
    conds = list(st.conditions or ())
    old = next((c for c in conds if c.type == ctype), None)
    if old is not None and (old.status, old.reason, old.message) == (status, reason, message):
        return
    new = Condition(
        type=ctype,
        status=status,  # type: ignore[arg-type]
        reason=reason,
        message=message,
        last_transition_time=now
        if old is None or old.status != status
        else old.last_transition_time,
    )
    st.conditions = [c if c.type != ctype else new for c in conds] if old else [*conds, new]


def _clear(
    st: v.AppWrapperStatus, ctype: str, reason: str, now: datetime, message: str = ""
) -> None:
    """clearCondition: False with ``reason``, only where the condition is set."""
    if any(c.type == ctype for c in st.conditions or ()):
        _set(st, ctype, "False", reason, message, now)
