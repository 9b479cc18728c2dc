"""The simulated kubelet: runs bound pods for their duration.

A pod says how long it runs in the annotation ``kuota.dev/duration`` (a Go
duration: ``90s``, ``1h30m``, ``1500ms``) and whether it then fails with
``kuota.dev/fail: "true"``, or fails with its containers' exit code
``kuota.dev/exit-code: "42"`` (written to their ``containerStatuses``, for
the controllers that read exit codes); a trace can supply both instead (see
:data:`RunSource`). Without the annotation, a pod whose containers only
sleep (``sleep 30``, ``sh -c "sleep 30"``) runs for its longest sleep; any
other pod runs until it is deleted. Pods
whose node disappears fail with reason ``NodeLost``; on a NotReady node no
pod starts, and the taint eviction controller evicts them after their
tolerationSeconds; pods being deleted are finished (phase Failed) so their
owners see them end.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import msgspec

from kuota.api.k8s import Node, Pod, PodStatus
from kuota.api.kueue.config import parse_duration
from kuota.cluster.controllers.controller_base import ClusterController
from kuota.cluster.controllers.eviction import termination_deadline
from kuota.cluster.controllers.sleep_run import sleep_duration
from kuota.cluster.nodeutil import node_ready
from kuota.cluster.podutil import (
    NODE,
    POD,
    is_deleting,
    is_terminal,
    pod_phase,
    set_pod_condition,
)
from kuota.runtime.informer import Informer, key_of
from kuota.store import clone
from kuota.store.protocol import EventType

if TYPE_CHECKING:
    from kuota.runtime.manager import Manager

__all__ = [
    "DURATION_ANNOTATION",
    "EXIT_CODE_ANNOTATION",
    "FAIL_ANNOTATION",
    "Kubelet",
    "PodRun",
    "RunSource",
    "annotation_run",
]

from kuota.cluster.controllers.run_keys import (
    DURATION_ANNOTATION,
    EXIT_CODE_ANNOTATION,
    FAIL_ANNOTATION,
    exit_code_error,
)

# Pod status reasons and messages, as the kubelet and the node lifecycle
# controller write them.
REASON_ERROR = "Error"
REASON_NODE_LOST = "NodeLost"
REASON_DEADLINE = "DeadlineExceeded"
REASON_INVALID = "InvalidRunAnnotation"
MSG_DEADLINE = "Pod was active on the node longer than the specified deadline"


@dataclass(frozen=True, slots=True)
class PodRun:
    """How a pod runs: for ``duration`` (None: until deleted), then fails or
    not; a failing run's containers may end with ``exit_code``."""

    duration: timedelta | None = None
    fail: bool = False
    exit_code: int | None = None


# Where runs come from: a pod -> its run. Asked at start and at every wake-up
# after, so it must give the same answer for the same pod. Raise ValueError
# for a pod that cannot run; the message becomes the pod's status.message.
RunSource = Callable[[Pod], PodRun]


def annotation_run(pod: Pod) -> PodRun:
    """The run the pod's annotations describe."""
    ann = pod.metadata.annotations or {}
    duration: timedelta | None = None
    raw = ann.get(DURATION_ANNOTATION)
    if raw is not None:
        try:
            duration = _duration(raw)
        except ValueError as err:
            raise ValueError(f"annotation {DURATION_ANNOTATION}={_q(raw)}: {err}") from None
        if duration < timedelta(0):
            raise ValueError(f"annotation {DURATION_ANNOTATION}={_q(raw)}: must not be negative")
    elif pod.spec is not None:
        duration = sleep_duration(pod.spec)  # Kueue's samples: `sleep 30` runs 30 s
    fail = ann.get(FAIL_ANNOTATION, "false")
    if fail not in ("true", "false"):
        raise ValueError(f'annotation {FAIL_ANNOTATION}={_q(fail)}: must be "true" or "false"')
    code = ann.get(EXIT_CODE_ANNOTATION)
    if code is None:
        return PodRun(duration, fail == "true")
    bad = exit_code_error(code, ann.get(FAIL_ANNOTATION))
    if bad:
        raise ValueError(f"annotation {EXIT_CODE_ANNOTATION}={_q(code)}: {bad}")
    return PodRun(duration, True, int(code))


@functools.lru_cache(maxsize=4096)
def _duration(raw: str) -> timedelta:
    """parse_duration, kept: a trace's pods repeat a few thousand durations,
    and every look at a pod reads its run."""
    return parse_duration(raw)


def _q(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _with_private_status(pod: Pod) -> tuple[Pod, PodStatus]:
    """The pod with a status of its own to change (the spec stays shared: a
    status write sends none)."""
    st = clone(pod.status) if pod.status is not None else PodStatus()
    return msgspec.structs.replace(pod, status=st), st


class Kubelet(ClusterController):
    """Every node's kubelet in one controller.

    Reads Pods (indexed by node) and Nodes; writes pod status only: Running
    with startTime and the Ready conditions when a bound pod starts, then
    Succeeded or Failed at the end of its run, on its activeDeadlineSeconds,
    when its node is lost, or when it is being deleted.
    """

    name = "kubelet"
    _BY_NODE = "kubelet:spec.nodeName"

    def __init__(self, runs: RunSource | None = None) -> None:
        super().__init__()
        self.runs: RunSource = runs if runs is not None else annotation_run
        self._pods: Informer | None = None
        self._nodes: Informer | None = None

    def setup(self, mgr: Manager) -> None:
        super().setup(mgr)
        self._pods = mgr.informer(POD)
        self._nodes = mgr.informer(NODE)
        self._pods.add_index(self._BY_NODE, _node_of)
        self._pods.on_change(self._on_pod)
        self._nodes.on_change(self._on_node)

    def _on_pod(self, etype: EventType, pod: Any, old: Any | None) -> None:
        if etype == "DELETED" or is_terminal(pod):
            return
        # Unbound pods are the scheduler's, unless they are being deleted.
        if (pod.spec is not None and pod.spec.node_name) or is_deleting(pod):
            self.mgr.enqueue(self.name, key_of(pod))

    def _on_node(self, etype: EventType, node: Any, old: Any | None) -> None:
        # A lost node fails its pods; a node Ready again starts the pods that
        # waited (a new node has no pods: binding happens after it exists).
        back = old is not None and not node_ready(old) and node_ready(node)
        if etype == "DELETED" or back:
            assert self._pods is not None
            mgr = self.mgr
            for pod in self._pods.by_index(self._BY_NODE, node.metadata.name):
                if not is_terminal(pod):
                    mgr.enqueue(self.name, key_of(pod))

    # ------------------------------------------------------------ reconcile
    def reconcile(self, key: str) -> timedelta | None:
        assert self._pods is not None and self._nodes is not None
        mgr = self.mgr
        pod = self._pods.get(key)
        if pod is None or is_terminal(pod):
            return None
        if is_deleting(pod):
            # The kubelet kills a deleted pod's containers (an evicted running
            # one at the end of its grace period: controllers.eviction); an unbound
            # one is finished by the pod garbage collector, which this stands in for.
            end = termination_deadline(pod)
            if end is None or end <= mgr.clock.now() or pod_phase(pod) != "Running":
                self._finish(pod, "Failed")
                return None
            mgr.enqueue_at(self.name, key, end)  # its run may still end first
        node_name = pod.spec.node_name if pod.spec is not None else None
        if not node_name:
            return None
        node = self._nodes.get(node_name)
        if node is None:
            self._finish(
                pod,
                "Failed",
                REASON_NODE_LOST,
                f"Node {node_name} which was running pod {pod.metadata.name} is unresponsive",
            )
            return None
        if not node_ready(node) and pod_phase(pod) == "Pending":
            # A NotReady node's kubelet starts nothing; its pods stay until the
            # taint eviction controller evicts them (controllers.taint_eviction).
            return None
        try:
            run = self.runs(pod)
        except ValueError as err:
            self._finish(pod, "Failed", REASON_INVALID, str(err))
            return None
        if pod_phase(pod) == "Pending":
            pod = self._start(pod, node)
        self._advance(key, pod, run)
        return None

    def _advance(self, key: str, pod: Pod, run: PodRun) -> None:
        """End the run if it is over, else wake up when it will be."""
        started = pod.status.start_time if pod.status is not None else None
        if started is None:
            return
        mgr = self.mgr
        now = mgr.clock.now()
        ends: list[tuple[datetime, str, str | None, str | None]] = []
        code = None
        # An end past year 9999 (a pod started near the end of time) never comes.
        with suppress(OverflowError):
            if run.duration is not None:
                if run.fail:
                    ends.append((started + run.duration, "Failed", REASON_ERROR, None))
                    code = run.exit_code
                else:
                    ends.append((started + run.duration, "Succeeded", None, None))
        ads = pod.spec.active_deadline_seconds if pod.spec is not None else None
        if ads is not None:
            with suppress(OverflowError):
                ends.append(
                    (started + timedelta(seconds=ads), "Failed", REASON_DEADLINE, MSG_DEADLINE)
                )
        if not ends:
            return
        # The earliest end wins; on a tie the run's own end beats the deadline.
        at, phase, reason, message = min(ends, key=lambda e: e[0])
        if at <= now:
            self._finish(pod, phase, reason, message, code if reason == REASON_ERROR else None)
        else:
            mgr.enqueue_at(self.name, key, at)

    # ------------------------------------------------------------ status
    def _start(self, pod: Pod, node: Node) -> Pod:
        mgr = self.mgr
        now = mgr.clock.now()
        new, st = _with_private_status(pod)
        st.phase = "Running"
        st.start_time = st.start_time or now
        st.host_ip = st.host_ip or _address(node)
        for ctype in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady"):
            set_pod_condition(st, ctype, "True", now)
        set_pod_condition(st, "PodScheduled", "True", now)
        stored: Pod = mgr.store.update_status(new)
        return stored

    def _finish(
        self,
        pod: Pod,
        phase: str,
        reason: str | None = None,
        message: str | None = None,
        exit_code: int | None = None,
    ) -> None:
        mgr = self.mgr
        now = mgr.clock.now()
        new, st = _with_private_status(pod)
        st.phase = phase  # type: ignore[assignment]
        st.reason = reason
        st.message = message
        if exit_code is not None and pod.spec is not None:
            # (only for a run that names its exit code: other failed pods
            # keep none, as before, for the controllers that match codes)
            started = st.start_time or now
            st.container_statuses = [
                {
                    "name": c.name,
                    "ready": False,
                    "restartCount": 0,
                    "image": c.image or "",
                    "imageID": "",
                    "started": False,
                    "state": {
                        "terminated": {
                            "exitCode": exit_code,
                            "reason": "Error",
                            "startedAt": _rfc3339(started),
                            "finishedAt": _rfc3339(now),
                        }
                    },
                }
                for c in pod.spec.containers
            ]
        if st.start_time is None and pod.spec is not None and pod.spec.node_name:
            st.start_time = now
        # What the kubelet reports for a pod whose containers all stopped.
        if phase == "Succeeded":
            ready_reason, ready_message = "PodCompleted", None
        else:
            names = " ".join(c.name for c in (pod.spec.containers if pod.spec else []))
            ready_reason, ready_message = (
                "ContainersNotReady",
                f"containers with unready status: [{names}]",
            )
        set_pod_condition(st, "PodReadyToStartContainers", "False", now)
        for ctype in ("Ready", "ContainersReady"):
            set_pod_condition(st, ctype, "False", now, ready_reason, ready_message)
        mgr.store.update_status(new)


def _rfc3339(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _node_of(pod: Any) -> list[str]:
    name = pod.spec.node_name if pod.spec is not None else None
    return [name] if name else []


def _address(node: Node) -> str | None:
    for a in (node.status.addresses if node.status is not None else None) or ():
        if a.type == "InternalIP":
            return a.address
    return None
