"""What kube-apiserver will refuse of a LeaderWorkerSet's pod templates
when the LWS operator turns them into StatefulSets. LWS's webhook does not
validate the templates, so the LeaderWorkerSet is accepted; its leader or
worker StatefulSets are then refused (the operator's FailedCreate event), and
a group runs without its workers. Said when the world is read, as a warning
(the cluster would accept the object too). Only the containers' resource
requirements are checked: the cause met with Kueue's own TAS sample, whose
workers request ``nvidia.com/gpu`` without a limit."""

from __future__ import annotations

from typing import Any

from kuota.api.errors import child, index
from kuota.api.k8s.validation import validate_resource_requirements

__all__ = ["lws_template_warnings"]

_TEMPLATES = (
    ("leaderTemplate", "leader_template", "leader"),
    ("workerTemplate", "worker_template", "worker"),
)


def lws_template_warnings(obj: Any) -> list[str]:
    if obj.kind != "LeaderWorkerSet" or obj.spec is None:
        return []
    lwt = obj.spec.leader_worker_template
    out: list[str] = []
    for wire, attr, role in _TEMPLATES:
        tmpl = getattr(lwt, attr)
        if tmpl is None or tmpl.spec is None:
            continue
        spec_path = f"spec.leaderWorkerTemplate.{wire}.spec"
        for field, ctrs in (
            ("initContainers", tmpl.spec.init_containers or []),
            ("containers", tmpl.spec.containers),
        ):
            for i, c in enumerate(ctrs):
                path = child(index(child(spec_path, field), i), "resources")
                for err in validate_resource_requirements(c.resources, path):
                    out.append(
                        f"{err}: the {role} StatefulSets the LeaderWorkerSet operator makes"
                        " of this template will be refused, as kube-apiserver refuses them"
                        " (LWS does not validate its templates)"
                    )
    return out
