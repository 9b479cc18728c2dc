"""``GET pods/NAME/log`` (``kubectl logs``): kube-apiserver proxies it to the
kubelet, which reads the container's output. kuota's pods run no process, so
a started container's log is one line saying so (its image, node and start,
and its end once the pod finished); a container not started yet gets the
kubelet's 400, and a pod of several containers needs ``container``, as
kube-apiserver answers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kuota.server import status as st


def _time(t: Any) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ") if t is not None else "?"


def pod_log(pod: Any, query: Mapping[str, str]) -> str:
    """The log text of one container of ``pod``; raises st.ApiError."""
    m, spec, status = pod.metadata, pod.spec, pod.status
    names = [c.name for c in (spec.containers if spec is not None else [])]
    inits = [c.name for c in (spec.init_containers or [])] if spec is not None else []
    name = query.get("container", "")
    if not name:
        if len(names) != 1:
            raise st.bad_request(
                f"a container name must be specified for pod {m.name}, "
                f"choose one of: [{' '.join(names)}]"
                + (f" or one of the init containers: [{' '.join(inits)}]" if inits else "")
            )
        name = names[0]
    if name not in names and name not in inits:
        raise st.bad_request(f"container {name} is not valid for pod {m.name}")
    phase = status.phase if status is not None else None
    started = status.start_time if status is not None else None
    if phase in (None, "Pending") or started is None:
        raise st.bad_request(
            f'container "{name}" in pod "{m.name}" is waiting to start: ContainerCreating'
        )
    image = next(
        (c.image for c in [*spec.containers, *(spec.init_containers or [])] if c.name == name),
        "",
    )
    lines = [
        f"kuota: simulated container {name} (image {image}) on node {spec.node_name}, "
        f"started {_time(started)}: no process runs here, so there is no output"
    ]
    if phase in ("Succeeded", "Failed"):
        lines.append(f"kuota: the pod ended: {phase}")
    tail = query.get("tailLines", "")
    if tail.isdigit():
        lines = lines[-int(tail) :] if int(tail) else []
    return "".join(line + "\n" for line in lines)
