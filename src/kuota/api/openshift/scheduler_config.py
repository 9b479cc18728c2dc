"""OpenShift's cluster-wide scheduler configuration (``config.openshift.io/v1``
``Scheduler``, the singleton named ``cluster``), as ``oc edit
scheduler cluster`` sets it: the scoring profile kube-scheduler runs with
(LowNodeUtilization by default, HighNodeUtilization to bin-pack, NoScoring),
and the cluster-wide default node selector every new pod gets unless its
project has its own (``openshift.io/node-selector``).

Types follow openshift/api ``config/v1/types_scheduling.go``. Pure: no I/O.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from kuota.api import errors as e
from kuota.api.base import Object, crd_default, preserve_unknown
from kuota.api.errors import FieldError
from kuota.api.meta import ObjectMeta
from kuota.api.names import is_label_value, is_qualified_name

GROUP = "config.openshift.io"
API_VERSION = f"{GROUP}/v1"
KIND = "Scheduler"
SINGLETON_NAME = "cluster"
DEFAULT_PROFILE = "LowNodeUtilization"
# The project annotation that overrides the cluster's default node selector.
PROJECT_NODE_SELECTOR = "openshift.io/node-selector"

Profile = Literal["", "LowNodeUtilization", "HighNodeUtilization", "NoScoring"]


class ConfigMapNameReference(Object, kw_only=True):
    name: str


class ProfileCustomizations(Object, kw_only=True):
    dynamic_resource_allocation: Literal["", "Enabled", "Disabled"] = ""


class SchedulerSpec(Object, kw_only=True):
    policy: ConfigMapNameReference | None = None  # deprecated; carried, unread
    profile: Annotated[Profile, crd_default("")] = ""
    profile_customizations: ProfileCustomizations | None = None
    default_node_selector: str = ""
    masters_schedulable: bool = False


class Scheduler(Object, kw_only=True):
    api_version: str = API_VERSION
    kind: str = KIND
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: SchedulerSpec
    status: Annotated[dict[str, Any], preserve_unknown()] | None = None


def profile_of(s: Scheduler | None) -> str:
    """The profile kube-scheduler runs with ("" means the default)."""
    return (s.spec.profile if s is not None else "") or DEFAULT_PROFILE


def parse_node_selector(text: str) -> dict[str, str]:
    """``"type=user-node,region=east"`` as OpenShift reads it
    (labels.ConvertSelectorToLabelsMap: ``k=v`` or ``k==v`` terms); ValueError
    says what is wrong."""
    out: dict[str, str] = {}
    if not text.strip():
        return out
    for term in text.split(","):
        term = term.strip()
        if "!=" in term or "=" not in term:
            raise ValueError(f'"{term}": each term must be key=value')
        k, _, v = term.partition("==") if "==" in term else term.partition("=")
        k, v = k.strip(), v.strip()
        problems = [f"key {m}" for m in is_qualified_name(k)]
        problems += [f"value {m}" for m in is_label_value(v)]
        if problems:
            raise ValueError(f'"{term}": ' + "; ".join(problems))
        out[k] = v
    return out


def validate_scheduler(s: Scheduler, gates: Any = None) -> list[FieldError]:
    errs: list[FieldError] = []
    if s.metadata.name != SINGLETON_NAME:
        errs.append(
            e.invalid(
                "metadata.name",
                s.metadata.name,
                "OpenShift reads only the Scheduler named 'cluster'",
            )
        )
    try:
        parse_node_selector(s.spec.default_node_selector)
    except ValueError as err:
        errs.append(e.invalid("spec.defaultNodeSelector", s.spec.default_node_selector, str(err)))
    return errs
